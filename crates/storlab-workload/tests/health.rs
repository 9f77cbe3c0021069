//! Profile health on hand-made profiles: the expected findings follow from
//! the numbers written here, not from the program's output.

use storlab_workload::profile::Profile;

/// A TPC-C profile whose New-Order share is 0.45, so NOPM = tx/s × 60 ×
/// 0.45 = tx/s × 27; `conc` is the rest of its [concurrency] table.
fn profile(conc: &str) -> Profile {
    let text = format!("{}{conc}\n", include_str!("data/example-profile.toml"));
    Profile::from_toml("p.toml", &text).unwrap()
}

// The issue's recording: 26,000 NOPM at 1 user, 8,900 at 2, 24,000 at 4,
// i.e. 26000 / 27 = 962.962963, 8900 / 27 = 329.62963 and 24000 / 27 =
// 888.888889 transactions a second, one run each. It falls by 66 % and
// rises by 170 %, far beyond 10 %.
const NOISY: &str = "vus = [1, 2, 4]\nthroughput = [962.962963, 329.62963, 888.888889]";

#[test]
fn the_issues_noisy_sweep_is_found_with_its_values_and_a_fix() {
    let h = profile(NOISY).health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0].field, "concurrency.throughput");
    assert_eq!(h[0].reason, "the sweep falls from 26,000 NOPM at 1 user to 8,900 at 2 users and rises again to 24,000 at 4 users, beyond its noise (10 % without repeats)");
    assert!(h[0].fix.starts_with("record again with --repeat 3 --duration 60"), "{}", h[0].fix);
}

#[test]
fn a_clean_monotone_sweep_and_a_fall_at_its_end_are_healthy() {
    assert_eq!(profile("vus = [1, 2, 4, 8]\nthroughput = [500.0, 900.0, 1500.0, 2000.0]").health(), vec![]);
    // Past the tipping point a server falls and does not rise again: no dip.
    assert_eq!(profile("vus = [1, 2, 4, 8]\nthroughput = [500.0, 900.0, 1500.0, 1000.0]").health(), vec![]);
}

// 1,000, 850, 1,100 tx/s: a fall of 150 and a rise of 250. One run each,
// the noise is 10 % of the higher: 100 and 110 — beyond both. With repeats
// of standard deviation 100 at each count, the noise of a difference is
// 2 × √(100² + 100²) = 283 — within it.
#[test]
fn the_noise_is_ten_percent_without_repeats_and_two_sigmas_with_them() {
    let base = "vus = [1, 2, 4]\nthroughput = [1000.0, 850.0, 1100.0]";
    assert_eq!(profile(base).health().len(), 1);
    assert_eq!(profile(&format!("{base}\nthroughput_stdev = [100.0, 100.0, 100.0]")).health(), vec![]);
    // A fall of 90 (less than 10 % of 1,000) is noise, even without repeats.
    assert_eq!(profile("vus = [1, 2, 4]\nthroughput = [1000.0, 910.0, 1100.0]").health(), vec![]);
}

// The issue's penalty [0.25, 3.70, 1.20]: 0.25 at 1 user is the low bound
// of the recorder's fit, [0.25, 8].
#[test]
fn a_penalty_at_its_fits_bound_is_found() {
    let conc = "vus = [1, 2, 4]\nthroughput = [500.0, 900.0, 1500.0]\npenalty = [0.25, 3.70, 1.20]";
    let h = profile(conc).health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0].field, "concurrency.penalty");
    assert!(h[0].reason.starts_with("0.25 at 1 user — at or beyond the bounds [0.25, 8] its fit searched"), "{}", h[0].reason);
    assert!(h[0].fix.starts_with("record again with --repeat 3"), "{}", h[0].fix);
    // Bounds recorded with the profile are the ones checked: 8 at 4 users.
    let h = profile(&format!("{}\npenalty_bounds = [0.5, 8.0]", conc.replace("0.25, 3.70, 1.20", "1.0, 3.70, 8.0"))).health();
    assert!(h[0].reason.starts_with("8 at 4 users — at or beyond the bounds [0.5, 8]"), "{h:?}");
    // Within the bounds: healthy.
    assert_eq!(profile(&conc.replace("0.25", "0.9")).health(), vec![]);
}

