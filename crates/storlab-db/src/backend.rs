//! One `Backend` per virtual user: prepare a statement, execute statements
//! as (part of) a transaction, run schema SQL. PostgreSQL's is the wire
//! client (`wire`) on the user's own socket; MySQL's and MariaDB's is
//! mysql_async (`mysql`); SQLite's is a rusqlite connection whose calls run
//! on tokio's blocking pool. Each workload (TPC-C,
//! the insert storm, workload files) is written once against this trait.
//!
//! A statement is SQL in both dialects, or a *routine*: a transaction's
//! logic as a server-side function on PostgreSQL (one prepared
//! `SELECT fn(…)`, one round trip, as HammerDB does), a stored procedure
//! on MySQL (one `CALL`), and as Rust on the client for SQLite, which has
//! no stored procedures.

use crate::error::{DbError, Result};
use crate::session::{settle, BoxFuture, Outcome, Value};
use crate::{sqlite_io, wire};
use std::sync::Arc;

/// The SQL dialect a backend speaks, for schema text that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
    Mysql,
}

/// A routine's SQLite body: runs inside the transaction the backend opened;
/// `Ok(false)` asks for a rollback (an intended one).
pub type SqliteRoutine = fn(&rusqlite::Connection, &[Value]) -> rusqlite::Result<bool>;

#[derive(Clone)]
pub enum Sql {
    /// One statement, `$n` placeholders for PostgreSQL, `?n` for SQLite,
    /// `?` or `$n` for MySQL (its backend turns `$n` into `?`).
    Text { postgres: String, sqlite: String, mysql: String },
    /// A transaction's logic: PostgreSQL calls `postgres` (a `SELECT fn($1…)`)
    /// and reads an error whose message starts with `rollback` as an intended
    /// rollback; MySQL calls `mysql` (a `CALL proc(?…)`) and reads a
    /// signalled message the same way; SQLite runs `sqlite`.
    Routine { postgres: &'static str, sqlite: SqliteRoutine, mysql: &'static str, rollback: &'static str },
}

impl Sql {
    /// The same text in every dialect (no placeholders, or `$n`/`?n` alike).
    pub fn both(sql: &str) -> Sql {
        Sql::Text { postgres: sql.into(), sqlite: sql.into(), mysql: sql.into() }
    }
}

/// A statement prepared on one backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt(pub(crate) usize);

/// How a transaction opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Begin {
    /// Continue the transaction already open (a workload file's
    /// `commit_every`).
    Continue,
    /// A reader: SQLite's deferred `BEGIN`.
    Read,
    /// A writer: SQLite's `BEGIN IMMEDIATE`, which takes the write lock up
    /// front so two writers never deadlock on a lock upgrade.
    Write,
}

/// Statements to run in order, as one transaction or part of one.
pub struct Txn {
    pub begin: Begin,
    /// Commit after the last statement (else leave the transaction open).
    pub commit: bool,
    pub steps: Vec<(Stmt, Vec<Value>)>,
    /// PostgreSQL: send the statements in batches without waiting for each
    /// reply (loading); a measured transaction waits for every reply, as an
    /// application does.
    pub pipelined: bool,
}

impl Txn {
    pub fn one(begin: Begin, stmt: Stmt, params: Vec<Value>) -> Txn {
        Txn { begin, commit: true, steps: vec![(stmt, params)], pipelined: false }
    }
}

/// A database connection as a workload sees it.
pub trait Backend: Send {
    fn dialect(&self) -> Dialect;
    /// Prepares a statement once for this connection.
    fn prepare<'a>(&'a mut self, sql: &'a Sql) -> BoxFuture<'a, std::result::Result<Stmt, String>>;
    /// Runs statements; an error rolls back whatever transaction is open.
    fn transaction(&mut self, tx: Txn) -> BoxFuture<'_, Outcome> {
        Box::pin(async move { self.transaction_value(tx).await.0 })
    }
    /// `transaction`, also returning the first column of the last
    /// statement's first row (none from SQLite's routines).
    fn transaction_value(&mut self, tx: Txn) -> BoxFuture<'_, (Outcome, Option<String>)>;
    /// Runs schema SQL (several statements allowed), outside any transaction.
    fn batch<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<(), String>>;
    /// The first column of the first row of a query, as text.
    fn query_text<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<Option<String>, String>>;
}

