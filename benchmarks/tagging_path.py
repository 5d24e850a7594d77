"""The files a text passes on its way to its entities, and the calls that climb back up a layer.

One :meth:`Tagger.pipe <docgraph.tagging.tagger.Tagger.pipe>` call (a warm-up call first, so
that first-use imports and caches are not counted) is traced with :func:`sys.setprofile`: every
Python function of the ``docgraph`` package that runs is recorded with its file, and every
call from one ``docgraph`` function to another (the nearest ``docgraph`` frame below the callee,
through torch's and PyG's own frames) with the layers of both files (the order of
``tests/test_import_graph.py``). A call into a higher layer than the caller's is a climb back
up. The imports of the files on the path that point up a layer are counted from their source
(every ``import``, at the top or in a function).

    python benchmarks/tagging_path.py --model conll03 [--scores] [--inspect] [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "docgraph"
TEXT = ("German chancellor Helmut Kohl met French president Jacques Chirac in Bonn on Tuesday. "
        "Kohl said Germany and France would press the European Union to agree on a single "
        "currency.\n\nShares of Microsoft Corp rose 2 percent on the Nasdaq after the Redmond "
        "company said Bill Gates would visit Tokyo.")


def layers() -> tuple[str, ...]:
    """The layer order of ``tests/test_import_graph.py`` (lowest first)."""
    tree = ast.parse((ROOT / "tests" / "test_import_graph.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "LAYERS":
            return tuple(ast.literal_eval(node.value))
    raise SystemExit("tests/test_import_graph.py: no LAYERS")


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str, order: tuple[str, ...]) -> int:
    parts = module.split(".")
    return order.index(parts[1] if len(parts) > 1 else "")


def upward_imports(path: Path, order: tuple[str, ...]) -> list[str]:
    """The ``docgraph`` modules ``path`` imports from a higher layer than its own."""
    this = module_of(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for name in names:
            if name.split(".")[0] == "docgraph" and name != "docgraph" and \
                    layer_of(name, order) > layer_of(this, order):
                found.append(name)
    return found


def trace(model: str, scores: bool, inspect: bool) -> dict:
    sys.path.insert(0, str(ROOT))  # this checkout's docgraph
    from docgraph.tagging.tagger import Tagger

    tagger = Tagger.load(model)
    if hasattr(tagger, "pipe"):
        def tag():
            return list(tagger.pipe([TEXT], scores=scores, inspect=inspect))
    else:  # a checkout from before Tagger.pipe: its tag_documents, the same documents out
        def tag():
            return list(tagger.tag_documents([TEXT], scores=scores, inspect=inspect))
    tag()  # warm-up: imports, caches
    order = layers()
    package = str(PACKAGE)
    files: Counter[str] = Counter()
    climbs: Counter[tuple[str, str]] = Counter()
    functions: set[tuple[str, str]] = set()

    def nearest(frame):  # the nearest docgraph frame at or below ``frame``
        while frame is not None and not frame.f_code.co_filename.startswith(package):
            frame = frame.f_back
        return frame

    def profile(frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(package):
            return
        callee = frame.f_code.co_filename
        files[callee] += 1
        functions.add((callee, frame.f_code.co_qualname))
        caller = nearest(frame.f_back)
        if caller is not None and caller.f_code.co_filename != callee:
            a = module_of(Path(caller.f_code.co_filename))
            b = module_of(Path(callee))
            if layer_of(b, order) > layer_of(a, order):
                climbs[(f"{a}:{caller.f_code.co_qualname}", f"{b}:{frame.f_code.co_qualname}")] += 1

    sys.setprofile(profile)
    try:
        tagged = tag()
    finally:
        sys.setprofile(None)
    paths = sorted(files, key=lambda f: (layer_of(module_of(Path(f)), order), f))
    return {
        "model": model, "scores": scores, "inspect": inspect,
        "entities": [(e.type, e.text) for e in tagged[0].entities],
        "files": [str(Path(f).relative_to(ROOT)) for f in paths],
        "file_count": len(files),
        "function_count": len(functions),
        "files_outside_the_network": sum(
            1 for f in files if module_of(Path(f)).split(".")[1:2] not in (["nn"], ["model"])),
        "calls_climbing_up": [f"{a} -> {b}" for a, b in sorted(climbs)],
        "imports_climbing_up": {str(Path(f).relative_to(ROOT)): upward_imports(Path(f), order)
                                for f in paths if upward_imports(Path(f), order)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="conll03")
    parser.add_argument("--scores", action="store_true")
    parser.add_argument("--inspect", action="store_true")
    parser.add_argument("--json", default=None, help="also write the result here")
    args = parser.parse_args()
    result = trace(args.model, args.scores, args.inspect)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
