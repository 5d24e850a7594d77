"""A document the way the model sees it: one self-contained, interactive HTML page.

:func:`to_html` turns the annotated graphs of
:meth:`docgraph.tagging.tagger.Tagger.inspect` into a page with no network access
(inline CSS and JavaScript, no CDN) and one section per document (a picker when there are
several):

* the text, predicted entities coloured by type (:func:`entity_colour`: the same colour for a
  type on every page) with a legend of the types and of every mark the page draws; with gold
  labels, every error marked (*missed*, *spurious*, *wrong type*, *wrong boundary*) and the
  document's P/R/F1;
* sentences and tokens numbered as in the JSON lines of ``predict.py``: from 0 in the
  document, a span's ``end`` exclusive (:data:`NUMBERING`);
* every token with recurrence neighbours underlined (red and dashed when it is pruned: in
  *Drop*, it sends no message); clicking it highlights its repeats in the document and lists
  each edge: the neighbour by sentence and token, the learnt same-type weight :math:`r_{ij}`,
  whether the source was pruned (its Monte-Carlo uncertainty against the threshold) and the
  neighbour's predicted tag;
* the repeated strings predicted with more than one type in the document flagged (the
  consistency measure of ``evaluate.py``, per document);
* for a model without a document graph, entities and errors only, and a line saying so.

A document longer than the model's ``max_doc_tokens`` is shown as the chunks the model tags
(:meth:`~docgraph.tagging.tagger.Tagger.chunks`), each numbered on its own. All text is
escaped; the data the script reads is JSON in a ``<script type="application/json">`` element
with ``<`` escaped. Edges are stored once per document (source,
target, weight), so the page grows with tokens plus edges.
"""

from __future__ import annotations

import colorsys
import hashlib
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from docgraph.data.tags import entity_type
from docgraph.metrics import extract_entities

__all__ = ["ENTITY_COLOURS", "NUMBERING", "document_errors", "entity_colour",
           "inconsistent_strings", "page_title", "to_html"]

#: How the page numbers sentences and tokens: as ``predict.py``'s JSON lines do.
NUMBERING = "sentences and tokens numbered from 0, end exclusive, as in predict.py's JSON lines"

#: Fixed colours of the entity types of CoNLL-2003 and OntoNotes 5.0 (the 18 OntoNotes types
#: distinct from each other; a CoNLL type shares the colour of its OntoNotes counterpart).
ENTITY_COLOURS: dict[str, str] = {
    "PERSON": "#aa9cfc", "ORG": "#7aecec", "GPE": "#feca74", "LOC": "#ff9561",
    "NORP": "#c887fb", "FAC": "#9cc9cc", "PRODUCT": "#bfeeb7", "EVENT": "#ffeb80",
    "WORK_OF_ART": "#f0d0ff", "LAW": "#ff8197", "LANGUAGE": "#8ab6f9", "DATE": "#bfe1d9",
    "TIME": "#d9fe92", "PERCENT": "#e4e7d2", "MONEY": "#fdd7b5", "QUANTITY": "#c8d6ff",
    "ORDINAL": "#ffd1dc", "CARDINAL": "#e2c8a0",
    "PER": "#aa9cfc", "MISC": "#ffeb80",
}


def entity_colour(type_: str) -> str:
    """The colour (``#rrggbb``) of an entity type, the same on every page and figure.

    The types of CoNLL-2003 and OntoNotes have fixed colours (:data:`ENTITY_COLOURS`); any
    other type gets a light colour derived from a hash of its name (stable across runs and
    processes, unlike Python's ``hash``).
    """
    if type_ in ENTITY_COLOURS:
        return ENTITY_COLOURS[type_]
    digest = hashlib.blake2b(type_.encode("utf-8"), digest_size=2).digest()
    hue = int.from_bytes(digest, "big") / 65536.0
    r, g, b = colorsys.hls_to_rgb(hue, 0.78, 0.75)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def page_title(inputs: Sequence[str | Path], limit: int = 80) -> str:
    """A page title for the input files of ``predict.py``: the first file's name, and how many
    more there are (``"news.txt and 2 more"``); ``"docgraph"`` without inputs.

    Args:
        inputs: The input paths.
        limit: Most characters of the first name (longer names are cut, ending in ``…``).
    """
    if not inputs:
        return "docgraph"
    name = Path(inputs[0]).name or str(inputs[0])
    if len(name) > limit:
        name = name[: limit - 1] + "…"
    more = len(inputs) - 1
    return name if more == 0 else f"{name} and {more} more"