/// Statements sent in one write when a transaction is pipelined: their
/// replies (tens of bytes each) stay far below a socket buffer, so neither
/// side ever blocks writing while the other waits to write.
const PIPELINE: usize = 500;

struct PgStmt {
    st: wire::Stmt,
    rollback: Option<&'static str>,
}

pub struct PgBackend {
    c: wire::Conn,
    stmts: Vec<PgStmt>,
    begin: wire::Stmt,
    commit: wire::Stmt,
    /// A transaction is open on the server.
    open: bool,
}

impl PgBackend {
    pub async fn connect(t: &crate::pg::Target) -> Result<PgBackend> {
        let mut c = wire::Conn::connect(t).await?;
        // BEGIN and COMMIT prepared too, as pgbench's -M prepared does.
        let begin = c.prepare("BEGIN").await.map_err(|e| DbError::sql("preparing BEGIN", e.message()))?;
        let commit = c.prepare("COMMIT").await.map_err(|e| DbError::sql("preparing COMMIT", e.message()))?;
        Ok(PgBackend { c, stmts: vec![], begin, commit, open: false })
    }

    async fn run(&mut self, tx: &Txn) -> std::result::Result<Option<String>, wire::WireError> {
        // A whole transaction of one statement runs as an autocommit
        // statement: one round trip (TPC-C's `SELECT fn(…)`).
        let single = tx.begin != Begin::Continue && tx.commit && tx.steps.len() == 1;
        if !single && tx.begin != Begin::Continue && !self.open {
            self.open = true;
            self.c.execute(&self.begin, |_| {}).await?;
        }
        let mut value = None;
        if tx.pipelined {
            for chunk in tx.steps.chunks(PIPELINE) {
                for (st, params) in chunk {
                    self.c.queue(&self.stmts[st.0].st, |p| fill(p, params));
                }
                self.c.sync().await?;
            }
        } else {
            for (i, (st, params)) in tx.steps.iter().enumerate() {
                if i + 1 == tx.steps.len() {
                    value = self.c.execute_first(&self.stmts[st.0].st, |p| fill(p, params)).await?;
                } else {
                    self.c.execute(&self.stmts[st.0].st, |p| fill(p, params)).await?;
                }
            }
        }
        if tx.commit && self.open {
            self.open = false;
            self.c.execute(&self.commit, |_| {}).await?;
        }
        Ok(value)
    }
}

fn fill(p: &mut wire::Params, params: &[Value]) {
    for v in params {
        match v {
            Value::Int(i) => p.int(*i),
            Value::Real(r) => p.text(&r.to_string()),
            Value::Text(s) => p.text(s),
            Value::Bool(b) => p.bool(*b),
            Value::IntArray(a) => p.int_array(a),
            Value::Null => p.null(),
        };
    }
}

impl Backend for PgBackend {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn prepare<'a>(&'a mut self, sql: &'a Sql) -> BoxFuture<'a, std::result::Result<Stmt, String>> {
        Box::pin(async move {
            let (text, rollback) = match sql {
                Sql::Text { postgres, .. } => (postgres.as_str(), None),
                Sql::Routine { postgres, rollback, .. } => (*postgres, Some(*rollback)),
            };
            let st = self.c.prepare(text).await.map_err(|e| e.message())?;
            self.stmts.push(PgStmt { st, rollback });
            Ok(Stmt(self.stmts.len() - 1))
        })
    }

    fn transaction_value(&mut self, tx: Txn) -> BoxFuture<'_, (Outcome, Option<String>)> {
        Box::pin(async move {
            let ran = self.run(&tx).await;
            let c = &mut self.c;
            let rollbacks = tx.steps.iter().map(|(st, _)| self.stmts[st.0].rollback);
            settle(ran, &mut self.open, async move { c.simple("ROLLBACK").await.map(|_| ()) }, rollbacks).await
        })
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<(), String>> {
        Box::pin(async move { self.c.simple(sql).await.map(|_| ()).map_err(|e| e.message()) })
    }

    fn query_text<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<Option<String>, String>> {
        Box::pin(async move { self.c.query_text(sql).await.map_err(|e| e.message()) })
    }
}

