"""The top-level API: every public name resolves, and ``import docgraph`` loads no torch."""

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import docgraph


def test_every_public_name_is_lazy_and_resolves():
    assert set(docgraph.__all__) == set(docgraph._LAZY)
    for name in docgraph.__all__:
        obj = getattr(docgraph, name)
        assert obj.__name__ == name


def test_importing_the_package_loads_no_torch():
    code = "import sys, docgraph; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


#: The packages whose public names docs/api.md lists, each under its own heading.
PACKAGES = ("docgraph", "docgraph.config", "docgraph.data", "docgraph.graph", "docgraph.nn",
            "docgraph.batching", "docgraph.viz", "docgraph.persistence", "docgraph.tagging",
            "docgraph.training", "docgraph.integrations", "docgraph.serve", "docgraph.runtime",
            "docgraph.cli")
API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def api_page_names(text: str) -> dict[str, set[str]]:
    """The names docs/api.md lists (first column of each table) under each ``## `package```."""
    listed: dict[str, set[str]] = {}
    package = None
    for line in text.splitlines():
        heading = re.fullmatch(r"## `([\w.]+)`", line)
        if heading:
            package = heading.group(1)
            listed[package] = set()
        elif package and (row := re.match(r"\| `(\w+)` \|", line)):
            listed[package].add(row.group(1))
    return listed


def test_every_package_is_on_the_api_page():
    subpackages = {f"docgraph.{p.name}" for p in Path(docgraph.__file__).parent.iterdir()
                   if (p / "__init__.py").exists()}
    assert set(PACKAGES) == subpackages | {"docgraph"}
    assert set(api_page_names(API_PAGE.read_text())) == set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_api_page_lists_exactly_each_all(package):
    module = importlib.import_module(package)
    assert api_page_names(API_PAGE.read_text())[package] == set(module.__all__)
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        try:
            getattr(module, name)
        except ImportError as error:  # an optional extra that is not installed
            assert error.name and error.name.split(".")[0] in OPTIONAL, (package, name, error)


#: Libraries of the extras a public name may need.
OPTIONAL = {"spacy", "ray", "fastapi", "uvicorn", "prometheus_client", "transformers",
            "matplotlib"}


def test_the_page_parser_reads_headings_and_rows():
    text = "## `docgraph.a`\n\n| name | what |\n|---|---|\n| `x` | one |\n\n## `docgraph.b`\n"
    assert api_page_names(text) == {"docgraph.a": {"x"}, "docgraph.b": set()}
