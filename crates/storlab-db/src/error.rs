//! One error type for the driver. Every variant names what failed and how to
//! fix it; the Python binding maps `Input` onto ScenarioError and the rest
//! onto DatabaseError.

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// A workload file or option the user can correct.
    #[error("{0}")]
    Input(String),
    /// The database could not be reached or refused the connection.
    #[error("cannot connect to {target}: {reason} — {hint}")]
    Connect { target: String, reason: String, hint: String },
    /// The database is reachable but holds something we must not touch.
    #[error("{0}")]
    Schema(String),
    /// A statement failed outside the measured transactions (load, snapshot).
    #[error("{what}: {reason}")]
    Sql { what: String, reason: String },
}

impl DbError {
    pub fn sql(what: impl Into<String>, e: impl std::fmt::Display) -> DbError {
        DbError::Sql { what: what.into(), reason: one_line(&e.to_string()) }
    }
    pub fn is_input(&self) -> bool {
        matches!(self, DbError::Input(_))
    }
}

/// Server messages can span lines (DETAIL, HINT); a CLI error is one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub type Result<T, E = DbError> = std::result::Result<T, E>;
