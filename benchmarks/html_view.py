"""Size and speed of the HTML view (``docgraph.viz.html``) on the longest documents of a split.

Builds the annotated graphs of the ``--docs`` longest documents of a split with a model (a
trained run directory, or a freshly initialised GCDoc when ``--model`` is not given: the page's
size and speed do not depend on the weights), writes one page per document and one with all of
them, and opens each in headless Chromium with a click on the token with the most repeats
(``#click=``): the page records when its script was ready (ms after navigation) and how long
the click took to highlight the repeats and fill the panel. Reports bytes per token and edge.

    python benchmarks/html_view.py --dataset ontonotes --data-dir ../shared/data/ontonotes \\
        --split dev --docs 3 --out benchmarks/results/measurements/html-view/ontonotes-dev.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from docgraph.data.registry import load_dataset
from docgraph.data.vocab import Vocabularies
from docgraph.graph import GraphConfig, documents_to_graphs
from docgraph.model import GCDocConfig
from docgraph.persistence.model_dir import build_model, load_model_dir
from docgraph.tagging.inference import inspect_graphs
from docgraph.viz.html import to_html
from docgraph.viz.networkx import to_networkx

BROWSER = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def open_in_browser(chromium: str, page: Path, token: int, profile: Path) -> dict[str, float]:
    """Open ``page`` with a click on ``token`` of its first document; the page's own timings."""
    res = subprocess.run([chromium, *BROWSER, f"--user-data-dir={profile}",
                          "--virtual-time-budget=5000", "--dump-dom",
                          f"{page.as_uri()}#click=0:{token}"],
                         capture_output=True, text=True, timeout=300, check=False)
    ready = re.search(r'data-ready-ms="([\d.]+)"', res.stdout)
    pick = re.search(r'data-pick-ms="([\d.]+)"', res.stdout)
    return {"ready_ms": float(ready.group(1)) if ready else float("nan"),
            "click_ms": float(pick.group(1)) if pick else float("nan")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="ontonotes")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--model", default=None, help="run directory (default: untrained)")
    parser.add_argument("--docs", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("html_view.py: error: needs Chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    documents = load_dataset(args.dataset, args.data_dir, splits=(args.split,))[args.split]
    if args.model:
        model, vocabs, config = load_model_dir(args.model)
        graph_config, threshold = config.graph_config(), config.model.threshold
    else:
        vocabs = Vocabularies.build(documents)
        torch.manual_seed(0)
        model, graph_config, threshold = build_model(GCDocConfig(), vocabs), GraphConfig(), 0.5
    longest = sorted(range(len(documents)), key=lambda i: -documents[i].num_tokens)[:args.docs]
    chosen = [documents[i] for i in longest]
    graphs = documents_to_graphs(chosen, vocabs, graph_config)
    annotated = [to_networkx(graph, doc, vocabs, uncertainty=out.uncertainty, drop=out.drop,
                             edge_weight=out.edge_weight, predicted=out.label_ids)
                 for graph, doc, out in zip(graphs, chosen, inspect_graphs(model, graphs, vocabs))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, G in enumerate(annotated):
            page = Path(tmp) / f"doc{k}.html"
            page.write_text(to_html([G], threshold=threshold))
            degree = dict(G.in_degree())
            token = max(degree, key=degree.get)
            timing = open_in_browser(chromium, page, token, Path(tmp) / f"profile{k}")
            size = page.stat().st_size
            rows.append({"doc_id": G.graph.get("doc_id"), "tokens": G.number_of_nodes(),
                         "edges": G.number_of_edges(), "bytes": size,
                         "bytes_per_token_and_edge": size / (G.number_of_nodes()
                                                             + G.number_of_edges()),
                         "clicked_token_repeats": degree[token], **timing})
            print(json.dumps(rows[-1]), flush=True)
        every = Path(tmp) / "all.html"
        every.write_text(to_html(annotated, threshold=threshold))
        all_pages = {"documents": len(annotated), "bytes": every.stat().st_size,
                     **open_in_browser(chromium, every, 0, Path(tmp) / "profile-all")}
    result = {"dataset": args.dataset, "split": args.split, "model": args.model or "untrained",
              "chromium": subprocess.run([chromium, "--version"], capture_output=True,
                                         text=True, check=False).stdout.strip(),
              "documents": rows, "all_in_one_page": all_pages,
              "date": _dt.datetime.now().isoformat(timespec="seconds"),
              "command": " ".join(["python benchmarks/html_view.py", *(argv or sys.argv[1:])])}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
