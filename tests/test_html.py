"""The interactive HTML page of annotated documents (docgraph/viz/html.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import networkx as nx
import pytest

from docgraph.viz.html import (
    ENTITY_COLOURS,
    document_errors,
    entity_colour,
    inconsistent_strings,
    page_title,
    to_html,
)


def _graph(words, gold, pred, edges=(), sentence=None, pruned=None):
    sentence = [0] * len(words) if sentence is None else sentence
    G = nx.DiGraph(doc_id="d<1>", num_sentences=max(sentence) + 1)
    for i, (w, g, p) in enumerate(zip(words, gold, pred)):
        G.add_node(i, word=w, sentence=sentence[i], position=sentence[:i].count(sentence[i]),
                   gold_tag=g, gold_type=g[2:] or "O", pred_tag=p, pred_type=p[2:] or "O",
                   uncertainty=0.1 * i, pruned=i % 2 == 1 if pruned is None else i in pruned)
    for j, i, r in edges:
        G.add_edge(j, i, r_ij=r, same_type=True, noisy=False)
    return G


def test_errors_of_every_kind_by_hand():
    words = ["Kestrel", "beat", "Carrow", "United", "in", "Veldania", "today"]
    gold = ["B-ORG", "O", "B-ORG", "I-ORG", "O", "B-LOC", "O"]
    pred = ["B-PER", "O", "B-ORG", "O", "O", "O", "B-MISC"]
    info = document_errors(_graph(words, gold, pred))
    kinds = {(e[0], e[3]) for e in info["errors"]}
    # Kestrel: same span, other type; Carrow United: predicted only Carrow (boundary);
    # Veldania: missed; today: spurious
    assert kinds == {("wrong type", 0), ("wrong boundary", 2), ("missed", 5), ("spurious", 6)}
    p, r, f1 = info["scores"]
    assert (p, r, f1) == (0.0, 0.0, 0.0)
    info = document_errors(_graph(words, gold, gold))
    assert info["errors"] == [] and info["scores"] == (100.0, 100.0, 100.0)


def test_inconsistent_strings_per_document():
    words = ["Kestrel", "won", ".", "kestrel", "lost"]
    G = _graph(words, ["B-ORG", "O", "O", "B-ORG", "O"], ["B-ORG", "O", "O", "B-PER", "O"])
    info = document_errors(G)
    assert inconsistent_strings(G, info["predicted"]) == {"kestrel": ["ORG", "PER"]}


def test_text_is_escaped_and_the_data_cannot_close_its_script():
    long = "Q" * 1500
    words = ["<script>alert(1)</script>", "&amp;", '"quoted"', "'single'", long, "</script>"]
    G = _graph(words, ["B-ORG", "O", "O", "O", "O", "O"], ["B-ORG", "O", "O", "O", "O", "O"],
               edges=[(0, 5, 0.25), (5, 0, 0.75)])
    page = to_html([G], title="<b>title</b>", threshold=0.5)
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "&amp;amp;" in page and "&quot;quoted&quot;" in page and long in page
    assert "<b>title</b>" not in page and "d&lt;1&gt;" in page
    # exactly our two scripts: the JSON data and the page's code
    assert page.count("<script") == 2 and page.count("</script>") == 2
    blob = re.search(r'<script type="application/json" class="data">(.*?)</script>', page,
                     flags=re.S).group(1)
    data = json.loads(blob)
    assert data["tokens"][0][0] == "<script>alert(1)</script>"  # round-trips exactly
    assert data["edges"] == [[0, 5, 0.25], [5, 0, 0.75]]  # every edge once
    assert 'data-threshold="0.5"' in page and "https://" not in page and "http://" not in page


def test_one_section_per_document_with_picker_legend_and_marks():
    a = _graph(["Kestrel", "beat", "Kestrel"], ["B-ORG", "O", "B-ORG"],
               ["B-ORG", "O", "B-LOC"], edges=[(0, 2, 0.9), (2, 0, 0.8)])
    b = _graph(["Harwick", "rose"], ["B-ORG", "O"], ["O", "O"])
    page = to_html([a, b])
    assert page.count('<section class="doc"') == 2 and '<select id="picker"' in page
    assert page.count("<option") == 2
    legend = re.search(r'<span class="legend">(.*?)</span><span class="marks">', page).group(1)
    assert re.findall(r"<span class=\"t\d+\">(\w+)</span>", legend) == ["LOC", "ORG"]
    assert page.count('class="tok rep') == 2  # the two Kestrels have neighbours
    assert "wrong type: gold ORG, predicted LOC" in page
    assert "missed: gold ORG" in page and "Repeated strings with more than one" in page
    assert "P 50.00 R 50.00 F1 50.00" in page
    baseline = to_html([b], has_graph=False)
    assert "has no document graph" in baseline and "<select" not in baseline
    assert "has repeats" not in baseline and "pruned (" not in baseline


def _type_colours(page: str) -> dict[str, str]:
    """Entity type -> the background colour it is drawn with on ``page``."""
    css = dict(re.findall(r"\.(t\d+)\{background:(#[0-9a-f]{6})\}", page))
    marked = re.findall(r'<mark class="ent (t\d+)[^"]*"[^>]*>.*?<sup>([^<]+)</sup></mark>', page)
    colours = {type_: css[cls] for cls, type_ in marked}
    assert len(colours) == len({type_ for _, type_ in marked}), "a type with two classes"
    return colours


def test_a_type_has_the_same_colour_on_every_page():
    # LOC first on one page, third on the other (a colour by order of appearance moved)
    one = _graph(["Harwick", "in", "Veldania"], ["O"] * 3, ["B-LOC", "O", "B-ORG"])
    two = _graph(["Piet", "of", "Kestrel", "in", "Harwick"], ["O"] * 5,
                 ["B-PER", "O", "B-ORG", "O", "B-LOC"])
    notes = _graph(["Paris", "Monday", "Widget9"], ["O"] * 3, ["B-GPE", "B-DATE", "B-GADGET"])
    pages = [_type_colours(to_html(graphs)) for graphs in ([one], [two], [two, one], [notes])]
    assert pages[0] == {"LOC": "#ff9561", "ORG": "#7aecec"}
    assert pages[1] == {"PER": "#aa9cfc", "ORG": "#7aecec", "LOC": "#ff9561"} == pages[2]
    assert pages[3] == {"GPE": "#feca74", "DATE": "#bfe1d9", "GADGET": entity_colour("GADGET")}
    assert len(set(pages[3].values())) == 3


def test_entity_colours_are_distinct_and_stable():
    ontonotes = ["PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART",
                 "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL",
                 "CARDINAL"]
    conll = ["PER", "LOC", "ORG", "MISC"]
    for types in (ontonotes, conll):
        colours = [entity_colour(t) for t in types]
        assert len(set(colours)) == len(types) and set(colours) <= set(ENTITY_COLOURS.values())
    # another type: a valid colour from its name, the same in a process with another hash seed
    other = [entity_colour(t) for t in ("GADGET", "disease", "ÉPOQUE")]
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in other) and len(set(other)) == 3
    code = ("from docgraph.viz.html import entity_colour; "
            "print(*(entity_colour(t) for t in ('GADGET', 'disease', 'ÉPOQUE')))")
    for seed in ("1", "2"):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={"PYTHONHASHSEED": seed, "PATH": ""}, check=True,
                             cwd=Path(__file__).resolve().parents[1])
        assert res.stdout.split() == other


class _PageReader(HTMLParser):
    """The words of a page's documents as it draws them: each token's sentence (``data-s``),
    its index in the sentence, its mark classes, and the entity (``<mark>``) it is in."""

    def __init__(self) -> None:
        super().__init__()
        self.sentence: int | None = None
        self.index = 0
        self.entity: dict | None = None
        self.entities: list[tuple[int, int, int, str]] = []  # (sentence, start, end, type)
        self.drawn: set[str] = set()
        self.in_sup = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "p" and "sent" in classes:
            self.sentence, self.index = int(attrs["data-s"]), 0
        elif tag == "mark":
            self.entity = {"start": self.index, "classes": classes}
            self.drawn |= classes & {"err"}
        elif tag == "span" and "tok" in classes:
            self.drawn |= classes & {"rep", "pruned", "missed"}
            self.index += 1
        elif tag == "sup":
            self.in_sup = True

    def handle_data(self, data):
        if self.in_sup and self.entity is not None:
            self.entity["type"] = data

    def handle_endtag(self, tag):
        if tag == "sup":
            self.in_sup = False
        elif tag == "mark" and self.entity is not None:
            self.entities.append((self.sentence, self.entity["start"], self.index,
                                  self.entity["type"]))
            self.entity = None


def _read_page(page: str) -> _PageReader:
    reader = _PageReader()
    reader.feed(page.split('<div class="docs">', 1)[1])
    return reader


def _keyed_marks(page: str) -> set[str]:
    """The marks the header's key explains."""
    marks = re.search(r'<span class="marks">(.*?)</span></header>', page)
    if marks is None:
        return set()
    keys = {"has repeats": "rep", "pruned (": "pruned", "wrong entity": "err",
            "missed entity": "missed"}
    return {mark for text, mark in keys.items() if text in marks.group(1)}


