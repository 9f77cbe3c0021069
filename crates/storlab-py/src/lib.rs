//! storlab's Python binding: the only crate that knows pyo3. Each wrapper
//! delegates to a storlab crate in a few lines. Three things are done once
//! here, for every function:
//!
//! - errors: every crate's error becomes one class of `storlab.errors`
//!   (`raise`, via the `PyErrOf` impls below);
//! - long work: `off_gil` runs it on its own thread while this one polls for
//!   Ctrl-C and calls the progress callback; a Ctrl-C or a callback that
//!   raises sets the stop flag, and the work keeps what it measured;
//! - the catalog: loaded once into a `Catalog` object the caller keeps.
//!
//! Run records cross as JSON text (one string, not one object per result:
//! the `*_json` functions); smaller answers (limits, a profile's health, a
//! fit) come back as Python values. Keyword options arrive as `**options`
//! read into a typed struct (`keyword_options!`): a keyword left out or
//! None takes the Rust `Default` of its option, an unknown one is refused.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Raises `storlab.errors.<class>(msg)`.
fn raise(py: Python<'_>, class: &str, msg: String) -> PyErr {
    match py.import("storlab.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((msg,))) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// The storlab.errors class each crate's errors belong to.
trait PyErrOf: std::fmt::Display {
    fn class(&self) -> &'static str;
    fn to_py(&self, py: Python<'_>) -> PyErr {
        raise(py, self.class(), self.to_string())
    }
}

impl PyErrOf for storlab_model::ModelError {
    fn class(&self) -> &'static str {
        if self.is_catalog() {
            "CatalogError"
        } else {
            "ScenarioError"
        }
    }
}

impl PyErrOf for storlab_sim::SimError {
    fn class(&self) -> &'static str {
        match self {
            storlab_sim::SimError::Model(m) => m.class(),
            storlab_sim::SimError::Workload(w) => w.class(),
            storlab_sim::SimError::NoLatency { .. } => "CatalogError",
            _ => "ScenarioError",
        }
    }
}

impl PyErrOf for storlab_advise::AdviseError {
    fn class(&self) -> &'static str {
        match self {
            storlab_advise::AdviseError::Model(m) => m.class(),
            storlab_advise::AdviseError::Sim(e) => e.class(),
            storlab_advise::AdviseError::Workload(w) => w.class(),
            _ => "ScenarioError",
        }
    }
}

impl PyErrOf for storlab_bench::BenchError {
    fn class(&self) -> &'static str {
        match self {
            storlab_bench::BenchError::Path { .. } | storlab_bench::BenchError::Job { .. } => "ScenarioError",
            _ => "EngineError",
        }
    }
}

impl PyErrOf for storlab_workload::WorkloadError {
    fn class(&self) -> &'static str {
        match self {
            storlab_workload::WorkloadError::Suspect { .. } => "SuspectProfileError",
            _ => "ScenarioError",
        }
    }
}

impl PyErrOf for storlab_db::DbError {
    fn class(&self) -> &'static str {
        if self.is_input() {
            "ScenarioError"
        } else {
            "DatabaseError"
        }
    }
}

/// What long work can watch: a stop flag set on Ctrl-C (or when the
/// progress callback raises), and counters the callback is shown.
#[derive(Default)]
struct Watch {
    stop: AtomicBool,
    /// Up to three counters, meaning what each function says.
    counters: [AtomicU64; 3],
}

impl Watch {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    fn set(&self, i: usize, v: u64) {
        self.counters[i].store(v, Ordering::Relaxed);
    }
}

/// Runs `work` on its own thread, without the GIL. Every `poll` this
/// thread checks for Ctrl-C and calls `progress(*args(counters))`; either a
/// Ctrl-C or a callback that raises sets the stop flag, and the work is
/// waited for so that it ends cleanly and keeps what it measured. Returns
/// the work's result and whether it was stopped from here.
fn off_gil<T: Send + 'static>(
    py: Python<'_>,
    poll: Duration,
    progress: Option<PyObject>,
    args: impl for<'py> Fn(Python<'py>, &[u64; 3]) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
    work: impl FnOnce(&Arc<Watch>) -> T + Send + 'static,
) -> PyResult<(T, bool)> {
    let watch = Arc::new(Watch::default());
    let (tx, rx) = std::sync::mpsc::channel::<Result<T, String>>();
    {
        let watch = watch.clone();
        std::thread::Builder::new()
            .name("storlab-work".into())
            .spawn(move || {
                // A panic is a bug, never the user's: it ends the work and
                // reaches Python as one InternalError line.
                // STORLAB_FAULT=panic makes that bug on purpose, so the
                // tests can see what a user would.
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    if std::env::var_os("STORLAB_FAULT").is_some_and(|v| v == "panic") {
                        panic!("a panic asked for by STORLAB_FAULT=panic");
                    }
                    work(&watch)
                }));
                let _ = tx.send(out.map_err(|p| panic_text(p.as_ref())));
            })
            .map_err(|e| raise(py, "EngineError", format!("cannot start a worker thread: {e}")))?;
    }
    let rx = std::sync::Mutex::new(rx);
    let mut stopped = false;
    loop {
        match py.allow_threads(|| rx.lock().expect("receiver lock").recv_timeout(poll)) {
            Ok(Ok(out)) => return Ok((out, stopped)),
            Ok(Err(panic)) => return Err(raise(py, "InternalError", panic)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if py.check_signals().is_err() {
                    stopped = true;
                    watch.stop.store(true, Ordering::Relaxed);
                }
                if let (Some(cb), false) = (&progress, watch.stopped()) {
                    let c = [0, 1, 2].map(|i| watch.counters[i].load(Ordering::Relaxed));
                    if cb.call1(py, args(py, &c)?).is_err() {
                        stopped = true;
                        watch.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(raise(py, "EngineError", "the worker thread ended without a result".into()))
            }
        }
    }
}

/// Where the last panic happened and what it said, kept by the hook that
/// `_native` installs in place of Rust's (which prints a backtrace hint
/// to stderr); `STORLAB_DEBUG=1` keeps Rust's output as well.
static LAST_PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        }
        if std::env::var_os("STORLAB_DEBUG").is_some() {
            default(info);
        }
    }));
}

/// One line for a panic: its message and where it happened.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    let msg = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic".into());
    let at = LAST_PANIC.lock().map(|l| l.clone()).unwrap_or_default();
    format!("{} (at {at})", msg.replace('\n', " "))
}

/// Seconds from a caller (`--runtime`, `--interval`, `--period`): finite,
/// at least `min`, at most a year; else ScenarioError with the nearest
/// valid value.
fn seconds(py: Python<'_>, flag: &str, v: f64, min: f64) -> PyResult<Duration> {
    const MAX: f64 = 365.0 * 86400.0;
    if v.is_finite() && v >= min && v <= MAX {
        return Ok(Duration::from_secs_f64(v));
    }
    let nearest = if v > MAX { MAX } else { min };
    Err(raise(py, "ScenarioError", format!("{flag} {v}: give seconds from {min} to {MAX} (a year) — nearest valid value {nearest}")))
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("records serialise")
}

