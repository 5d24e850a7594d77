"""The README's Python API example runs as written (in a temporary working directory)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _api_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert match, "README has no python block under '## Python API'"
    return match.group(1)


def test_readme_api_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DOCGRAPH_DATA_DIR", raising=False)
    exec(compile(_api_example(), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "test F1" in out
    assert (tmp_path / "runs" / "api-demo" / "model.pt").is_file()
    # every entity line: doc sentence start end TYPE text...
    entity_lines = [line.split() for line in out.splitlines()[1:]]
    for fields in entity_lines:
        assert fields[0] in ("doc-0", "doc-1")
        assert int(fields[2]) < int(fields[3])
        assert fields[4] in ("PER", "LOC", "ORG", "MISC")
