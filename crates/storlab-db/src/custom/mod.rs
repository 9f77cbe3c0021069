//! User-defined workloads (`--workload FILE.toml`): schema SQL, a load step,
//! and weighted transactions of SQL statements whose `:name` parameters are
//! drawn from generators (uniform integer, NURand, uuid, random string,
//! timestamp, sequence) once per transaction, as pgbench's `\set` does.
//! The format is in docs/db.md. `parse` reads a file, `load` builds and
//! fills its schema, `session` runs its transactions.

mod load;
mod parse;
mod session;

pub use load::prepare;
pub use parse::{FIELDS, GENERATORS, LOAD_FIELDS, METRIC_FIELDS, TRANSACTION_FIELDS};
pub use session::session;

use crate::session::{random_string, Value};
use crate::tpcc::{load::now_text, nurand};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use storlab_stats::Rng;

/// A bound of a generator: a number, or `N * scale`.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub value: i64,
    pub times_scale: bool,
}

impl Bound {
    pub(crate) fn at(self, scale: i64) -> i64 {
        if self.times_scale {
            self.value * scale
        } else {
            self.value
        }
    }
}

#[derive(Debug, Clone)]
pub enum Gen {
    Uniform(Bound, Bound),
    NURand { a: i64, x: Bound, y: Bound },
    Uuid,
    String(i64, i64),
    Timestamp,
    /// Shared by every virtual user: each draw takes the next value. With
    /// `after` (table, column) the first value is set, when the workload is
    /// prepared, to one past the column's highest (`sequence = { after =
    /// "trade.t_id" }`), so runs on a reused database go on where the rows
    /// end.
    Sequence(i64, Arc<AtomicI64>, Option<SequenceAfter>),
}

/// Where a `sequence = { after = "table.column", where = "..." }` goes on
/// from: one past the column's highest value over the rows the condition
/// keeps (all rows without one).
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceAfter {
    pub table: String,
    pub column: String,
    pub filter: Option<String>,
}

impl SequenceAfter {
    /// The query for the highest value so far (0 for none).
    pub fn query(&self) -> String {
        let w = self.filter.as_ref().map(|f| format!(" WHERE {f}")).unwrap_or_default();
        format!("SELECT COALESCE(MAX({}), 0) FROM {}{w}", self.column, self.table)
    }
}

impl Gen {
    pub(crate) fn draw(&self, rng: &mut Rng, scale: i64) -> Value {
        match self {
            Gen::Uniform(lo, hi) => {
                let (lo, hi) = (lo.at(scale), hi.at(scale));
                Value::Int(lo + rng.below((hi - lo + 1) as u64) as i64)
            }
            Gen::NURand { a, x, y } => {
                let (x, y) = (x.at(scale), y.at(scale));
                // C: any constant in 0..=A (clause 2.1.6); fixed so runs repeat.
                let c = (*a as u32) / 3;
                Value::Int(i64::from(nurand(rng, *a as u32, x as u32, y as u32, c)))
            }
            Gen::Uuid => {
                let (a, b) = (rng.next_u64(), rng.next_u64());
                // Version 4, variant 1 (RFC 9562).
                let a = (a & !0xF000) | 0x4000;
                let b = (b & !(0xC << 60)) | (0x8 << 60);
                Value::Text(format!("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF, b >> 48, b & 0xFFFF_FFFF_FFFF))
            }
            Gen::String(lo, hi) => Value::Text(random_string(rng, *lo as u64, *hi as u64)),
            Gen::Timestamp => Value::Text(now_text()),
            Gen::Sequence(start, next, _) => Value::Int(start + next.fetch_add(1, Ordering::Relaxed)),
        }
    }
}

/// A statement with its `:name` parameters replaced by positional ones.
#[derive(Debug, Clone)]
pub struct Stmt {
    pub sql: String,
    /// Parameter names in position order.
    pub params: Vec<String>,
    pub pg_sql: String,
    pub sqlite_sql: String,
}

#[derive(Debug, Clone)]
pub struct Transaction {
    pub name: String,
    pub weight: u32,
    pub statements: Vec<Stmt>,
}

#[derive(Debug, Clone)]
pub struct LoadStep {
    pub stmt: Stmt,
    pub rows: Bound,
    pub params: BTreeMap<String, Gen>,
}

/// A workload file's headline (`[metric]`): one transaction type's commits
/// a second or a minute, under its own name (TPC-E's tpsE: Trade-Result
/// transactions a second).
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub transaction: String,
    /// 1 for a rate a second, 60 for one a minute.
    pub per_s: f64,
}

impl Metric {
    /// The headline from the counted transaction's commits a minute.
    pub fn of_per_min(&self, per_min: f64) -> f64 {
        per_min / 60.0 * self.per_s
    }
}

#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub file: String,
    pub scale: i64,
    pub tables: Vec<String>,
    pub schema: Vec<String>,
    pub load: Vec<LoadStep>,
    pub after_load: Vec<String>,
    pub params: BTreeMap<String, Gen>,
    pub transactions: Vec<Transaction>,
    pub commit_every: u32,
    pub metric: Option<Metric>,
}

/// Draws each named parameter not yet in `into`.
pub(crate) fn draw_all(names: &[String], gens: &BTreeMap<String, Gen>, rng: &mut Rng, scale: i64, into: &mut BTreeMap<String, Value>) {
    for n in names {
        if !into.contains_key(n) {
            into.insert(n.clone(), gens[n].draw(rng, scale));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_version_4() {
        let mut rng = Rng::new(1);
        let Value::Text(u) = Gen::Uuid.draw(&mut rng, 1) else { panic!() };
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!("89ab".contains(&u[19..20]), "{u}");
    }
}
