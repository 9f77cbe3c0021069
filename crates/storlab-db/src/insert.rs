//! The insert storm, a common cloud-storage test: N virtual users each
//! insert M rows into one table, committing every K, while the database
//! maintains a primary key of random 32-hex-character keys and four secondary
//! indexes (the string, the double, the timestamp, and (reversed string,
//! key)). Random keys scatter every index insert over the whole index, which
//! is what makes it a storage test rather than an append.
//!
//! The table is storlab's: it carries a mark (a table comment on
//! PostgreSQL and MySQL, a comment inside its CREATE TABLE text on SQLite) and is
//! recreated at every run only when it bears that mark. A table of that name
//! without the mark is the user's: the storm refuses to touch it.

use crate::backend::{Backend, Begin, Dialect, Sql, Stmt, Txn};
use crate::error::{DbError, Result};
use crate::session::{random_string, BoxFuture, Db, Outcome, Plan, Session, Value};
use crate::tpcc::load::now_text;
use std::time::Duration;
use storlab_stats::Rng;

#[derive(Debug, Clone)]
pub struct InsertOptions {
    /// M: rows each virtual user inserts.
    pub rows_per_vu: u64,
    /// K: rows per commit.
    pub commit_every: u64,
}

impl Default for InsertOptions {
    fn default() -> Self {
        InsertOptions { rows_per_vu: 10_000, commit_every: 100 }
    }
}

pub const TABLE: &str = "storlab_insert";
/// The mark that says storlab created the table.
pub const MARK: &str = "storlab insert storm";

const PG_SCHEMA: &str = "DROP TABLE IF EXISTS storlab_insert; \
CREATE TABLE storlab_insert (id char(32) PRIMARY KEY, s varchar(255) NOT NULL, payload varchar(1000) NOT NULL, d double precision NOT NULL, ts timestamp NOT NULL); \
COMMENT ON TABLE storlab_insert IS 'storlab insert storm: dropped and recreated by every run'; \
CREATE INDEX storlab_insert_s ON storlab_insert (s); \
CREATE INDEX storlab_insert_d ON storlab_insert (d); \
CREATE INDEX storlab_insert_ts ON storlab_insert (ts); \
CREATE INDEX storlab_insert_rev ON storlab_insert (reverse(s), id);";

const SQLITE_SCHEMA: &str = "DROP TABLE IF EXISTS storlab_insert; \
CREATE TABLE storlab_insert ( -- storlab insert storm: dropped and recreated by every run\n id text PRIMARY KEY, s text NOT NULL, payload text NOT NULL, d real NOT NULL, ts text NOT NULL); \
CREATE INDEX storlab_insert_s ON storlab_insert (s); \
CREATE INDEX storlab_insert_d ON storlab_insert (d); \
CREATE INDEX storlab_insert_ts ON storlab_insert (ts); \
CREATE INDEX storlab_insert_rev ON storlab_insert (reverse(s), id);";

/// InnoDB: the reversed string is a stored generated column, since MySQL
/// indexes an expression only through one.
const MYSQL_SCHEMA: &str = "DROP TABLE IF EXISTS storlab_insert; \
CREATE TABLE storlab_insert (id char(32) NOT NULL PRIMARY KEY, s varchar(255) NOT NULL, payload varchar(1000) NOT NULL, d double NOT NULL, ts datetime NOT NULL, \
 s_rev varchar(255) AS (reverse(s)) STORED, \
 KEY storlab_insert_s (s), KEY storlab_insert_d (d), KEY storlab_insert_ts (ts), KEY storlab_insert_rev (s_rev, id)) \
 ENGINE = InnoDB COMMENT = 'storlab insert storm: dropped and recreated by every run';";

/// Whether the table exists, and whether it bears storlab's mark.
const PG_FIND: &str = "SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_class c \
WHERE c.relname = 'storlab_insert' AND c.relnamespace = current_schema()::text::regnamespace";
const MYSQL_FIND: &str = "SELECT table_comment FROM information_schema.tables WHERE table_schema = database() AND table_name = 'storlab_insert'";
const SQLITE_FIND: &str = "SELECT coalesce(sql, '') FROM sqlite_master WHERE type = 'table' AND name = 'storlab_insert'";

/// (Re)creates the table: every storm starts from an empty table of its
/// own. A `storlab_insert` that storlab did not create is refused.
pub async fn prepare(db: &Db) -> Result<bool> {
    let mut b = crate::connect::connect(db).await?;
    let (find, schema) = match b.dialect() {
        Dialect::Postgres => (PG_FIND, PG_SCHEMA),
        Dialect::Sqlite => (SQLITE_FIND, SQLITE_SCHEMA),
        Dialect::Mysql => (MYSQL_FIND, MYSQL_SCHEMA),
    };
    let found = b.query_text(find).await.map_err(|e| DbError::sql("looking for storlab_insert", e))?;
    if let Some(text) = found {
        if !text.contains(MARK) {
            return Err(DbError::Schema(format!(
                "{} already has a table {TABLE} that storlab did not create — the insert storm drops and recreates its table, so it leaves this one alone: rename or drop it yourself, or use another database",
                db.display()
            )));
        }
    }
    b.batch(schema).await.map_err(|e| DbError::sql("creating storlab_insert", e))?;
    Ok(true)
}

fn row(rng: &mut Rng) -> Vec<Value> {
    vec![
        Value::Text(format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64())),
        Value::Text(random_string(rng, 100, 255)),
        Value::Text(random_string(rng, 500, 1000)),
        Value::Real(rng.f64() * 1e6),
        Value::Text(now_text()),
    ]
}

struct Storm {
    b: Box<dyn Backend>,
    insert: Stmt,
    rng: Rng,
    left: u64,
    batch: u64,
    planned: u64,
}

pub async fn session(db: &Db, o: &InsertOptions, vu: u32, seed: u64) -> Result<Box<dyn Session>> {
    if o.commit_every == 0 || o.rows_per_vu == 0 {
        return Err(DbError::Input("--rows and --commit-every must be at least 1".into()));
    }
    let mut b = crate::connect::connect(db).await?;
    let sql = Sql::Text {
        postgres: "INSERT INTO storlab_insert VALUES ($1, $2, $3, $4, $5::text::timestamp)".into(),
        sqlite: "INSERT INTO storlab_insert VALUES (?1, ?2, ?3, ?4, ?5)".into(),
        mysql: "INSERT INTO storlab_insert (id, s, payload, d, ts) VALUES (?, ?, ?, ?, ?)".into(),
    };
    let insert = b.prepare(&sql).await.map_err(|e| DbError::sql("preparing the insert", e))?;
    Ok(Box::new(Storm {
        b,
        insert,
        rng: Rng::new(seed ^ (u64::from(vu) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)),
        left: o.rows_per_vu,
        batch: o.commit_every,
        planned: 0,
    }))
}

impl Session for Storm {
    fn plan(&mut self) -> Option<Plan> {
        if self.left == 0 {
            return None;
        }
        self.planned = self.left.min(self.batch);
        Some(Plan { kind: 0, key: Duration::ZERO, think: Duration::ZERO })
    }

    fn exec(&mut self) -> BoxFuture<'_, (Outcome, u64)> {
        Box::pin(async move {
            let n = self.planned;
            let steps = (0..n).map(|_| (self.insert, row(&mut self.rng))).collect();
            let out = self.b.transaction(Txn { begin: Begin::Write, commit: true, steps, pipelined: false }).await;
            if out == Outcome::Commit {
                self.left -= n;
                (out, n)
            } else {
                // A failed batch is retried with fresh keys, so M rows land in the end.
                (out, 0)
            }
        })
    }
}
