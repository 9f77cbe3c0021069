"""Type stub for the Rust extension (crates/storlab-py). Run records cross
as JSON text (`*_json`); smaller answers as Python values; options left as
None take the Rust defaults. Checked against the
built module by `make test` (mypy's stubtest)."""

import os
from typing import Any, Callable, final

__all__ = [
    "Catalog",
    "DbTarget",
    "DbWorkload",
    "DbSweep",
    "bench_disk_json",
    "db_prepare_json",
    "db_run_json",
    "db_record_json",
    "profile_health",
    "catalog_overlay_toml",
    "profile_build",
    "cpu_per_txn_us",
    "cpu_penalty_fit",
    "usl_fit",
    "non_increasing",
    "writeback_curve",
    "profile_toml",
    "parse_size_bytes",
    "parse_duration_s",
    "record_schema_json",
    "record_check",
    "import_record_json",
    "hammerdb_report_json",
    "alarms",
    "limits_at",
    "emulate_json",
    "emulate_unmount",
    "tpcc_che_miss_ratio",
    "__version__",
]

__version__: str

@final
class Catalog:
    """A catalog, validated once and kept. `files`: (display name, TOML text)."""

    def __new__(cls, files: list[tuple[str, str]]) -> Catalog: ...
    def on(self, date: str) -> Catalog:
        """The catalog as it stood on `date` (YYYY-MM-DD): vendor rules of that day, today's prices. Raises ScenarioError for a malformed date."""
    def to_json(self) -> str:
        """Every device, host, price and source, with the file each came from."""
    def latency(self, id: str) -> dict[str, float] | None:
        """The latency figures the model uses for a device, µs; None if it has none."""
    def penalty_fit(self, scenario_name: str, scenario_text: str, scenario_dir: str, throughput: list[float], *,
                    profiles_dir: str | None = None) -> dict[str, Any]:
        """A recording's concurrency penalty fitted on the scenario's first config. Raises ScenarioError."""
    def entry(self, id: str) -> dict[str, Any]:
        """One device or host with its prices and sources. Raises ScenarioError for an unknown id."""
    def limits(self, scenario_name: str, scenario_text: str) -> dict[str, Any]:
        """The limits record of every config of a scenario. Raises ScenarioError or CatalogError."""
    def simulate_json(
        self,
        scenario_name: str,
        scenario_text: str,
        scenario_dir: str,
        *,
        period_s: float | None = None,
        progress: Callable[[float], object] | None = None,
        config: str | None = None,
        threads: int | None = None,
        iodepth: int | None = None,
        duration_s: float | None = None,
        profile: str | None = None,
        profiles_dir: str | None = None,
        repeats: int | None = None,
        accept_suspect: bool | None = None,
    ) -> str:
        """The run record of simulating the scenario's workload on every config
        (or only `config`), with the command line's overrides; a
        `[workload.database]` with the shipped profiles in `profiles_dir`;
        `accept_suspect` simulates a suspect profile with a warning."""

    def advise_json(
        self,
        file_name: str,
        text: str,
        dir: str,
        profiles_dir: str,
        *,
        top: int | None = None,
        threads: int | None = None,
        demand_json: str | None = None,
        progress: Callable[[int, int], object] | None = None,
        remote: object | None = None,
        accept_suspect: bool = False,
        explain: str | None = None,
    ) -> str:
        """The advice for the question in `text` (`storlab advise`); `progress(done, total)` counts the simulator's runs;
        `remote` (storlab.cluster.RayCluster) runs the screen and the simulations on a cluster;
        `accept_suspect` uses a suspect database profile with a warning."""

    def advise_part_json(
        self,
        part: str,
        question: tuple[str, str, str, str],
        batch_json: str,
        *,
        demand_json: str | None = None,
        threads: int | None = None,
    ) -> str:
        """A cluster worker's part of `advise` on `question` (file name, text, folder, profiles' folder): `part` "screen" (each candidate's screen) or "verify" (each item's simulated outcome), in order, as JSON."""

def tpcc_che_miss_ratio(warehouses: float, page_bytes: float, bytes_per_warehouse: float, page_accesses_per_txn: float, cache_fraction: float) -> float: ...
def bench_disk_json(
    path: str,
    *,
    size_bytes: int | None = None,
    profile: str | None = None,
    job_name: str | None = None,
    job_text: str | None = None,
    engine: str | None = None,
    runs: int | None = None,
    runtime_s: float | None = None,
    interval_s: float | None = None,
    direct: bool | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], object] | None = None,
    existing_file: str | None = None,
) -> str:
    """The run record of measuring a preset or a fio job file on a test file inside `path`."""

@final
class DbTarget:
    """Where a database workload runs."""

    @staticmethod
    def sqlite(path: str) -> DbTarget: ...
    @staticmethod
    def postgres(dsn: str) -> DbTarget: ...
    @staticmethod
    def mysql(dsn: str) -> DbTarget: ...
    def display(self) -> str: ...

@final
class DbSweep:
    """A virtual-user sweep: the counts it plans and whether it goes on (the simulator's own)."""

    @staticmethod
    def auto(max_vus: int) -> DbSweep: ...
    @staticmethod
    def listed(vus: list[int]) -> DbSweep: ...
    @property
    def steps(self) -> list[int]: ...
    @property
    def is_auto(self) -> bool: ...
    def record_step(self, vus: int, metric: str, runs_json: str) -> bool:
        """One step's runs as JSON; True when the sweep goes no further."""

