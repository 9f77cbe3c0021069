"""The catalog: the vendor data files shipped in this folder plus the user's
own (`--catalog PATH` or `STORLAB_CATALOG`, files or folders separated by
the OS path separator). The Rust model validates and interprets them."""

from __future__ import annotations

import os
from pathlib import Path

from storlab.errors import CatalogError

BUILTIN_DIR = Path(__file__).resolve().parent
ENV_VAR = "STORLAB_CATALOG"


def _toml_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".toml" and p.is_file())
    if path.is_file():
        return [path]
    raise CatalogError(f"{path}: no such catalog file or folder — check --catalog or ${ENV_VAR}")


def catalog_paths(extra: list[str | os.PathLike] | None = None) -> list[Path]:
    """The catalog files in load order: built-in, then $STORLAB_CATALOG, then `extra`."""
    paths = _toml_files(BUILTIN_DIR)
    env = os.environ.get(ENV_VAR, "")
    for part in [p for p in env.split(os.pathsep) if p]:
        paths += _toml_files(Path(part))
    for part in extra or []:
        paths += _toml_files(Path(part))
    return paths


def read_catalog_files(extra: list[str | os.PathLike] | None = None) -> list[tuple[str, str]]:
    """(display name, text) for every catalog file; built-in files by bare name."""
    out = []
    for p in catalog_paths(extra):
        name = p.name if p.parent == BUILTIN_DIR else str(p)
        try:
            out.append((name, p.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as e:
            raise CatalogError(f"{p}: cannot read catalog file ({e.__class__.__name__}: {e})") from e
    return out
