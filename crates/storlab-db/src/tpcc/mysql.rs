//! TPC-C on MySQL and MariaDB: the schema with its keys declared up front
//! (InnoDB clusters rows by primary key, and the loader writes them in key
//! order), loaders in parallel sending multi-row INSERTs of about 1 MiB
//! each, then the five stored procedures HammerDB's MySQL TPROC-C calls.

use super::load::{generate, Gen, RowSink, Table};
use crate::error::{DbError, Result};
use crate::mysql::{message, Target};
use crate::Progress;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

pub const SCHEMA: &str = include_str!("../../sql/mysql_tpcc_schema.sql");
pub const PROCEDURES: &str = include_str!("../../sql/mysql_tpcc_procedures.sql");

const TABLES: [&str; 9] = ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"];

/// Rows as `(…),(…)` value lists, cut into INSERT statements of about 1 MiB
/// (MariaDB's max_allowed_packet is 16 MiB by default).
struct Inserts {
    head: String,
    sql: String,
    rows: usize,
    first: bool,
    out: Vec<String>,
}

impl Inserts {
    fn new(table: Table) -> Inserts {
        let head = format!("INSERT INTO {} VALUES ", table.name());
        Inserts { sql: head.clone(), head, rows: 0, first: true, out: vec![] }
    }
    fn sep(&mut self) {
        if self.first {
            if self.rows > 0 {
                self.sql.push(',');
            }
            self.sql.push('(');
            self.first = false;
        } else {
            self.sql.push(',');
        }
    }
    fn finish(mut self) -> Vec<String> {
        if self.rows > 0 {
            self.out.push(std::mem::take(&mut self.sql));
        }
        self.out
    }
}

impl RowSink for Inserts {
    fn int(&mut self, v: i64) {
        self.sep();
        self.sql.push_str(&v.to_string());
    }
    fn dec(&mut self, v: i64, scale: u32) {
        self.sep();
        let p = 10i64.pow(scale);
        let sign = if v < 0 { "-" } else { "" };
        let a = v.abs();
        self.sql.push_str(&format!("{sign}{}.{:0w$}", a / p, a % p, w = scale as usize));
    }
    fn text(&mut self, s: &str) {
        self.sep();
        self.sql.push('\'');
        for ch in s.chars() {
            match ch {
                '\'' => self.sql.push_str("''"),
                '\\' => self.sql.push_str("\\\\"),
                c => self.sql.push(c),
            }
        }
        self.sql.push('\'');
    }
    fn null(&mut self) {
        self.sep();
        self.sql.push_str("NULL");
    }
    fn end_row(&mut self) -> Result<()> {
        self.sql.push(')');
        self.rows += 1;
        self.first = true;
        if self.sql.len() >= 1 << 20 {
            let full = std::mem::replace(&mut self.sql, self.head.clone());
            self.out.push(full);
            self.rows = 0;
        }
        Ok(())
    }
}

async fn load_table(c: &mut Conn, table: Table, w: u32, seed: u64, now: &str) -> Result<()> {
    let now = now.to_string();
    let stmts = tokio::task::spawn_blocking(move || {
        let mut g = Gen::new(seed ^ (u64::from(w) << 8) ^ table as u64, now);
        let mut s = Inserts::new(table);
        generate(table, w, &mut g, &mut s).map(|_| s.finish())
    })
    .await
    .map_err(|e| DbError::sql("generating rows", e))??;
    let what = format!("loading {} (warehouse {w})", table.name());
    c.query_drop("BEGIN").await.map_err(|e| DbError::sql(&what, message(&e)))?;
    for s in stmts {
        c.query_drop(s).await.map_err(|e| DbError::sql(&what, message(&e)))?;
    }
    c.query_drop("COMMIT").await.map_err(|e| DbError::sql(&what, message(&e)))?;
    Ok(())
}

/// A loader's connection, writing multi-row INSERTs.
struct InsertLoader {
    c: Conn,
    seed: u64,
    now: String,
}

impl super::load::Loader for InsertLoader {
    fn load(&mut self, table: Table, w: u32) -> crate::session::BoxFuture<'_, Result<()>> {
        Box::pin(load_table(&mut self.c, table, w, self.seed, &self.now))
    }
}

/// Runs SQL text of several statements, naming it in errors.
async fn batch(c: &mut Conn, what: &str, sql: &str) -> Result<()> {
    c.query_drop(sql).await.map_err(|e| DbError::sql(what, message(&e)))
}

