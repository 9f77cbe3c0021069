//! storlab's Python binding: the only crate that knows pyo3. Each wrapper
//! delegates to a storlab crate in a few lines; results cross as JSON text,
//! errors as the `storlab.errors` hierarchy (mapped in one place, `to_py`).

use pyo3::prelude::*;
use storlab_model::{Catalog, ModelError};

/// Maps a model error onto storlab.errors: catalog problems become
/// CatalogError, everything else in user input ScenarioError.
fn to_py(py: Python<'_>, e: ModelError) -> PyErr {
    let class = if e.is_catalog() { "CatalogError" } else { "ScenarioError" };
    match py.import("storlab.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((e.to_string(),))) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// Runs `f` without the GIL, then lets Python deliver a pending Ctrl-C as
/// KeyboardInterrupt.
fn released<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let out = py.allow_threads(f);
    py.check_signals()?;
    Ok(out)
}

fn load(py: Python<'_>, files: &[(String, String)]) -> PyResult<Catalog> {
    released(py, || Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))))?.map_err(|e| to_py(py, e))
}

/// `limits_json(scenario_name, scenario_text, catalog_files) -> str`: the
/// limits record of every config, as JSON.
#[pyfunction]
fn limits_json(py: Python<'_>, scenario_name: &str, scenario_text: &str, catalog_files: Vec<(String, String)>) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let report = released(py, || storlab_model::limits(&cat, scenario_name, scenario_text))?.map_err(|e| to_py(py, e))?;
    Ok(serde_json::to_string(&report).expect("limits report serialises"))
}

/// `catalog_json(catalog_files) -> str`: every device, host, price and
/// source of the catalog, with the file each came from.
#[pyfunction]
fn catalog_json(py: Python<'_>, catalog_files: Vec<(String, String)>) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let v = serde_json::json!({
        "devices": cat.devices.values().map(|d| {
            let mut v = serde_json::to_value(d).expect("device serialises");
            v["file"] = cat.origin.get(&d.id).cloned().into();
            v
        }).collect::<Vec<_>>(),
        "hosts": cat.hosts.values().map(|h| {
            let mut v = serde_json::to_value(h).expect("host serialises");
            v["file"] = cat.origin.get(&h.id).cloned().into();
            v
        }).collect::<Vec<_>>(),
        "prices": cat.prices,
        "sources": cat.sources,
        "regions": cat.regions(),
    });
    Ok(v.to_string())
}

/// `catalog_entry_json(catalog_files, id) -> str`: one device or host with
/// its prices and the sources its numbers cite.
#[pyfunction]
fn catalog_entry_json(py: Python<'_>, catalog_files: Vec<(String, String)>, id: &str) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let entry = if let Some(d) = cat.devices.get(id) {
        serde_json::json!({"type": "device", "entry": d, "src": d.src})
    } else if let Some(h) = cat.hosts.get(id) {
        serde_json::json!({"type": "host", "entry": h, "src": h.src})
    } else {
        let all = cat.devices.keys().chain(cat.hosts.keys()).map(|s| s.as_str());
        return Err(to_py(py, ModelError::UnknownId {
            at: storlab_model::error::Location::new("catalog", "", ""),
            what: "catalog id",
            id: id.to_string(),
            suggestion: storlab_model::error::nearest(id, all),
            catalog: false,
        }));
    };
    let prices: Vec<_> = cat.prices.iter().filter(|p| p.item == id || p.item == format!("aws/rds/{}", id.rsplit('/').next().unwrap_or(""))).collect();
    let v = serde_json::json!({
        "id": id,
        "file": cat.origin.get(id),
        "type": entry["type"],
        "entry": entry["entry"],
        "prices": prices,
        "sources": cat.sources,
    });
    Ok(v.to_string())
}

