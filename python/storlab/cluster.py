"""A search past one machine: `storlab advise --ray ADDRESS` runs the
screen and the simulations on a Ray cluster (`pip install 'storlab[ray]'`),
`--ray local` on a Ray instance started here for the search.

The search itself stays in Rust and in its own order: it hands this module
batches (at least 256 candidates a screening task, one simulation a
verifying task) and reads the answers back in the order it sent them, so
the answer is the one an in-process search gives. Each task runs on a
worker with storlab installed, with the same catalog files (sent once) and
the question's text; on a remote cluster the question's folder goes along
as Ray's `working_dir`, so the fio job files it names are found there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from storlab import _native
from storlab.errors import StorlabError
from storlab.host import PROFILES

# Candidates a screening task takes: enough that a task's work (a few
# milliseconds a candidate) outweighs Ray's cost of a task.
SCREEN_BATCH = 256

# How often a wait on the cluster looks at Ctrl-C, seconds.
POLL_S = 0.2
# How long the cancelled tasks of a stopped search are given to end, seconds.
SETTLE_S = 10.0


def _ray():
    try:
        import ray  # optional and heavy: only a --ray run loads it
    except ImportError:
        raise StorlabError("--ray needs Ray, which is not installed: pip install 'storlab[ray]'") from None
    return ray


# The catalog a worker process built, by the content it was built from.
_CATALOGS: dict[int, Any] = {}


def _worker_catalog(files: list[tuple[str, str]], as_of: str | None):
    key = hash((tuple(files), as_of))
    cat = _CATALOGS.get(key)
    if cat is None:
        cat = _native.Catalog(files)
        if as_of is not None:
            cat = cat.on(as_of)
        _CATALOGS.clear()
        _CATALOGS[key] = cat
    return cat


def _run_part(method: str, job: dict[str, Any], files: list[tuple[str, str]], part_json: str) -> str:
    """One task, on a worker: the screen or the simulations of a batch."""
    cat = _worker_catalog(files, job["as_of"])
    question = (job["file"], job["text"], job["dir"] or os.getcwd(), str(PROFILES))
    return cat.advise_part_json(method, question, part_json, demand_json=job["demand_json"], threads=1)


class RayCluster:
    """The `remote` of `Catalog.advise_json`: `width` simulations at once,
    `screen_batch` candidates a screening task."""

    screen_batch = SCREEN_BATCH

    def __init__(self, ray, job: dict[str, Any], files: list[tuple[str, str]]):
        self._ray = ray
        self._task = ray.remote(num_cpus=1, max_retries=1)(_run_part)
        self._job = ray.put(job)
        self._files = ray.put(files)
        self.width = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def _gather(self, refs: list, stopped: Callable[[], bool]) -> list[str] | None:
        """The tasks' answers in their order; None once `stopped()` (the
        tasks left are cancelled)."""
        ray = self._ray
        pending = list(refs)
        while pending:
            if stopped():
                for r in pending:
                    ray.cancel(r, force=True)
                # The cancellations settle before the caller shuts Ray
                # down: a driver shut down with its workers' deaths still
                # in flight can crash on the way out.
                ray.wait(pending, num_returns=len(pending), timeout=SETTLE_S)
                return None
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL_S)
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if isinstance(getattr(e, "cause", None), BaseException) else e
            raise StorlabError(f"a task on the Ray cluster failed: {str(cause).splitlines()[0] if str(cause) else cause!r}") from None

    def screen(self, candidates_json: str, stopped: Callable[[], bool]) -> str:
        candidates = json.loads(candidates_json)
        refs = [self._task.remote("screen", self._job, self._files, json.dumps(candidates[i:i + SCREEN_BATCH]))
                for i in range(0, len(candidates), SCREEN_BATCH)]
        answers = self._gather(refs, stopped)
        if answers is None:
            return "[]"
        return json.dumps([s for a in answers for s in json.loads(a)])

    def verify(self, items_json: str, stopped: Callable[[], bool]) -> str:
        items = json.loads(items_json)
        refs = [self._task.remote("verify", self._job, self._files, json.dumps([it])) for it in items]
        answers = self._gather(refs, stopped)
        if answers is None:
            return "[]"
        return json.dumps([o for a in answers for o in json.loads(a)])


def _reachable(address: str, timeout_s: float = 5.0) -> None:
    """Refuses at once an address nothing listens on (Ray itself would
    retry for minutes)."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise StorlabError(f"--ray {address}: give HOST:PORT of the cluster's head (ray://HEAD:10001 for Ray Client, "
                           "HEAD:6379 from a node of the cluster), or local")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise StorlabError(f"--ray {address}: nothing answers at {host}:{port} ({e.strerror or e}) — "
                           "is the cluster's head running? (ray start --head), or give local") from None


@contextmanager
def ray_cluster(address: str, *, file: str, text: str, question_dir: Path, files: list[tuple[str, str]],
                as_of: str | None, demand_json: str | None) -> Iterator[RayCluster]:
    """Connects to the Ray cluster at `address` (`local`: a Ray instance
    started here for the search, stopped after it) for one search."""
    ray = _ray()
    local = address == "local"
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    scratch = None
    if local:
        kwargs["num_cpus"] = os.cpu_count() or 1
    else:
        kwargs["address"] = address
        # The question's folder travels with the job: the fio job files it
        # names are found in the worker's working folder.
        kwargs["runtime_env"] = {"working_dir": str(question_dir)}
    if not local:
        _reachable(address)
    if ray.is_initialized():
        raise StorlabError("--ray: this process is already connected to a Ray cluster")
    # Ray starting is not to be cut in half: a Ctrl-C, SIGTERM or SIGHUP
    # meanwhile is kept and acted on once it has started (then Ray is shut
    # down as after any stop). ray.init puts its own SIGTERM handler in
    # place: storlab's (end the run as on Ctrl-C, keep what was found)
    # is put back.
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    pending: list[int] = []
    for sig, was in saved.items():
        if was != signal.SIG_IGN:
            signal.signal(sig, lambda signum, frame: pending.append(signum))
    cluster = None
    try:
        if local:
            # Its sessions' sockets and logs, removed after the search.
            scratch = tempfile.mkdtemp(prefix="storlab-ray-")
            kwargs["_temp_dir"] = scratch
        try:
            ray.init(**kwargs)
        except (ConnectionError, ValueError, RuntimeError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise StorlabError(f"--ray {address}: cannot connect ({first}) — give a Ray address such as ray://HEAD:10001, or local") from None
        job = {"file": file, "text": text, "dir": str(question_dir) if local else None, "as_of": as_of,
               "demand_json": demand_json}
        cluster = RayCluster(ray, job, files)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        if cluster is None or pending:
            _stop(ray, scratch)
    if pending:
        # As the signal would have: its handler (storlab's for SIGTERM and
        # SIGHUP ends the run as Ctrl-C does), or the default's end.
        handler = saved[signal.Signals(pending[0])]
        if callable(handler):
            handler(pending[0], None)
        raise KeyboardInterrupt
    try:
        yield cluster
    finally:
        _stop(ray, scratch)


def _stop(ray: Any, scratch: str | None) -> None:
    if ray.is_initialized():
        ray.shutdown()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