/// A value as a Python object: serde's JSON of it read by Python's json
/// module, so the object is exactly what `json.loads` of the text gives (a
/// non-finite figure is None, keys keep their order).
fn py_value<T: serde::Serialize>(py: Python<'_>, v: &T) -> PyResult<PyObject> {
    py.import("json")?.call_method1("loads", (json(v),)).map(Bound::unbind)
}

/// A function's keyword options (`**options` in its signature), typed: each
/// field an `Option` (a keyword left out or given as None is None); a
/// keyword the function does not take is refused with the ones it does, and
/// a value of the wrong type with the keyword's name.
macro_rules! keyword_options {
    ($(#[$m:meta])* struct $name:ident { $($field:ident: $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Default)]
        struct $name {
            $($field: Option<$ty>),*
        }
        impl $name {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];
            fn from_kwargs(kwargs: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<Self> {
                use pyo3::types::PyDictMethods;
                let Some(d) = kwargs else { return Ok(Self::default()) };
                for k in d.keys() {
                    let k: String = k.extract()?;
                    if !Self::NAMES.contains(&k.as_str()) {
                        return Err(pyo3::exceptions::PyTypeError::new_err(format!("unexpected keyword argument '{k}' — one of {}", Self::NAMES.join(", "))));
                    }
                }
                Ok(Self {
                    $($field: match d.get_item(stringify!($field))? {
                        Some(v) if !v.is_none() => Some(v.extract().map_err(|e: PyErr| pyo3::exceptions::PyTypeError::new_err(format!("keyword argument '{}': {e}", stringify!($field))))?),
                        _ => None,
                    }),*
                })
            }
        }
    };
}

keyword_options! {
    /// `Catalog.simulate_json`'s keywords: what `storlab simulate` overrides.
    struct SimulateOptions {
        period_s: f64,
        config: String,
        threads: u32,
        iodepth: u32,
        duration_s: f64,
        profile: String,
        profiles_dir: String,
        repeats: u32,
        accept_suspect: bool,
    }
}

keyword_options! {
    /// `Catalog.advise_json`'s keywords.
    struct AdviseOptions {
        top: usize,
        threads: usize,
        demand_json: String,
        remote: PyObject,
        accept_suspect: bool,
        explain: String,
    }
}

keyword_options! {
    /// `Catalog.advise_part_json`'s keywords.
    struct PartOptions {
        demand_json: String,
        threads: usize,
    }
}

keyword_options! {
    /// `db_run_json`'s keywords.
    struct DbRunOptions {
        vus: u32,
        rampup_s: f64,
        duration_s: f64,
        seed: u64,
        threads: usize,
        check: bool,
    }
}

keyword_options! {
    /// `db_record_json`'s keywords.
    struct DbRecordOptions {
        seed: u64,
        interrupted: bool,
    }
}

/// A catalog, validated once and kept: `Catalog(files)` with `files` a list
/// of (display name, TOML text).
#[pyclass(frozen, module = "storlab._native")]
struct Catalog {
    inner: Arc<storlab_model::Catalog>,
}

#[pymethods]
impl Catalog {
    #[new]
    fn new(py: Python<'_>, files: Vec<(String, String)>) -> PyResult<Self> {
        let cat = py.allow_threads(|| storlab_model::Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))));
        Ok(Catalog { inner: Arc::new(cat.map_err(|e| e.to_py(py))?) })
    }

    /// The catalog as it stood on `date` (`YYYY-MM-DD`, `--as-of`): every
    /// device and host with the rules of that day; prices stay today's.
    fn on(&self, py: Python<'_>, date: &str) -> PyResult<Self> {
        let at = storlab_model::error::Location::new("--as-of", "", "");
        let cat = self.inner.on(date, at).map_err(|e| e.to_py(py))?;
        Ok(Catalog { inner: Arc::new(cat) })
    }

    /// Every device, host, price and source, with the file each came from.
    fn to_json(&self) -> String {
        let cat = &self.inner;
        let with_file = |id: &str, v: serde_json::Value| {
            let mut v = v;
            v["file"] = cat.origin.get(id).cloned().into();
            v
        };
        serde_json::json!({
            "devices": cat.devices.values().map(|d| with_file(&d.id, serde_json::to_value(d).expect("device serialises"))).collect::<Vec<_>>(),
            "hosts": cat.hosts.values().map(|h| with_file(&h.id, serde_json::to_value(h).expect("host serialises"))).collect::<Vec<_>>(),
            "prices": cat.prices,
            "sources": cat.sources,
            "regions": cat.regions(),
        })
        .to_string()
    }

    /// The latency figures the model uses for a device (its own, or the last
    /// `[[latency]]` entry naming it), µs, as a dict; None if none.
    fn latency(&self, py: Python<'_>, id: &str) -> PyResult<Option<PyObject>> {
        let Some((l, _)) = self.inner.latency_for(id) else { return Ok(None) };
        let fields = [
            ("read_median_us", Some(&l.read_median_us)),
            ("read_p99_us", Some(&l.read_p99_us)),
            ("write_median_us", Some(&l.write_median_us)),
            ("write_p99_us", Some(&l.write_p99_us)),
            ("flush_median_us", l.flush_median_us.as_ref()),
            ("flush_p99_us", l.flush_p99_us.as_ref()),
            ("read_us_per_mib", l.read_us_per_mib.as_ref()),
            ("write_us_per_mib", l.write_us_per_mib.as_ref()),
        ];
        let out: serde_json::Map<String, serde_json::Value> = fields.into_iter().filter_map(|(k, v)| v.map(|n| (k.to_string(), n.value.into()))).collect();
        py_value(py, &out).map(Some)
    }

    /// A recording's concurrency penalty: the scenario's profile on its
    /// first config (the recording machine), fitted to `throughput` at the
    /// profile's recorded counts (`storlab_sim::database::fit_penalty`).
    #[pyo3(signature = (scenario_name, scenario_text, scenario_dir, throughput, *, profiles_dir=None))]
    fn penalty_fit(
        &self,
        py: Python<'_>,
        scenario_name: &str,
        scenario_text: &str,
        scenario_dir: &str,
        throughput: Vec<f64>,
        profiles_dir: Option<String>,
    ) -> PyResult<PyObject> {
        let profiles = std::path::PathBuf::from(profiles_dir.unwrap_or_default());
        let cat = &self.inner;
        let fit = py
            .allow_threads(|| storlab_sim::database::fit_penalty(cat, scenario_name, scenario_text, std::path::Path::new(scenario_dir), &profiles, &throughput))
            .map_err(|e| e.to_py(py))?;
        py_value(py, &fit)
    }

    /// One device or host with its prices and the sources its numbers cite.
    fn entry(&self, py: Python<'_>, id: &str) -> PyResult<PyObject> {
        let cat = &self.inner;
        let (kind, entry) = if let Some(d) = cat.devices.get(id) {
            ("device", serde_json::to_value(d).expect("device serialises"))
        } else if let Some(h) = cat.hosts.get(id) {
            ("host", serde_json::to_value(h).expect("host serialises"))
        } else {
            let all = cat.devices.keys().chain(cat.hosts.keys()).map(|s| s.as_str());
            return Err(storlab_model::ModelError::UnknownId {
                at: storlab_model::error::Location::new("catalog", "", ""),
                what: "catalog id",
                id: id.to_string(),
                suggestion: storlab_model::error::nearest(id, all),
                catalog: false,
            }
            .to_py(py));
        };
        let rds = format!("aws/rds/{}", id.rsplit('/').next().unwrap_or(""));
        let prices: Vec<_> = cat.prices.iter().filter(|p| p.item == id || p.item == rds).collect();
        py_value(py, &serde_json::json!({
            "id": id, "file": cat.origin.get(id), "type": kind, "entry": entry, "prices": prices, "sources": cat.sources,
        }))
    }

    /// The `storlab limits` record of every config of a scenario.
    fn limits(&self, py: Python<'_>, scenario_name: &str, scenario_text: &str) -> PyResult<PyObject> {
        let cat = &self.inner;
        let report = py.allow_threads(|| storlab_model::limits(cat, scenario_name, scenario_text));
        py_value(py, &report.map_err(|e| e.to_py(py))?)
    }

    /// Simulates the scenario's workload on every config and returns the run
    /// record. `progress(fraction)` is called now and then; Ctrl-C stops the
    /// run and the record keeps what was simulated (`interrupted: true`).
    /// `config`, `threads`, `iodepth`, `duration_s` and `profile` override
    /// the scenario (`storlab simulate --config ...`). A `[workload.database]`
    /// runs the database model; its shipped profiles are looked up in
    /// `profiles_dir`.
    #[pyo3(signature = (scenario_name, scenario_text, scenario_dir, *, progress=None, **options))]
    fn simulate_json(
        &self,
        py: Python<'_>,
        scenario_name: String,
        scenario_text: String,
        scenario_dir: String,
        progress: Option<PyObject>,
        options: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<String> {
        let SimulateOptions { period_s, config, threads, iodepth, duration_s, profile, profiles_dir, repeats, accept_suspect } = SimulateOptions::from_kwargs(options)?;
        let cat = self.inner.clone();
        if let Some(r) = repeats {
            if !(1..=100).contains(&r) {
                return Err(raise(py, "ScenarioError", format!("--repeats {r}: give 1 to 100 — nearest valid value {}", r.clamp(1, 100))));
            }
        }
        if let Some(p) = period_s {
            seconds(py, "--period", p, 0.001)?;
        }
        if let Some(d) = duration_s {
            if !(d > 0.0 && d.is_finite()) {
                return Err(raise(py, "ScenarioError", format!("--duration {d}: give a positive time, e.g. 30s or 10m")));
            }
        }
        let overrides = storlab_sim::Overrides { config, threads, iodepth, duration: duration_s.map(Duration::from_secs_f64), profile, sim_threads: None, steady_state: None, repeats, accept_suspect };
        let (rec, stopped) = off_gil(py, Duration::from_millis(100), progress, fraction_args, move |w| {
            let mut report = |fraction: f64| {
                w.set(0, fraction.to_bits());
                !w.stopped()
            };
            let dirs = (std::path::Path::new(&scenario_dir), &std::path::PathBuf::from(profiles_dir.unwrap_or_default()));
            let sc = storlab_sim::Scenario::parse(&cat, &scenario_name, &scenario_text, (dirs.0, dirs.1.as_path()), period_s, &overrides)?;
            storlab_sim::run(&cat, &sc, &overrides, &mut report)
        })?;
        let mut rec = rec.map_err(|e| e.to_py(py))?;
        rec.interrupted |= stopped;
        Ok(json(&rec))
    }

    /// The advice for the question in `text` (`storlab advise`): the
    /// cheapest deployments that meet its goal. `progress(done, total)`
    /// counts the simulator's runs; Ctrl-C ends the search with the best
    /// found so far, marked interrupted.
    ///
    /// `remote`, when given, runs the screen and the simulations elsewhere
    /// (a cluster): an object with `width` (simulations at once),
    /// `screen_batch` (candidates a task), and `screen(json, stopped)` and
    /// `verify(json, stopped)` that return, as JSON, what
    /// `advise_part_json("screen" | "verify", ...)` gives for
    /// their parts, in order (fewer once `stopped()` is true).
    #[pyo3(signature = (file_name, text, dir, profiles_dir, *, progress=None, **options))]
    fn advise_json(
        &self,
        py: Python<'_>,
        file_name: String,
        text: String,
        dir: String,
        profiles_dir: String,
        progress: Option<PyObject>,
        options: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<String> {
        let AdviseOptions { top, threads, demand_json, remote, accept_suspect, explain } = AdviseOptions::from_kwargs(options)?;
        let accept_suspect = accept_suspect.unwrap_or(false);
        let remote = match remote {
            None => None,
            Some(obj) => {
                let width: usize = obj.getattr(py, "width")?.extract(py)?;
                let screen_batch: usize = obj.getattr(py, "screen_batch")?.extract(py)?;
                Some((obj, width, screen_batch))
            }
        };
        let cat = self.inner.clone();
        let mut opts = storlab_advise::Options::default();
        opts.demand = parse_demand(py, demand_json)?;
        opts.accept_suspect = accept_suspect;
        opts.explain = explain;
        if let Some(t) = top {
            if t == 0 {
                return Err(raise(py, "ScenarioError", "--top 0: give at least 1, e.g. 10".into()));
            }
            opts.top = t;
        }
        if let Some(t) = threads {
            opts.threads = t.max(1);
        }
        let (rec, stopped) = off_gil(py, Duration::from_millis(100), progress, count_args, move |w| {
            let report = |done: u64, total: u64| {
                w.set(0, done);
                w.set(1, total);
            };
            let remote = remote.map(|(obj, width, screen_batch)| PyRemote { obj, width, screen_batch, stop: w.clone() });
            let question = storlab_advise::Question { file: &file_name, text: &text, dir: std::path::Path::new(&dir), profiles_dir: std::path::Path::new(&profiles_dir) };
            storlab_advise::advise_on(
                &cat,
                question,
                &opts,
                &w.stop,
                &report,
                remote.as_ref().map(|r| r as &dyn storlab_advise::Remote),
            )
        })?;
        let mut rec = rec.map_err(|e| e.to_py(py))?;
        rec.interrupted |= stopped;
        Ok(json(&rec))
    }

    /// A cluster worker's part of `advise` on the question (`question`: its
    /// file name, text, folder and the shipped profiles' folder):
    /// `part = "screen"` gives the screen of each candidate in `batch_json`
    /// (a JSON list of {name, config}) as a JSON list of {cost, bound, why}
    /// or null (unpriced); `part = "verify"` the simulator's outcome of each
    /// item (a JSON list of {candidate, cost, bound}); both in order.
    /// Ctrl-C (a cancelled task) ends the runs early.
    #[pyo3(signature = (part, question, batch_json, **options))]
    fn advise_part_json(
        &self,
        py: Python<'_>,
        part: &str,
        question: (String, String, String, String),
        batch_json: String,
        options: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<String> {
        let q = [question.0, question.1, question.2, question.3];
        let o = PartOptions::from_kwargs(options)?;
        match part {
            "screen" => advise_part(py, &self.inner, q, o, &batch_json, "a batch of candidates", |cat, q, demand, batch, threads, _stop| {
                storlab_advise::screen_batch(cat, as_question(q), demand, batch, threads)
            }),
            "verify" => advise_part(py, &self.inner, q, o, &batch_json, "a batch of candidates to verify", |cat, q, demand, batch, threads, stop| {
                storlab_advise::verify_batch(cat, as_question(q), demand, batch, threads, stop)
            }),
            other => Err(raise(py, "InternalError", format!("advise part '{other}' — one of screen, verify"))),
        }
    }
}

/// A cluster worker's part of `advise` (`q`: the question's file name,
/// text, folder and the profiles' folder): `part` over the batch in
/// `batch_json`, off the GIL, its answer as JSON.
fn advise_part<I, O>(
    py: Python<'_>,
    cat: &Arc<storlab_model::Catalog>,
    q: [String; 4],
    PartOptions { demand_json, threads }: PartOptions,
    batch_json: &str,
    what: &str,
    part: impl FnOnce(&storlab_model::Catalog, &[String; 4], Option<&storlab_advise::question::MeasuredDemand>, &[I], usize, &AtomicBool) -> Result<Vec<O>, storlab_advise::AdviseError> + Send + 'static,
) -> PyResult<String>
where
    I: serde::de::DeserializeOwned + Send + 'static,
    O: serde::Serialize + Send + 'static,
{
    let cat = cat.clone();
    let demand = parse_demand(py, demand_json)?;
    let batch: Vec<I> = serde_json::from_str(batch_json).map_err(|e| raise(py, "InternalError", format!("{what}: {e}")))?;
    let threads = threads.unwrap_or_else(|| storlab_advise::Options::default().threads).max(1);
    let (out, _) = off_gil(py, Duration::from_millis(100), None, count_args, move |w| part(&cat, &q, demand.as_ref(), &batch, threads, &w.stop))?;
    Ok(json(&out.map_err(|e| e.to_py(py))?))
}

/// The question a worker's part names: file name, text, folder, profiles.
fn as_question(q: &[String; 4]) -> storlab_advise::Question<'_> {
    storlab_advise::Question { file: &q[0], text: &q[1], dir: std::path::Path::new(&q[2]), profiles_dir: std::path::Path::new(&q[3]) }
}

fn parse_demand(py: Python<'_>, demand_json: Option<String>) -> PyResult<Option<storlab_advise::question::MeasuredDemand>> {
    demand_json
        .map(|d| serde_json::from_str(&d).map_err(|e| raise(py, "ScenarioError", format!("the measured demand: {e}"))))
        .transpose()
}

/// A cluster, as the search sees it: a Python object that runs parts of it
/// (`storlab.cluster`), called from the search's thread with the GIL taken
/// for each call.
struct PyRemote {
    obj: PyObject,
    width: usize,
    screen_batch: usize,
    stop: Arc<Watch>,
}

impl PyRemote {
    fn call<T: serde::Serialize, R: serde::de::DeserializeOwned>(&self, method: &str, part: &T) -> Result<R, storlab_advise::AdviseError> {
        let stop = self.stop.clone();
        let text = Python::with_gil(|py| -> PyResult<String> {
            let stopped = pyo3::types::PyCFunction::new_closure(py, None, None, move |_a, _k| -> bool { stop.stopped() })?;
            self.obj.call_method1(py, method, (json(part), stopped))?.extract(py)
        })
        .map_err(|e| storlab_advise::AdviseError::Remote(format!("the cluster's {method}: {e}")))?;
        serde_json::from_str(&text).map_err(|e| storlab_advise::AdviseError::Remote(format!("the cluster's {method} answer: {e}")))
    }
}

impl storlab_advise::Remote for PyRemote {
    fn width(&self) -> usize {
        self.width
    }
    fn screen_batch(&self) -> usize {
        self.screen_batch
    }
    fn screen(&self, candidates: &[storlab_advise::Candidate]) -> Result<Vec<Option<storlab_advise::Screen>>, storlab_advise::AdviseError> {
        self.call("screen", &candidates)
    }
    fn verify(&self, items: &[storlab_advise::VerifyItem]) -> Result<Vec<storlab_advise::Outcome>, storlab_advise::AdviseError> {
        self.call("verify", &items)
    }
}

/// TPC-C's page-level miss ratio by Che's approximation
/// (`storlab_workload::che`): misses a transaction with a cache of
/// `cache_fraction` of the data, over `page_accesses_per_txn`.
#[pyfunction]
fn tpcc_che_miss_ratio(warehouses: f64, page_bytes: f64, bytes_per_warehouse: f64, page_accesses_per_txn: f64, cache_fraction: f64) -> f64 {
    let t = storlab_workload::che::tpcc(warehouses, page_bytes, bytes_per_warehouse);
    (t.misses_per_txn(cache_fraction * t.total_pages) / page_accesses_per_txn.max(1e-9)).min(1.0)
}

keyword_options! {
    /// `bench_disk_json`'s keywords.
    struct BenchDiskOptions {
        size_bytes: u64,
        profile: String,
        job_name: String,
        job_text: String,
        engine: String,
        runs: u32,
        runtime_s: f64,
        interval_s: f64,
        direct: bool,
        seed: u64,
        existing_file: String,
    }
}

/// Measures the jobs of a CrystalDiskMark preset (`profile`) or a fio job
/// file (`job_name`, `job_text`) on a test file inside `path` and returns
/// the run record. `progress(done_jobs, total_jobs)`. Ctrl-C stops the run;
/// the record keeps what was measured and the test file is removed either way.
#[pyfunction]
#[pyo3(signature = (path, *, progress=None, **options))]
fn bench_disk_json(py: Python<'_>, path: String, progress: Option<PyObject>, options: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<String> {
    use storlab_bench::engine::EngineKind;
    use storlab_workload::presets::Preset;
    let BenchDiskOptions { size_bytes, profile, job_name, job_text, engine, runs, runtime_s, interval_s, direct, seed, existing_file } = BenchDiskOptions::from_kwargs(options)?;
    let (profile, job_name, job_text, engine) = (profile.as_deref(), job_name.as_deref(), job_text.as_deref(), engine.as_deref());

    let defaults = storlab_bench::BenchOptions::default();
    let kind = match engine {
        None => defaults.engine,
        Some(e) => EngineKind::parse(e).ok_or_else(|| raise(py, "EngineError", format!("--engine '{e}' — use io_uring, psync or null")))?,
    };
    let (jobs, preset, workload) = match (profile, job_text) {
        (Some(p), _) => {
            let pr = Preset::by_name(p).map_err(|e| e.to_py(py))?;
            (pr.jobs(), Some(pr), p.to_string())
        }
        (None, Some(text)) => {
            let name = job_name.unwrap_or("job.fio");
            (storlab_workload::fio::parse(name, text).map_err(|e| e.to_py(py))?, None, name.to_string())
        }
        (None, None) => return Err(raise(py, "ScenarioError", "give --profile NAME or --job FILE.fio".into())),
    };
    if let Some(r) = runtime_s {
        seconds(py, "--runtime", r, 0.001)?;
    }
    if let Some(i) = interval_s {
        seconds(py, "--interval", i, 0.0)?;
    }
    let opts = storlab_bench::BenchOptions {
        // Presets measure a 1 GiB file unless told; a job file its jobs' `size`.
        size_bytes: size_bytes.or(if preset.is_some() { defaults.size_bytes } else { None }),
        engine: kind,
        runs: runs.unwrap_or(preset.map_or(defaults.runs, |p| p.runs)),
        cdm: preset.is_some(),
        runtime: runtime_s.map(Duration::from_secs_f64).or(preset.map(|p| p.measure)),
        interval: interval_s.map(Duration::from_secs_f64).unwrap_or(preset.map_or(defaults.interval, |p| p.interval)),
        direct: direct.unwrap_or(defaults.direct),
        seed: seed.unwrap_or(defaults.seed),
        existing_file: existing_file.map(std::path::PathBuf::from),
    };
    let total = jobs.len() as u64;
    let dir = std::path::PathBuf::from(path);
    let seed = opts.seed;
    let (report, stopped) = off_gil(py, Duration::from_millis(100), progress, count_args, move |w| {
        w.set(1, total);
        storlab_bench::bench_disk(&dir, &jobs, &opts, &w.stop, &mut |done, _| w.set(0, done as u64))
    })?;
    // A job's error names the job file it came from.
    let file = job_name.filter(|_| preset.is_none());
    let mut rec = report
        .map_err(|e| match (&e, file) {
            (storlab_bench::BenchError::Job { .. }, Some(f)) => raise(py, "ScenarioError", format!("{f}: {e}")),
            _ => e.to_py(py),
        })?
        .into_record(&workload, seed);
    rec.interrupted |= stopped;
    Ok(json(&rec))
}

/// Where a database workload runs: `DbTarget.sqlite(path)`,
/// `DbTarget.postgres(dsn)` (credentials from the DSN, PGPASSWORD or .pgpass)
/// or `DbTarget.mysql(dsn)` (MYSQL_PWD or ~/.my.cnf).
#[pyclass(frozen, module = "storlab._native")]
struct DbTarget {
    inner: storlab_db::Db,
}

#[pymethods]
impl DbTarget {
    #[staticmethod]
    fn sqlite(path: String) -> DbTarget {
        DbTarget { inner: storlab_db::Db::Sqlite { path: path.into() } }
    }

    #[staticmethod]
    fn postgres(py: Python<'_>, dsn: &str) -> PyResult<DbTarget> {
        Ok(DbTarget { inner: storlab_db::Db::Postgres(storlab_db::pg::Target::parse(dsn).map_err(|e| e.to_py(py))?) })
    }

    /// `mysql://USER@HOST:PORT/DB`; the password from MYSQL_PWD or ~/.my.cnf.
    #[staticmethod]
    fn mysql(py: Python<'_>, dsn: &str) -> PyResult<DbTarget> {
        Ok(DbTarget { inner: storlab_db::Db::Mysql(storlab_db::mysql::Target::parse(dsn).map_err(|e| e.to_py(py))?) })
    }

    /// Where it runs, credentials left out.
    fn display(&self) -> String {
        self.inner.display()
    }
}

/// What runs: `DbWorkload.tpcc(...)`, `DbWorkload.insert(...)` or
/// `DbWorkload.file(name, text)`; options left as None take their defaults.
#[pyclass(frozen, module = "storlab._native")]
struct DbWorkload {
    inner: storlab_db::Workload,
}

#[pymethods]
impl DbWorkload {
    #[staticmethod]
    #[pyo3(signature = (*, warehouses=None, all_warehouses=None, key_and_think=None, commit_log=None))]
    fn tpcc(warehouses: Option<u32>, all_warehouses: Option<bool>, key_and_think: Option<bool>, commit_log: Option<std::path::PathBuf>) -> DbWorkload {
        let d = storlab_db::TpccOptions::default();
        DbWorkload {
            inner: storlab_db::Workload::Tpcc(storlab_db::TpccOptions {
                warehouses: warehouses.unwrap_or(d.warehouses),
                all_warehouses: all_warehouses.unwrap_or(d.all_warehouses),
                key_and_think: key_and_think.unwrap_or(d.key_and_think),
                commit_log,
            }),
        }
    }

    #[staticmethod]
    #[pyo3(signature = (*, rows_per_vu=None, commit_every=None))]
    fn insert(rows_per_vu: Option<u64>, commit_every: Option<u64>) -> DbWorkload {
        let d = storlab_db::insert::InsertOptions::default();
        DbWorkload {
            inner: storlab_db::Workload::Insert(storlab_db::insert::InsertOptions {
                rows_per_vu: rows_per_vu.unwrap_or(d.rows_per_vu),
                commit_every: commit_every.unwrap_or(d.commit_every),
            }),
        }
    }

    #[staticmethod]
    #[pyo3(signature = (name, text, *, scale=None))]
    fn file(py: Python<'_>, name: &str, text: &str, scale: Option<i64>) -> PyResult<DbWorkload> {
        let mut w = storlab_db::custom::Workload::parse(name, text).map_err(|e| e.to_py(py))?;
        if let Some(s) = scale {
            w.scale = s;
        }
        Ok(DbWorkload { inner: storlab_db::Workload::Custom(w) })
    }

    fn name(&self) -> String {
        self.inner.name()
    }

    /// The transaction types that write nothing (no commit flush).
    fn read_only_kinds(&self) -> Vec<String> {
        self.inner.read_only_kinds()
    }

    /// A workload file's `[metric]` as (name, transaction, seconds it is
    /// per: 1 or 60), or None.
    fn headline(&self) -> Option<(String, String, f64)> {
        match &self.inner {
            storlab_db::Workload::Custom(w) => w.metric.as_ref().map(|m| (m.name.clone(), m.transaction.clone(), m.per_s)),
            _ => None,
        }
    }
}

/// `progress(fraction)` for simulations (counter 0 holds the f64's bits).
fn fraction_args<'py>(py: Python<'py>, c: &[u64; 3]) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    (f64::from_bits(c[0]),).into_pyobject(py)
}

