"""Shared helpers: run the real `storlab` command, in this process or as its own."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SCENARIOS = ROOT / "tests" / "data" / "scenarios"


def shared_scenario(name: str, duration_s: float | None = None) -> str:
    """A scenario of tests/data/scenarios (the Rust tests read them too),
    with another `[workload] duration_s` where given."""
    text = (SCENARIOS / f"{name}.toml").read_text()
    if duration_s is not None:
        text, n = re.subn(r"(?m)^duration_s = .*$", f"duration_s = {duration_s:g}", text, count=1)
        assert n == 1, name
    return text

# A database scenario (`[workload.database]`) for the tests of the database
# model: TPC-C at a scale and VU counts, 1 s + 10 s windows, on `configs`
# (by default an r5.large with a data and a log gp3).
R5_LARGE = """
[configs.gp3]
host = "aws/ec2/r5.large"
[[configs.gp3.pools]]
role = "data"
device = "aws/ebs/gp3"
size_gib = 100
[[configs.gp3.pools]]
role = "log"
device = "aws/ebs/gp3"
size_gib = 50
"""


def one_pool(host: str, device: str, title: str = "", region: str = "", config: str = "c", **pool) -> str:
    """A scenario of one config on `host` with one pool of `device`; the
    pool's other fields (count, layout, size_gib, ...) from `pool`."""
    head = "".join(f'{k} = "{v}"\n' for k, v in (("title", title), ("region", region)) if v)
    fields = "".join(f'{k} = "{v}"\n' if isinstance(v, str) else f"{k} = {v}\n" for k, v in pool.items())
    return f'{head}[configs.{config}]\nhost = "{host}"\n[[configs.{config}.pools]]\ndevice = "{device}"\n{fields}'


def db_scenario(profile: str = "tpcc-postgresql", scale: str = "10", vus: str = "[1, 2]", extra: str = "",
                configs: str = R5_LARGE) -> str:
    return (f'[workload.database]\nprofile = "{profile}"\nscale = {scale}\nvus = {vus}\nrampup_s = 1\n'
            f"duration_s = 10\n{extra}\n{configs}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests (servers, mounts, browsers) first: the workers then
    end together instead of one running a long test after the others are
    done. The order is otherwise the collection's."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# A test run started under nohup, or as a background job of a shell without
# job control, has SIGHUP or SIGINT ignored, and every storlab it starts
# would inherit that (an ignored signal stays ignored across exec): the
# tests that send those signals need them at their defaults.
signal.signal(signal.SIGHUP, signal.SIG_DFL)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _env(env: dict | None) -> dict:
    e = dict(os.environ)
    e["NO_COLOR"] = "1"
    e["COLUMNS"] = "200"
    e.pop("STORLAB_CATALOG", None)
    if env:
        e.update(env)
    return e


def run_process(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`storlab ARGS` as its own process: for what only a process shows
    (signals, exit codes set by the interpreter, what is left running)."""
    cmd = [sys.executable, "-m", "storlab.cli", *args]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(env), cwd=cwd) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # SIGTERM first: storlab stops what it started (a managed
            # cluster, a mount) on it, where a SIGKILL would leave them.
            p.terminate()
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def run(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`storlab ARGS` in this process, through the CLI's own entry point
    (its exit codes, its error lines), with stdout and stderr captured:
    the same answer as `run_process` without an interpreter's start-up.
    STORLAB_TEST_SUBPROCESS=1 runs every call as a process instead."""
    if os.environ.get("STORLAB_TEST_SUBPROCESS") == "1":
        return run_process(*args, env=env, cwd=cwd, timeout=timeout)
    from storlab import cli

    cmd = [sys.executable, "-m", "storlab.cli", *args]
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        fresh = _env(env)
        os.environ.clear()
        os.environ.update(fresh)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["storlab", *args]
        cli.TERMINATED.clear()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        for s, h in saved_signals.items():
            signal.signal(s, h)
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


@pytest.fixture
def storlab():
    return run


@pytest.fixture
def limits_json():
    def go(path: Path | str, *extra: str) -> dict:
        r = run("limits", str(path), "--json", *extra)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return go


@pytest.fixture
def scenario(tmp_path):
    """Writes a scenario file from text and returns its path."""

    def write(text: str, name: str = "s.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write
