"""The house rules of the package's import graph (docs/design.md, "Code layout").

Every ``import`` of a ``docgraph`` module counts: at the top of a file, inside a function (an
import hidden in a function is still a dependency) and under ``if TYPE_CHECKING:`` (a type a
module names is a dependency of its meaning, and a circle hidden there is still a circle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "docgraph"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, known: set[str], package_dir: Path = PACKAGE) -> set[str]:
    """The ``docgraph`` modules that ``path`` imports (``from docgraph import x`` names the
    module ``docgraph.x`` when that is a module, the package otherwise)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    this = module_name(path, package_dir)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "docgraph")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] == "docgraph":
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    found.add(candidate if candidate in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(this)
    return {m for m in found if m in known}


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    files = sorted(PACKAGE.rglob("*.py"))
    known = {module_name(f) for f in files}
    g = nx.DiGraph()
    g.add_nodes_from(known)
    for f in files:
        for target in imported_modules(f, known):
            g.add_edge(module_name(f), target)
    return g


def _edges_from(graph: nx.DiGraph, prefix: str) -> list[tuple[str, str]]:
    return [(a, b) for a, b in graph.edges if a == prefix or a.startswith(prefix + ".")]


def test_the_parser_sees_imports_in_functions_and_under_type_checking(tmp_path):
    package = tmp_path / "docgraph"
    package.mkdir()
    for name in ("__init__", "a", "b", "c"):
        (package / f"{name}.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from docgraph.c import X\n"
        "def f():\n    from docgraph import b\n    return b\n")
    (package / "b.py").write_text("import docgraph.c\nfrom . import a\n")
    known = {"docgraph", "docgraph.a", "docgraph.b", "docgraph.c"}
    assert imported_modules(package / "a.py", known, package) == {"docgraph.b", "docgraph.c"}
    assert imported_modules(package / "b.py", known, package) == {"docgraph.c", "docgraph.a"}


def test_no_import_cycles(graph):
    cycles = [c for c in nx.simple_cycles(graph) if "docgraph" not in c]
    assert not cycles, f"import cycles: {cycles[:5]}"


#: The packages and top-level modules of ``docgraph``, lowest layer first (docs/design.md,
#: "Code layout"): a module may import only from its own package and from layers below it.
LAYERS = ("config", "runtime", "data", "metrics", "nn", "graph", "batching", "model",
          "persistence", "viz", "tagging", "training", "serve", "cli", "integrations", "")


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of a module's package (``""``: the package root and
    ``python -m docgraph``'s ``__main__``)."""
    parts = module.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 and parts[1] != "__main__" else "")