/// `progress(done, total)` for I/O jobs.
fn count_args<'py>(py: Python<'py>, c: &[u64; 3]) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    (c[0], c[1]).into_pyobject(py)
}

/// `progress(phase, done, total)` for database work.
fn db_progress_args<'py>(py: Python<'py>, c: &[u64; 3]) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    (c[0], c[1], c[2]).into_pyobject(py)
}

/// Mirrors the driver's progress into the watch and the watch's stop flag
/// into the driver, while `f` runs.
fn with_db_progress<T>(w: &Watch, f: impl FnOnce(&storlab_db::Progress) -> T) -> T {
    let state = storlab_db::Progress::default();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if w.stopped() {
                    state.stop.store(true, Ordering::Relaxed);
                }
                w.set(0, u64::from(state.phase.load(Ordering::Relaxed)));
                w.set(1, state.done.load(Ordering::Relaxed));
                w.set(2, state.total.load(Ordering::Relaxed));
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let out = f(&state);
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// Builds (or reuses) the workload's schema and data; returns the load
/// summary as JSON. `progress(phase, done, total)`; Ctrl-C raises
/// KeyboardInterrupt once the loaders have stopped.
#[pyfunction]
#[pyo3(signature = (target, workload, *, seed=None, loaders=None, progress=None))]
fn db_prepare_json(py: Python<'_>, target: &DbTarget, workload: &DbWorkload, seed: Option<u64>, loaders: Option<u32>, progress: Option<PyObject>) -> PyResult<String> {
    let (db, wl) = (target.inner.clone(), workload.inner.clone());
    let d = storlab_db::RunOptions::default();
    let (seed, loaders) = (seed.unwrap_or(d.seed), loaders.unwrap_or_else(storlab_db::default_loaders));
    let (r, stopped) = off_gil(py, Duration::from_millis(250), progress, db_progress_args, move |w| {
        with_db_progress(w, |p| storlab_db::prepare(&db, &wl, seed, loaders, p))
    })?;
    // Stopped: the loaders' own "interrupted" error is the signal's, not the user's.
    if stopped {
        return Err(PyErr::new::<pyo3::exceptions::PyKeyboardInterrupt, _>("interrupted while loading"));
    }
    let load: storlab_record::db::Load = r.map_err(|e| e.to_py(py))?;
    Ok(json(&load))
}

/// One timed run (rampup, then the measured window) with `vus` virtual
/// users; returns the run as JSON. Ctrl-C ends the window early; the run
/// keeps what was measured (`interrupted: true`).
#[pyfunction]
#[pyo3(signature = (target, workload, *, progress=None, **options))]
fn db_run_json(py: Python<'_>, target: &DbTarget, workload: &DbWorkload, progress: Option<PyObject>, options: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<String> {
    let DbRunOptions { vus, rampup_s, duration_s, seed, threads, check } = DbRunOptions::from_kwargs(options)?;
    let (db, wl) = (target.inner.clone(), workload.inner.clone());
    let d = storlab_db::RunOptions::default();
    let secs = |flag: &str, v: Option<f64>, d: Duration| v.map_or(Ok(d), |s| seconds(py, flag, s, 0.0));
    let opts = storlab_db::RunOptions {
        vus: vus.unwrap_or(d.vus),
        rampup: secs("--rampup", rampup_s, d.rampup)?,
        duration: secs("--duration", duration_s, d.duration)?,
        seed: seed.unwrap_or(d.seed),
        threads: threads.unwrap_or(d.threads),
        check: check.unwrap_or(d.check),
    };
    let (r, stopped) = off_gil(py, Duration::from_millis(250), progress, db_progress_args, move |w| {
        with_db_progress(w, |p| storlab_db::run(&db, &wl, &opts, p))
    })?;
    let mut run: storlab_record::DbRun = r.map_err(|e| e.to_py(py))?;
    run.interrupted |= stopped;
    Ok(json(&run))
}

/// The `bench db` record of a sweep: one result per virtual-user count (the
/// mean of its repeats, with their spread), the tipping point, every run.
/// `runs_json` is a JSON list of the runs `db_run_json` returned, in order.
#[pyfunction]
#[pyo3(signature = (config, workload, metric, load_json, runs_json, **options))]
fn db_record_json(py: Python<'_>, config: &str, workload: &str, metric: &str, load_json: &str, runs_json: &str, options: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<String> {
    let DbRecordOptions { seed, interrupted } = DbRecordOptions::from_kwargs(options)?;
    let seed = seed.ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("db_record_json: the keyword argument 'seed' is required"))?;
    let interrupted = interrupted.unwrap_or(false);
    let bad = |e: serde_json::Error| raise(py, "EngineError", format!("bench db: a run did not read back: {e}"));
    let load = serde_json::from_str(load_json).map_err(bad)?;
    let runs: Vec<storlab_record::DbRun> = serde_json::from_str(runs_json).map_err(bad)?;
    let mut rec = storlab_record::db::sweep_record(config, workload, metric, load, runs, seed);
    rec.interrupted |= interrupted;
    Ok(json(&rec))
}

