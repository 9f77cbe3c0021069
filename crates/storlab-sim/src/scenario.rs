//! A scenario parsed and checked once, at the edge: its deployments, its
//! workload of one kind and its series period. [`run`] simulates any kind
//! into the run record; callers that build scenarios themselves (advise)
//! go through the same checks by the constructors below.

use crate::{check_budget, check_time_budget, nearest_period, Overrides, SimError, MAX_SERIES_POINTS};
use std::path::Path;
use storlab_model::deployment::{resolve_all, Deployment};
use storlab_model::scenario::ScenarioFile;
use storlab_model::Catalog;
use storlab_record::RunRecord;
use storlab_workload::database::Database;
use storlab_workload::import::Import;
use storlab_workload::Workload;

/// What a scenario runs.
#[derive(Debug, Clone)]
pub enum Kind {
    /// I/O jobs (CrystalDiskMark presets, fio files, inline jobs).
    Io(Workload),
    /// A recorded database profile run as virtual users.
    Db(Box<Database>),
    /// A bulk load (`[workload.import]`).
    Import(Box<Import>),
}

/// One checked scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it came from, as messages and the record name it.
    pub file: String,
    pub title: Option<String>,
    pub deps: Vec<Deployment>,
    pub kind: Kind,
    /// The series period, s.
    pub period_s: f64,
    /// Said before any run (a suspect profile, a profile of another engine,
    /// a config without a log pool): the record's first warnings.
    pub warnings: Vec<String>,
}

impl Scenario {
    /// Parses `text` (named `file`, in folder `dir`; database profiles are
    /// looked up in `profiles_dir`) with the command line's overrides and
    /// period applied, and checks it.
    pub fn parse(
        cat: &Catalog,
        file: &str,
        text: &str,
        dirs: (&Path, &Path),
        period_override: Option<f64>,
        overrides: &Overrides,
    ) -> Result<Scenario, SimError> {
        let (dir, profiles_dir) = dirs;
        let mut sc = ScenarioFile::from_toml(file, text)?;
        overrides.select_config(file, &mut sc)?;
        let wt = sc.workload.clone().unwrap_or_default();
        let database = storlab_workload::database::is_database(Some(&wt));
        let import = storlab_workload::import::is_import(Some(&wt));
        if database || import {
            overrides.reject_io_only(file)?;
        }
        let deps = resolve_all(cat, file, &sc)?;
        let title = sc.title.clone();
        if import && !database {
            if overrides.duration.is_some() {
                return Err(SimError::Override {
                    file: file.to_string(),
                    what: "--duration".into(),
                    message: "an import runs until its data is loaded; its size is `size_gib` in [workload.import]".into(),
                });
            }
            let im = storlab_workload::import::from_table(file, dir, profiles_dir, &wt)?;
            return Scenario::import(file, title, deps, im, period_override);
        }
        if database {
            let mut db = storlab_workload::database::from_table(file, dir, profiles_dir, &wt)?;
            let suspect = db.check_health(file, overrides.accept_suspect.unwrap_or(db.accept_suspect))?;
            if let Some(d) = overrides.duration {
                db.duration_s = d.as_secs_f64();
            }
            if let Some(s) = overrides.steady_state {
                db.steady_state = s;
            }
            return Scenario::database(file, title, deps, db, period_override, suspect);
        }
        if overrides.repeats.is_some_and(|r| r > 1) {
            return Err(SimError::Override {
                file: file.to_string(),
                what: "--repeats".into(),
                message: "applies to database workloads (each VU count run with other seeds); an I/O job's figures average every I/O of its run".into(),
            });
        }
        let mut wl = storlab_workload::spec::from_table(file, dir, overrides.workload_table(sc.workload.as_ref())?.as_ref())?;
        overrides.apply_to_jobs(file, &mut wl)?;
        Scenario::io(cat, file, title, deps, wl, period_override)
    }

    /// I/O jobs on `deps`, within the simulator's budgets.
    pub fn io(cat: &Catalog, file: &str, title: Option<String>, deps: Vec<Deployment>, wl: Workload, period_override: Option<f64>) -> Result<Scenario, SimError> {
        check_budget(file, &wl)?;
        check_time_budget(cat, file, &deps, &wl)?;
        let period = period_override.unwrap_or(wl.period.as_secs_f64());
        check_points(file, period, crate::planned_per_config(&wl))?;
        Ok(Scenario { file: file.to_string(), title, deps, kind: Kind::Io(wl), period_s: period, warnings: Vec::new() })
    }

    /// A database workload on `deps`: each config has the pools and
    /// settings the model reads; `said` are the profile's own warnings.
    pub fn database(file: &str, title: Option<String>, deps: Vec<Deployment>, db: Database, period_override: Option<f64>, said: Vec<String>) -> Result<Scenario, SimError> {
        let period = period_override.unwrap_or(db.period_s);
        // Each VU count's run makes its own series: bound their points as
        // the I/O path does (a tiny --period would otherwise allocate
        // gigabytes).
        check_points(file, period, db.rampup_s + db.duration_s)?;
        let mut warnings = said;
        for dep in &deps {
            warnings.extend(crate::database::check_config(file, dep, &db.profile)?);
        }
        Ok(Scenario { file: file.to_string(), title, deps, kind: Kind::Db(Box::new(db)), period_s: period, warnings })
    }

    /// A bulk load on `deps`: each config has the pools it reads and writes.
    pub fn import(file: &str, title: Option<String>, deps: Vec<Deployment>, im: Import, period_override: Option<f64>) -> Result<Scenario, SimError> {
        let period = period_override.unwrap_or(im.period_s);
        for dep in &deps {
            crate::import::pools_of(dep, &im.input_pool).map_err(|role| SimError::NoImportPool {
                file: file.to_string(),
                config: dep.name.clone(),
                role,
                valid: dep.pools.iter().map(|p| p.role.name()).collect::<Vec<_>>().join(", "),
            })?;
        }
        Ok(Scenario { file: file.to_string(), title, deps, kind: Kind::Import(Box::new(im)), period_s: period, warnings: Vec::new() })
    }

    /// The run record's empty frame: engine, workload, seed, file, title.
    pub(crate) fn record(&self, workload: &str, seed: u64) -> RunRecord {
        let mut rec = RunRecord::new(storlab_record::Engine::Simulate, workload, seed);
        rec.scenario = Some(self.file.clone());
        rec.title = self.title.clone();
        rec
    }
}

/// Refuses a period that makes more points a series than storlab keeps.
fn check_points(file: &str, period: f64, planned_s: f64) -> Result<(), SimError> {
    let points = (planned_s / period).ceil();
    if points > MAX_SERIES_POINTS as f64 {
        return Err(SimError::Period {
            file: file.to_string(),
            period,
            planned_s,
            points: points as u64,
            max: MAX_SERIES_POINTS,
            nearest: format!("{}", nearest_period(planned_s)),
        });
    }
    Ok(())
}

/// Simulates the scenario: every job, or every VU count, or the load, on
/// every config. `overrides` gives the runs at once and the repeats of a
/// database sweep; `progress` gets the fraction done and returns false to
/// stop (the record then keeps what ran, `interrupted`).
pub fn run(cat: &Catalog, sc: &Scenario, overrides: &Overrides, progress: &mut dyn FnMut(f64) -> bool) -> Result<RunRecord, SimError> {
    match &sc.kind {
        Kind::Io(wl) => crate::run_io(cat, sc, wl, progress),
        Kind::Db(db) => crate::database::run_database(cat, sc, db, overrides, progress),
        Kind::Import(im) => crate::database::run_import_record(cat, sc, im, progress),
    }
}
