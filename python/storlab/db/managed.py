"""A PostgreSQL cluster storlab runs itself (`storlab bench db --db
managed-postgres --dir DIR [--keep]`): initdb and pg_ctl from the installed
binaries, the data directory inside DIR so it can sit on the volume under
test, a private Unix socket and no TCP, and nothing left behind unless kept.

Layout: DIR/storlab-pg/{data, sock, server.log}. storlab removes only what it
created: DIR/storlab-pg, and DIR itself if it made DIR. A DIR/storlab-pg
without data/PG_VERSION is not ours and is refused, never deleted.

As root the server runs as `postgres` (else `nobody`), since PostgreSQL
refuses to run as root; trust authentication on the private socket lets
root connect as that user without a password."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from storlab.errors import DatabaseError

PORT = 5432
"""The socket directory is private to the cluster, so the standard port cannot
collide with another server (and no TCP port is opened)."""

CLUSTER = "storlab-pg"
DBNAME = "storlab"
_SERVER_BINS = ("initdb", "pg_ctl", "postgres")
_NOT_FOUND = "PostgreSQL server binaries (initdb, pg_ctl) not found"
_FIX_BINS = "install the postgresql package or set STORLAB_PG_BIN to their folder"
# Settings storlab owns: changing them would open TCP, move the socket or break conninfo.
_OWNED = {"listen_addresses", "unix_socket_directories", "port", "max_connections",
          "data_directory", "config_file", "hba_file", "ident_file"}
_SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_SOCKET_MAX = 100  # bytes; the kernel's sun_path is 108 and PostgreSQL refuses longer paths
_DEBIAN_BINS = Path("/usr/lib/postgresql")  # Debian/Ubuntu: <version>/bin, kept off PATH
_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] ")  # the default '%m [%p] '


def _missing(d: Path) -> list[str]:
    return [n for n in _SERVER_BINS if not (os.access(d / n, os.X_OK) and (d / n).is_file())]


def _version_key(p: Path) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", p.parent.name))


def find_pg_bin() -> Path:
    """The folder holding initdb, pg_ctl and postgres. Order: $STORLAB_PG_BIN
    (an explicit choice, so an error if incomplete), `pg_config --bindir`, the
    highest /usr/lib/postgresql/*/bin (Debian's layout keeps them off PATH),
    then PATH."""
    env = os.environ.get("STORLAB_PG_BIN")
    if env:
        missing = _missing(Path(env))
        if not missing:
            return Path(env)
        raise DatabaseError(f"{_NOT_FOUND}: STORLAB_PG_BIN={env} has no {', '.join(missing)} — "
                            "set STORLAB_PG_BIN to the folder holding initdb, pg_ctl and postgres, or unset it")
    looked: list[str] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=False)
            bindir = out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            bindir = ""
        if bindir and not _missing(Path(bindir)):
            return Path(bindir)
        looked.append(f"pg_config --bindir ({bindir or 'no answer'})")
    else:
        looked.append("pg_config (not on PATH)")
    for d in sorted(_DEBIAN_BINS.glob("*/bin"), key=_version_key, reverse=True):
        if not _missing(d):
            return d
    looked.append(f"{_DEBIAN_BINS}/*/bin")
    initdb = shutil.which("initdb")
    if initdb and not _missing(Path(initdb).parent):
        return Path(initdb).parent
    looked.append("PATH")
    raise DatabaseError(f"{_NOT_FOUND} (looked at {', '.join(looked)}) — {_FIX_BINS}")


def _conn_quote(v: str) -> str:
    """A libpq conninfo value: bare if plain, else single-quoted."""
    if v and re.fullmatch(r"[^\s'\\]+", v):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _conf_quote(v: str) -> str:
    return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"