/// A virtual-user sweep of `bench db`, the same `Sweep` the simulator
/// drives: the counts it plans, and whether it goes on after each step.
#[pyclass(module = "storlab._native")]
struct DbSweep {
    inner: storlab_record::db::Sweep,
}

#[pymethods]
impl DbSweep {
    /// √2 steps from 1 up to `max_vus`, stopping two steps past the tipping point.
    #[staticmethod]
    fn auto(max_vus: u32) -> DbSweep {
        DbSweep { inner: storlab_record::db::Sweep::auto(max_vus) }
    }

    /// The counts given, each run.
    #[staticmethod]
    fn listed(vus: Vec<u32>) -> DbSweep {
        DbSweep { inner: storlab_record::db::Sweep::listed(vus) }
    }

    #[getter]
    fn steps(&self) -> Vec<u32> {
        self.inner.steps().to_vec()
    }

    #[getter]
    fn is_auto(&self) -> bool {
        self.inner.is_auto()
    }

    /// One step's runs (`runs_json`, a JSON list of its repeats as
    /// `db_run_json` gave them): its `metric`, as the record's step gives
    /// it, is the sweep's next value. True when the sweep goes no further.
    fn record_step(&mut self, py: Python<'_>, vus: u32, metric: &str, runs_json: &str) -> PyResult<bool> {
        let runs: Vec<storlab_record::DbRun> = serde_json::from_str(runs_json).map_err(|e| raise(py, "EngineError", format!("bench db: a run did not read back: {e}")))?;
        let step = storlab_record::db::summarise_step(vus, &runs.iter().collect::<Vec<_>>(), metric);
        Ok(self.inner.record(step.figures.get(metric).copied().unwrap_or(0.0)))
    }
}