@final
class DbWorkload:
    """What runs: TPC-C, the insert storm or a workload file."""

    @staticmethod
    def tpcc(*, warehouses: int | None = None, all_warehouses: bool | None = None, key_and_think: bool | None = None, commit_log: str | os.PathLike[str] | None = None) -> DbWorkload: ...
    @staticmethod
    def insert(*, rows_per_vu: int | None = None, commit_every: int | None = None) -> DbWorkload: ...
    @staticmethod
    def file(name: str, text: str, *, scale: int | None = None) -> DbWorkload: ...
    def name(self) -> str: ...
    def read_only_kinds(self) -> list[str]:
        """The transaction types that write nothing (no commit flush)."""
    def headline(self) -> tuple[str, str, float] | None:
        """A workload file's `[metric]`: (name, transaction, 1 or 60 seconds), or None."""

def db_prepare_json(
    target: DbTarget,
    workload: DbWorkload,
    *,
    seed: int | None = None,
    loaders: int | None = None,
    progress: Callable[[int, int, int], object] | None = None,
) -> str:
    """Builds or reuses the schema and data; the load summary."""

def db_run_json(
    target: DbTarget,
    workload: DbWorkload,
    *,
    vus: int | None = None,
    rampup_s: float | None = None,
    duration_s: float | None = None,
    seed: int | None = None,
    threads: int | None = None,
    check: bool | None = None,
    progress: Callable[[int, int, int], object] | None = None,
) -> str:
    """One timed run; `progress(phase, done, total)`."""

def db_record_json(
    config: str, workload: str, metric: str, load_json: str, runs_json: str, *, seed: int, interrupted: bool = False
) -> str:
    """The `bench db` record of a sweep from its runs."""

def profile_health(file: str, text: str) -> list[dict[str, str]]:
    """What makes a database profile suspect, [{"field", "reason", "fix"}]; empty for a sound one.
    Raises ScenarioError for a profile the loader refuses."""

def profile_build(recording_json: str, provenance_json: str) -> dict[str, Any]:
    """A profile from a recording's raw measurements and its provenance, in the profile's layout. Raises ScenarioError."""

def cpu_per_txn_us(run_json: str) -> float:
    """The CPU one transaction of a recorded run cost the server, in microseconds."""

def cpu_penalty_fit(vus: list[int], cpu_per_txn: list[float]) -> tuple[float, float]:
    """alpha and beta of the CPU per transaction at N users, c(N)/c(1) = 1 + alpha(N-1) + beta N(N-1), both >= 0."""

def usl_fit(vus: list[int], throughput: list[float]) -> tuple[float, float]:
    """alpha and beta of the Universal Scalability Law from throughput X(N), both >= 0."""

def non_increasing(vals: list[float]) -> list[float]:
    """The running minimum of miss ratios, within [0, 1]."""

def writeback_curve(samples: list[tuple[float, float, float, float]], units: float, own: float = 1.0) -> dict[str, list[float]]:
    """The write-back curve (txns_per_unit, pages_per_unit, runs_per_unit) from dirty-page samples."""

def catalog_overlay_toml(entries_json: str) -> str:
    """A catalog overlay as TOML from its entries as JSON (source, device, host, price, latency), read by the catalog's types."""

def profile_toml(doc_json: str) -> str:
    """A recorded profile (as JSON) as profile TOML; every figure must be a finite number."""

def parse_size_bytes(text: str) -> int | None:
    """A size as storlab reads it outside fio job files (64MB, 64MiB, 64m), in bytes; None if it is not one."""

def parse_duration_s(text: str) -> float | None:
    """A duration as storlab reads it (30, 90s, 2m30s, 1d), in seconds; None if it is not one."""

def record_schema_json() -> str:
    """The JSON schema every run record follows."""

def record_check(name: str, text: str) -> dict[str, Any]:
    """A run record read back through the record type; raises ScenarioError naming the field that does not fit."""

def import_record_json(name: str, data: bytes) -> str:
    """Another tool's result file (CrystalDiskMark, fio, HammerDB, sysbench, pgbench, CloudWatch) as a run record; raises ScenarioError naming the line and field."""

def hammerdb_report_json(record_json: str, timestamp: str) -> str:
    """A hammerdb-job-report-v1 document for a database run record; timestamp is YYYY-MM-DD HH:MM:SS."""

def alarms(scenario_name: str, scenario_text: str, record_json: str) -> list[dict[str, Any]]:
    """The state changes of the scenario's `[[alarms]]` on the record's series."""

def limits_at(
    catalog: Catalog, scenario_name: str, scenario_text: str, *, at_iops: float | None = None, at_bytes_s: float | None = None
) -> dict[str, Any]:
    """The `storlab limits` record with each bucket under a steady load (`at_load`)."""
def emulate_json(
    catalog: Catalog,
    scenario_name: str,
    scenario_text: str,
    config: str,
    targets: list[tuple[str | None, str, str]],
    options_json: str,
    status: Callable[[str], object] | None = None,
) -> str:
    """Serves the emulated pools until a signal reaches Python, then unmounts; the summary with its series."""

def emulate_unmount(dir: str) -> bool:
    """Clears an emulated volume mounted at dir (stale or live); False when nothing was mounted."""