def _tail(text: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no output"


def _alive(pid: int) -> bool:
    """Running (a zombie counts as gone: its parent, often init, reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def _wait_dead(pids: list[int], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while any(_alive(p) for p in pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def _descendants(root: int) -> list[int]:
    parent: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parent.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        kids = parent.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    for top, dirs, files in os.walk(root):
        for n in dirs + files:
            os.chown(os.path.join(top, n), uid, gid, follow_symlinks=False)


class ManagedServer:
    """What every database server storlab runs in a folder of its own does
    alike, whatever the engine: used in a `with` block it stops on any way
    out; a failed start stops and removes only what that start created; a
    stop removes what storlab created unless `keep`. An engine gives
    `_start`, `_stop_server` (which forgets `server_pid`) and `_cleanup`."""

    ENGINE = "the server"
    keep: bool
    max_connections: int
    settings: dict[str, str]
    base: Path
    server_pid: int | None
    _touched: bool
    _created_base: bool
    dir: Path
    _created_top: Path | None
    _tmp_socket: Path | None
    log_file: Path

    def _log_since(self, offset: int) -> str:
        """What the server wrote to its log after byte `offset` ("" if none)."""
        try:
            with open(self.log_file, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def _take(self, dir: str | os.PathLike, keep: bool, max_connections: int,
              settings: dict[str, str] | None) -> None:
        """The arguments every engine takes alike, checked."""
        self.dir = Path(os.path.abspath(os.fspath(dir)))
        self.keep = keep
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
            raise DatabaseError(f"max_connections {max_connections!r} — give a whole number of at least 1, e.g. 100")
        self.max_connections = max_connections
        self.settings = {str(k): str(v) for k, v in (settings or {}).items()}

    def _check_reusable(self) -> None:
        """Refuses an earlier run's folder that is not this engine's."""
        raise NotImplementedError

    def _make_base(self) -> bool:
        """The server's own folder: an earlier run's, checked to be reusable
        (True), or made now (False)."""
        if self.base.exists():
            self._check_reusable()
            return True
        self.base.mkdir(mode=0o700)
        self._created_base = True
        return False

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.stop()
            return
        try:
            self.stop()
        except DatabaseError as e:  # the original exception is the one to report
            exc.add_note(f"while stopping {self.ENGINE}: {e}")

    def start(self) -> None:
        """Starts the server unless it runs. Any failure stops and removes
        what this call created before the DatabaseError propagates."""
        if self.server_pid is not None:
            return
        try:
            self._start()
        except BaseException:
            self._abort()
            raise

    def stop(self) -> None:
        """Stops the server, then removes what storlab created unless keep."""
        if not self._touched:
            return
        self._stop_server()
        self.server_pid = None
        self._cleanup(remove=not self.keep)
        self._touched = False

    def _abort(self) -> None:
        """After a failed start: stop whatever runs and remove only what this
        start created (a kept server being reused stays, with its log)."""
        try:
            self._stop_server()
        except DatabaseError:
            pass
        self.server_pid = None
        try:
            self._cleanup(remove=self._created_base)
        except DatabaseError:
            pass
        self._touched = False

    def _start(self) -> None:
        raise NotImplementedError

    def _stop_server(self) -> None:
        raise NotImplementedError

    def _cleanup(self, *, remove: bool) -> None:
        raise NotImplementedError

    def _make_dir(self) -> None:
        """Creates DIR where missing, remembering the highest folder it made
        (`_remove_made` removes that far, and only if empty)."""
        if self.dir.exists() and not self.dir.is_dir():
            raise DatabaseError(f"{self.dir} is a file, not a folder — give --dir a folder "
                                "(storlab creates it if missing)")
        if not self.dir.exists():
            top = self.dir
            while not top.parent.exists():
                top = top.parent
            self.dir.mkdir(parents=True)
            self._created_top = top

    def _remove_made(self, paths: list[Path | None], *, remove: bool) -> None:
        """Removes `paths` (folders storlab made), forgets the temporary
        socket folder and, with `remove`, the folders `_make_dir` made if they
        are empty: never what others put there."""
        errors: list[str] = []
        for path in paths:
            if path is not None:
                try:
                    shutil.rmtree(path)
                except OSError as e:
                    errors.append(f"{e.filename or path} ({e.strerror})")
        self._tmp_socket = None
        self._created_base = False
        if remove and self._created_top is not None:
            for d in [self.dir, *self.dir.parents]:
                try:
                    d.rmdir()
                except OSError:
                    break
                if d == self._created_top:
                    break
            self._created_top = None
        if errors:
            raise DatabaseError(f"cannot remove {errors[0]} — remove it yourself")


class ManagedPostgres(ManagedServer):
    """One cluster in DIR/storlab-pg: `start()` creates (or reuses a kept one)
    and starts it with database "storlab"; `stop()` stops it and removes what
    storlab created unless `keep`. Also a context manager that stops on any
    exit, KeyboardInterrupt included. `conninfo` and `socket_dir` are final
    once started (a long DIR moves the socket to a temp folder)."""

    ENGINE = "PostgreSQL"

    def __init__(self, dir: str | os.PathLike, *, keep: bool = False, max_connections: int = 100,
                 settings: dict[str, str] | None = None, bin_dir: Path | None = None,
                 wal_dir: str | os.PathLike | None = None):
        self._take(dir, keep, max_connections, settings)
        # initdb --waldir: the WAL in a folder of its own (e.g. on a log
        # volume); storlab creates it, so it must not exist yet.
        self.wal_dir = Path(os.path.abspath(os.fspath(wal_dir))) if wal_dir is not None else None
        self._created_wal = False
        for k, v in self.settings.items():
            if k in _OWNED:
                raise DatabaseError(f"setting {k} is managed by storlab — leave it out"
                                    + (" and use max_connections" if k == "max_connections" else ""))
            if not _SETTING_NAME.fullmatch(k):
                raise DatabaseError(f"setting name {k!r} is not a PostgreSQL parameter name — e.g. shared_buffers")
            if any(c in v for c in "\n\r\0"):
                raise DatabaseError(f"setting {k}: the value holds a line break or NUL — give it on one line")
        self.bin_dir = bin_dir
        self.base = self.dir / CLUSTER
        self.data_dir = self.base / "data"
        self.log_file = self.base / "server.log"
        self.socket_dir = self.base / "sock"
        self.server_pid: int | None = None
        self._root = os.geteuid() == 0
        self._pw = self._server_user()
        self.user = self._pw.pw_name
        self._touched = False  # start() began: stop() may clean up
        self._created_top: Path | None = None  # the highest folder start() created for DIR
        self._created_base = False
        self._tmp_socket: Path | None = None

    @property
    def conninfo(self) -> str:
        return self._conninfo(DBNAME)

    def _conninfo(self, dbname: str) -> str:
        return (f"host={_conn_quote(str(self.socket_dir))} port={PORT} "
                f"dbname={dbname} user={_conn_quote(self.user)}")

    def _server_user(self) -> pwd.struct_passwd:
        if not self._root:
            try:
                return pwd.getpwuid(os.geteuid())
            except KeyError:
                raise DatabaseError(f"uid {os.geteuid()} has no passwd entry, so initdb cannot name the "
                                    "superuser — run storlab as a user listed in /etc/passwd") from None
        for name in ("postgres", "nobody"):
            try:
                return pwd.getpwnam(name)
            except KeyError:
                pass
        raise DatabaseError("no postgres or nobody user to run PostgreSQL as (it refuses root) — "
                            "create one: useradd --system postgres")

    # -- running commands -------------------------------------------------

    def _run(self, args: list[str], *, as_server: bool, timeout: float, input: str | None = None,
             ) -> subprocess.CompletedProcess[str]:
        """Runs a command, as the server user if asked (root only). A new
        session keeps a terminal's Ctrl-C for storlab, which then cleans up."""
        drop: dict = {}
        if as_server and self._root:
            drop = {"user": self._pw.pw_uid, "group": self._pw.pw_gid,
                    "extra_groups": os.getgrouplist(self._pw.pw_name, self._pw.pw_gid)}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}  # PGPORT, PGDATA... must not steer us
        try:
            return subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=timeout,
                                  input=input, env=env, cwd="/", start_new_session=True, check=False, **drop)
        except subprocess.TimeoutExpired:
            raise DatabaseError(f"{Path(args[0]).name} did not finish within {timeout:g} s — "
                                "check the machine's load and the disk under DIR") from None
        except OSError as e:
            raise DatabaseError(f"cannot run {args[0]} ({e.strerror}) — {_FIX_BINS}") from None

    def _bin(self, name: str) -> str:
        assert self.bin_dir is not None
        return str(self.bin_dir / name)

    def _psql(self) -> str:
        assert self.bin_dir is not None
        p = self.bin_dir / "psql"
        found = str(p) if os.access(p, os.X_OK) else shutil.which("psql")
        if not found:
            raise DatabaseError(f"psql not found in {self.bin_dir} or on PATH — install the postgresql-client package")
        return found

    # -- start ------------------------------------------------------------

    def _start(self) -> None:
        if self.bin_dir is None:
            self.bin_dir = find_pg_bin()
        elif missing := _missing(self.bin_dir):
            raise DatabaseError(f"{_NOT_FOUND}: {self.bin_dir} has no {', '.join(missing)} — {_FIX_BINS}")
        psql = self._psql()
        self._touched = True
        reuse = self._prepare_dirs()
        if self._root:
            try:
                _chown_tree(self.base, self._pw.pw_uid, self._pw.pw_gid)
                if self._tmp_socket:
                    os.chown(self._tmp_socket, self._pw.pw_uid, self._pw.pw_gid)
            except OSError as e:
                raise DatabaseError(f"cannot hand {self.base} to user {self.user} ({e.strerror}) — "
                                    "pick a DIR on a file system that supports ownership") from None
            self._check_reachable()
        if not reuse:
            waldir = []
            if self.wal_dir is not None:
                self._make_wal_dir()
                waldir = [f"--waldir={self.wal_dir}"]
            r = self._run([self._bin("initdb"), "-D", str(self.data_dir), "-U", self.user,
                           "--auth-local=trust", "--auth-host=reject", *waldir], as_server=True, timeout=300)
            if r.returncode != 0:
                raise DatabaseError(f"initdb failed for {self.data_dir}: {_tail(r.stderr or r.stdout)} — "
                                    "fix the cause above (disk space, permissions, locale)")
        self._write_settings()
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        r = self._run([self._bin("pg_ctl"), "start", "-D", str(self.data_dir), "-l", str(self.log_file),
                       "-w", "-t", "120"], as_server=True, timeout=150)
        if r.returncode != 0:
            raise DatabaseError(f"PostgreSQL did not start on {self.data_dir}: {self._log_tail(offset, r)} — "
                                "fix what the server log says (a bad setting, no memory, a full disk)")
        self.server_pid = self._pidfile_pid()
        r = self._run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self._conninfo("postgres")],
                      as_server=False, timeout=120,
                      input=f"SELECT 'CREATE DATABASE {DBNAME}' WHERE NOT EXISTS "
                            f"(SELECT FROM pg_database WHERE datname = '{DBNAME}')\\gexec\n")
        if r.returncode != 0:
            raise DatabaseError(f"cannot create database {DBNAME}: {_tail(r.stderr or r.stdout)} — "
                                "fix the cause above")

    def _make_wal_dir(self) -> None:
        assert self.wal_dir is not None
        if self.wal_dir.exists():
            raise DatabaseError(f"WAL folder {self.wal_dir} already exists — storlab creates it for a new cluster; "
                                "move it away or pick another place")
        try:
            self.wal_dir.mkdir(mode=0o700, parents=True)
            self._created_wal = True
            if self._root:
                os.chown(self.wal_dir, self._pw.pw_uid, self._pw.pw_gid)
        except OSError as e:
            raise DatabaseError(f"cannot create the WAL folder {self.wal_dir} ({e.strerror}) — pick a folder you can write to") from None

    def sql(self, text: str, dbname: str = DBNAME) -> str:
        """Runs SQL through psql on the running cluster; the unaligned output."""
        r = self._run([self._psql(), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", self._conninfo(dbname)],
                      as_server=False, timeout=600, input=text)
        if r.returncode != 0:
            raise DatabaseError(f"SQL on the managed cluster failed: {_tail(r.stderr or r.stdout)}")
        return r.stdout

    def restart(self, settings: dict[str, str]) -> None:
        """Stops the server and starts it again on the same data with these
        settings merged into its own (e.g. another shared_buffers)."""
        for k in settings:
            if k in _OWNED:
                raise DatabaseError(f"setting {k} is managed by storlab — leave it out")
        self.settings.update({str(k): str(v) for k, v in settings.items()})
        self._stop_server()
        self.server_pid = None
        self._write_settings()
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        r = self._run([self._bin("pg_ctl"), "start", "-D", str(self.data_dir), "-l", str(self.log_file),
                       "-w", "-t", "120"], as_server=True, timeout=150)
        if r.returncode != 0:
            raise DatabaseError(f"PostgreSQL did not restart on {self.data_dir}: {self._log_tail(offset, r)} — "
                                "fix what the server log says (a bad setting, no memory, a full disk)")
        self.server_pid = self._pidfile_pid()

    def _prepare_dirs(self) -> bool:
        """Creates DIR (remembering what it made), DIR/storlab-pg and the
        socket folder; True if DIR holds a kept cluster to reuse."""
        try:
            made = not self.dir.exists()
            self._make_dir()
            if made and self._created_top is not None:
                top = self._created_top
                if self._root:  # the server user must be able to enter it
                    for d in [self.dir, *self.dir.parents]:
                        d.chmod(0o755)
                        if d == top:
                            break
            reuse = self._make_base()
            sock = self.base / "sock"
            if len(os.fsencode(str(sock / f".s.PGSQL.{PORT}"))) < _SOCKET_MAX:
                sock.mkdir(mode=0o700, exist_ok=True)
                self.socket_dir = sock
            else:
                self._tmp_socket = Path(tempfile.mkdtemp(prefix="storlab-pg-"))
                self.socket_dir = self._tmp_socket
        except OSError as e:
            raise DatabaseError(f"{self.dir}: cannot set up the cluster folder ({e.strerror}) — "
                                "pick a DIR you can write to") from None
        return reuse

    def _check_reusable(self) -> None:
        version_file = self.data_dir / "PG_VERSION"
        if not version_file.is_file():
            raise DatabaseError(f"{self.base} exists but is not a cluster storlab made (no data/PG_VERSION) — "
                                "move it away or pick another DIR; storlab never deletes files it did not create")
        pid = self._pidfile_pid()
        if pid is not None and _alive(pid):
            raise DatabaseError(f"a PostgreSQL server (pid {pid}) already runs on {self.data_dir} — "
                                f"stop it (pg_ctl stop -D {self.data_dir}) or pick another DIR")
        have = version_file.read_text().strip()
        r = self._run([self._bin("postgres"), "-V"], as_server=False, timeout=30)
        m = re.search(r"(\d+)(?:\.(\d+))?", r.stdout)
        if m:
            major = m[1] if int(m[1]) >= 10 else f"{m[1]}.{m[2]}"
            if major != have:
                raise DatabaseError(f"{self.data_dir} is a PostgreSQL {have} cluster but {self.bin_dir} is "
                                    f"PostgreSQL {major} — set STORLAB_PG_BIN to PostgreSQL {have}'s bin folder "
                                    f"or remove {self.base}")

    def _check_reachable(self) -> None:
        """As root: the server user must reach the binaries and the cluster
        folder; a closed parent (pytest's tmp, /root) would fail late and obscurely."""
        r = self._run(["/bin/sh", "-c", 'test -x "$1" && test -w "$2" && test -x "$2"', "sh",
                       self._bin("postgres"), str(self.base)], as_server=True, timeout=30)
        if r.returncode != 0:
            raise DatabaseError(f"user {self.user} cannot reach {self.base} or {self.bin_dir} (a parent folder "
                                f"is closed to it) — as root storlab runs PostgreSQL as {self.user}: pick a DIR "
                                "under a folder others may enter (e.g. /var/tmp), or run storlab as a normal user")

    def _write_settings(self) -> None:
        """storlab's settings go to postgresql.auto.conf (read last, so they
        win), rewritten at every start since the socket folder may change."""
        lines = ["# Written by storlab at every start; edits here are replaced.",
                 "listen_addresses = ''",
                 f"unix_socket_directories = {_conf_quote(str(self.socket_dir))}",
                 f"port = {PORT}",
                 f"max_connections = {self.max_connections}",
                 # The WAL sync time PostgreSQL saw (pg_stat_wal.wal_sync_time):
                 # the record's io_profile.wal_sync_us. Two clock reads per
                 # WAL write or sync; pg_test_timing shows their cost.
                 "track_wal_io_timing = on",
                 *(f"{k} = {_conf_quote(v)}" for k, v in self.settings.items())]
        path = self.data_dir / "postgresql.auto.conf"
        try:
            path.write_text("\n".join(lines) + "\n")
            if self._root:
                os.chown(path, self._pw.pw_uid, self._pw.pw_gid)
        except OSError as e:
            raise DatabaseError(f"cannot write {path} ({e.strerror}) — check the disk under DIR") from None

    def _log_tail(self, offset: int, r: subprocess.CompletedProcess[str]) -> str:
        text = "\n".join(_LOG_PREFIX.sub("", ln) for ln in self._log_since(offset).splitlines())
        return _tail(text) if text.strip() else _tail(r.stderr or r.stdout)

    def _pidfile_pid(self) -> int | None:
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    # -- stop -------------------------------------------------------------

    def server_pids(self) -> list[int]:
        """The postmaster and its descendants (backends, checkpointer, WAL
        writer...), for /proc/<pid>/io accounting; empty when not running."""
        pid = self.server_pid
        if pid is None or not _alive(pid):
            return []
        return [pid, *_descendants(pid)]

    def _stop_server(self) -> None:
        pid = self.server_pid or self._pidfile_pid()
        if pid is None or not _alive(pid) or not self._ours(pid):
            return
        pids = [pid, *_descendants(pid)]
        for mode, timeout in (("fast", 60), ("immediate", 15)):
            try:
                self._run([self._bin("pg_ctl"), "stop", "-D", str(self.data_dir), "-m", mode, "-w",
                           "-t", str(timeout)], as_server=True, timeout=timeout + 10)
            except DatabaseError:
                pass
            if _wait_dead([pid], 5):
                break
        else:
            for p in pids:
                if _alive(p) and self._ours(p):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        if not _wait_dead(pids, 10):
            raise DatabaseError(f"PostgreSQL (pid {pid}) did not stop, even after kill -9 — stop it yourself; "
                                f"{self.base} is left in place")

    def _ours(self, pid: int) -> bool:
        """A process of this cluster: the postmaster and its children work in
        the data directory (guards kill -9 against a recycled pid)."""
        try:
            return os.path.samefile(os.readlink(f"/proc/{pid}/cwd"), self.data_dir)
        except OSError:
            return False

    def _cleanup(self, *, remove: bool) -> None:
        wal = self.wal_dir if remove and self._created_wal and self.wal_dir is not None and self.wal_dir.exists() else None
        if remove:
            self._created_wal = False
        self._remove_made([self._tmp_socket, self.base if remove and self.base.exists() else None, wal], remove=remove)
