"""TOML presets (``configs/<dataset>.toml``): finding and reading them, without torch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from docgraph.config.fields import ConfigError

__all__ = ["load_toml", "preset_path"]


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML preset, with a clear error naming the file.

    Raises:
        ConfigError: The file is missing or not valid TOML.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML ({err})") from None


def preset_path(dataset: str) -> Path | None:
    """The shipped preset ``configs/<dataset>.toml`` of a source checkout, if it exists."""
    path = Path(__file__).resolve().parents[2] / "configs" / f"{dataset}.toml"
    return path if path.is_file() else None