/// What makes a database profile suspect (`Profile::health`), as JSON:
/// `[{"field", "reason", "fix"}, ...]`, empty for a sound profile. A
/// profile the loader refuses raises ScenarioError with the loader's
/// message; `file` names it.
#[pyfunction]
fn profile_health(py: Python<'_>, file: &str, text: &str) -> PyResult<PyObject> {
    let p = storlab_workload::profile::Profile::from_toml(file, text).map_err(|e| raise(py, "ScenarioError", e.to_string()))?;
    py_value(py, &p.health())
}

/// A recorded profile (as JSON, so every figure is a finite number) as
/// profile TOML.
#[pyfunction]
fn profile_toml(py: Python<'_>, doc_json: &str) -> PyResult<String> {
    // Read straight into TOML's table, which keeps the keys' order.
    let doc: toml::Table = serde_json::from_str(doc_json).map_err(|e| raise(py, "ScenarioError", format!("profile: {e}")))?;
    storlab_workload::profile::write_toml(doc).map_err(|e| raise(py, "ScenarioError", format!("profile: {e}")))
}

/// A profile from a recording's raw measurements (JSON: name, workload,
/// kind, scale, scale_unit, sweep, mrc_points, mrc_method, size_run,
/// read_only) and its provenance (JSON), as JSON in the profile's layout.
#[pyfunction]
fn profile_build(py: Python<'_>, recording_json: &str, provenance_json: &str) -> PyResult<PyObject> {
    let de = &mut serde_json::Deserializer::from_str(recording_json);
    let rec: storlab_workload::recording::Recording =
        serde_path_to_error::deserialize(de).map_err(|e| raise(py, "ScenarioError", format!("recording: {}: {}", e.path(), e.inner())))?;
    let provenance: toml::Table = serde_json::from_str(provenance_json).map_err(|e| raise(py, "ScenarioError", format!("provenance: {e}")))?;
    let profile = storlab_workload::recording::build(&rec, provenance).map_err(|e| raise(py, "ScenarioError", e))?;
    py_value(py, &profile)
}

