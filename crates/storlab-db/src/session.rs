//! The vocabulary every workload and the driver share, and nothing else:
//! where a workload runs (`Db`), how a transaction ended (`Outcome`), a
//! virtual user's `Session`, the values statements take, and the one random
//! string generator. A leaf: it imports no other module of the crate but
//! `pg` and `mysql_target` (a target's address) and `error`, so `driver`, `tpcc`, `insert` and
//! `custom` all depend on it and never on each other.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;
use storlab_stats::Rng;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where the workload runs.
#[derive(Clone)]
pub enum Db {
    Sqlite { path: PathBuf },
    Postgres(crate::pg::Target),
    /// MySQL or MariaDB.
    Mysql(crate::mysql_target::Target),
}

impl Db {
    pub fn engine(&self) -> &'static str {
        match self {
            Db::Sqlite { .. } => "sqlite",
            Db::Postgres(_) => "postgres",
            Db::Mysql(_) => "mysql",
        }
    }
    /// The engine's name as HammerDB prints it ("PostgreSQL TPM").
    pub fn label(&self) -> &'static str {
        match self {
            Db::Sqlite { .. } => "SQLite",
            Db::Postgres(_) => "PostgreSQL",
            Db::Mysql(_) => "MySQL",
        }
    }
    pub fn display(&self) -> String {
        match self {
            Db::Sqlite { path } => format!("sqlite {}", path.display()),
            Db::Postgres(t) => t.display.clone(),
            Db::Mysql(t) => t.display.clone(),
        }
    }
}

/// How one transaction ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Commit,
    /// An intended rollback (TPC-C New-Order's unused item).
    Rollback,
    /// The database refused it (deadlock, serialization, busy, constraint).
    Error(String),
    /// The connection is gone; the virtual user stops.
    Lost(String),
}

impl Outcome {
    /// A transaction the database refused with message `m`: the rollback
    /// one of its statements asks for (its message starts with the
    /// statement's `rollbacks` text, TPC-C's unused item) or an error.
    pub fn refused(m: String, mut rollbacks: impl Iterator<Item = Option<&'static str>>) -> Outcome {
        if rollbacks.any(|r| r.is_some_and(|r| m.starts_with(r))) {
            Outcome::Rollback
        } else {
            Outcome::Error(m)
        }
    }
}

/// A client library's error, as a transaction's outcome needs it.
pub trait ConnError {
    /// The connection is gone.
    fn lost(&self) -> bool;
    fn text(&self) -> String;
}

/// The outcome of a transaction that ran to `ran`: a commit with its
/// value, or on failure the connection lost, or refused once `rollback`
/// has ended the transaction (when `open`). `rollbacks` are the
/// statements' intended-rollback messages.
pub async fn settle<T, E: ConnError>(
    ran: std::result::Result<Option<T>, E>,
    open: &mut bool,
    rollback: impl Future<Output = std::result::Result<(), E>>,
    rollbacks: impl Iterator<Item = Option<&'static str>>,
) -> (Outcome, Option<T>) {
    let e = match ran {
        Ok(v) => return (Outcome::Commit, v),
        Err(e) => e,
    };
    if e.lost() {
        return (Outcome::Lost(e.text()), None);
    }
    if std::mem::take(open) {
        if let Err(r) = rollback.await {
            if r.lost() {
                return (Outcome::Lost(r.text()), None);
            }
        }
    }
    (Outcome::refused(e.text(), rollbacks), None)
}

/// One virtual user's next transaction.
pub struct Plan {
    pub kind: usize,
    pub key: Duration,
    pub think: Duration,
}

/// A virtual user's connection and its workload state.
pub trait Session: Send {
    /// The next transaction to run; `None` when this user is done.
    fn plan(&mut self) -> Option<Plan>;
    /// Runs the planned transaction: its outcome and the rows it wrote.
    fn exec(&mut self) -> BoxFuture<'_, (Outcome, u64)>;
}

/// A statement parameter. PostgreSQL receives each in text form and parses
/// it as the type it inferred for the placeholder; SQLite binds it natively.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
    /// An integer array (`{1,2,3}` on PostgreSQL); SQLite routines read it
    /// themselves.
    IntArray(Vec<i32>),
    Null,
}

impl Value {
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(v) => *v,
            Value::Bool(b) => i64::from(*b),
            Value::Real(r) => *r as i64,
            _ => 0,
        }
    }
    pub fn text(&self) -> &str {
        match self {
            Value::Text(s) => s,
            _ => "",
        }
    }
    pub fn bool(&self) -> bool {
        matches!(self, Value::Bool(true)) || matches!(self, Value::Int(v) if *v != 0)
    }
    pub fn ints(&self) -> &[i32] {
        match self {
            Value::IntArray(v) => v,
            _ => &[],
        }
    }
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Appends an alphanumeric string of lo..=hi characters (TPC-C's a-string,
/// clause 4.3.2.2): the length first, then each character, from `rng`.
pub fn push_random_string(rng: &mut Rng, lo: u64, hi: u64, out: &mut String) {
    let n = lo + rng.below(hi - lo + 1);
    out.reserve(n as usize);
    for _ in 0..n {
        out.push(ALNUM[rng.below(ALNUM.len() as u64) as usize] as char);
    }
}

/// An alphanumeric string of lo..=hi characters.
pub fn random_string(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let mut s = String::new();
    push_random_string(rng, lo, hi, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_strings_are_alphanumeric_within_bounds() {
        let mut rng = Rng::new(9);
        let mut lens = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let s = random_string(&mut rng, 3, 6);
            assert!((3..=6).contains(&s.len()), "{s}");
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()), "{s}");
            lens.insert(s.len());
        }
        // 2000 draws of 4 lengths: each appears (P(miss one) < 4·0.75^2000).
        assert_eq!(lens.len(), 4);
    }
}
