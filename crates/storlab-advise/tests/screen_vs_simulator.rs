//! The advise screen against the simulator, over every example scenario:
//! the screen is a bound — what a deployment could give at most — so the
//! simulator must never give more (within 1 %, its own noise), or advise
//! could rule out a candidate that meets the goal. Each run prints how
//! close the bound came (simulated / bound): near 1 where a cap or the
//! I/Os in flight bind, lower where buckets drain or queues form.

// The simulator's test helpers: the shipped catalog, the repository root,
// a scenario with a CrystalDiskMark preset in place of its workload.
#[path = "../../storlab-sim/tests/it/common.rs"]
mod common;
use common::{catalog, root, with_profile};
use storlab_model::deployment::resolve_all;
use storlab_model::scenario::ScenarioFile;

/// The example scenarios (advise-*.toml are questions, not scenarios).
fn examples() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && !p.file_name().unwrap().to_string_lossy().starts_with("advise-"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    out
}

fn spread(name: &str, mut ratios: Vec<f64>) {
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    let within = ratios.iter().filter(|r| **r >= 0.9).count();
    eprintln!(
        "{name}: {} results, simulated / bound: min {:.3}, median {:.3}, max {:.3}; within 10 % of the bound: {within}",
        ratios.len(),
        at(0.0),
        at(0.5),
        at(1.0)
    );
}

#[test]
fn io_jobs_never_beat_their_screen() {
    let cat = catalog();
    let mut ratios = Vec::new();
    for (file, text) in examples() {
        let sc = ScenarioFile::from_toml(&file, &text).unwrap();
        let own_io = !storlab_workload::database::is_database(sc.workload.as_ref()) && sc.workload.as_ref().is_some_and(|w| !w.contains_key("import"));
        let mut texts = vec![with_profile(&text, "cdm-default"), with_profile(&text, "cdm-nvme")];
        if own_io {
            texts.push(text.clone());
        }
        for t in texts {
            let sc = ScenarioFile::from_toml(&file, &t).unwrap();
            let deps = resolve_all(&cat, &file, &sc).unwrap();
            let dir = root().join("examples");
            let wl = storlab_workload::spec::from_table(&file, &dir, sc.workload.as_ref()).unwrap();
            let o = storlab_sim::Overrides::default();
            let rec = storlab_sim::run(&cat, &storlab_sim::Scenario::parse(&cat, &file, &t, (&dir, &dir), None, &o).unwrap(), &o, &mut |_| true).unwrap();
            for r in &rec.results {
                let iops = r.io.as_ref().unwrap().iops;
                let dep = deps.iter().find(|d| d.name == r.config).unwrap();
                // A result is a job (or a group of them with group_reporting).
                let Some(job) = wl.jobs.iter().find(|j| j.name == r.job) else { continue };
                let bound = storlab_sim::bound::io_job(&cat, dep, job).iops;
                assert!(iops <= bound * 1.01, "{file} {} {}: simulated {iops:.0} IOPS above the screen's bound {bound:.0}", r.config, r.job);
                ratios.push(iops / bound);
            }
        }
    }
    assert!(ratios.len() >= 60, "only {} results compared", ratios.len());
    spread("I/O jobs", ratios);
}

#[test]
fn databases_never_beat_their_screen() {
    let cat = catalog();
    let profiles = root().join("python/storlab/profiles");
    let dir = root().join("examples");
    let mut ratios = Vec::new();
    // Each example as written, and again from empty buckets (advise's
    // default start), where the screen holds the caps to their baselines.
    let starts = examples().into_iter().flat_map(|(file, text)| {
        let empty = (!text.contains("buckets_at_start")).then(|| (file.clone(), format!("buckets_at_start = \"empty\"\n{text}"), true));
        std::iter::once((file, text, false)).chain(empty)
    });
    for (file, text, from_empty) in starts {
        let sc = ScenarioFile::from_toml(&file, &text).unwrap();
        if !storlab_workload::database::is_database(sc.workload.as_ref()) {
            continue;
        }
        let db = storlab_workload::database::from_table(&file, &dir, &profiles, sc.workload.as_ref().unwrap()).unwrap();
        let deps = resolve_all(&cat, &file, &sc).unwrap();
        let overrides = storlab_sim::Overrides { steady_state: Some(true), ..Default::default() };
        let rec = storlab_sim::run(&cat, &storlab_sim::Scenario::parse(&cat, &file, &text, (&dir, &profiles), None, &overrides).unwrap(), &overrides, &mut |_| true).unwrap();
        let v = serde_json::to_value(&rec).unwrap();
        for r in v["results"].as_array().unwrap() {
            let config = r["config"].as_str().unwrap();
            let dep = deps.iter().find(|d| d.name == config).unwrap();
            let scale = from_empty.then(|| storlab_advise::screen::empty_bucket_scale(&db, true));
            let (bound_tps, why) = storlab_advise::screen::database(&cat, dep, &db, scale);
            let tps = r["tpm"].as_f64().unwrap() / 60.0;
            assert!(tps <= bound_tps * 1.01, "{file}{} {config} at {} VUs: simulated {tps:.1} transactions a second above the screen's bound {bound_tps:.1} ({why})", if from_empty { " from empty buckets" } else { "" }, r["vus"]);
            ratios.push(tps / bound_tps);

        }
    }
    assert!(ratios.len() >= 8, "only {} results compared", ratios.len());
    spread("databases", ratios);
}