// The issue's single-run recording: a penalty of 1.85 at one user. 1.85 is
// beyond 1.5 (five times the 10 % noise of one run); 1.3 and 1 / 1.3 are
// within it; with repeats at one user the same 1.85 is the server's.
#[test]
fn a_one_user_penalty_far_from_one_without_repeats_is_found() {
    let conc = "vus = [1, 2, 4]\nthroughput = [500.0, 900.0, 1500.0]\npenalty = [1.85, 1.9, 2.0]";
    let h = profile(conc).health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0].field, "concurrency.penalty");
    assert!(h[0].reason.starts_with("×1.85 at 1 user from one run"), "{}", h[0].reason);
    assert!(h[0].fix.starts_with("rerun with --repeat 3"), "{}", h[0].fix);
    assert_eq!(profile(&conc.replace("1.85", "0.5")).health().len(), 1);
    assert_eq!(profile(&conc.replace("1.85", "1.3")).health(), vec![]);
    assert_eq!(profile(&conc.replace("1.85", "0.77")).health(), vec![]);
    let zeros = format!("{conc}\nthroughput_stdev = [0.0, 0.0, 0.0]");
    assert_eq!(profile(&zeros).health().len(), 1);
    let with = format!("{conc}\nthroughput_stdev = [20.0, 30.0, 40.0]");
    assert_eq!(profile(&with).health(), vec![]);
}

// Repeats at 1 and 4 users and none at 2: the 2-user repeats were lost.
#[test]
fn repeats_missing_at_some_counts_are_found() {
    let h = profile("vus = [1, 2, 4]\nthroughput = [500.0, 900.0, 1500.0]\nthroughput_stdev = [20.0, 0.0, 40.0]").health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0].field, "concurrency.throughput_stdev");
    assert!(h[0].reason.starts_with("no spread at 2 users where the other counts have one"), "{}", h[0].reason);
    assert!(h[0].fix.starts_with("rerun with --repeat 3"), "{}", h[0].fix);
}

#[test]
fn the_loader_refuses_a_negative_or_nan_figure_before_health_is_asked() {
    let text = |cpu: &str| {
        format!(
            "schema_version = 1\nkind = \"storlab-db-profile\"\nname = \"t\"\nworkload = \"tpcc\"\nscale_unit = \"warehouse\"\nmetric = \"nopm\"\n\
             [data]\nbytes_per_scale_unit = 1.0e8\n[[transaction]]\nname = \"new_order\"\nshare = 1.0\ncpu_us = {cpu}\npage_accesses = 1.0\n\
             pages_dirtied = 0.0\ncommits = 1.0\nwal_bytes = 1.0\n[mrc]\ncache_fraction = [1.0]\nmiss_ratio = [0.0]\n[concurrency]\nalpha = 0.0\nbeta = 0.0\n"
        )
    };
    assert!(Profile::from_toml("p.toml", &text("350.0")).is_ok());
    let e = Profile::from_toml("p.toml", &text("-5.0")).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: transaction 'new_order'.cpu_us: -5"), "{e}");
    let e = Profile::from_toml("p.toml", &text("nan")).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: transaction 'new_order'.cpu_us: NaN"), "{e}");
    // A measured window of 0 s, or one per count missing, is refused too.
    let base = text("350.0").replace("beta = 0.0\n", "beta = 0.0\nvus = [1, 2]\nthroughput = [10.0, 20.0]\n");
    let e = Profile::from_toml("p.toml", &format!("{base}window_s = [20.0, 0.0]\n")).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: concurrency.window_s: 0"), "{e}");
    let e = Profile::from_toml("p.toml", &format!("{base}window_s = [20.0]\n")).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: concurrency.window_s: 1 values for 2 counts"), "{e}");
    let e = Profile::from_toml("p.toml", &base.replace("throughput = [10.0, 20.0]", "throughput = [10.0]")).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: concurrency.throughput: 1 values for 2 counts"), "{e}");
}

// 10, 20 and 40 tx/s in 20 s windows count 200, 400 and 800 transactions:
// only the first is under 400. 400 at 10 tx/s takes 40 s.
#[test]
fn a_window_too_short_for_its_rate_is_found_with_the_duration_that_fixes_it() {
    let h = profile("vus = [1, 2, 4]\nthroughput = [10.0, 20.0, 40.0]\nwindow_s = [20.0, 20.0, 20.0]").health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0].field, "concurrency.window_s");
    assert!(h[0].reason.starts_with("200 transactions in 20 s at 1 user — fewer than 400"), "{}", h[0].reason);
    assert_eq!(h[0].fix, "record again with --duration 40");
    assert_eq!(profile("vus = [1, 2, 4]\nthroughput = [20.0, 30.0, 40.0]\nwindow_s = [20.0, 20.0, 20.0]").health(), vec![]);
}

// The loader takes α from −1 (older fits); the recorder fits it at 0 or
// more, and a negative one makes transactions cheaper as users grow.
#[test]
fn a_negative_usl_coefficient_without_a_penalty_is_suspect() {
    let mut p = profile("");
    assert_eq!(p.health(), vec![]);
    p.concurrency.alpha = -0.1;
    let h = p.health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(h[0].to_string().starts_with("concurrency.alpha: -0.1 — a negative USL coefficient"), "{}", h[0]);
}

#[test]
fn every_shipped_profile_is_healthy() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/storlab/profiles");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("kind = \"storlab-db-profile\"") {
            continue;
        }
        let p = Profile::from_toml(&path.display().to_string(), &text).unwrap();
        assert_eq!(p.health(), vec![], "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 3, "{seen}");
}