def _sentences(G: nx.DiGraph, key: str) -> list[list[str]] | None:  # noqa: N803
    if not all(key in attrs for _, attrs in G.nodes(data=True)):
        return None
    out: list[list[str]] = [[] for _ in range(int(G.graph.get("num_sentences", 0)))]
    for _, attrs in sorted(G.nodes(data=True)):
        while attrs["sentence"] >= len(out):
            out.append([])
        out[attrs["sentence"]].append(attrs[key])
    return out


def document_errors(G: nx.DiGraph) -> dict[str, Any]:  # noqa: N803
    """Predicted and gold entities of one annotated document and their errors.

    Returns:
        ``{"predicted": [(sentence, type, start, end)], "gold": [...], "errors": [(kind,
        sentence, type, start, end, other)], "scores": (P, R, F1) or None}``; ``kind`` is
        ``missed`` (a gold entity no prediction overlaps), ``spurious`` (a prediction that
        overlaps no gold entity), ``wrong type`` (same tokens, other type) or ``wrong boundary``
        (overlapping, other tokens); ``other`` is the type (or span: type, token start and
        exclusive end, as on the page and in :data:`NUMBERING`) it was mistaken for. Positions in
        the tuples count from 0, ``end`` inclusive.
    """
    pred_tags, gold_tags = _sentences(G, "pred_tag"), _sentences(G, "gold_tag")
    predicted = sorted(extract_entities(pred_tags)) if pred_tags else []
    if gold_tags is None:
        return {"predicted": predicted, "gold": [], "errors": [], "scores": None}
    gold = sorted(extract_entities(gold_tags))
    pred_set, gold_set = set(predicted), set(gold)
    errors = []

    def overlapping(entity: tuple, others: Sequence[tuple]) -> list[tuple]:
        s, _, a, b = entity
        return [o for o in others if o[0] == s and o[2] <= b and a <= o[3]]

    for entity in gold:
        if entity in pred_set:
            continue
        hits = overlapping(entity, predicted)
        same_span = [h for h in hits if (h[2], h[3]) == (entity[2], entity[3])]
        if same_span:
            errors.append(("wrong type", *entity, same_span[0][1]))
        elif hits:
            errors.append(("wrong boundary", *entity,
                           f"{hits[0][1]} {hits[0][2]}-{hits[0][3] + 1}"))
        else:
            errors.append(("missed", *entity, ""))
    for entity in predicted:
        if entity not in gold_set and not overlapping(entity, gold):
            errors.append(("spurious", *entity, ""))
    correct = len(pred_set & gold_set)
    p = 100.0 * correct / len(predicted) if predicted else 0.0
    r = 100.0 * correct / len(gold) if gold else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"predicted": predicted, "gold": gold, "errors": errors, "scores": (p, r, f1)}


def inconsistent_strings(G: nx.DiGraph, predicted: Sequence[tuple]) -> dict[str, list[str]]:  # noqa: N803
    """Entity strings (lowercased) predicted with more than one type in the document."""
    words: dict[tuple[int, int], str] = {(a["sentence"], a["position"]): str(a["word"])
                                         for _, a in G.nodes(data=True)}
    types: dict[str, set[str]] = {}
    for s, type_, a, b in predicted:
        text = " ".join(words[(s, k)] for k in range(a, b + 1)).lower()
        types.setdefault(text, set()).add(type_)
    return {text: sorted(ts) for text, ts in sorted(types.items()) if len(ts) > 1}


def _document_data(G: nx.DiGraph) -> dict[str, Any]:  # noqa: N803
    nodes = sorted(G.nodes(data=True))
    tokens = [[str(a["word"]), a.get("pred_tag", "O"), a.get("uncertainty"), a.get("pruned")]
              for _, a in nodes]
    edges = [[int(j), int(i), None if a.get("r_ij") is None else round(float(a["r_ij"]), 4)]
             for j, i, a in G.edges(data=True)]
    return {"tokens": tokens, "edges": edges}


def _type_class(type_: str, classes: dict[str, int]) -> str:
    """The page's CSS class of an entity type (its colour: :func:`entity_colour`)."""
    if type_ not in classes:
        classes[type_] = len(classes)
    return f"t{classes[type_]}"


