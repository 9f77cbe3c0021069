"""The managed PostgreSQL cluster: start and stop, what it leaves behind
(nothing, unless kept; never the user's files), reuse of a kept cluster,
refusals, and the unprivileged server user under root."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from storlab.db.managed import CLUSTER, PORT, ManagedPostgres, find_pg_bin
from storlab.errors import DatabaseError

pytestmark = pytest.mark.needs_postgres


@pytest.fixture
def pg_bin() -> Path:
    try:
        return find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))


@pytest.fixture
def where():
    """A fresh folder the server user can enter: as root the server runs as
    postgres/nobody, and pytest's tmp_path sits under a 0700 folder of root's."""
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def psql(pg: ManagedPostgres, sql: str) -> str:
    r = subprocess.run([str(find_pg_bin() / "psql"), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", pg.conninfo, "-c", sql],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def alive(pid: int) -> bool:
    """A zombie counts as gone: it runs nothing, and init reaps it in its own time."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_lifecycle_in_a_new_dir_leaves_nothing(pg_bin, where):
    d = where / "run"  # missing: storlab creates it, so it removes it too
    pg = ManagedPostgres(d)
    pg.start()
    try:
        assert psql(pg, "select 1") == "1"
        assert Path(psql(pg, "show data_directory")) == d / CLUSTER / "data" == pg.data_dir
        assert psql(pg, "show listen_addresses") == ""
        assert psql(pg, "select current_database()") == "storlab"
        assert psql(pg, "show max_connections") == "100"
        assert pg.socket_dir == d / CLUSTER / "sock"
        assert (pg.socket_dir / f".s.PGSQL.{PORT}").is_socket()
        assert pg.conninfo == f"host={pg.socket_dir} port={PORT} dbname=storlab user={pg.user}"
        pids = pg.server_pids()
        # the postmaster and its helpers (checkpointer, WAL writer, ...)
        assert pids[0] == pg.server_pid and len(pids) > 1
        # The last psql's backend may still be on its way out; the postmaster
        # and its helpers are not.
        assert alive(pids[0]) and sum(alive(p) for p in pids[1:]) >= 2
    finally:
        pg.stop()
    assert not any(alive(p) for p in pids)
    assert not d.exists()
    assert list(where.iterdir()) == []


def test_existing_dir_keeps_the_users_files(pg_bin, where):
    (where / "mine.txt").write_text("user data")
    with ManagedPostgres(where, max_connections=20, settings={"work_mem": "8MB"}) as pg:
        assert psql(pg, "show max_connections") == "20"
        assert psql(pg, "show work_mem") == "8MB"
    assert (where / "mine.txt").read_text() == "user data"
    assert not (where / CLUSTER).exists()
    assert sorted(p.name for p in where.iterdir()) == ["mine.txt"]


def test_keep_then_reuse_then_remove(pg_bin, where):
    d = where / "kept"
    with ManagedPostgres(d, keep=True) as pg:
        psql(pg, "create table t (x int); insert into t values (42)")
        first = pg.server_pids()
    assert not any(alive(p) for p in first)
    assert (d / CLUSTER / "data" / "PG_VERSION").is_file()
    assert not (d / CLUSTER / "data" / "postmaster.pid").exists()  # a clean shutdown
    with ManagedPostgres(d) as pg:
        assert psql(pg, "select x from t") == "42"  # the same cluster, not a new initdb
    assert not (d / CLUSTER).exists()
    assert d.is_dir() and list(d.iterdir()) == []  # DIR existed at this start: left in place


def test_long_dir_moves_the_socket_to_a_temp_folder(pg_bin, where):
    d = where / ("x" * 90)
    with ManagedPostgres(d) as pg:
        assert len(os.fsencode(str(d / CLUSTER / "sock" / f".s.PGSQL.{PORT}"))) >= 100
        assert pg.socket_dir.name.startswith("storlab-pg-") and not pg.socket_dir.is_relative_to(d)
        assert psql(pg, "select 1") == "1"
        sock = pg.socket_dir
    assert not sock.exists() and not d.exists()


def test_interrupt_inside_the_block_stops_and_cleans(pg_bin, where):
    d = where / "int"
    with pytest.raises(KeyboardInterrupt):
        with ManagedPostgres(d) as pg:
            pids = pg.server_pids()
            raise KeyboardInterrupt
    assert pids and not any(alive(p) for p in pids)
    assert not d.exists()


def test_server_that_cannot_start_names_the_cause_and_cleans(pg_bin, where):
    d = where / "bad"
    with pytest.raises(DatabaseError) as e:
        ManagedPostgres(d, settings={"shared_buffers": "lots"}).start()
    msg = str(e.value)
    assert "shared_buffers" in msg and " — " in msg and "\n" not in msg
    assert not d.exists()


def test_missing_binaries_name_storlab_pg_bin(where, monkeypatch):
    empty = where / "empty"
    empty.mkdir()
    monkeypatch.setenv("STORLAB_PG_BIN", str(empty))
    with pytest.raises(DatabaseError, match="STORLAB_PG_BIN"):
        find_pg_bin()
    with pytest.raises(DatabaseError, match="STORLAB_PG_BIN"):
        ManagedPostgres(where / "x").start()
    assert not (where / "x").exists()


def test_no_binaries_anywhere_names_where_it_looked(where, monkeypatch):
    import storlab.db.managed as managed

    monkeypatch.delenv("STORLAB_PG_BIN", raising=False)
    monkeypatch.setenv("PATH", str(where))  # no pg_config, no initdb
    monkeypatch.setattr(managed, "_DEBIAN_BINS", where)
    with pytest.raises(DatabaseError) as e:
        find_pg_bin()
    msg = str(e.value)
    assert msg.startswith("PostgreSQL server binaries (initdb, pg_ctl) not found")
    assert msg.endswith("— install the postgresql package or set STORLAB_PG_BIN to their folder")
    assert "pg_config" in msg and f"{where}/*/bin" in msg and "PATH" in msg


def test_dir_that_is_a_file_is_refused(pg_bin, where):
    f = where / "afile"
    f.write_text("not a folder")
    with pytest.raises(DatabaseError, match="is a file"):
        ManagedPostgres(f).start()
    assert f.read_text() == "not a folder"


def test_foreign_storlab_pg_folder_is_refused_and_untouched(pg_bin, where):
    (where / CLUSTER).mkdir()
    (where / CLUSTER / "notes.txt").write_text("mine")
    with pytest.raises(DatabaseError, match="not a cluster storlab made"):
        ManagedPostgres(where).start()
    assert (where / CLUSTER / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as root only")
def test_as_root_the_server_runs_unprivileged(pg_bin, where):
    try:
        expected = pwd.getpwnam("postgres")
    except KeyError:
        expected = pwd.getpwnam("nobody")
    with ManagedPostgres(where / "r") as pg:
        assert pg.user == expected.pw_name
        assert psql(pg, "select current_user") == expected.pw_name  # root connects as the server user
        pids = pg.server_pids()
        assert pids
        checked = 0
        for pid in pids:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except FileNotFoundError:
                continue  # a backend or worker that ended since the listing
            uids = next(ln for ln in status.splitlines() if ln.startswith("Uid:"))
            assert uids.split()[1:] == [str(expected.pw_uid)] * 4  # real, effective, saved, file system
            checked += 1
        assert checked > 0  # the postmaster at least


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as root only")
def test_as_root_a_dir_closed_to_the_server_user_is_refused(pg_bin, where):
    closed = where / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(DatabaseError, match="cannot reach"):
        ManagedPostgres(closed / "d").start()
    assert list(closed.iterdir()) == []
