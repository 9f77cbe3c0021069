"""The catalog: the vendor data files shipped in this folder plus the user's
own (`--catalog PATH` or `STORLAB_CATALOG`, files or folders separated by
the OS path separator). The Rust model validates and interprets them."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from storlab import _native
from storlab.errors import CatalogError, ScenarioError

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
    for part in [*(p for p in env.split(os.pathsep) if p), *(extra or [])]:
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


@functools.lru_cache(maxsize=8)
def _catalog_for(key: tuple[tuple[str, int, int], ...], extra: tuple[str, ...]) -> tuple[_native.Catalog, list[str]]:
    files = read_catalog_files(list(extra))
    return _native.Catalog(files), [n for n, _ in files]


def open_catalog(extra: list[str | os.PathLike] | None = None) -> tuple[_native.Catalog, list[str]]:
    """The catalog, validated once and kept while its files are unchanged,
    with the names of the files it was read from."""
    key = []
    for p in catalog_paths(extra):
        try:
            st = p.stat()
            key.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            key.append((str(p), -1, -1))
    return _catalog_for(tuple(key), tuple(str(e) for e in extra or []))


def read_scenario(path: str | os.PathLike) -> tuple[str, str]:
    p = Path(path)
    try:
        return str(p), p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a folder, not a scenario file — give a .toml file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read scenario file ({e.__class__.__name__}: {e})") from e


def dated_catalog(cat: _native.Catalog, as_of: str | None) -> _native.Catalog:
    """`cat` with the vendor rules of `as_of` (YYYY-MM-DD, `--as-of`), which
    wins over a scenario's own `as_of`; `cat` itself without a date."""
    return cat if as_of is None else cat.on(as_of)
