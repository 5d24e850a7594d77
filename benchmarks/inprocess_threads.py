"""Tagging in the caller's process on a busy CPU: torch's default intra-op threads or one?

Three ways of tagging the same few raw texts in this process, each with a model loaded once:

* ``tagger``: :meth:`Tagger.predict <docgraph.tagging.tagger.Tagger.predict>` on the texts;
* ``spacy-one``: ``nlp(text)`` for each text (``spacy.blank("en")`` + ``sentencizer`` +
  ``docgraph_ner``);
* ``spacy-pipe``: ``nlp.pipe(texts)``;

in three variants: ``default`` (torch's default intra-op threads, one per core), ``one``
(``torch.set_num_threads(1)``), both with the tagger's and the component's own thread policy
switched off (``threads=0``), and ``policy`` (torch's default outside, the policy's one thread
set for each call and restored after it: :mod:`docgraph.runtime.threads`); on the machine as it is
(``quiet``) and with a CPU burner (a busy-loop process per core, at this process's
priority). Times are wall (``perf_counter``) and process CPU (``process_time``), the median of
``--repeats`` after one untimed warm-up per setting.

    python benchmarks/inprocess_threads.py --model conll03 --texts 5 --repeats 2 \\
        --out benchmarks/results/measurements/inprocess-threads/results.json
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ("tagger", "spacy-one", "spacy-pipe")
VARIANTS = ("default", "one", "policy")


def start_burners(count: int) -> list[subprocess.Popen]:
    """``count`` busy-loop processes that end with this one."""
    from docgraph.runtime.lifetime import set_parent_death_signal

    return [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             preexec_fn=lambda: set_parent_death_signal(signal.SIGKILL))
            for _ in range(count)]


def stop_burners(burners: list[subprocess.Popen]) -> None:
    """Kill and reap the burners."""
    for proc in burners:
        proc.kill()
    for proc in burners:
        proc.wait()


def timed(work: Callable[[], object], repeats: int) -> dict[str, object]:
    """Median wall and CPU seconds of ``repeats`` calls of ``work`` after one untimed call."""
    work()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {"wall_seconds": walls, "cpu_seconds": cpus,
            "median_wall_seconds": statistics.median(walls),
            "median_cpu_seconds": statistics.median(cpus)}


def main() -> None:
    """Command line."""
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    p.add_argument("--model", default="conll03")
    p.add_argument("--texts", type=int, default=5, help="texts (sample test documents)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--conditions", nargs="+", choices=("quiet", "burner"),
                   default=["quiet", "burner"])
    p.add_argument("--out", default=None, help="JSON file for the results")
    args = p.parse_args()

    import spacy
    import torch

    import docgraph.integrations.spacy_component  # noqa: F401  (registers the factory)
    from docgraph.data.registry import load_dataset
    from docgraph.runtime.atomic import atomic_write_json
    from docgraph.runtime.machine import cpu_model
    from docgraph.tagging.tagger import Tagger

    default_threads = torch.get_num_threads()
    docs = load_dataset("sample", splits=("test",))["test"][:args.texts]
    texts = [" ".join(" ".join(s.tokens) for s in d.sentences) for d in docs]
    tokens = sum(d.num_tokens for d in docs)
    tagger = Tagger.load(args.model, "cpu", threads=0)
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    component = nlp.add_pipe("docgraph_ner",
                             config={"model": args.model, "device": "cpu", "threads": 0})
    work = {"tagger": lambda: tagger.predict(texts),
            "spacy-one": lambda: [nlp(t) for t in texts],
            "spacy-pipe": lambda: list(nlp.pipe(texts))}
    results = []
    for condition in args.conditions:
        burners = start_burners(os.cpu_count() or 1) if condition == "burner" else []
        try:
            time.sleep(1.0 if burners else 0.0)
            for variant in VARIANTS:
                torch.set_num_threads(1 if variant == "one" else default_threads)
                tagger.threads = component.threads = 1 if variant == "policy" else 0
                for setting in SETTINGS:
                    found = timed(work[setting], args.repeats)
                    record = {"condition": condition, "variant": variant, "setting": setting,
                              "load_average": os.getloadavg()[0], **found}
                    results.append(record)
                    print(f"{condition:6} {variant:7} {setting:10}: "
                          f"{found['median_wall_seconds']:7.2f} s wall, "
                          f"{found['median_cpu_seconds']:7.2f} s CPU "
                          f"(load {record['load_average']:.1f})", flush=True)
        finally:
            stop_burners(burners)
    summary = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "model": args.model, "texts": len(texts), "tokens": tokens, "repeats": args.repeats,
        "default_threads": default_threads, "cpu": cpu_model(), "cores": os.cpu_count(),
        "nice": os.nice(0), "spacy": spacy.__version__, "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "results": results,
    }
    if args.out:
        atomic_write_json(args.out, summary)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
