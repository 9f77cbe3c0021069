#![allow(dead_code)]
use std::path::{Path, PathBuf};
use storlab_model::Catalog;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn catalog() -> Catalog {
    let dir = root().join("python/storlab/catalog");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).unwrap()
}

/// An I/O result's columns side by side, as the tests read them.
#[derive(Debug, Clone)]
pub struct Flat {
    pub config: String,
    pub job: String,
    pub pool: String,
    pub binding: String,
    pub iops: f64,
    pub bw_bytes_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub latency: storlab_record::LatencySummary,
    pub outstanding: u64,
    pub runtime_s: f64,
    pub ios: u64,
    pub start_s: f64,
    pub dropped: u64,
    /// Jobs the result reports (1 unless fio's group_reporting).
    pub jobs: u32,
    pub phases: Vec<storlab_record::Phase>,
}

/// An I/O run's record with its results flattened.
#[derive(Debug, Clone)]
pub struct Sim {
    pub results: Vec<Flat>,
    pub series: Vec<storlab_record::Series>,
    pub simulated_s: f64,
    pub workload: String,
    pub record: storlab_record::RunRecord,
}

impl From<storlab_record::RunRecord> for Sim {
    fn from(rec: storlab_record::RunRecord) -> Sim {
        let results = rec
            .results
            .iter()
            .map(|r| {
                let io = r.io.clone().expect("an I/O result has I/O columns");
                let Some(storlab_record::JobExtra::Sim(x)) = r.extra.clone() else { panic!("a simulated I/O result has the simulator's columns") };
                Flat {
                    config: r.config.clone(),
                    job: r.job.clone(),
                    pool: r.pool.clone(),
                    binding: r.binding.clone(),
                    iops: io.iops,
                    bw_bytes_s: io.bw_bytes_s,
                    read_iops: io.read_iops,
                    write_iops: io.write_iops,
                    latency: io.latency,
                    outstanding: io.outstanding,
                    runtime_s: io.runtime_s,
                    ios: x.ios,
                    start_s: x.start_s,
                    dropped: x.dropped,
                    jobs: x.jobs.unwrap_or(1),
                    phases: r.phases.clone(),
                }
            })
            .collect();
        let simulated_s = match &rec.extra {
            Some(storlab_record::RecordExtra::Sim(s)) => s.simulated_s,
            _ => 0.0,
        };
        Sim { results, series: rec.series.clone(), simulated_s, workload: rec.workload.clone(), record: rec }
    }
}

/// Parses and runs a scenario in `dir` with `overrides` and `period`.
pub fn run_in(cat: &Catalog, text: &str, dir: &Path, period: Option<f64>, o: &storlab_sim::Overrides) -> Result<storlab_record::RunRecord, storlab_sim::SimError> {
    let profiles = root().join("python/storlab/profiles");
    let sc = storlab_sim::Scenario::parse(cat, "s.toml", text, (dir, &profiles), period, o)?;
    storlab_sim::run(cat, &sc, o, &mut |_| true)
}

pub fn simulate(cat: &Catalog, text: &str) -> Sim {
    run_in(cat, text, Path::new("."), None, &storlab_sim::Overrides::default()).unwrap_or_else(|e| panic!("{e}")).into()
}

/// A scenario with its workload replaced by a CrystalDiskMark preset.
pub fn with_profile(text: &str, profile: &str) -> String {
    let mut out = String::new();
    let mut skip = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            skip = t == "[workload]" || t.starts_with("[[workload.") || t.starts_with("[workload.");
        }
        if !skip {
            out.push_str(line);
            out.push('\n');
        }
    }
    out + &format!("\n[workload]\nprofile = \"{profile}\"\n")
}