def test_the_key_explains_exactly_the_marks_the_page_draws():
    words = ["Kestrel", "beat", "Kestrel", "in", "Harwick"]
    gold = ["B-ORG", "O", "B-ORG", "O", "B-LOC"]
    cases = {
        # repeats, the first pruned: its red dashed underline and its key
        "pruned repeat": (gold, gold, [(0, 2, 0.9), (2, 0, 0.8)], {0}, {"rep", "pruned"}),
        # a pruned word without repeats is drawn as any word (it sends no message anyway)
        "pruned lone word": (gold, gold, [(0, 2, 0.9), (2, 0, 0.8)], {1, 3}, {"rep"}),
        # gold tags but no error: no key to errors
        "no errors": (gold, gold, [], set(), set()),
        "errors": (gold, ["B-PER", "O", "B-ORG", "B-MISC", "O"], [], set(), {"err", "missed"}),
        "missed only": (gold, ["O", "O", "B-ORG", "O", "B-LOC"], [], set(), {"missed"}),
        # a receiving edge only (a sampled neighbour): both ends have repeats
        "one edge": (gold, gold, [(2, 0, 0.9)], {0, 2}, {"rep", "pruned"}),
    }
    for name, (g, p, edges, pruned, expected) in cases.items():
        page = to_html([_graph(words, g, p, edges, pruned=pruned)], threshold=0.5)
        drawn = _read_page(page).drawn
        assert drawn == expected == _keyed_marks(page), name
    # the entity types drawn are the types of the legend
    page = to_html([_graph(words, gold, ["B-PER", "O", "B-ORG", "B-MISC", "O"])])
    legend = re.search(r'<span class="legend">(.*?)</span><span class="marks">', page).group(1)
    assert re.findall(r"<span class=\"t\d+\">(\w+)</span>", legend) == ["MISC", "ORG", "PER"]
    assert sorted({e[3] for e in _read_page(page).entities}) == ["MISC", "ORG", "PER"]
    # no gold tags: no key to errors
    G = _graph(words, gold, gold, [(0, 2, 0.9), (2, 0, 0.8)], pruned={0})
    for _, attrs in G.nodes(data=True):
        attrs.pop("gold_tag"), attrs.pop("gold_type")
    page = to_html([G])
    assert _keyed_marks(page) == _read_page(page).drawn == {"rep", "pruned"}