#[derive(Clone)]
enum SqliteStmt {
    Text(String),
    Routine(SqliteRoutine),
}

pub struct SqliteBackend {
    /// Taken while a call runs on the blocking pool.
    conn: Option<rusqlite::Connection>,
    stmts: Arc<Vec<SqliteStmt>>,
}

impl SqliteBackend {
    /// Opens the SQLite file at `path` (off the async threads: opening may wait on I/O).
    pub async fn open(path: &std::path::Path) -> Result<SqliteBackend> {
        let p = path.to_path_buf();
        let c = tokio::task::spawn_blocking(move || sqlite_io::open(&p)).await.map_err(|e| DbError::sql("opening", e))??;
        Ok(SqliteBackend { conn: Some(c), stmts: Arc::new(vec![]) })
    }
}

fn bind(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Int(i) => V::Integer(*i),
        Value::Real(r) => V::Real(*r),
        Value::Text(s) => V::Text(s.clone()),
        Value::Bool(b) => V::Integer(i64::from(*b)),
        Value::IntArray(a) => V::Text(format!("{a:?}")),
        Value::Null => V::Null,
    }
}

impl Backend for SqliteBackend {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn prepare<'a>(&'a mut self, sql: &'a Sql) -> BoxFuture<'a, std::result::Result<Stmt, String>> {
        Box::pin(async move {
            let st = match sql {
                Sql::Text { sqlite, .. } => {
                    // Compiled once here so a bad statement fails at login;
                    // the connection's statement cache keeps it.
                    let c = self.conn.as_ref().ok_or("the connection was lost in an earlier call")?;
                    c.prepare_cached(sqlite).map_err(|e| e.to_string())?;
                    SqliteStmt::Text(sqlite.clone())
                }
                Sql::Routine { sqlite, .. } => SqliteStmt::Routine(*sqlite),
            };
            let v = Arc::make_mut(&mut self.stmts);
            v.push(st);
            Ok(Stmt(v.len() - 1))
        })
    }

    fn transaction_value(&mut self, tx: Txn) -> BoxFuture<'_, (Outcome, Option<String>)> {
        Box::pin(async move {
            let stmts = self.stmts.clone();
            let begin = match tx.begin {
                Begin::Continue => None,
                Begin::Read => Some("BEGIN"),
                Begin::Write => Some("BEGIN IMMEDIATE"),
            };
            let out = sqlite_io::on_pool(&mut self.conn, move |c| {
                sqlite_io::txn(c, begin, tx.commit, |c| {
                    for (st, params) in &tx.steps {
                        match &stmts[st.0] {
                            SqliteStmt::Text(sql) => {
                                let mut s = c.prepare_cached(sql)?;
                                let mut rows = s.query(rusqlite::params_from_iter(params.iter().map(bind)))?;
                                while rows.next()?.is_some() {}
                            }
                            SqliteStmt::Routine(f) => {
                                if !f(c, params)? {
                                    return Ok(false);
                                }
                            }
                        }
                    }
                    Ok(true)
                })
            })
            .await
            .unwrap_or_else(|e| Outcome::Lost(e.to_string()));
            (out, None)
        })
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<(), String>> {
        Box::pin(async move {
            let sql = sql.to_string();
            sqlite_io::on_pool(&mut self.conn, move |c| c.execute_batch(&sql).map_err(|e| e.to_string())).await.map_err(|e| e.to_string())?
        })
    }

    fn query_text<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<Option<String>, String>> {
        Box::pin(async move {
            let sql = sql.to_string();
            sqlite_io::on_pool(&mut self.conn, move |c| {
                use rusqlite::OptionalExtension;
                c.query_row(&sql, [], |r| {
                    Ok(match r.get_ref(0)? {
                        rusqlite::types::ValueRef::Null => None,
                        rusqlite::types::ValueRef::Integer(i) => Some(i.to_string()),
                        rusqlite::types::ValueRef::Real(f) => Some(f.to_string()),
                        rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
                    })
                })
                .optional()
                .map(Option::flatten)
                .map_err(|e| e.to_string())
            })
            .await
            .map_err(|e| e.to_string())?
        })
    }
}
