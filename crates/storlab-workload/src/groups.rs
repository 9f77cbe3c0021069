//! How fio starts and reports the jobs of a file (HOWTO, `stonewall`,
//! `new_group`, `group_reporting`): shared by the simulator and the real
//! benchmark, so both run a job file the same way.

use crate::job::Job;
use std::ops::Range;

/// The runs of a job list, as fio starts them: a job with `stonewall` waits
/// for every job before it to finish; the jobs between two stonewalls run
/// at once.
pub fn run_groups(jobs: &[Job]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        match out.last_mut() {
            Some(r) if !j.stonewall => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The results a run reports, as fio's reporting groups (a new one at each
/// `stonewall` or `new_group`): with `group_reporting` the jobs of a group
/// report as one, else each job on its own.
pub fn report_groups(jobs: &[Job], run: Range<usize>) -> Vec<Range<usize>> {
    let mut groups: Vec<Range<usize>> = Vec::new();
    for i in run {
        match groups.last_mut() {
            Some(g) if !(jobs[i].stonewall || jobs[i].new_group) => g.end = i + 1,
            _ => groups.push(i..i + 1),
        }
    }
    groups
        .into_iter()
        .flat_map(|g| if jobs[g.clone()].iter().any(|j| j.group_reporting) { vec![g] } else { g.map(|i| i..i + 1).collect() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // [a] [b] [c stonewall] [d new_group]: a and b start together, c waits
    // for them and d starts with c; reporting groups {a,b}, {c}, {d}.
    #[test]
    fn stonewall_starts_a_run_new_group_only_a_report() {
        let jobs = crate::fio::parse("j.fio", "[a]\n[b]\n[c]\nstonewall\n[d]\nnew_group\n").unwrap();
        assert_eq!(run_groups(&jobs), vec![0..2, 2..4]);
        assert_eq!(report_groups(&jobs, 0..2), vec![0..1, 1..2]);
        let jobs = crate::fio::parse("j.fio", "[global]\ngroup_reporting\n[a]\n[b]\n[c]\nstonewall\n[d]\nnew_group\n").unwrap();
        assert_eq!(report_groups(&jobs, 0..2), vec![0..2]);
        assert_eq!(report_groups(&jobs, 2..4), vec![2..3, 3..4]);
    }
}