def arrows_back_up(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """The imports from a lower layer into a higher one, or within a layer across packages."""
    return [(a, b) for a, b in graph.edges
            if layer_of(a) < layer_of(b)
            or (layer_of(a) == layer_of(b) and a.split(".")[:2] != b.split(".")[:2])]


def test_every_package_has_a_layer():
    packages = {p.name for p in PACKAGE.iterdir()
                if (p / "__init__.py").exists() or p.suffix == ".py"}
    assert {p.removesuffix(".py") for p in packages} - {"__init__", "__main__"} == (
        set(LAYERS) - {""})


def test_layers_point_one_way(graph):
    """No import runs back up the layers: ``TYPE_CHECKING`` imports and imports inside
    functions count as much as the others."""
    upward = arrows_back_up(graph)
    assert not upward, upward


def test_an_arrow_back_up_is_found():
    g = nx.DiGraph([("docgraph.data.vocab", "docgraph.runtime.atomic"),
                    ("docgraph.tagging.tagger", "docgraph.viz.html")])
    assert arrows_back_up(g) == []
    g.add_edge("docgraph.viz.networkx", "docgraph.tagging.inference")
    g.add_edge("docgraph.data.conll", "docgraph.persistence.checkpoint")
    assert sorted(arrows_back_up(g)) == [
        ("docgraph.data.conll", "docgraph.persistence.checkpoint"),
        ("docgraph.viz.networkx", "docgraph.tagging.inference")]


def test_nn_knows_only_tensors(graph):
    """``docgraph.nn`` imports nothing else of docgraph: not files, vocabularies or tag names
    (``data``), not the configuration (its layers take literal defaults; ``model.py`` turns
    the configuration into arguments), not the model or anything above it."""
    outside = [(a, b) for a, b in _edges_from(graph, "docgraph.nn")
               if not b.startswith("docgraph.nn")]
    assert not outside, outside


def test_data_knows_no_model(graph):
    """``docgraph.data`` knows files and strings: it imports nothing of the model side."""
    allowed = ("docgraph.data", "docgraph.runtime.atomic", "docgraph.runtime.integrity",
               "docgraph.runtime.lifetime", "docgraph.config")
    outside = [(a, b) for a, b in _edges_from(graph, "docgraph.data")
               if not b.startswith(allowed)]
    assert not outside, outside


def test_the_library_never_imports_the_development_package():
    """Importing every module of ``docgraph`` loads nothing of ``docgraph_dev`` (the
    measurement and report code, which is not installed with the library), although the
    development package is importable in that interpreter."""
    import subprocess
    import sys

    code = (
        "import importlib, importlib.util, pkgutil, sys\n"
        "import docgraph\n"
        "assert importlib.util.find_spec('docgraph_dev') is not None\n"
        "names = [m.name for m in pkgutil.walk_packages(docgraph.__path__, 'docgraph.')]\n"
        "for name in names:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as error:\n"
        "        if not (error.name or '').startswith(('spacy', 'transformers', 'torchvision',\n"
        "                                              'fastapi', 'uvicorn', 'prometheus',\n"
        "                                              'ray')):\n"
        "            raise\n"
        "print(len(names), sorted(m for m in sys.modules if m.split('.')[0] == 'docgraph_dev'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=True)
    count, loaded = out.stdout.strip().split(" ", 1)
    modules = [f for f in PACKAGE.rglob("*.py") if f.name != "__init__.py" and all(
        (PACKAGE / d / "__init__.py").exists() for d in f.relative_to(PACKAGE).parents)]
    assert int(count) >= len(modules) > 50
    assert loaded == "[]", out.stdout


def test_the_wheel_holds_only_the_library():
    """``pip install`` packages ``docgraph`` (and its shipped models), never ``docgraph_dev``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from fnmatch import fnmatchcase

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    root = PACKAGE.parent
    packages = [".".join(init.parent.relative_to(root).parts)
                for init in root.glob("*/**/__init__.py") if ".venv" not in init.parts]
    # setuptools' find: a package is taken when its dotted name matches an ``include`` pattern
    found = [p for p in packages if any(fnmatchcase(p, pattern) for pattern in include)]
    assert "docgraph" in found and "docgraph.tagging" in found
    assert not [p for p in found if p.startswith("docgraph_dev")], found
    # the weights apart from the code, in the same distribution
    assert "docgraph_models" in found
    assert config["tool"]["setuptools"]["package-data"]["docgraph_models"] == ["*/*"]
    assert not list(PACKAGE.rglob("model.pt"))


def test_argument_checking_stays_free_of_torch_modules(graph):
    """What ``scripts/*.py`` import before the arguments are checked reaches no module that
    loads torch: only ``cli``'s deferred ``commands`` does."""
    torch_free = {"docgraph.cli.arguments", "docgraph.cli.arguments.flags",
                  "docgraph.cli.arguments.parsers", "docgraph.cli.arguments.train_checks",
                  "docgraph.cli.arguments.tagging_checks", "docgraph.runtime.atomic",
                  "docgraph.runtime.integrity", "docgraph.runtime.lifetime",
                  "docgraph.persistence.run_lock",
                  "docgraph.persistence.archive", "docgraph.persistence.shipped",
                  "docgraph.persistence.locate", "docgraph.persistence.manifest",
                  "docgraph.tagging.prediction_io", "docgraph.tagging.chunks",
                  "docgraph.tagging.result"}
    torch_free |= {m for m in graph if m.startswith(("docgraph.data", "docgraph.config"))}
    for module in torch_free:
        reached = nx.descendants(graph, module)
        assert reached <= torch_free | {"docgraph"}, (module, reached - torch_free)
    # the entry points: the argument checks, torch-free configuration (the error base) and,
    # once the checks passed, the commands
    assert {m for m in graph.successors("docgraph.cli") if not m.startswith("docgraph.config")
            } == {"docgraph.cli.arguments", "docgraph.cli.commands"}


def _loaded_after_importing(modules: str, package: str) -> bool:
    """Whether importing ``modules`` (comma-separated) in a fresh interpreter loads ``package``."""
    import subprocess
    import sys

    code = f"import sys, {modules}; print({package!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip() == "True"


def test_configuration_is_torch_free():
    assert not _loaded_after_importing("docgraph.config, docgraph.cli.arguments", "torch")


def test_tagging_does_not_import_matplotlib():
    assert not _loaded_after_importing(
        "docgraph.tagging.tagger, docgraph.tagging.inference, docgraph.cli.commands",
        "matplotlib")


def test_every_module_has_a_test_file_of_its_name():
    """A maintainer finds a module's tests by its name: ``tests/test_<module>.py``, or
    ``tests/test_<package>_<module>.py`` where the package's name tells two apart; the modules
    of a package within a subpackage (``cli/arguments/``) may share ``tests/test_<package>.py``."""
    tests = PACKAGE.parent / "tests"
    paths = sorted(PACKAGE.rglob("*.py")) + sorted((PACKAGE.parent / "docgraph_dev").rglob("*.py"))
    missing = [str(path.relative_to(PACKAGE.parent)) for path in paths
               if path.name != "__init__.py"
               and not (tests / f"test_{path.stem}.py").exists()
               and not (tests / f"test_{path.parent.name}_{path.stem}.py").exists()
               and not (len(path.relative_to(PACKAGE.parent).parts) > 3
                        and (tests / f"test_{path.parent.name}.py").exists())]
    assert not missing, missing


def test_every_module_is_at_most_800_lines():
    """The house's limit on a module's length (docs/design.md, "Code layout")."""
    long = {str(path.relative_to(PACKAGE.parent)): count for path in sorted(PACKAGE.rglob("*.py"))
            if (count := len(path.read_text().splitlines())) > 800}
    assert not long, long