def _render_document(index: int, G: nx.DiGraph, classes: dict[str, int],  # noqa: N803
                     has_graph: bool, used: set[str]) -> str:
    """One document's section; the entity types it colours go into ``classes``, the marks it
    draws (:data:`_MARKS`) into ``used``."""
    info = document_errors(G)
    spans: dict[tuple[int, int], tuple] = {(e[0], e[2]): e for e in info["predicted"]}
    missed_at: set[tuple[int, int]] = {(s, k) for kind, s, _, a, b, _ in info["errors"]
                                       if kind == "missed" for k in range(a, b + 1)}
    marks: dict[tuple[int, int], list[str]] = {}
    for kind, s, type_, a, _b, other in info["errors"]:
        note = f"{kind}: gold {type_}" + (f", predicted {other}" if other else "")
        if kind == "spurious":
            note = f"spurious: predicted {type_}, no gold entity"
        marks.setdefault((s, a), []).append(note)
    neighbours = {n for e in G.edges for n in e}
    by_sentence: dict[int, list[tuple[int, dict]]] = {}
    for node, attrs in sorted(G.nodes(data=True)):
        by_sentence.setdefault(attrs["sentence"], []).append((node, attrs))
    out = []
    for s in sorted(by_sentence):
        parts = []
        tokens = by_sentence[s]
        k = 0
        while k < len(tokens):
            node, attrs = tokens[k]
            entity = spans.get((s, attrs["position"]))
            if entity is not None:
                _, type_, a, b = entity
                inner = [_token(n, t, n in neighbours, missed_at, used)
                         for n, t in tokens[k:k + b - a + 1]]
                wrong = any(e[0] != "missed" and e[1] == s and e[3] <= b and a <= e[4]
                            for e in info["errors"])
                if wrong:
                    used.add("err")
                title = f"{type_}" + ("; " + "; ".join(marks.get((s, a), [])) if wrong else "")
                score = attrs.get("pred_score")
                style = ""
                if score is not None:
                    used.add("score")
                    title += f"; score {score:.2f}"
                    style = f' data-score="{score:.4f}" style="opacity:{_strength(score):.2f}"'
                parts.append(f'<mark class="ent {_type_class(type_, classes)}'
                             f'{" err" if wrong else ""}" title="{html.escape(title)}"{style}>'
                             f'{" ".join(inner)}<sup>{html.escape(type_)}</sup></mark>')
                k += b - a + 1
                continue
            parts.append(_token(node, attrs, node in neighbours, missed_at, used))
            k += 1
        out.append(f'<p class="sent" data-s="{s}">{" ".join(parts)}</p>')
    scores = info["scores"]
    head = [f"<h2>{html.escape(str(G.graph.get('doc_id') or f'document {index}'))}</h2>"]
    facts = [f"{len(by_sentence)} sentences", f"{G.number_of_nodes()} tokens",
             f"{len(info['predicted'])} predicted entities"]
    if scores is not None:
        facts.append(f"P {scores[0]:.2f} R {scores[1]:.2f} F1 {scores[2]:.2f} "
                     f"({len(info['errors'])} errors)")
    if has_graph:
        facts.append(f"{G.number_of_edges()} edges")
    head.append(f'<p class="facts">{html.escape(" · ".join(facts))}</p>')
    if not has_graph:
        head.append('<p class="note">This model has no document graph (a BiLSTM-CRF): '
                    "entities and errors only.</p>")
    conflicting = inconsistent_strings(G, info["predicted"])
    if conflicting:
        items = "".join(f"<li><b>{html.escape(text)}</b>: {html.escape(', '.join(types))}</li>"
                        for text, types in conflicting.items())
        head.append(f'<div class="incons">Repeated strings with more than one predicted type '
                    f"({len(conflicting)}):<ul>{items}</ul></div>")
    if info["errors"]:
        rows = "".join(
            f"<tr><td>{html.escape(kind)}</td><td>{s}</td><td>{a}</td><td>{b + 1}</td>"
            f"<td>{html.escape(type_)}</td><td>{html.escape(str(other))}</td></tr>"
            for kind, s, type_, a, b, other in info["errors"])
        head.append('<details class="errors"><summary>Errors</summary>'
                    f'<table title="{NUMBERING}"><tr><th>kind</th><th>sentence</th>'
                    "<th>start</th><th>end</th><th>gold type</th><th>predicted</th></tr>"
                    f"{rows}</table></details>")
    data = json.dumps(_document_data(G), separators=(",", ":")).replace("<", "\\u003c")
    return (f'<section class="doc" id="doc{index}" data-index="{index}">{"".join(head)}'
            f'<div class="text">{"".join(out)}</div>'
            f'<script type="application/json" class="data">{data}</script></section>')