/// The CPU one transaction of a run (JSON, as the recorder took it) cost
/// the server, µs.
#[pyfunction]
fn cpu_per_txn_us(py: Python<'_>, run_json: &str) -> PyResult<f64> {
    let de = &mut serde_json::Deserializer::from_str(run_json);
    let run: storlab_workload::recording::Run =
        serde_path_to_error::deserialize(de).map_err(|e| raise(py, "ScenarioError", format!("run: {}: {}", e.path(), e.inner())))?;
    Ok(storlab_workload::recording::cpu_per_txn(&run))
}

/// α and β of the CPU per transaction at N users, c(N)/c(1) = 1 + α(N−1)
/// + βN(N−1), by least squares with α, β ≥ 0.
#[pyfunction]
fn cpu_penalty_fit(vus: Vec<u32>, cpu_per_txn: Vec<f64>) -> (f64, f64) {
    storlab_workload::fit::cpu_penalty(&vus, &cpu_per_txn)
}

/// α and β of the Universal Scalability Law from throughput X(N).
#[pyfunction]
fn usl_fit(vus: Vec<u32>, throughput: Vec<f64>) -> (f64, f64) {
    storlab_workload::fit::usl(&vus, &throughput)
}

/// The running minimum of miss ratios, within [0, 1].
#[pyfunction]
fn non_increasing(vals: Vec<f64>) -> Vec<f64> {
    storlab_workload::fit::non_increasing(&vals)
}

