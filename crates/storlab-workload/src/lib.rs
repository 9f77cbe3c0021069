//! storlab-workload: one definition of an I/O job, used by the simulator
//! and by the real benchmark, so a simulated and a measured run of the same
//! job line up. Jobs come from CrystalDiskMark presets (`presets`), fio job
//! files (`fio`, a documented subset) or inline scenario tables.

pub mod che;
pub mod database;
pub mod fio;
pub mod fit;
pub mod groups;
pub mod health;
pub mod import;
pub mod job;
pub mod presets;
pub mod profile;
pub mod recording;
pub mod spec;
/// Sizes and durations: one grammar each, kept with the record (the lowest crate).
pub use storlab_record::units;

pub use job::{Job, Pattern};
pub use spec::Workload;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// A line of a job file that is not `[section]`, `key`, `key=value` or a comment.
    #[error("{file}:{line}: {message}")]
    Syntax { file: String, line: usize, message: String },
    /// An option outside the supported subset.
    #[error("{file}:{line}: option '{option}' is not supported{}", hint(.suggestion))]
    UnknownOption { file: String, line: usize, option: String, suggestion: Option<String> },
    /// A value fio would reject, or one out of range.
    #[error("{file}:{line}: {option}: {message}")]
    InvalidValue { file: String, line: usize, option: String, message: String },
    /// A field of the scenario's `[workload]` table.
    #[error("{file}: {field}: {message}")]
    Field { file: String, field: String, message: String },
    /// A database profile `Profile::health` finds suspect: one line per
    /// suspect, then how to use it anyway.
    #[error("{}", suspect_lines(.file, .profile, .suspects))]
    Suspect { file: String, profile: String, suspects: Vec<String> },
    /// An unknown preset name.
    #[error("unknown profile '{name}'{} — profiles: {valid}", hint_q(.suggestion))]
    UnknownPreset { name: String, suggestion: Option<String>, valid: String },
}

fn hint(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" — did you mean '{s}'?"),
        None => " — see docs/workloads.md for the supported subset".into(),
    }
}

fn suspect_lines(file: &str, profile: &str, suspects: &[String]) -> String {
    let mut lines: Vec<String> = suspects.iter().map(|s| format!("{file}: workload.database.profile: {profile} is suspect: {s}")).collect();
    lines.push(format!("{file}: workload.database.profile: to use it as it is, pass --accept-suspect or set accept_suspect = true in [workload.database]"));
    lines.join("\n")
}

fn hint_q(s: &Option<String>) -> String {
    s.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default()
}

/// The candidate nearest to `wanted` (edit distance), if one is close.
pub fn nearest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(wanted, c), c))
        .filter(|(s, _)| *s >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}
