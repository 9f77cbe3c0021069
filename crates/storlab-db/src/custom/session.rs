//! A workload file's virtual user: a weighted draw of the next transaction,
//! its parameters drawn once and shared by its statements, the statements
//! prepared once per connection, a commit every `commit_every`
//! transactions.

use super::{Gen, Transaction, Workload};
use crate::backend::{Backend, Begin, Sql, Stmt, Txn};
use crate::error::{DbError, Result};
use crate::session::{BoxFuture, Db, Outcome, Plan, Session, Value};
use std::sync::Arc;
use std::time::Duration;
use storlab_stats::Rng;

/// A transaction's parameters, resolved once: the generators it draws from
/// and, per statement, which of them fill its placeholders.
struct TxPlan {
    gens: Vec<Gen>,
    slots: Vec<Vec<usize>>,
}

impl TxPlan {
    fn new(w: &Workload, t: &Transaction) -> TxPlan {
        let mut names: Vec<&String> = vec![];
        let slots = t
            .statements
            .iter()
            .map(|s| {
                s.params
                    .iter()
                    .map(|p| match names.iter().position(|n| *n == p) {
                        Some(i) => i,
                        None => {
                            names.push(p);
                            names.len() - 1
                        }
                    })
                    .collect()
            })
            .collect();
        TxPlan { gens: names.iter().map(|n| w.params[*n].clone()).collect(), slots }
    }
}

struct Custom {
    w: Arc<Workload>,
    plans: Vec<TxPlan>,
    b: Box<dyn Backend>,
    /// Per transaction, its statements prepared on this connection.
    stmts: Vec<Vec<Stmt>>,
    rng: Rng,
    total_weight: u64,
    planned: usize,
    /// Transactions since the last commit; 0 = no transaction open.
    open: u32,
}

pub async fn session(db: &Db, w: &Workload, vu: u32, seed: u64) -> Result<Box<dyn Session>> {
    let mut b = crate::connect::connect(db).await?;
    let mut stmts = vec![];
    for tx in &w.transactions {
        let mut v = vec![];
        for (k, s) in tx.statements.iter().enumerate() {
            let sql = Sql::Text { postgres: s.pg_sql.clone(), sqlite: s.sqlite_sql.clone(), mysql: s.pg_sql.clone() };
            v.push(b.prepare(&sql).await.map_err(|e| DbError::sql(format!("{}: transaction '{}', statement {}", w.file, tx.name, k + 1), e))?);
        }
        stmts.push(v);
    }
    Ok(Box::new(Custom {
        total_weight: w.transactions.iter().map(|t| u64::from(t.weight)).sum(),
        plans: w.transactions.iter().map(|t| TxPlan::new(w, t)).collect(),
        w: Arc::new(w.clone()),
        b,
        stmts,
        rng: Rng::new(seed ^ (u64::from(vu) + 1).wrapping_mul(0xA24B_AED4_963E_E407)),
        planned: 0,
        open: 0,
    }))
}

impl Session for Custom {
    fn plan(&mut self) -> Option<Plan> {
        let mut r = self.rng.below(self.total_weight);
        self.planned = self
            .w
            .transactions
            .iter()
            .position(|t| {
                let hit = r < u64::from(t.weight);
                r = r.saturating_sub(u64::from(t.weight));
                hit
            })
            .unwrap_or(0);
        Some(Plan { kind: self.planned, key: Duration::ZERO, think: Duration::ZERO })
    }

    fn exec(&mut self) -> BoxFuture<'_, (Outcome, u64)> {
        Box::pin(async move {
            let ti = self.planned;
            let plan = &self.plans[ti];
            let vals: Vec<Value> = plan.gens.iter().map(|g| g.draw(&mut self.rng, self.w.scale)).collect();
            let steps = self.stmts[ti].iter().zip(&plan.slots).map(|(st, slots)| (*st, slots.iter().map(|i| vals[*i].clone()).collect())).collect();
            let begin = if self.open == 0 { Begin::Write } else { Begin::Continue };
            self.open += 1;
            let commit = self.open >= self.w.commit_every;
            if commit {
                self.open = 0;
            }
            let out = self.b.transaction(Txn { begin, commit, steps, pipelined: false }).await;
            if out != Outcome::Commit {
                self.open = 0;
            }
            let n = u64::from(out == Outcome::Commit);
            (out, n)
        })
    }
}