/// The write-back curve (JSON) from dirty-page samples (transactions so
/// far, dirty pages, runs, checkpoint writes) per `units` home units.
#[pyfunction]
#[pyo3(signature = (samples, units, own=1.0))]
fn writeback_curve(py: Python<'_>, samples: Vec<(f64, f64, f64, f64)>, units: f64, own: f64) -> PyResult<PyObject> {
    py_value(py, &storlab_workload::fit::writeback_curve(&samples, units, own))
}

/// A catalog overlay as TOML from its entries as JSON (`source`, `device`,
/// `host`, `price`, `latency`, as in a catalog file), each read by the
/// catalog's own types: a wrong or missing field is refused, naming it.
#[pyfunction]
fn catalog_overlay_toml(py: Python<'_>, entries_json: &str) -> PyResult<String> {
    let de = &mut serde_json::Deserializer::from_str(entries_json);
    let file: storlab_model::catalog::CatalogFile =
        serde_path_to_error::deserialize(de).map_err(|e| raise(py, "ScenarioError", format!("catalog overlay: {}: {}", e.path(), e.inner())))?;
    file.to_toml().map_err(|e| raise(py, "ScenarioError", format!("catalog overlay: {e}")))
}

/// A size as storlab reads it everywhere but in fio job files (`64MB`,
/// `64MiB`, `64m`), in bytes; None if it is not one.
#[pyfunction]
fn parse_size_bytes(text: &str) -> Option<u64> {
    storlab_workload::units::parse_size(text)
}

/// A duration as storlab reads it everywhere (`30`, `90s`, `2m30s`, `1d`),
/// in seconds; None if it is not one.
#[pyfunction]
fn parse_duration_s(text: &str) -> Option<f64> {
    storlab_workload::units::parse_duration(text).map(|d| d.as_secs_f64())
}

/// The JSON schema every run record follows (docs/record.schema.json).
#[pyfunction]
fn record_schema_json() -> String {
    storlab_record::json_schema()
}

/// Reads a run record back through the one record type: returns it
/// normalised, or raises ScenarioError naming the first field that does
/// not fit.
#[pyfunction]
fn record_check(py: Python<'_>, name: &str, text: &str) -> PyResult<PyObject> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let rec: storlab_record::RunRecord = serde_path_to_error::deserialize(de)
        .map_err(|e| raise(py, "ScenarioError", format!("{name}: not a storlab run record — at '{}': {}", e.path(), e.inner())))?;
    py_value(py, &rec)
}

impl PyErrOf for storlab_record::import::ImportError {
    fn class(&self) -> &'static str {
        "ScenarioError"
    }
}

/// Reads another tool's result file (CrystalDiskMark, fio, HammerDB,
/// sysbench, pgbench, CloudWatch) into a run record; `name` is the file's
/// name for messages and the config.
#[pyfunction]
fn import_record_json(py: Python<'_>, name: &str, data: &[u8]) -> PyResult<String> {
    storlab_record::import::import(name, data).map(|r| json(&r)).map_err(|e| e.to_py(py))
}

