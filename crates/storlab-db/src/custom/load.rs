//! Building a workload file's schema and loading it: created and loaded
//! when none of its tables exist, reused when all do, refused when only some
//! do. The load commits every 10,000 rows; on PostgreSQL the rows of a
//! batch are pipelined. The tables are analysed after it.

use super::{draw_all, Gen, Workload};
use crate::backend::{Backend, Begin, Dialect, Sql, Txn};
use crate::error::{DbError, Result};
use crate::session::{Db, Outcome};
use crate::Progress;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use storlab_stats::Rng;

fn decide(present: usize, w: &Workload, target: &str) -> Result<bool> {
    match present {
        0 => Ok(true),
        n if n == w.tables.len() => Ok(false),
        n => Err(DbError::Schema(format!(
            "{target} holds {n} of the {} tables of {} ({}) — drop them or use another database",
            w.tables.len(),
            w.file,
            w.tables.join(", ")
        ))),
    }
}

async fn tables_present(b: &mut dyn Backend, tables: &[String]) -> Result<usize> {
    let list = tables.iter().map(|t| format!("'{}'", t.replace('\'', "''"))).collect::<Vec<_>>().join(",");
    let q = match b.dialect() {
        Dialect::Postgres => format!("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ({list})"),
        Dialect::Sqlite => format!("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ({list})"),
        Dialect::Mysql => format!("SELECT count(*) FROM information_schema.tables WHERE table_schema = database() AND table_name IN ({list})"),
    };
    let n = b.query_text(&q).await.map_err(|e| DbError::sql("looking for the workload's tables", e))?;
    Ok(n.and_then(|n| n.parse().ok()).unwrap_or(0))
}

/// Creates and loads the schema unless every table of the workload exists.
pub async fn prepare(db: &Db, w: &Workload, seed: u64, progress: &Progress) -> Result<bool> {
    let mut rng = Rng::new(seed ^ 0x10AD);
    let mut b = crate::connect::connect(db).await?;
    if !decide(tables_present(b.as_mut(), &w.tables).await?, w, &db.display())? {
        continue_sequences(b.as_mut(), w).await?;
        return Ok(false);
    }
    for (i, s) in w.schema.iter().enumerate() {
        b.batch(s).await.map_err(|e| DbError::sql(format!("{}: schema[{i}]", w.file), e))?;
    }
    progress.total.store(w.load.len() as u64, Ordering::Relaxed);
    for (i, l) in w.load.iter().enumerate() {
        let what = format!("{}: load[{i}]", w.file);
        let st = b.prepare(&Sql::Text { postgres: l.stmt.pg_sql.clone(), sqlite: l.stmt.sqlite_sql.clone(), mysql: l.stmt.pg_sql.clone() }).await.map_err(|e| DbError::sql(&what, e))?;
        let rows = l.rows.at(w.scale);
        let mut done = 0;
        while done < rows {
            if progress.stop.load(Ordering::Relaxed) {
                return Err(DbError::Input("interrupted while loading".into()));
            }
            let n = (rows - done).min(10_000);
            let steps = (0..n)
                .map(|_| {
                    let mut vals = BTreeMap::new();
                    draw_all(&l.stmt.params, &l.params, &mut rng, w.scale, &mut vals);
                    (st, l.stmt.params.iter().map(|p| vals[p].clone()).collect())
                })
                .collect();
            match b.transaction(Txn { begin: Begin::Write, commit: true, steps, pipelined: true }).await {
                Outcome::Commit => {}
                Outcome::Rollback => return Err(DbError::sql(&what, "rolled back")),
                Outcome::Error(e) | Outcome::Lost(e) => return Err(DbError::sql(&what, e)),
            }
            done += n;
        }
        progress.done.fetch_add(1, Ordering::Relaxed);
    }
    for (i, s) in w.after_load.iter().enumerate() {
        b.batch(s).await.map_err(|e| DbError::sql(format!("{}: after_load[{i}]", w.file), e))?;
    }
    // The planner's statistics of the fresh tables, and on PostgreSQL their
    // visibility map, as `pgbench -i` leaves them (its VACUUM ANALYZE):
    // without statistics PostgreSQL plans a join over freshly loaded tables
    // as over empty ones, and without the vacuum autovacuum comes by for the
    // inserted rows during the first measured runs (the first of a sysbench
    // read-only sweep ran at 246 tps where its repeats ran 522 and 547).
    let analyze = match b.dialect() {
        Dialect::Postgres => "VACUUM ANALYZE".to_string(),
        Dialect::Sqlite => "ANALYZE".to_string(),
        Dialect::Mysql => format!("ANALYZE TABLE {}", w.tables.join(", ")),
    };
    b.batch(&analyze).await.map_err(|e| DbError::sql(format!("{}: the statistics after the load ({analyze})", w.file), e))?;
    continue_sequences(b.as_mut(), w).await?;
    Ok(true)
}

/// Sets each `sequence = { after = "table.column" }` to go on one past the
/// column's highest value.
async fn continue_sequences(b: &mut dyn Backend, w: &Workload) -> Result<()> {
    for (name, g) in &w.params {
        if let Gen::Sequence(_, next, Some(after)) = g {
            let (table, column) = (&after.table, &after.column);
            let what = format!("{}: params.{name}: sequence after {table}.{column}", w.file);
            let top = b.query_text(&after.query()).await.map_err(|e| DbError::sql(&what, e))?;
            let top: i64 = top.as_deref().unwrap_or("0").trim().parse().map_err(|_| DbError::sql(&what, format!("{table}.{column} holds '{}', not whole numbers", top.unwrap_or_default())))?;
            next.store(top + 1, Ordering::Relaxed);
        }
    }
    Ok(())
}