fn sim_to_py(py: Python<'_>, e: storlab_sim::SimError) -> PyErr {
    use storlab_sim::SimError;
    let class = match &e {
        SimError::Model(m) => return to_py(py, m.clone()),
        SimError::NoLatency { .. } => "CatalogError",
        _ => "ScenarioError",
    };
    match py.import("storlab.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((e.to_string(),))) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// `simulate_json(scenario_name, scenario_text, scenario_dir, catalog_files,
/// period_s=None, progress=None) -> str`: the run record. `progress(fraction)`
/// is called now and then; Ctrl-C stops the run and the record keeps what
/// was simulated (`interrupted: true`).
#[pyfunction]
#[pyo3(signature = (scenario_name, scenario_text, scenario_dir, catalog_files, period_s=None, progress=None))]
fn simulate_json(
    py: Python<'_>,
    scenario_name: &str,
    scenario_text: &str,
    scenario_dir: &str,
    catalog_files: Vec<(String, String)>,
    period_s: Option<f64>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let dir = std::path::PathBuf::from(scenario_dir);
    let rec = py.allow_threads(|| {
        let mut report = |fraction: f64| -> bool {
            Python::with_gil(|py| {
                if py.check_signals().is_err() {
                    return false;
                }
                if let Some(cb) = &progress {
                    if cb.call1(py, (fraction,)).is_err() {
                        return false;
                    }
                }
                true
            })
        };
        storlab_sim::simulate(&cat, scenario_name, scenario_text, &dir, period_s, &mut report)
    });
    let rec = rec.map_err(|e| sim_to_py(py, e))?;
    Ok(serde_json::to_string(&rec).expect("run record serialises"))
}

fn raise(py: Python<'_>, class: &str, msg: String) -> PyErr {
    match py.import("storlab.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((msg,))) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// `bench_disk_json(path, profile, fio_name, fio_text, size_bytes, engine,
/// runs, runtime_s, interval_s, direct, seed, progress) -> str`: measures the
/// jobs of a CrystalDiskMark preset or a fio job file on a test file inside
/// `path`. Ctrl-C stops the run; the report keeps what was measured
/// (`interrupted: true`) and the test file is removed either way.
#[pyfunction]
#[pyo3(signature = (path, profile, fio_name, fio_text, size_bytes, engine, runs, runtime_s=None, interval_s=None, direct=true, seed=1, progress=None, existing_file=None))]
#[allow(clippy::too_many_arguments)]
fn bench_disk_json(
    py: Python<'_>,
    path: &str,
    profile: Option<&str>,
    fio_name: Option<&str>,
    fio_text: Option<&str>,
    size_bytes: u64,
    engine: &str,
    runs: Option<u32>,
    runtime_s: Option<f64>,
    interval_s: Option<f64>,
    direct: bool,
    seed: u64,
    progress: Option<PyObject>,
    existing_file: Option<String>,
) -> PyResult<String> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    use storlab_bench::engine::EngineKind;
    use storlab_workload::presets::Preset;

    let kind = EngineKind::parse(engine)
        .ok_or_else(|| raise(py, "EngineError", format!("--engine '{engine}' — use io_uring, psync or null")))?;
    let (jobs, cdm, preset) = match (profile, fio_text) {
        (Some(p), _) => {
            let pr = Preset::by_name(p).map_err(|e| raise(py, "ScenarioError", e.to_string()))?;
            (pr.jobs(), true, Some(pr))
        }
        (None, Some(text)) => {
            let jobs = storlab_workload::fio::parse(fio_name.unwrap_or("job.fio"), text).map_err(|e| raise(py, "ScenarioError", e.to_string()))?;
            (jobs, false, None)
        }
        (None, None) => return Err(raise(py, "ScenarioError", "give --profile NAME or --job FILE.fio".into())),
    };
    let opts = storlab_bench::BenchOptions {
        size_bytes,
        engine: kind,
        runs: runs.unwrap_or(preset.map_or(1, |p| p.runs)),
        cdm,
        runtime: runtime_s.map(Duration::from_secs_f64).or(preset.map(|p| p.measure)),
        interval: interval_s.map(Duration::from_secs_f64).unwrap_or(preset.map_or(Duration::ZERO, |p| p.interval)),
        direct,
        seed,
        existing_file: existing_file.map(std::path::PathBuf::from),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let total = jobs.len();
    let (tx, rx) = std::sync::mpsc::channel();
    let rx = std::sync::Mutex::new(rx);
    let dir = std::path::PathBuf::from(path);
    {
        let (stop, done) = (stop.clone(), done.clone());
        std::thread::spawn(move || {
            let r = storlab_bench::bench_disk(&dir, &jobs, &opts, &stop, &mut |d, _| done.store(d, Ordering::Relaxed));
            let _ = tx.send(r);
        });
    }
    let mut interrupted = false;
    let report = loop {
        match py.allow_threads(|| rx.lock().expect("receiver lock").recv_timeout(Duration::from_millis(100))) {
            Ok(r) => break r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if py.check_signals().is_err() {
                    interrupted = true;
                    stop.store(true, Ordering::Relaxed);
                }
                if let Some(cb) = &progress {
                    cb.call1(py, (done.load(Ordering::Relaxed), total))?;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(raise(py, "EngineError", "the benchmark thread ended without a result".into()))
            }
        }
    };
    let mut report = report.map_err(|e| {
        let class = match &e {
            storlab_bench::BenchError::Path { .. } => "ScenarioError",
            storlab_bench::BenchError::Job { .. } => "ScenarioError",
            _ => "EngineError",
        };
        raise(py, class, e.to_string())
    })?;
    report.interrupted |= interrupted;
    Ok(serde_json::to_string(&report).expect("bench report serialises"))
}

/// Reads the JSON spec the Python front end builds for `bench db`.
fn db_spec(spec: &str) -> Result<(storlab_db::Db, storlab_db::Workload, serde_json::Value), storlab_db::DbError> {
    use storlab_db::{DbError, Workload};
    let v: serde_json::Value = serde_json::from_str(spec).map_err(|e| DbError::Input(format!("bench db spec: {e}")))?;
    let db = if let Some(p) = v["db"]["sqlite"].as_str() {
        storlab_db::Db::Sqlite { path: p.into() }
    } else {
        storlab_db::Db::Postgres(storlab_db::pg::Target::parse(v["db"]["postgres"].as_str().unwrap_or(""))?)
    };
    let w = &v["workload"];
    let u = |x: &serde_json::Value, d: u64| x.as_u64().unwrap_or(d);
    let wl = match w["kind"].as_str().unwrap_or("") {
        "tpcc" => Workload::Tpcc(storlab_db::TpccOptions {
            warehouses: u(&w["warehouses"], 1) as u32,
            all_warehouses: w["all_warehouses"].as_bool().unwrap_or(false),
            key_and_think: w["key_and_think"].as_bool().unwrap_or(false),
        }),
        "insert" => Workload::Insert(storlab_db::insert::InsertOptions { rows_per_vu: u(&w["rows"], 10_000), commit_every: u(&w["commit_every"], 100) }),
        _ => {
            let mut cw = storlab_db::custom::Workload::parse(w["file"].as_str().unwrap_or("workload.toml"), w["text"].as_str().unwrap_or(""))?;
            if let Some(s) = w["scale"].as_i64() {
                cw.scale = s;
            }
            Workload::Custom(cw)
        }
    };
    Ok((db, wl, v))
}

fn db_to_py(py: Python<'_>, e: storlab_db::DbError) -> PyErr {
    raise(py, if e.is_input() { "ScenarioError" } else { "DatabaseError" }, e.to_string())
}

/// Runs `f` on its own thread while this one (holding the GIL only briefly)
/// reports progress and turns Ctrl-C into the stop flag; the result keeps
/// what was measured.
fn polled(
    py: Python<'_>,
    progress: Option<PyObject>,
    f: impl FnOnce(&storlab_db::Progress) -> Result<serde_json::Value, storlab_db::DbError> + Send + 'static,
) -> PyResult<(serde_json::Value, bool)> {
    use std::sync::atomic::Ordering;
    use std::time::Duration;
    let state = storlab_db::Progress::default();
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let state = state.clone();
        std::thread::spawn(move || {
            let _ = tx.send(f(&state));
        });
    }
    let rx = std::sync::Mutex::new(rx);
    let mut interrupted = false;
    let r = loop {
        match py.allow_threads(|| rx.lock().expect("receiver lock").recv_timeout(Duration::from_millis(250))) {
            Ok(r) => break r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if py.check_signals().is_err() {
                    interrupted = true;
                    state.stop.store(true, Ordering::Relaxed);
                }
                if let Some(cb) = &progress {
                    let args = (state.phase.load(Ordering::Relaxed), state.done.load(Ordering::Relaxed), state.total.load(Ordering::Relaxed));
                    if cb.call1(py, args).is_err() {
                        state.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(raise(py, "DatabaseError", "the driver thread ended without a result".into())),
        }
    };
    Ok((r.map_err(|e| db_to_py(py, e))?, interrupted))
}

/// `db_prepare_json(spec_json, progress=None) -> str`: builds (or reuses)
/// the workload's schema and data. `progress(phase, done, total)`.
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None))]
fn db_prepare_json(py: Python<'_>, spec_json: &str, progress: Option<PyObject>) -> PyResult<String> {
    let (db, wl, v) = db_spec(spec_json).map_err(|e| db_to_py(py, e))?;
    let seed = v["seed"].as_u64().unwrap_or(1);
    let loaders = v["loaders"].as_u64().unwrap_or(2) as u32;
    let (rec, interrupted) = polled(py, progress, move |p| storlab_db::prepare(&db, &wl, seed, loaders, p))?;
    if interrupted {
        return Err(PyErr::new::<pyo3::exceptions::PyKeyboardInterrupt, _>("interrupted while loading"));
    }
    Ok(rec.to_string())
}

/// `db_run_json(spec_json, progress=None) -> str`: one timed run (rampup,
/// then the measured window). Ctrl-C ends the window early; the record keeps
/// what was measured (`interrupted: true`).
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None))]
fn db_run_json(py: Python<'_>, spec_json: &str, progress: Option<PyObject>) -> PyResult<String> {
    let (db, wl, v) = db_spec(spec_json).map_err(|e| db_to_py(py, e))?;
    let secs = |x: &serde_json::Value| std::time::Duration::from_secs_f64(x.as_f64().unwrap_or(0.0).max(0.0));
    let opts = storlab_db::RunOptions {
        vus: v["vus"].as_u64().unwrap_or(1) as u32,
        rampup: secs(&v["rampup_s"]),
        duration: secs(&v["duration_s"]),
        seed: v["seed"].as_u64().unwrap_or(1),
        threads: v["threads"].as_u64().unwrap_or(0) as usize,
        check: v["check"].as_bool().unwrap_or(false),
    };
    let (mut rec, interrupted) = polled(py, progress, move |p| storlab_db::run(&db, &wl, &opts, p))?;
    if interrupted {
        rec["interrupted"] = true.into();
    }
    Ok(rec.to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(limits_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_entry_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench_disk_json, m)?)?;
    m.add_function(wrap_pyfunction!(db_prepare_json, m)?)?;
    m.add_function(wrap_pyfunction!(db_run_json, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_unmount, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// `emulate_json(scenario_name, scenario_text, catalog_files, config,
/// targets, options_json, status=None) -> str`: mounts the emulated pools
/// (`targets`: (role or None, backing, mount)) and serves them until a
/// signal reaches Python (Ctrl-C, or SIGTERM/SIGHUP turned into
/// KeyboardInterrupt), then unmounts and returns the summary with its
/// series. `status(json)` is called once a second.
#[pyfunction]
#[pyo3(signature = (scenario_name, scenario_text, catalog_files, config, targets, options_json, status=None))]
fn emulate_json(
    py: Python<'_>,
    scenario_name: &str,
    scenario_text: &str,
    catalog_files: Vec<(String, String)>,
    config: &str,
    targets: Vec<(Option<String>, String, String)>,
    options_json: &str,
    status: Option<PyObject>,
) -> PyResult<String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let cat = load(py, &catalog_files)?;
    let v: serde_json::Value = serde_json::from_str(options_json).map_err(|e| raise(py, "EngineError", format!("emulator options: {e}")))?;
    let f = |k: &str| v[k].as_f64();
    let opts = storlab_fuse::Options {
        initial_credits_pct: f("initial_credits_pct"),
        ram_bytes: v["ram_bytes"].as_u64(),
        metrics_file: v["metrics_file"].as_str().map(Into::into),
        metrics_port: v["metrics_port"].as_u64().map(|p| p as u16),
        period_s: f("period_s").unwrap_or(60.0),
        seed: v["seed"].as_u64().unwrap_or(1),
        floor_us: f("floor_us").unwrap_or(0.0),
        unpaced: v["unpaced"].as_bool().unwrap_or(false),
        nonempty: v["nonempty"].as_bool().unwrap_or(false),
        adopt_backing: v["adopt_backing"].as_bool().unwrap_or(false),
        threads: v["threads"].as_u64().unwrap_or(4) as usize,
    };
    let targets: Vec<storlab_fuse::Target> = targets.into_iter().map(|(role, b, m)| storlab_fuse::Target { role, backing: b.into(), mount: m.into() }).collect();
    let (name, text, config) = (scenario_name.to_string(), scenario_text.to_string(), config.to_string());
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<Result<String, (&'static str, String)>>();
    let (stx, srx) = std::sync::mpsc::channel::<String>();
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let r = storlab_fuse::emulate(&cat, &name, &text, &config, &targets, &opts, &stop, &mut |s| {
                let _ = stx.send(serde_json::to_string(s).expect("status serialises"));
            });
            let class = |e: &storlab_fuse::EmulateError| match e {
                storlab_fuse::EmulateError::Model(m) if m.is_catalog() => "CatalogError",
                storlab_fuse::EmulateError::Model(_) | storlab_fuse::EmulateError::NoConfig { .. } | storlab_fuse::EmulateError::NoPool { .. } => "ScenarioError",
                storlab_fuse::EmulateError::NoLatency { .. } => "CatalogError",
                _ => "EngineError",
            };
            let _ = tx.send(r.map(|s| serde_json::to_string(&s).expect("summary serialises")).map_err(|e| (class(&e), e.to_string())));
        });
    }
    let rx = std::sync::Mutex::new(rx);
    let r = loop {
        match py.allow_threads(|| rx.lock().expect("receiver lock").recv_timeout(std::time::Duration::from_millis(100))) {
            Ok(r) => break r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if py.check_signals().is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                while let Ok(s) = srx.try_recv() {
                    if let Some(cb) = &status {
                        if cb.call1(py, (s,)).is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break Err(("EngineError", "the emulator thread ended without a result".into())),
        }
    };
    r.map_err(|(class, e)| raise(py, class, e))
}

/// `emulate_unmount(dir) -> bool`: clears an emulated volume mounted at
/// `dir`, stale or live; False when nothing was mounted there.
#[pyfunction]
fn emulate_unmount(py: Python<'_>, dir: &str) -> PyResult<bool> {
    storlab_fuse::unmount(std::path::Path::new(dir)).map_err(|e| raise(py, "EngineError", e.to_string()))
}
