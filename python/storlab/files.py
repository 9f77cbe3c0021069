"""Files a user hands storlab or gets from it: read with one clear line
when they cannot be, and written through a temporary file, so a failed or
interrupted run never leaves a half-written one (nor touches the old)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from storlab.errors import StorlabError


def read_input(path: str | os.PathLike, what: str = "file", folder_hint: str = "give a file") -> bytes:
    """The bytes of an input file; a missing, unreadable or folder path is
    refused naming it."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise StorlabError(f"{p}: no such {what}") from None
    except IsADirectoryError:
        raise StorlabError(f"{p}: is a folder — {folder_hint}") from None
    except OSError as e:
        raise StorlabError(f"{p}: cannot read the {what} ({e.__class__.__name__}: {e})") from None


def check_writable(path: Path, flag: str) -> None:
    """Fails now, before any run, if `path` cannot be written: a folder, a
    missing folder, a path under a file, or no permission to create files in
    its folder (tried with a temporary file, so it holds for root too)."""
    path = Path(path)
    if path.is_dir():
        raise StorlabError(f"{flag} {path}: is a folder — give a file name for the output")
    parent = path.parent
    if not parent.exists():
        raise StorlabError(f"{flag} {path}: no such folder {parent} — create it or write elsewhere")
    if not parent.is_dir():
        raise StorlabError(f"{flag} {path}: {parent} is a file, not a folder — write the output elsewhere")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".check")
    except OSError as e:
        raise StorlabError(f"{flag} {path}: cannot write in {parent} ({e.strerror}) — write the output elsewhere") from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)


def write_atomically(path: str | os.PathLike, data: str | bytes, what: str = "the output") -> None:
    """Writes `data` to `path` through a temporary file beside it. A device
    or a pipe (/dev/stdout, a FIFO) is written in place, never replaced."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if path.is_dir():
        raise StorlabError(f"{path}: is a folder — give a file name for {what}")
    if not path.parent.exists():
        raise StorlabError(f"{path.parent}: no such folder for {what}")
    if path.exists() and not path.is_file():
        try:
            with open(path, "wb") as f:
                f.write(raw)
        except OSError as e:
            raise StorlabError(f"{path}: cannot write {what} ({e.strerror or e}) — write it elsewhere") from None
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise StorlabError(f"{path}: cannot write in {path.parent} ({e.strerror}) — write {what} elsewhere") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise StorlabError(f"{path}: cannot write {what} ({e.strerror or e}) — free space there or write it elsewhere") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