/// The procedures, one statement at a time (their bodies hold `;`).
async fn install_procedures(c: &mut Conn) -> Result<()> {
    for s in PROCEDURES.split("\n-- ;;\n") {
        let body: String = s.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n");
        if body.trim().is_empty() {
            continue;
        }
        batch(c, "installing the TPC-C procedures (the user needs CREATE ROUTINE)", &body).await?;
    }
    Ok(())
}

/// What the database holds: nothing of ours, or a TPC-C schema of N warehouses.
async fn existing(c: &mut Conn, db: &str) -> Result<Option<u32>> {
    let list = TABLES.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(",");
    let q = format!("SELECT count(*) FROM information_schema.tables WHERE table_schema = database() AND table_name IN ({list})");
    let n: Option<i64> = c.query_first(q).await.map_err(|e| DbError::sql("looking for a TPC-C schema", message(&e)))?;
    match n.unwrap_or(0) {
        0 => Ok(None),
        9 => {
            let w: Option<i64> = c.query_first("SELECT count(*) FROM warehouse").await.map_err(|e| DbError::sql("counting warehouses", message(&e)))?;
            Ok(Some(w.unwrap_or(0) as u32))
        }
        k => Err(super::load::partial_schema(db, k)),
    }
}

/// Builds the schema of `warehouses` warehouses with `loaders` parallel
/// loaders, or reuses one of the same size. Returns whether it loaded.
pub async fn prepare(target: &Target, warehouses: u32, loaders: u32, seed: u64, progress: &Progress) -> Result<bool> {
    let mut c = target.connect().await?;
    if target.db.is_empty() {
        return Err(DbError::Input(format!("{}: no database named — add one to --dsn (mysql://USER@HOST:PORT/DB)", target.display)));
    }
    match existing(&mut c, &target.display).await? {
        Some(w) if w == warehouses => {
            install_procedures(&mut c).await?;
            return Ok(false);
        }
        Some(w) => return Err(super::load::other_size(&target.display, w, warehouses)),
        None => {}
    }
    batch(&mut c, "creating the TPC-C tables", SCHEMA).await?;
    let (t, now) = (target.clone(), super::load::now_text());
    let loaded = super::load::load_parallel(warehouses, loaders, progress, move || {
        let (t, now) = (t.clone(), now.clone());
        Box::pin(async move { Ok(InsertLoader { c: t.connect().await?, seed, now }) })
    })
    .await;
    if let Err(e) = loaded {
        // Leave no half-built schema behind: it would block the next run.
        let _ = c.query_drop(format!("DROP TABLE IF EXISTS {}", TABLES.join(", "))).await;
        return Err(e);
    }
    batch(&mut c, "analyzing the TPC-C tables", &format!("ANALYZE TABLE {}", TABLES.join(", "))).await?;
    install_procedures(&mut c).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_procedure_hammerdb_calls_is_created() {
        for p in ["NEWORD", "PAYMENT", "OSTAT", "DELIVERY", "SLEV"] {
            assert!(PROCEDURES.contains(&format!("CREATE PROCEDURE {p}(")), "{p}");
        }
        // Each CREATE is its own statement, after its DROP.
        assert_eq!(PROCEDURES.split("\n-- ;;\n").filter(|s| s.contains("CREATE PROCEDURE")).count(), 5);
    }

    #[test]
    fn inserts_quote_and_cut_at_a_mebibyte() {
        let mut s = Inserts::new(Table::NewOrder);
        s.int(1);
        s.text("it's");
        s.dec(-1234, 2);
        s.null();
        s.end_row().unwrap();
        s.int(2);
        s.end_row().unwrap();
        assert_eq!(s.finish(), vec!["INSERT INTO new_order VALUES (1,'it''s',-12.34,NULL),(2)".to_string()]);
        let mut s = Inserts::new(Table::Item);
        for i in 0..30_000 {
            s.text(&"x".repeat(40));
            s.int(i);
            s.end_row().unwrap();
        }
        let out = s.finish();
        // 30,000 rows of about 50 bytes: 1.5 MB, so two statements.
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|q| q.starts_with("INSERT INTO item VALUES (")));
        assert_eq!(out.iter().map(|q| q.matches("),(").count() + 1).sum::<usize>(), 30_000);
    }
}
