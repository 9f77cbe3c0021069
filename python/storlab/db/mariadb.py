"""A MariaDB server storlab runs itself (`storlab bench db --db
managed-mariadb --dir DIR [--keep]`): mariadb-install-db and Debian's
`/usr/sbin/mariadbd`, the data directory inside DIR so it can sit on the
volume under test, a private Unix socket and a TCP port on 127.0.0.1 picked
free at start, and nothing left behind unless kept.

Layout: DIR/storlab-mariadb/{data, sock, tmp, server.log, STORLAB}. storlab
removes only what it created: DIR/storlab-mariadb, and DIR itself if it made
DIR. A DIR/storlab-mariadb without the STORLAB mark is not ours and is
refused, never deleted.

The server runs as the user storlab runs as (`--user=root` when that is
root, which mariadbd otherwise refuses); the workload connects as root over
TCP to 127.0.0.1, which mariadb-install-db creates without a password. The
server dies with storlab (PR_SET_PDEATHSIG), so even a killed storlab leaves
no server running."""

from __future__ import annotations

import ctypes
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from storlab.db.managed import ManagedServer, _alive, _tail, _wait_dead
from storlab.errors import DatabaseError

BASE = "storlab-mariadb"
DBNAME = "storlab"
USER = "root"
MARK = "STORLAB"
_FIX_BINS = "install the mariadb-server package (apt-get install mariadb-server) or set STORLAB_MARIADB_BIN to the folder holding mariadbd"
# Settings storlab owns: changing them would move the data, the socket or the port.
_OWNED = {"datadir", "socket", "port", "bind_address", "user", "pid_file", "log_error", "skip_networking",
          "basedir", "defaults_file", "no_defaults", "max_connections"}
_SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SOCKET_MAX = 100  # bytes; the kernel's sun_path is 108
_PR_SET_PDEATHSIG = 1


class _PortTaken(Exception):
    """mariadbd found its port taken at start."""


def find_bins() -> tuple[Path, Path]:
    """mariadbd and mariadb-install-db: in $STORLAB_MARIADB_BIN (an explicit
    choice), else on PATH. Debian keeps mariadbd in /usr/sbin, which a normal
    user's PATH may lack: the error says so."""
    env = os.environ.get("STORLAB_MARIADB_BIN")
    path = os.environ.get("PATH", os.defpath)
    folders = [Path(env)] if env else [Path(p) for p in path.split(os.pathsep) if p]

    def find(names: tuple[str, ...]) -> Path | None:
        for d in folders:
            for n in names:
                p = d / n
                if p.is_file() and os.access(p, os.X_OK):
                    return p
        return None

    server = find(("mariadbd", "mysqld"))
    install = find(("mariadb-install-db", "mysql_install_db"))
    if server is None or install is None:
        missing = "mariadbd" if server is None else "mariadb-install-db"
        where = f"STORLAB_MARIADB_BIN={env}" if env else "PATH"
        raise DatabaseError(f"MariaDB server binaries not found ({missing}, looked in {where}) — {_FIX_BINS} "
                            "(Debian puts mariadbd in /usr/sbin: add it to PATH)")
    return server, install


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the server's process, before exec: SIGTERM (a clean shutdown for
    mariadbd) when storlab's thread that started it ends."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _option(name: str, value: str) -> list[str]:
    """`--setting NAME=VALUE` as mariadbd options. log_bin is a switch whose
    value would be a file name: ON/1 turns the binary log on (files in the
    data directory), OFF/0 leaves it off."""
    key = name.replace("-", "_").lower()
    if key == "log_bin":
        v = value.strip().lower()
        if v in ("on", "1", "true", "yes"):
            return ["--log-bin=binlog"]
        if v in ("off", "0", "false", "no"):
            return ["--skip-log-bin"]
        raise DatabaseError(f"setting log_bin={value} — give ON or OFF")
    return [f"--{key.replace('_', '-')}={value}"]


