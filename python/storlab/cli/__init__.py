"""The `storlab` command: one module per verb, each a thin layer over the
library API. Errors a user can fix print one line and exit 1; a traceback
only with --debug.

Environment: STORLAB_CATALOG — extra catalog files or folders (separated by
the OS path separator); STORLAB_CHROMIUM — the browser `report --png`
drives (default: chromium on PATH); NO_COLOR — plain output."""

from __future__ import annotations

import os
import re
import signal
import sys

import typer

from storlab.errors import InternalError, StorlabError, SuspectProfileError
from storlab.host import tool_info

app = typer.Typer(
    name="storlab",
    help="storlab: a storage lab for database engineers. Explain, simulate and measure storage deployments.\n\nEnvironment: STORLAB_CATALOG (extra catalog files or folders, separated by the OS path separator), STORLAB_CHROMIUM (the browser `report --png` drives; default: chromium on PATH), NO_COLOR.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show a traceback on errors."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    """storlab: a storage lab for database engineers."""
    # --debug is read in main(), before typer parses anything.
    del debug
    if version:
        info = tool_info()
        typer.echo(f"storlab {info['version']} ({info['git_sha'][:12]})")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(2)


from storlab.cli import catalog as _catalog  # noqa: E402  (registers commands)
from storlab.cli import limits as _limits  # noqa: E402,F401
from storlab.cli import simulate as _simulate  # noqa: E402,F401
from storlab.cli import calibrate as _calibrate  # noqa: E402,F401
from storlab.cli import emulate as _emulate  # noqa: E402,F401

app.add_typer(_catalog.app, name="catalog")

from storlab.cli import bench as _bench  # noqa: E402

app.add_typer(_bench.app, name="bench")

from storlab.cli import compare as _compare  # noqa: E402,F401
from storlab.cli import report as _report  # noqa: E402,F401
from storlab.cli import import_ as _import  # noqa: E402,F401
from storlab.cli import advise as _advise  # noqa: E402,F401


#: Signals that ended the run (SIGTERM, SIGHUP), for the exit code.
TERMINATED: list[int] = []


def _exit_code(code: int) -> int:
    """An interrupted run exits 130 for Ctrl-C, 128 + N for signal N."""
    return 128 + TERMINATED[0] if code == 130 and TERMINATED else code


def _from_interrupt(e: BaseException) -> bool:
    """Whether `e` was raised on the way out of a KeyboardInterrupt."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def main() -> None:
    """Entry point: usage errors exit 2 (typer), user errors 1, Ctrl-C 130,
    SIGTERM 143, SIGHUP 129."""
    def _terminate(signum, frame):
        # SIGTERM (kill, a CI timeout) and SIGHUP (the terminal closed) end a
        # run like Ctrl-C: what was measured is kept, test files, mounts and
        # managed clusters are cleaned up.
        TERMINATED.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    debug = "--debug" in sys.argv
    if debug:
        # Rust's own panic output too (storlab._native keeps it quiet otherwise).
        os.environ["STORLAB_DEBUG"] = "1"
    try:
        app()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if _from_interrupt(e):
            # typer turns a KeyboardInterrupt that no command kept into
            # exit 130 without a word.
            print("interrupted", file=sys.stderr)
        sys.exit(_exit_code(code))
    except InternalError as e:
        if debug:
            raise
        print(f"error: internal error ({e}) — rerun with --debug and report it", file=sys.stderr)
        sys.exit(70)
    except StorlabError as e:
        if debug:
            raise
        # A suspect profile's reasons one line each; any other error one line.
        lines = str(e).splitlines() if isinstance(e, SuspectProfileError) else [str(e)]
        for line in lines:
            print(f"error: {_short(line)}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        # A full disk, a quota, a read-only or refused output: the user's to
        # fix, named by its path.
        if debug or e.errno not in _USER_ERRNOS:
            if debug:
                raise
            _internal(e)
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e} — {_USER_ERRNOS[e.errno]}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(_exit_code(130))
    except Exception as e:
        if debug:
            raise
        _internal(e)
    except BaseException as e:
        # pyo3's PanicException (a Rust panic outside the work helper)
        # derives from BaseException, past `except Exception`.
        if debug or type(e).__name__ != "PanicException":
            raise
        _internal(e)


def _short(message: str, longest: int = 200) -> str:
    """One line, each word of it at most `longest` characters: a 100 kB key
    echoed back is cut to its start and its length."""
    def cut(m: re.Match) -> str:
        w = m.group(0)
        return f"{w[:longest]}…({len(w):,} characters)"

    return re.sub(r"\S{%d,}" % (longest + 1), cut, " ".join(message.split()))


def _internal(e: BaseException) -> None:
    text = " ".join(str(e).split())
    print(f"error: internal error ({e.__class__.__name__}: {text[:500]}) — rerun with --debug and report it", file=sys.stderr)
    sys.exit(70)


#: OS errors on an input or output the user names, with what to do.
_USER_ERRNOS = {
    28: "the disk is full: free space there or write elsewhere",  # ENOSPC
    122: "the disk quota is exceeded: free space there or write elsewhere",  # EDQUOT
    30: "a read-only file system: write elsewhere",  # EROFS
    13: "permission denied: write elsewhere or change its permissions",  # EACCES
    27: "the file would exceed the largest size allowed: write elsewhere",  # EFBIG
}
