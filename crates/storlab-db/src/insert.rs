//! The insert storm, a common cloud-storage test: N virtual users each
//! insert M rows into one table, committing every K, while the database
//! maintains a primary key of random 32-hex-character keys and four secondary
//! indexes (the string, the double, the timestamp, and (reversed string,
//! key)). Random keys scatter every index insert over the whole index, which
//! is what makes it a storage test rather than an append.

use crate::driver::{BoxFuture, Db, Plan, Session};
use crate::error::{DbError, Result};
use crate::pg::batch;
use crate::tpcc::load::now_text;
use crate::{sqlite_io, wire, Outcome};
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

const PG_SCHEMA: &str = "DROP TABLE IF EXISTS storlab_insert; \
CREATE TABLE storlab_insert (id char(32) PRIMARY KEY, s varchar(255) NOT NULL, payload varchar(1000) NOT NULL, d double precision NOT NULL, ts timestamp NOT NULL); \
CREATE INDEX storlab_insert_s ON storlab_insert (s); \
CREATE INDEX storlab_insert_d ON storlab_insert (d); \
CREATE INDEX storlab_insert_ts ON storlab_insert (ts); \
CREATE INDEX storlab_insert_rev ON storlab_insert (reverse(s), id);";

const SQLITE_SCHEMA: &str = "DROP TABLE IF EXISTS storlab_insert; \
CREATE TABLE storlab_insert (id text PRIMARY KEY, s text NOT NULL, payload text NOT NULL, d real NOT NULL, ts text NOT NULL); \
CREATE INDEX storlab_insert_s ON storlab_insert (s); \
CREATE INDEX storlab_insert_d ON storlab_insert (d); \
CREATE INDEX storlab_insert_ts ON storlab_insert (ts); \
CREATE INDEX storlab_insert_rev ON storlab_insert (reverse(s), id);";

/// SQLite has no reverse(); an index on an expression needs a deterministic
/// function, registered on every connection that writes the table.
pub fn register_reverse(c: &rusqlite::Connection) -> Result<()> {
    use rusqlite::functions::FunctionFlags;
    c.create_scalar_function("reverse", 1, FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        let s: String = ctx.get(0)?;
        Ok(s.chars().rev().collect::<String>())
    })
    .map_err(|e| DbError::sql("registering reverse()", e))
}

/// (Re)creates the table: every storm starts from an empty table.
pub async fn prepare(db: &Db) -> Result<bool> {
    match db {
        Db::Postgres(t) => {
            let c = t.connect().await?;
            batch(&c, "creating storlab_insert", PG_SCHEMA).await?;
        }
        Db::Sqlite { path } => {
            let c = sqlite_io::open(path)?;
            register_reverse(&c)?;
            c.execute_batch(SQLITE_SCHEMA).map_err(|e| DbError::sql("creating storlab_insert", e))?;
        }
    }
    Ok(true)
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

struct Row {
    id: String,
    s: String,
    payload: String,
    d: f64,
    ts: String,
}

fn random_string(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let n = lo + rng.below(hi - lo + 1);
    (0..n).map(|_| ALNUM[rng.below(ALNUM.len() as u64) as usize] as char).collect()
}

fn row(rng: &mut Rng) -> Row {
    Row {
        id: format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64()),
        s: random_string(rng, 100, 255),
        payload: random_string(rng, 500, 1000),
        d: rng.f64() * 1e6,
        ts: now_text(),
    }
}

enum Conn {
    Pg(wire::Conn, wire::Stmt),
    Sqlite(Option<rusqlite::Connection>),
}

struct Storm {
    conn: Conn,
    rng: Rng,
    left: u64,
    batch: u64,
    planned: u64,
}

pub async fn session(db: &Db, o: &InsertOptions, vu: u32, seed: u64) -> Result<Box<dyn Session>> {
    if o.commit_every == 0 || o.rows_per_vu == 0 {
        return Err(DbError::Input("--rows and --commit-every must be at least 1".into()));
    }
    let conn = match db {
        Db::Postgres(t) => {
            let mut c = wire::Conn::connect(t).await?;
            let st = c
                .prepare("INSERT INTO storlab_insert VALUES ($1, $2, $3, $4, $5::text::timestamp)")
                .await
                .map_err(|e| DbError::sql("preparing the insert", e.message()))?;
            Conn::Pg(c, st)
        }
        Db::Sqlite { path } => {
            let p = path.clone();
            let c = tokio::task::spawn_blocking(move || {
                let c = sqlite_io::open(&p)?;
                register_reverse(&c)?;
                Ok::<_, DbError>(c)
            })
            .await
            .map_err(|e| DbError::sql("opening", e))??;
            Conn::Sqlite(Some(c))
        }
    };
    Ok(Box::new(Storm {
        conn,
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
            let rows: Vec<Row> = (0..n).map(|_| row(&mut self.rng)).collect();
            let out = match &mut self.conn {
                Conn::Pg(c, st) => {
                    let r = async {
                        c.simple("BEGIN").await?;
                        for r in &rows {
                            c.execute(st, |p| {
                                p.text(&r.id).text(&r.s).text(&r.payload).text(&r.d.to_string()).text(&r.ts);
                            })
                            .await?;
                        }
                        c.simple("COMMIT").await
                    }
                    .await;
                    match r {
                        Ok(_) => Outcome::Commit,
                        Err(e) if e.is_closed() => Outcome::Lost(e.message()),
                        Err(e) => {
                            let _ = c.simple("ROLLBACK").await;
                            Outcome::Error(e.message())
                        }
                    }
                }
                Conn::Sqlite(slot) => sqlite_io::on_pool(slot, move |c| {
                    sqlite_io::txn(c, Some("BEGIN IMMEDIATE"), true, |c| {
                        let mut st = c.prepare_cached("INSERT INTO storlab_insert VALUES (?1, ?2, ?3, ?4, ?5)")?;
                        for r in &rows {
                            st.execute(rusqlite::params![r.id, r.s, r.payload, r.d, r.ts])?;
                        }
                        Ok(true)
                    })
                })
                .await
                .unwrap_or_else(|e| Outcome::Lost(e.to_string())),
            };
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