def _token(node: int, attrs: dict, linked: bool, missed_at: set, used: set[str]) -> str:
    """A token's ``<span>``: underlined when it has repeats (``linked``), dashed red when it
    has and is pruned (a token without repeats sends no message either way); its marks go
    into ``used``."""
    classes = ["tok"]
    if linked:
        classes.append("rep")
        if attrs.get("pruned"):
            classes.append("pruned")
    used.update(classes[1:])
    if (attrs["sentence"], attrs["position"]) in missed_at:
        used.add("missed")
        gold = entity_type(attrs.get("gold_tag", "O"))
        return (f'<span class="{" ".join(classes)} missed" data-i="{node}" '
                f'title="missed: gold {html.escape(gold)}">{html.escape(str(attrs["word"]))}'
                "</span>")
    word = html.escape(str(attrs["word"]))
    return f'<span class="{" ".join(classes)}" data-i="{node}">{word}</span>'


_CSS = """
body{font:15px/1.6 system-ui,sans-serif;margin:0;color:#222}
header{position:sticky;top:0;background:#fafafa;border-bottom:1px solid #ddd;
padding:6px 16px;z-index:2}
main{display:flex;gap:16px;padding:0 16px}
.docs{flex:3;min-width:0}.panel{flex:1;position:sticky;top:60px;align-self:flex-start;
border:1px solid #ddd;border-radius:6px;padding:8px;max-height:80vh;overflow:auto;font-size:13px}
.doc{display:none}.doc.on{display:block}.sent{margin:4px 0}
.tok{padding:0 1px;border-radius:3px;overflow-wrap:anywhere}
.rep{border-bottom:2px dotted #555;cursor:pointer}
.pruned{border-bottom-style:dashed;border-bottom-color:#c00}
.hl{outline:2px solid #0057d9;background:#dbe9ff}.sel{outline:3px solid #d90000}
.ent{padding:1px 3px;border-radius:4px}.ent sup{font-size:9px;font-weight:bold;margin-left:2px}
.err{box-shadow:0 0 0 2px #d00 inset}.missed{text-decoration:underline wavy #d00}
.incons{background:#fff4e5;border:1px solid #f0b35b;padding:4px 8px;margin:6px 0}
.note{color:#666;font-style:italic}.facts{color:#555;margin:0}
.legend span{padding:1px 6px;border-radius:4px;margin-right:4px}
.marks{color:#555;font-size:13px;margin-left:8px}.marks span{margin:0 3px 0 8px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:1px 6px;text-align:left}
"""

_JS = r"""
(function(){
const sel=document.getElementById('picker');const docs=[...document.querySelectorAll('.doc')];
const panel=document.getElementById('panel');const thr=document.body.dataset.threshold;
function data(d){if(!d._data){d._data=JSON.parse(d.querySelector('script.data').textContent);
 const adj={};for(const [j,i,r] of d._data.edges){(adj[i]=adj[i]||[]).push([j,r]);}
 d._adj=adj;d._toks=[...d.querySelectorAll('.tok')];d._at={};
 for(const p of d.querySelectorAll('.sent')){[...p.querySelectorAll('.tok')].forEach((t,k)=>{
  d._at[t.dataset.i]='sentence '+p.dataset.s+', token '+k;});}}return d._data;}
function show(k){docs.forEach((d,n)=>d.classList.toggle('on',n===k));panel.textContent='';}

function fmt(x){return x===null||x===undefined?'–':(+x).toFixed(3);}
const ESC={'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'};
function esc(s){return String(s).replace(/[&<>"']/g,c=>ESC[c]);}
function pick(d,i){const t0=performance.now();const D=data(d);
 d._toks.forEach(t=>t.classList.remove('hl','sel'));
 const me=d._toks[i];me.classList.add('sel');const edges=d._adj[i]||[];
 const rows=edges.map(([j,r])=>{d._toks[j].classList.add('hl');const t=D.tokens[j];
  return '<tr data-j="'+j+'"><td>'+esc(t[0])+' <small>('+d._at[j]+')</small></td><td>'+fmt(r)+
  '</td><td>'+(t[3]?'yes':'no')+' (u='+fmt(t[2])+')</td><td>'+esc(t[1])+'</td></tr>';}).join('');
 const t=D.tokens[i];panel.innerHTML='';const h=document.createElement('div');
 h.innerHTML='<b></b> <small>('+d._at[i]+')</small><br>tag '+esc(t[1])+' · u='+fmt(t[2])+
  (thr?' (threshold '+thr+')':'')+'<br>'+edges.length+' incoming edges<table><tr><th>from</th>'+
  '<th>r_ij</th><th>pruned</th><th>its tag</th></tr>'+rows+'</table>';
 h.querySelector('b').textContent=t[0];
 panel.appendChild(h);document.body.dataset.pickMs=(performance.now()-t0).toFixed(1);}
docs.forEach(d=>d.addEventListener('click',e=>{const t=e.target.closest('.rep');
 if(t)pick(d,+t.dataset.i);}));
if(sel){sel.addEventListener('change',()=>show(+sel.value));}
document.body.dataset.readyMs=performance.now().toFixed(0);
show(0);panel.textContent='Click an underlined word: its repeats in the document light up.';
const m=/^#click=(\d+):(\d+)$/.exec(location.hash);  // #click=DOC:TOKEN, for a link or a test
if(m&&docs[+m[1]]){const k=+m[1];show(k);if(sel)sel.value=k;
 const t=docs[k].querySelector('.tok[data-i="'+m[2]+'"]');if(t)t.click();}
})();
"""