def test_errors_are_numbered_as_the_json_lines():
    # sentence 1: "Carrow United won" (gold ORG 0-2, predicted ORG 0-1: wrong boundary);
    # "Veldania" (sentence 1, token 4) missed; "today" spurious
    words = ["Kestrel", "lost", "Carrow", "United", "won", "in", "Veldania", "today"]
    sentence = [0, 0, 1, 1, 1, 1, 1, 1]
    gold = ["B-ORG", "O", "B-ORG", "I-ORG", "O", "O", "B-LOC", "O"]
    pred = ["B-ORG", "O", "B-ORG", "O", "O", "O", "O", "B-MISC"]
    page = to_html([_graph(words, gold, pred, sentence=sentence)])
    rows = re.findall(r"<tr><td>([a-z ]+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>"
                      r"<td>(\w+)</td><td>([^<]*)</td></tr>", page)
    assert sorted(rows) == [("missed", "1", "4", "5", "LOC", ""),
                            ("spurious", "1", "5", "6", "MISC", ""),
                            ("wrong boundary", "1", "0", "2", "ORG", "ORG 0-1")]
    assert "<th>sentence</th><th>start</th><th>end</th>" in page
    # a drawn entity's sentence, start and end are its JSON line's
    assert sorted(_read_page(page).entities) == [(0, 0, 1, "ORG"), (1, 0, 1, "ORG"),
                                                 (1, 5, 6, "MISC")]
    assert "2 sentences · 8 tokens" in page


