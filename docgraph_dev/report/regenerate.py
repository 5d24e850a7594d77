"""How the committed results documents are regenerated: the command written at the top of
``RESULTS.md`` and the arguments recorded for ``python scripts/report.py`` (:data:`ARGS_FILE`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path


def regenerate_command(argv: Sequence[str]) -> str:
    """The documented command: ``python scripts/report.py`` and the arguments (``--check``
    left out), one option per line."""
    parts = ["python scripts/report.py"]
    for arg in argv:
        if arg == "--check":
            continue
        quoted = shlex.quote(arg)
        if arg.startswith("--"):
            parts.append(" \\\n    " + quoted)
        else:
            parts.append(" " + quoted)
    return "".join(parts)


def parse_command(command: str) -> list[str]:
    """The arguments of a :func:`regenerate_command` string (inverse of it)."""
    words = shlex.split(command.replace("\\\n", " "))
    if words[:2] != ["python", "scripts/report.py"]:
        raise ValueError(f"not a scripts/report.py command: {command!r}")
    return words[2:]


def documented_command(results_text: str) -> list[str]:
    """The arguments of the command written at the top of a generated RESULTS.md."""
    match = re.search(r"```bash\n(python scripts/report\.py.*?)\n```", results_text, flags=re.S)
    if not match:
        raise ValueError("no regeneration command at the top of the report")
    return parse_command(match.group(1))


#: The arguments that regenerate the committed results documents, one per line: what
#: ``python scripts/report.py`` (no arguments, or only ``--check``) runs. Written whenever
#: the report is generated into :data:`DEFAULT_OUT`.
ARGS_FILE = "benchmarks/results/report.args"
DEFAULT_OUT = "benchmarks/results/RESULTS.md"


def recorded_arguments(path: str | Path = ARGS_FILE) -> list[str]:
    """The recorded arguments of the committed results documents (:data:`ARGS_FILE`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no recorded report arguments; run scripts/report.py "
                                "with its arguments once (see benchmarks/results/RESULTS.md)")
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]
