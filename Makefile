# storlab — `make demo` sets everything up and runs the main job;
# `make test` sets everything up and runs every test (cargo and pytest).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMPS := .stamps
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml pyproject.toml

.DEFAULT_GOAL := help
.PHONY: quick help install demo test test-rust test-python check test-quick bench fuzz clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMPS)/deps: $(BIN)/python pyproject.toml Makefile
	$(BIN)/pip install --quiet "maturin>=1.5,<2" "typer>=0.12,<0.29" "rich>=13" "pytest>=8" "pytest-xdist>=3.2" "hypothesis>=6" "jsonschema>=4" "mypy>=1.10" "plotly>=5" "playwright>=1.40" "ray>=2.9"
	@mkdir -p $(STAMPS) && touch $@

# The module is built with the Rust tests' profile (`tests` in Cargo.toml:
# release optimisation without link-time optimisation), so `cargo test`
# reuses every crate it compiled; `make bench` rebuilds it with --release.
MATURIN := VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/maturin develop --quiet

$(STAMPS)/install: $(STAMPS)/deps $(RUST_SOURCES)
	$(MATURIN) --profile tests
	@mkdir -p $(STAMPS) && touch $@

# `storlab bench db --db managed-postgres` and its tests run PostgreSQL's own
# initdb/pg_ctl; Debian's postgresql package provides them.
$(STAMPS)/system: Makefile
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then \
	  echo "installing Debian's postgresql package (server binaries for bench db)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; \
	fi
	@if ! [ -x /usr/sbin/mariadbd ] && ! command -v mariadbd >/dev/null 2>&1; then \
	  echo "installing Debian's mariadb-server package (server binaries for bench db --db managed-mariadb)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq mariadb-server >/dev/null; \
	fi
	@# storlab report --png and the report tests open pages in Debian's Chromium
	@# (playwright drives it; playwright's own browser download is never used).
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  echo "installing Debian's chromium package (headless browser for storlab report)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi
	@# `storlab emulate` mounts through /dev/fuse; fuse3 provides fusermount3
	@# (unmounting as a non-root user) and the FUSE tests need it in CI.
	@if ! command -v fusermount3 >/dev/null 2>&1; then \
	  echo "installing Debian's fuse3 package (storlab emulate)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq fuse3 >/dev/null; \
	fi
	@# bench db --profile-out runs stress-ng's CPU stressor (the catalog's
	@# cpu_speed basis stress-ng-cpu-div16-1t) and keeps its reading beside the
	@# processor's published figure.
	@if ! command -v stress-ng >/dev/null 2>&1; then \
	  echo "installing Debian's stress-ng package (the recorder's CPU speed probe)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq stress-ng >/dev/null; \
	fi
	@mkdir -p $(STAMPS) && touch $@

# The build and the Debian packages' download go side by side: one keeps
# the cores busy, the other the network.
install: ## Create .venv at the repo root with storlab in it
	@$(MAKE) --no-print-directory -j2 $(STAMPS)/install $(STAMPS)/system
	@$(BIN)/storlab --version

demo: install ## Set up and run the main job
	$(BIN)/storlab simulate examples/azure-ds4-p30-host-cache.toml

# pytest runs its tests on several workers (pytest-xdist): many of them wait
# on a database, a mount or a browser rather than on a core.
PYTEST_WORKERS ?= 3
NO_SERVERS := not slow and not needs_postgres and not needs_mariadb and not needs_fuse and not needs_browser

test: install test-rust test-python ## Set up and run every test (cargo and pytest)

# storlab-py is in the workspace's build (its dependencies' features then
# match the module's, so nothing is compiled twice) but has no tests of
# its own (Cargo.toml: test = false); pytest tests the binding. `--tests`
# builds the unit and integration tests only (the crates have no doc tests).
CARGO_TEST := cargo test --profile tests --workspace --tests
test-rust: ## cargo tests of the Rust crates
	$(CARGO_TEST)

test-python: install ## pytest: API, CLI, examples, binding; the binding's stub checked against the module
	$(BIN)/python -m mypy.stubtest storlab._native
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist worksteal --durations=15

check: install ## The edit loop: cargo tests and pytest without servers, FUSE, browser or slow tests
	$(CARGO_TEST)
	$(BIN)/python -m mypy.stubtest storlab._native
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist worksteal -m "$(NO_SERVERS)"

test-quick: check ## The same as make check

# The simulator's own loop: after an edit in storlab-sim (or the crates
# below it), its cargo tests and the pytest files that run simulate.
QUICK_PYTEST := tests/cli/test_simulate.py tests/cli/test_simulate_db.py tests/cli/test_tipping_point.py tests/test_examples.py tests/test_buckets_at_start.py
quick: install ## The simulator's edit loop: storlab-sim's cargo tests and the pytest files that simulate
	cargo test --profile tests -p storlab-sim --tests
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist worksteal -m "$(NO_SERVERS)" $(QUICK_PYTEST)

bench: install ## Run the benchmarks beside their peers (an hour or more; rows on bench/RESULTS.md, raw results in bench/results.json)
	$(MATURIN) --release
	@touch $(STAMPS)/install
	$(BIN)/pip install --quiet "simpy>=4"
	$(BIN)/python bench/simulate_speed.py
	$(BIN)/python bench/db_sim_speed.py
	$(BIN)/python bench/report_speed.py
	command -v fio >/dev/null || (apt-get update -qq && apt-get install -y -qq fio)
	$(BIN)/python bench/disk_vs_fio.py
	$(BIN)/python bench/db_vs_pgbench.py
	command -v sysbench >/dev/null || (apt-get update -qq && apt-get install -y -qq sysbench)
	$(BIN)/python bench/db_vs_sysbench.py
	command -v bindfs >/dev/null || (apt-get update -qq && apt-get install -y -qq bindfs)
	$(BIN)/python bench/emulate_overhead.py
	$(BIN)/python bench/emulate_precision.py
	$(BIN)/python bench/db_accuracy.py --record
	$(BIN)/python bench/db_accuracy.py --emulated --no-local --rampup 30 --duration 60 --emu-setting shared_buffers=320MB --emu-options="--floor-us auto"
	$(BIN)/python bench/db_accuracy.py --engine mariadb --record --vus 1,2,3,4,6,8,11,16,23
	$(BIN)/python bench/db_accuracy.py --engine mariadb --emulated --no-local --insert --rampup 30 --duration 60 --emu-setting innodb_buffer_pool_size=320M --emu-options="--floor-us auto"

# The fuzz targets (crates/*/tests/fuzz.rs, tests/fuzz/) run a bounded
# number of inputs in `make test`; here FUZZ_CASES per Rust target and
# FUZZ_EXAMPLES per hypothesis test, each input read or refused on one line.
FUZZ_CASES ?= 200000
FUZZ_EXAMPLES ?= 20000
fuzz: install ## Fuzz every input format for longer (FUZZ_CASES, FUZZ_EXAMPLES; counts on stderr; bench/fuzz.py records a run)
	STORLAB_FUZZ_CASES=$(FUZZ_CASES) cargo test --profile tests -p storlab-workload -p storlab-model -p storlab-record --test fuzz -- --nocapture
	HYPOTHESIS_PROFILE=fuzz STORLAB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q -p no:xdist tests/fuzz --hypothesis-show-statistics

clean: ## Remove the venv, build outputs and stamps
	rm -rf $(VENV) $(STAMPS) target python/storlab/*.so
