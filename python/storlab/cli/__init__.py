"""The `storlab` command: one module per verb, each a thin layer over the
library API. Errors a user can fix print one line and exit 1; a traceback
only with --debug.

Environment: STORLAB_CATALOG — extra catalog files or folders (separated by
the OS path separator); STORLAB_CHROMIUM — the browser `report --png`
drives (default: chromium on PATH); NO_COLOR — plain output."""

from __future__ import annotations

import sys

import typer

from storlab.errors import StorlabError

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
        from storlab import tool_info

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


#: Signals that ended the run (SIGTERM, SIGHUP), for the exit code.
TERMINATED: list[int] = []


def _exit_code(code: int) -> int:
    """An interrupted run exits 130 for Ctrl-C, 128 + N for signal N."""
    return 128 + TERMINATED[0] if code == 130 and TERMINATED else code


def main() -> None:
    """Entry point: usage errors exit 2 (typer), user errors 1, Ctrl-C 130,
    SIGTERM 143, SIGHUP 129."""
    import signal

    def _terminate(signum, frame):
        # SIGTERM (kill, a CI timeout) and SIGHUP (the terminal closed) end a
        # run like Ctrl-C: what was measured is kept, test files, mounts and
        # managed clusters are cleaned up.
        TERMINATED.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    debug = "--debug" in sys.argv
    try:
        app()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        sys.exit(_exit_code(code))
    except StorlabError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(_exit_code(130))
    except Exception as e:
        if debug:
            raise
        print(f"error: internal error ({e.__class__.__name__}: {e}) — rerun with --debug and report it", file=sys.stderr)
        sys.exit(70)