def test_page_counts_sentences_and_tokens_as_predict_jsonl_does(model_dir, tmp_path):
    from conftest import run_script

    from docgraph.data.registry import sample_data_dir

    # two documents of the sample dev split with their gold tags, and raw text
    dev = (sample_data_dir() / "dev.txt").read_text().split("-DOCSTART-")
    conll = tmp_path / "gold.conll"
    conll.write_text("".join("-DOCSTART-" + d for d in dev[1:3]))
    raw = tmp_path / "raw.txt"
    raw.write_text("Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice.\n\n"
                   "Harwick Mining rose in Veldania. Kestrel said so.\n")
    for source in (conll, raw):
        out = {}
        for fmt in ("jsonl", "jsonl-tokens", "html"):
            out[fmt] = tmp_path / f"{source.stem}.{fmt}"
            res = run_script("predict", "--model", model_dir, source, "--format", fmt,
                             "--output", out[fmt], "--device", "cpu", "--documents",
                             "paragraphs")
            assert res.returncode == 0, res.stderr
        page = out["html"].read_text()
        entities = [json.loads(line) for line in out["jsonl"].read_text().splitlines()]
        tokens = [json.loads(line) for line in out["jsonl-tokens"].read_text().splitlines()]
        assert entities, source.name  # something to compare
        sections = re.findall(r'<section class="doc".*?</section>', page, flags=re.S)
        docs = list(dict.fromkeys(t["doc"] for t in tokens))
        assert len(sections) == len(docs) > 1
        for doc, section in zip(docs, sections):
            drawn = sorted(_read_page('<div class="docs">' + section).entities)
            assert drawn == sorted((e["sentence"], e["start"], e["end"], e["type"])
                                   for e in entities if e["doc"] == doc), source.name
            mine = [t for t in tokens if t["doc"] == doc]
            sentences = len({t["sentence"] for t in mine})
            assert f"{sentences} sentences · {len(mine)} tokens" in section
            first = re.findall(r'<p class="sent" data-s="(\d+)">', section)
            assert [int(s) for s in first] == sorted({t["sentence"] for t in mine})


def test_page_title_names_the_first_input_and_counts_the_rest():
    assert page_title(["news.txt"]) == "news.txt"
    assert page_title(["in/a/news.txt", "b.txt", "c.conll"]) == "news.txt and 2 more"
    assert page_title([Path("/x/y.txt"), Path("z.txt")]) == "y.txt and 1 more"
    assert page_title([]) == "docgraph"
    long = page_title(["n" * 300 + ".txt", "b"])
    assert long.endswith("… and 1 more") and len(long) == 80 + len(" and 1 more")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.skipif(CHROMIUM is None, reason="needs a headless Chromium: apt-get install "
                    "chromium (Debian's package; .ci/run installs it)")