/// A `hammerdb-job-report-v1` document (JSON text) for a database run
/// record; `timestamp` (`YYYY-MM-DD HH:MM:SS`) is when the run started.
#[pyfunction]
fn hammerdb_report_json(py: Python<'_>, record_json: &str, timestamp: &str) -> PyResult<String> {
    let rec: serde_json::Value =
        serde_json::from_str(record_json).map_err(|e| raise(py, "ScenarioError", format!("record: not JSON ({e})")))?;
    let doc = storlab_record::import::hammerdb::write_report(&rec, timestamp).map_err(|e| e.to_py(py))?;
    Ok(serde_json::to_string_pretty(&doc).expect("reports serialise") + "\n")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_class::<Catalog>()?;
    m.add_class::<DbTarget>()?;
    m.add_class::<DbWorkload>()?;
    m.add_class::<DbSweep>()?;
    m.add_function(wrap_pyfunction!(tpcc_che_miss_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(bench_disk_json, m)?)?;
    m.add_function(wrap_pyfunction!(db_prepare_json, m)?)?;
    m.add_function(wrap_pyfunction!(db_run_json, m)?)?;
    m.add_function(wrap_pyfunction!(db_record_json, m)?)?;
    m.add_function(wrap_pyfunction!(profile_health, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_overlay_toml, m)?)?;
    m.add_function(wrap_pyfunction!(profile_build, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_per_txn_us, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_penalty_fit, m)?)?;
    m.add_function(wrap_pyfunction!(usl_fit, m)?)?;
    m.add_function(wrap_pyfunction!(non_increasing, m)?)?;
    m.add_function(wrap_pyfunction!(writeback_curve, m)?)?;
    m.add_function(wrap_pyfunction!(profile_toml, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_s, m)?)?;
    m.add_function(wrap_pyfunction!(record_schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(record_check, m)?)?;
    m.add_function(wrap_pyfunction!(import_record_json, m)?)?;
    m.add_function(wrap_pyfunction!(hammerdb_report_json, m)?)?;
    m.add_function(wrap_pyfunction!(alarms, m)?)?;
    m.add_function(wrap_pyfunction!(limits_at, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_unmount, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// The state changes of the scenario's `[[alarms]]` on a record's series
/// (a JSON list of AlarmChange); ScenarioError for a bad alarm.
#[pyfunction]
fn alarms(py: Python<'_>, scenario_name: &str, scenario_text: &str, record_json: &str) -> PyResult<PyObject> {
    #[derive(serde::Deserialize)]
    struct WithSeries {
        series: Vec<storlab_record::Series>,
    }
    let sc = storlab_model::scenario::ScenarioFile::from_toml(scenario_name, scenario_text).map_err(|e| e.to_py(py))?;
    let rec: WithSeries = serde_json::from_str(record_json).map_err(|e| raise(py, "ScenarioError", format!("record: no series ({e})")))?;
    let mut out = Vec::new();
    for a in &sc.alarms {
        let changes = storlab_record::alarms::evaluate(a, &rec.series).map_err(|e| raise(py, "ScenarioError", format!("{scenario_name}: {e}")))?;
        out.extend(changes);
    }
    out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    py_value(py, &out)
}

/// The `storlab limits` record with each bucket under a steady load
/// (`at_iops` of 4 KiB reads, or `at_bytes_s` of 1 MiB reads).
#[pyfunction]
#[pyo3(signature = (catalog, scenario_name, scenario_text, *, at_iops=None, at_bytes_s=None))]
fn limits_at(py: Python<'_>, catalog: &Catalog, scenario_name: &str, scenario_text: &str, at_iops: Option<f64>, at_bytes_s: Option<f64>) -> PyResult<PyObject> {
    use storlab_model::report::Load;
    let load = match (at_iops, at_bytes_s) {
        (Some(v), None) => Load::Iops(v),
        (None, Some(v)) => Load::BytesS(v),
        _ => return Err(raise(py, "ScenarioError", "give one load: --at-iops N or --at-mb-s N".into())),
    };
    let cat = &catalog.inner;
    py_value(py, &py.allow_threads(|| storlab_model::report::limits_at(cat, scenario_name, scenario_text, load)).map_err(|e| e.to_py(py))?)
}

impl PyErrOf for storlab_fuse::EmulateError {
    fn class(&self) -> &'static str {
        use storlab_fuse::EmulateError as E;
        match self {
            E::Model(m) => m.class(),
            E::NoConfig { .. } | E::NoPool { .. } => "ScenarioError",
            E::NoLatency { .. } => "CatalogError",
            _ => "EngineError",
        }
    }
}

/// Mounts the emulated pools of `config` (`targets`: (role or None,
/// backing, mount)) and serves them until a signal reaches Python (Ctrl-C,
/// or SIGTERM/SIGHUP turned into KeyboardInterrupt), then unmounts and
/// returns the summary with its series. `status(json)` is called once a
/// second, first when every pool is mounted.
#[pyfunction]
#[pyo3(signature = (catalog, scenario_name, scenario_text, config, targets, options_json, status=None))]
fn emulate_json(
    py: Python<'_>,
    catalog: &Catalog,
    scenario_name: String,
    scenario_text: String,
    config: String,
    targets: Vec<(Option<String>, String, String)>,
    options_json: &str,
    status: Option<PyObject>,
) -> PyResult<String> {
    let opts: storlab_fuse::Options = serde_json::from_str(options_json).map_err(|e| raise(py, "EngineError", format!("emulator options: {e}")))?;
    let targets: Vec<storlab_fuse::Target> = targets.into_iter().map(|(role, b, m)| storlab_fuse::Target { role, backing: b.into(), mount: m.into() }).collect();
    let cat = catalog.inner.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let (stx, srx) = std::sync::mpsc::channel::<String>();
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let r = storlab_fuse::emulate(&cat, &scenario_name, &scenario_text, &config, &targets, &opts, &stop, &mut |s| {
                let _ = stx.send(json(s));
            });
            let _ = tx.send(r);
        });
    }
    let rx = std::sync::Mutex::new(rx);
    loop {
        match py.allow_threads(|| rx.lock().expect("receiver lock").recv_timeout(Duration::from_millis(100))) {
            Ok(r) => return Ok(json(&r.map_err(|e| e.to_py(py))?)),
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
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(raise(py, "EngineError", "the emulator thread ended without a result".into())),
        }
    }
}

/// Clears an emulated volume mounted at `dir`, stale or live; False when
/// nothing was mounted there.
#[pyfunction]
fn emulate_unmount(py: Python<'_>, dir: &str) -> PyResult<bool> {
    storlab_fuse::unmount(std::path::Path::new(dir)).map_err(|e| e.to_py(py))
}