class ManagedMariadb(ManagedServer):
    """One server in DIR/storlab-mariadb: `start()` creates (or reuses a kept
    one) and starts it with database "storlab"; `stop()` stops it and removes
    what storlab created unless `keep`. A context manager that stops on any
    exit, KeyboardInterrupt included (the CLI turns SIGTERM and SIGHUP into
    one). `dsn` is final once started."""

    ENGINE = "MariaDB"

    def __init__(self, dir: str | os.PathLike, *, keep: bool = False, max_connections: int = 100,
                 settings: dict[str, str] | None = None, bin_dir: Path | None = None):
        self._take(dir, keep, max_connections, settings)
        for k, v in self.settings.items():
            if not _SETTING_NAME.fullmatch(k):
                raise DatabaseError(f"setting name {k!r} is not a MariaDB variable name — e.g. innodb_buffer_pool_size")
            if k.replace("-", "_").lower() in _OWNED:
                raise DatabaseError(f"setting {k} is managed by storlab — leave it out")
            if any(c in v for c in "\n\r\0") or not v:
                raise DatabaseError(f"setting {k}: give a value on one line, e.g. {k}=1")
            _option(k, v)  # checks log_bin's value now
        self.bin_dir = bin_dir
        self.base = self.dir / BASE
        self.data_dir = self.base / "data"
        self.log_file = self.base / "server.log"
        # Its own temporary folder: servers bootstrapping side by side in
        # /tmp trip over each other's temporary tables.
        self.tmp_dir = self.base / "tmp"
        self.socket_path = self.base / "sock" / "mariadb.sock"
        self.port = 0
        self.server_pid: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._root = os.geteuid() == 0
        self._touched = False
        self._created_top: Path | None = None
        self._created_base = False
        self._tmp_socket: Path | None = None

    @property
    def dsn(self) -> str:
        return f"mysql://{USER}@127.0.0.1:{self.port}/{DBNAME}"

    # -- start ------------------------------------------------------------

    def _bins(self) -> tuple[Path, Path]:
        if self.bin_dir is None:
            return find_bins()
        server, install = self.bin_dir / "mariadbd", self.bin_dir / "mariadb-install-db"
        for p in (server, install):
            if not (p.is_file() and os.access(p, os.X_OK)):
                raise DatabaseError(f"MariaDB server binaries not found: {self.bin_dir} has no {p.name} — {_FIX_BINS}")
        return server, install

    def _start(self) -> None:
        server, install = self._bins()
        self._server = server
        self._touched = True
        reuse = self._prepare_dirs()
        if not reuse:
            r = self._run([str(install), "--no-defaults", f"--datadir={self.data_dir}", f"--user={self._user()}",
                           "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
                           f"--tmpdir={self.tmp_dir}"],
                          timeout=300)
            if r.returncode != 0:
                raise DatabaseError(f"mariadb-install-db failed for {self.data_dir}: {_tail(r.stderr or r.stdout)} — "
                                    "fix the cause above (disk space, permissions)")
            (self.base / MARK).write_text("created by storlab bench db --db managed-mariadb; removed with it\n")
        self._launch()
        self.sql(f"CREATE DATABASE IF NOT EXISTS {DBNAME}")

    def _user(self) -> str:
        try:
            return pwd.getpwuid(os.geteuid()).pw_name
        except KeyError:
            raise DatabaseError(f"uid {os.geteuid()} has no passwd entry, so mariadbd cannot run as it — "
                                "run storlab as a user listed in /etc/passwd") from None

    def _launch(self) -> None:
        # The port was free when picked; another program may take it before
        # mariadbd binds it. Then a new one is picked, twice at most.
        for attempt in range(3):
            try:
                self._launch_on(free_port())
                return
            except _PortTaken:
                if attempt == 2:
                    raise DatabaseError("MariaDB could not bind a free port on 127.0.0.1 three times — "
                                        "check what takes the machine's ports") from None

    def _launch_on(self, port: int) -> None:
        self.port = port
        args = [str(self._server), "--no-defaults", f"--datadir={self.data_dir}", f"--socket={self.socket_path}",
                f"--port={self.port}", "--bind-address=127.0.0.1", f"--pid-file={self.base / 'mariadbd.pid'}",
                f"--log-error={self.log_file}", "--skip-name-resolve", f"--user={self._user()}",
                f"--max-connections={self.max_connections}", f"--tmpdir={self.tmp_dir}"]
        for k, v in self.settings.items():
            args += _option(k, v)
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        try:
            self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, cwd=self.data_dir, start_new_session=True,
                                          preexec_fn=_die_with_parent)
        except OSError as e:
            raise DatabaseError(f"cannot run {self._server} ({e.strerror}) — {_FIX_BINS}") from None
        self.server_pid = self._proc.pid
        end = time.monotonic() + 120
        while True:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self.server_pid = None
                if "another server running on port" in self._log_tail(offset, err):
                    raise _PortTaken()
                raise DatabaseError(f"MariaDB did not start on {self.data_dir}: {self._log_tail(offset, err)} — "
                                    "fix what the server log says (a setting it rejects, no memory, a full disk)")
            if self._ready():
                return
            if time.monotonic() > end:
                raise DatabaseError(f"MariaDB did not accept connections on 127.0.0.1:{self.port} within 120 s — "
                                    f"see {self.log_file}")
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.settimeout(1)
                return len(s.recv(4)) > 0  # the server's greeting
        except OSError:
            return False

    def _log_tail(self, offset: int, stderr: str) -> str:
        text = self._log_since(offset)
        lines = [re.sub(r"^\d{4}-\d\d-\d\d\s+[\d:]+\s+\d+\s+", "", ln) for ln in (text or stderr).splitlines()]
        errors = [ln for ln in lines if "[ERROR]" in ln] or lines
        return _tail("\n".join(errors), 2)

    def _run(self, args: list[str], *, timeout: float, input: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MYSQL")}
        try:
            return subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=timeout, input=input,
                                  env=env, cwd="/", start_new_session=True, check=False)
        except subprocess.TimeoutExpired:
            raise DatabaseError(f"{Path(args[0]).name} did not finish within {timeout:g} s — "
                                "check the machine's load and the disk under DIR") from None
        except OSError as e:
            raise DatabaseError(f"cannot run {args[0]} ({e.strerror}) — {_FIX_BINS}") from None

    def sql(self, text: str, dbname: str = "") -> str:
        """Runs SQL through the mariadb client on the private socket; the
        tab-separated output without headers."""
        client = shutil.which("mariadb") or shutil.which("mysql")
        if client is None:
            raise DatabaseError("the mariadb client is not on PATH — install the mariadb-client package")
        r = self._run([client, "--no-defaults", f"--socket={self.socket_path}", f"--user={USER}", "-N", "-B",
                       *([dbname] if dbname else [])], timeout=600, input=text)
        if r.returncode != 0:
            raise DatabaseError(f"SQL on the managed MariaDB failed: {_tail(r.stderr or r.stdout)}")
        return r.stdout

    def restart(self, settings: dict[str, str]) -> None:
        """Stops the server and starts it again on the same data with these
        settings merged into its own (e.g. another buffer pool size)."""
        for k in settings:
            if k.replace("-", "_").lower() in _OWNED:
                raise DatabaseError(f"setting {k} is managed by storlab — leave it out")
        self.settings.update({str(k): str(v) for k, v in settings.items()})
        self._stop_server()
        # The same port: the workload's connections were made for it.
        try:
            self._launch_on(self.port)
        except _PortTaken:
            raise DatabaseError(f"MariaDB could not bind its port {self.port} again after a restart — "
                                "another program took it; run again") from None

    def _prepare_dirs(self) -> bool:
        try:
            self._make_dir()
            reuse = self._make_base()
            if not reuse:
                self.data_dir.mkdir(mode=0o700)
            if len(os.fsencode(str(self.socket_path))) >= _SOCKET_MAX:
                self._tmp_socket = Path(tempfile.mkdtemp(prefix="storlab-mariadb-"))
                self.socket_path = self._tmp_socket / "mariadb.sock"
            else:
                self.socket_path.parent.mkdir(mode=0o700, exist_ok=True)
            self.tmp_dir.mkdir(mode=0o700, exist_ok=True)
        except OSError as e:
            raise DatabaseError(f"{self.dir}: cannot set up the server folder ({e.strerror}) — pick a DIR you can write to") from None
        return reuse

    def _check_reusable(self) -> None:
        if not (self.base / MARK).is_file() or not (self.data_dir / "mysql").is_dir():
            raise DatabaseError(f"{self.base} exists but is not a server storlab made (no {MARK} mark) — move it away "
                                "or pick another DIR; storlab never deletes files it did not create")
        try:
            pid = int((self.base / "mariadbd.pid").read_text().strip())
        except (OSError, ValueError):
            pid = None
        if pid is not None and _alive(pid) and self._ours(pid):
            raise DatabaseError(f"a MariaDB server (pid {pid}) already runs on {self.data_dir} — "
                                f"stop it (kill {pid}) or pick another DIR")

    # -- stop -------------------------------------------------------------

    def server_pids(self) -> list[int]:
        """mariadbd (one process; its threads share its /proc/<pid>/io)."""
        pid = self.server_pid
        return [pid] if pid is not None and _alive(pid) else []

    def _ours(self, pid: int) -> bool:
        try:
            return os.path.samefile(os.readlink(f"/proc/{pid}/cwd"), self.data_dir)
        except OSError:
            return False

    def _stop_server(self) -> None:
        pid = self.server_pid
        proc = self._proc
        self.server_pid = None
        self._proc = None
        if pid is None:
            return
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if not _wait_dead([pid], 60) and _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            if proc.stderr:
                proc.stderr.close()
        if not _wait_dead([pid], 10):
            raise DatabaseError(f"MariaDB (pid {pid}) did not stop, even after kill -9 — stop it yourself; "
                                f"{self.base} is left in place")

    def _cleanup(self, *, remove: bool) -> None:
        self._remove_made([self._tmp_socket, self.base if remove and self.base.exists() else None], remove=remove)