#: The marks a page may draw on its words (CSS class -> its key in the header), in order.
_MARKS: dict[str, str] = {
    "rep": '<span class="rep">word</span>has repeats (click)',
    "pruned": '<span class="rep pruned">word</span>pruned (too uncertain: sends no message)',
    "err": '<span class="ent err">word</span>wrong entity (hover)',
    "missed": '<span class="missed">word</span>missed entity',
    "score": '<span class="ent" style="opacity:0.55">word</span>paler: less sure (its score '
             'when hovered)',
}


def _strength(score: float) -> float:
    """The opacity of an entity of ``score``: from 0.4 (score 0) to 1 (score 1), so that the
    least sure entities stay readable."""
    return 0.4 + 0.6 * min(1.0, max(0.0, score))


def _marks_legend(used: set[str]) -> str:
    """The header's key to the marks the page draws (``used``, :data:`_MARKS`), and how it
    numbers sentences and tokens (:data:`NUMBERING`) when it shows the numbers."""
    items = [key for mark, key in _MARKS.items() if mark in used]
    if "rep" in used or "err" in used or "missed" in used:
        items.append(f"<span>#</span>{NUMBERING}")
    return f'<span class="marks">{"".join(items)}</span>' if items else ""


def _as_graph(item: Any) -> nx.DiGraph:
    """An annotated graph, or the graph of a spaCy Doc tagged by the ``docgraph_ner``
    component (its ``doc._.docgraph_graph()``, :mod:`docgraph.integrations.spacy_component`)."""
    if isinstance(item, nx.DiGraph):
        return item
    method = getattr(getattr(item, "_", None), "docgraph_graph", None)
    if method is None:
        raise TypeError("to_html takes annotated graphs or spaCy Docs tagged by the "
                        f"docgraph_ner component, got {type(item).__name__}")
    return method()


def to_html(graphs: Sequence[Any], title: str = "docgraph",
            threshold: float | None = None, has_graph: bool | None = None) -> str:
    """The self-contained page of annotated documents (see the module docstring).

    Args:
        graphs: Annotated graphs (:meth:`docgraph.tagging.tagger.Tagger.inspect`), one per
            document, or spaCy Docs tagged by the ``docgraph_ner`` component.
        title: Page title.
        threshold: The model's uncertainty threshold, shown beside each token's uncertainty
            (default: the ``threshold`` graph attribute, which tagged Docs carry).
        has_graph: Whether the model has a document graph (a BiLSTM-CRF has none; default:
            unless every graph's ``has_graph`` attribute says not).

    Returns:
        The HTML text.
    """
    graphs = [_as_graph(item) for item in graphs]
    if threshold is None:
        threshold = next((G.graph["threshold"] for G in graphs
                          if G.graph.get("threshold") is not None), None)
    if has_graph is None:
        has_graph = not graphs or any(G.graph.get("has_graph", True) for G in graphs)
    classes: dict[str, int] = {}
    used: set[str] = set()
    sections = [_render_document(k, G, classes, has_graph, used)
                for k, G in enumerate(graphs)]
    legend = "".join(f'<span class="t{classes[t]}">{html.escape(t)}</span>'
                     for t in sorted(classes))
    colours = "".join(f".t{n}{{background:{entity_colour(t)}}}" for t, n in classes.items())
    marks = _marks_legend(used)
    picker = ""
    if len(graphs) > 1:
        options = "".join(
            f'<option value="{k}">{k}: {html.escape(str(G.graph.get("doc_id") or k))} '
            f"({G.number_of_nodes()} tokens)</option>" for k, G in enumerate(graphs))
        picker = f'<select id="picker" aria-label="document">{options}</select> '
    thr = "" if threshold is None else f' data-threshold="{threshold:g}"'
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}{colours}</style></head>"
            f"<body{thr}><header><b>{html.escape(title)}</b> {picker}"
            f'<span class="legend">{legend}</span>{marks}</header><main><div class="docs">'
            f'{"".join(sections)}</div><aside class="panel" id="panel"></aside></main>'
            f"<script>{_JS}</script></body></html>\n")