def test_clicking_a_token_in_a_real_browser_highlights_exactly_its_repeats(tmp_path):
    # Kestrel (0, 3, 6) are repeats of each other, Carrow (2, 5) of each other; clicking the
    # second Kestrel (node 3) must light up nodes 0 and 6 only, and list their edges' weights.
    # Three sentences: Kestrel beat Carrow | Kestrel and | Carrow Kestrel
    words = ["Kestrel", "beat", "Carrow", "Kestrel", "and", "Carrow", "Kestrel"]
    tags = ["B-ORG", "O", "B-ORG", "B-ORG", "O", "B-ORG", "B-ORG"]
    sentence = [0, 0, 0, 1, 1, 2, 2]
    edges = [(0, 3, 0.91), (6, 3, 0.42), (3, 0, 0.5), (6, 0, 0.5), (0, 6, 0.5), (3, 6, 0.5),
             (2, 5, 0.1), (5, 2, 0.1)]
    page = tmp_path / "view.html"
    page.write_text(to_html([_graph(words, tags, tags, edges, sentence),
                             _graph(["x"], ["O"], ["O"])], threshold=0.5))
    res = subprocess.run([CHROMIUM, *BROWSER, f"--user-data-dir={tmp_path / 'profile'}",
                          "--virtual-time-budget=2000", "--dump-dom",
                          f"{page.as_uri()}#click=0:3"],
                         capture_output=True, text=True, timeout=120)
    dom = res.stdout
    assert '<section class="doc on" id="doc0"' in dom, res.stderr[-2000:]
    # the rendered entities are the predicted ones (every token here is an ORG or O)
    shown = re.findall(r'<section class="doc on" id="doc0".*?</section>', dom, flags=re.S)[0]
    assert shown.count('<mark class="ent') == tags.count("B-ORG") == 5
    lit = sorted(int(i) for i in re.findall(r'class="tok rep[^"]* hl" data-i="(\d+)"', dom))
    assert lit == [0, 6]
    assert re.search(r'class="tok rep[^"]* sel" data-i="3"', dom)
    panel = re.search(r'<aside class="panel" id="panel">(.*?)</aside>', dom, flags=re.S).group(1)
    assert "<b>Kestrel</b> <small>(sentence 1, token 0)</small>" in panel
    assert "2 incoming edges" in panel
    # neighbours by sentence and token (numbered as in predict.py's JSON lines), not by
    # their number in the document
    assert "Kestrel <small>(sentence 0, token 0)</small>" in panel
    assert "Kestrel <small>(sentence 2, token 1)</small>" in panel and "#" not in panel
    assert "0.910" in panel and "0.420" in panel and "threshold 0.5" in panel
    shot = tmp_path / "view.png"
    subprocess.run([CHROMIUM, *BROWSER, f"--user-data-dir={tmp_path / 'profile2'}",
                    "--window-size=1200,700", f"--screenshot={shot}",
                    f"{page.as_uri()}#click=0:3"], capture_output=True, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tagger_and_predict_write_a_page_for_new_text(model_dir, tmp_path):
    from conftest import run_script

    from docgraph.tagging.tagger import Tagger

    text = "Kestrel beat Carrow 2-1 on Saturday. Piet Rauch scored twice for <Kestrel>."
    page = Tagger.load(model_dir).to_html([text, ""], title="new text")
    assert page.count('<section class="doc"') == 1  # the empty document is left out
    assert "&lt;" in page and "<Kestrel>" not in page  # escaped
    assert "errors)" not in page  # no gold tags: no errors marked
    source = tmp_path / "in.txt"
    source.write_text(text + "\n")
    (tmp_path / "more.txt").write_text("Harwick Mining rose in Veldania.\n")
    out = tmp_path / "out.html"
    res = run_script("predict", "--model", model_dir, source, tmp_path / "more.txt",
                     "--format", "html", "--output", out, "--device", "cpu")
    assert res.returncode == 0, res.stderr
    assert out.read_text().startswith("<!DOCTYPE html>") and "Kestrel" in out.read_text()
    assert "<title>in.txt and 1 more</title>" in out.read_text()


def test_words_break_across_lines_only_when_one_does_not_fit():
    # break-all cut ordinary words at the line's end ("ope|n"); overflow-wrap breaks a word
    # only when it is longer than a line (a URL)
    from docgraph.viz.html import _CSS

    tok = next(rule for rule in _CSS.split("\n") if rule.startswith(".tok{"))
    assert "break-all" not in _CSS and "overflow-wrap:anywhere" in tok


def test_visualize_shows_a_labelled_file_given_by_data(model_dir, tmp_path, capsys):
    from docgraph.cli import visualize_main

    conll = tmp_path / "mine.conll"
    conll.write_text("-DOCSTART- O\n\nKestrel B-ORG\nbeat O\nCarrow B-ORG\n. O\n\n"
                     "-DOCSTART- O\n\nPiet B-PER\nRauch I-PER\nleft O\nHarwick B-LOC\n. O\n")
    spans = tmp_path / "mine.jsonl"
    spans.write_text('{"text": "Kestrel beat Carrow.", "label": [[0, 7, "ORG"]]}\n'
                     '{"text": "Piet Rauch left Harwick.", "label": [[0, 10, "PER"]]}\n')
    for source in (conll, spans):
        page = tmp_path / f"{source.stem}{source.suffix}.html"
        assert visualize_main(["--model", str(model_dir), "--data", str(source), "--html",
                               str(page), "--device", "cpu"]) == 0
        assert f"wrote {page} (2 documents)" in capsys.readouterr().out
        text = page.read_text()
        assert f"<title>{model_dir.name}: {source.name}</title>" in text
        assert text.count('<section class="doc"') == 2 and "Harwick" in text
        # each document scored against the file's gold tags
        assert len(re.findall(r"P \d+\.\d\d R \d+\.\d\d F1 \d+\.\d\d", text)) == 2
    # one document of it, with its noisiest edges
    page = tmp_path / "one.html"
    assert visualize_main(["--model", str(model_dir), "--data", str(conll), "--doc", "1",
                           "--html", str(page), "--noisy", "2", "--device", "cpu"]) == 0
    assert page.read_text().count('<section class="doc"') == 1 and "Rauch" in page.read_text()


def test_visualize_shows_raw_text_as_predict_reads_it(model_dir, tmp_path, capsys):
    """Raw text given by --data is read as predict.py reads it (not as CoNLL columns, whose
    last column would be a bad tag): one document, its words on the page, no gold scores."""
    from docgraph.cli import visualize_main

    bio = tmp_path / "bio.txt"
    bio.write_text("Piet Rauch studied Physics and Optics.\nHe left Kestrel for Harwick in "
                   "Veldania.\n", encoding="utf-8")
    page = tmp_path / "bio.html"
    assert visualize_main(["--model", str(model_dir), "--data", str(bio), "--html", str(page),
                           "--device", "cpu"]) == 0
    assert f"wrote {page} (1 documents)" in capsys.readouterr().out
    text = page.read_text()
    assert text.count('<section class="doc"') == 1 and "Optics" in text and "Harwick" in text
    assert not re.findall(r"P \d+\.\d\d R \d+\.\d\d F1 \d+\.\d\d", text)  # no gold


def test_entity_scores_show_as_colour_strength_and_tooltip(model_dir, sample_splits):
    """With scores, every entity carries its score (tooltip, data-score) and an opacity that
    grows with it, and the key explains the paler marks; without, the page has none."""
    import re

    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model_dir)
    docs = sample_splits["test"][:2]
    page = tagger.to_html(docs, scores=True)
    expected = [e.score for d in tagger.predict(docs) for e in d]
    found = [(float(m.group(1)), float(m.group(2)), float(m.group(3))) for m in re.finditer(
        r'title="[^"]*score (\d\.\d\d)" data-score="([\d.]+)" style="opacity:([\d.]+)"', page)]
    assert len(found) == len(expected) > 0
    for (shown, data, opacity), score in zip(found, expected):
        assert abs(data - score) < 1e-4 and abs(shown - score) <= 0.005 + 1e-9
        assert opacity == pytest.approx(0.4 + 0.6 * score, abs=0.006)
    assert "paler: less sure" in page
    plain = tagger.to_html(docs)
    assert "data-score" not in plain and "paler: less sure" not in plain
