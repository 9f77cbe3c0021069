//! User-defined workloads (`--workload FILE.toml`): schema SQL, a load step,
//! and weighted transactions of SQL statements whose `:name` parameters are
//! drawn from generators (uniform integer, NURand, uuid, random string,
//! timestamp, sequence) once per transaction, as pgbench's `\set` does.
//! Statements are prepared once per connection; a commit closes every
//! `commit_every` transactions. The format is in docs/db.md.

use crate::driver::{BoxFuture, Db, Plan, Session};
use crate::error::{DbError, Result};
use crate::pg::{pg_message, Target};
use crate::tpcc::{load::now_text, nurand};
use crate::{sqlite_io, wire, Outcome, Progress};
use bytes::BytesMut;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use storlab_stats::Rng;
use tokio_postgres::types::{Format, IsNull, ToSql, Type};

/// A bound of a generator: a number, or `N * scale`.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub value: i64,
    pub times_scale: bool,
}

impl Bound {
    fn at(self, scale: i64) -> i64 {
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
    /// Shared by every virtual user: each draw takes the next value.
    Sequence(i64, Arc<AtomicI64>),
}

#[derive(Debug, Clone)]
pub enum Value {
    Int(i64),
    Text(String),
}

impl Gen {
    fn draw(&self, rng: &mut Rng, scale: i64) -> Value {
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
            Gen::String(lo, hi) => {
                const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                let n = lo + rng.below((hi - lo + 1) as u64) as i64;
                Value::Text((0..n).map(|_| ALNUM[rng.below(62) as usize] as char).collect())
            }
            Gen::Timestamp => Value::Text(now_text()),
            Gen::Sequence(start, next) => Value::Int(start + next.fetch_add(1, Ordering::Relaxed)),
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
}

/// Splits `:name` parameters out of SQL, leaving `::type` casts and quoted
/// text alone.
fn parse_stmt(sql: &str) -> Stmt {
    let b = sql.as_bytes();
    let (mut pg, mut lite, mut names) = (String::new(), String::new(), Vec::<String>::new());
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let ch = b[i];
        if let Some(q) = quote {
            if ch == q {
                quote = None;
            }
        } else if ch == b'\'' || ch == b'"' {
            quote = Some(ch);
        } else if ch == b':' && i + 1 < b.len() && b[i + 1] == b':' {
            pg.push_str("::");
            lite.push_str("::");
            i += 2;
            continue;
        } else if ch == b':' && i + 1 < b.len() && (b[i + 1].is_ascii_alphabetic() || b[i + 1] == b'_') {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let name = &sql[i + 1..j];
            let pos = match names.iter().position(|n| n == name) {
                Some(p) => p + 1,
                None => {
                    names.push(name.to_string());
                    names.len()
                }
            };
            pg.push_str(&format!("${pos}"));
            lite.push_str(&format!("?{pos}"));
            i = j;
            continue;
        }
        pg.push(ch as char);
        lite.push(ch as char);
        i += 1;
    }
    Stmt { sql: sql.to_string(), params: names, pg_sql: pg, sqlite_sql: lite }
}

fn err(file: &str, at: &str, msg: impl std::fmt::Display) -> DbError {
    DbError::Input(format!("{file}: {at}: {msg}"))
}

fn parse_bound(file: &str, at: &str, v: &toml::Value) -> Result<Bound> {
    match v {
        toml::Value::Integer(i) => Ok(Bound { value: *i, times_scale: false }),
        toml::Value::String(s) => {
            let t: String = s.split_whitespace().collect();
            let parsed = if t == "scale" {
                Some(1)
            } else if let Some(n) = t.strip_suffix("*scale") {
                n.parse().ok()
            } else if let Some(n) = t.strip_prefix("scale*") {
                n.parse().ok()
            } else {
                None
            };
            parsed.map(|value| Bound { value, times_scale: true }).ok_or_else(|| err(file, at, format!("'{s}' is not a bound — use an integer, \"scale\" or \"N * scale\"")))
        }
        other => Err(err(file, at, format!("expected an integer or \"N * scale\", got {}", other.type_str()))),
    }
}

/// The parameter generators, the workload file's fields, and those of its
/// `[[load]]` and `[[transaction]]` entries (docs/db.md lists each).
pub const GENERATORS: [&str; 6] = ["uniform", "nurand", "uuid", "string", "timestamp", "sequence"];
pub const FIELDS: [&str; 10] = ["name", "description", "scale", "tables", "schema", "load", "after_load", "params", "transaction", "commit_every"];
pub const LOAD_FIELDS: [&str; 3] = ["sql", "rows", "params"];
pub const TRANSACTION_FIELDS: [&str; 3] = ["name", "weight", "statements"];

fn parse_gen(file: &str, at: &str, v: &toml::Value) -> Result<Gen> {
    let t = v.as_table().ok_or_else(|| err(file, at, "expected a generator such as { uniform = [1, \"100000 * scale\"] }"))?;
    if t.len() != 1 {
        return Err(err(file, at, format!("give exactly one generator of {}", GENERATORS.join(", "))));
    }
    let (k, v) = t.iter().next().expect("one entry");
    let arr = |n: usize| -> Result<Vec<toml::Value>> {
        match v.as_array() {
            Some(a) if a.len() == n => Ok(a.clone()),
            _ => Err(err(file, &format!("{at}.{k}"), format!("expected a list of {n} values"))),
        }
    };
    let at_k = format!("{at}.{k}");
    let g = match k.as_str() {
        "uniform" => {
            let a = arr(2)?;
            let (lo, hi) = (parse_bound(file, &at_k, &a[0])?, parse_bound(file, &at_k, &a[1])?);
            Gen::Uniform(lo, hi)
        }
        "nurand" => {
            let a = arr(3)?;
            let aa = a[0].as_integer().filter(|x| *x > 0).ok_or_else(|| err(file, &at_k, "A must be a positive integer (255, 1023 or 8191 in TPC-C)"))?;
            Gen::NURand { a: aa, x: parse_bound(file, &at_k, &a[1])?, y: parse_bound(file, &at_k, &a[2])? }
        }
        "uuid" => Gen::Uuid,
        "timestamp" => Gen::Timestamp,
        "string" => {
            let a = arr(2)?;
            let lo = a[0].as_integer().filter(|x| *x >= 0);
            let hi = a[1].as_integer();
            match (lo, hi) {
                (Some(lo), Some(hi)) if hi >= lo => Gen::String(lo, hi),
                _ => return Err(err(file, &at_k, "expected [min_length, max_length] with 0 <= min <= max")),
            }
        }
        "sequence" => Gen::Sequence(v.as_integer().ok_or_else(|| err(file, &at_k, "expected the first value, an integer"))?, Arc::new(AtomicI64::new(0))),
        other => {
            let near = GENERATORS.iter().min_by_key(|g| strsim::levenshtein(g, other)).expect("generators");
            return Err(err(file, at, format!("unknown generator '{other}' — did you mean '{near}'?")));
        }
    };
    Ok(g)
}

fn strings(file: &str, at: &str, v: Option<&toml::Value>) -> Result<Vec<String>> {
    match v {
        None => Ok(vec![]),
        Some(toml::Value::String(s)) => Ok(vec![s.clone()]),
        Some(toml::Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_string).ok_or_else(|| err(file, at, "expected SQL text"))).collect(),
        Some(_) => Err(err(file, at, "expected SQL text or a list of it")),
    }
}

fn check_keys(file: &str, at: &str, t: &toml::Table, allowed: &[&str]) -> Result<()> {
    for k in t.keys() {
        if !allowed.contains(&k.as_str()) {
            let near = allowed.iter().min_by_key(|a| strsim::levenshtein(a, k)).expect("keys");
            return Err(err(file, at, format!("unknown field '{k}' — did you mean '{near}'?")));
        }
    }
    Ok(())
}

fn check_params(file: &str, at: &str, stmt: &Stmt, known: &BTreeMap<String, Gen>) -> Result<()> {
    for p in &stmt.params {
        if !known.contains_key(p) {
            let near = known.keys().min_by_key(|k| strsim::levenshtein(k, p));
            let hint = near.map(|n| format!(" — did you mean ':{n}'?")).unwrap_or_else(|| " — define it under [params]".into());
            return Err(err(file, at, format!("unknown parameter ':{p}'{hint}")));
        }
    }
    Ok(())
}

impl Workload {
    /// Parses a workload file; `file` names it in every error.
    pub fn parse(file: &str, text: &str) -> Result<Workload> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map(|s| text[..s.start].lines().count().max(1));
            DbError::Input(format!("{file}{}: {}", line.map(|l| format!(":{l}")).unwrap_or_default(), crate::error::one_line(e.message())))
        })?;
        check_keys(file, "top level", &doc, &FIELDS)?;
        let name = doc.get("name").and_then(|v| v.as_str()).ok_or_else(|| err(file, "top level", "missing field 'name'"))?.to_string();
        let scale = match doc.get("scale") {
            None => 1,
            Some(v) => v.as_integer().filter(|s| *s >= 1).ok_or_else(|| err(file, "scale", "expected an integer >= 1"))?,
        };
        let tables = strings(file, "tables", doc.get("tables"))?;
        if tables.is_empty() {
            return Err(err(file, "tables", "list the tables the schema creates, e.g. tables = [\"accounts\"], so a loaded database can be recognised and reused"));
        }
        let schema = strings(file, "schema", doc.get("schema"))?;
        let after_load = strings(file, "after_load", doc.get("after_load"))?;
        let mut params = BTreeMap::new();
        if let Some(p) = doc.get("params") {
            let t = p.as_table().ok_or_else(|| err(file, "params", "expected a table of name = { generator = ... }"))?;
            for (k, v) in t {
                params.insert(k.clone(), parse_gen(file, &format!("params.{k}"), v)?);
            }
        }
        let mut load = vec![];
        for (i, l) in doc.get("load").and_then(|v| v.as_array()).cloned().unwrap_or_default().iter().enumerate() {
            let at = format!("load[{i}]");
            let t = l.as_table().ok_or_else(|| err(file, &at, "expected a table with sql and rows"))?;
            check_keys(file, &at, t, &LOAD_FIELDS)?;
            let sql = t.get("sql").and_then(|v| v.as_str()).ok_or_else(|| err(file, &at, "missing field 'sql'"))?;
            let rows = parse_bound(file, &format!("{at}.rows"), t.get("rows").ok_or_else(|| err(file, &at, "missing field 'rows'"))?)?;
            let mut lp = params.clone();
            if let Some(p) = t.get("params").and_then(|v| v.as_table()) {
                for (k, v) in p {
                    lp.insert(k.clone(), parse_gen(file, &format!("{at}.params.{k}"), v)?);
                }
            }
            let stmt = parse_stmt(sql);
            check_params(file, &at, &stmt, &lp)?;
            load.push(LoadStep { stmt, rows, params: lp });
        }
        let mut transactions = vec![];
        for (i, tv) in doc.get("transaction").and_then(|v| v.as_array()).cloned().unwrap_or_default().iter().enumerate() {
            let t = tv.as_table().ok_or_else(|| err(file, &format!("transaction[{i}]"), "expected a table"))?;
            let tname = t.get("name").and_then(|v| v.as_str()).map(str::to_string).unwrap_or_else(|| format!("transaction{}", i + 1));
            let at = format!("transaction '{tname}'");
            check_keys(file, &at, t, &TRANSACTION_FIELDS)?;
            let weight = match t.get("weight") {
                None => 1,
                Some(v) => v.as_integer().filter(|w| (1..=1_000_000).contains(w)).ok_or_else(|| err(file, &format!("{at}.weight"), "expected an integer 1..1000000"))? as u32,
            };
            let stmts = strings(file, &format!("{at}.statements"), t.get("statements"))?;
            if stmts.is_empty() {
                return Err(err(file, &at, "missing field 'statements' (a list of SQL statements)"));
            }
            let mut statements = vec![];
            for (k, s) in stmts.iter().enumerate() {
                let st = parse_stmt(s);
                check_params(file, &format!("{at}, statement {}", k + 1), &st, &params)?;
                statements.push(st);
            }
            transactions.push(Transaction { name: tname, weight, statements });
        }
        if transactions.is_empty() {
            return Err(err(file, "top level", "no [[transaction]] — define at least one with name, weight and statements"));
        }
        let commit_every = match doc.get("commit_every") {
            None => 1,
            Some(v) => v.as_integer().filter(|c| *c >= 1).ok_or_else(|| err(file, "commit_every", "expected an integer >= 1"))? as u32,
        };
        Ok(Workload { name, file: file.to_string(), scale, tables, schema, load, after_load, params, transactions, commit_every })
    }
}

/// A parameter sent as text: the server parses it as whatever type it
/// inferred for the placeholder, so one generator serves any column type.
#[derive(Debug)]
struct TextParam(String);

impl ToSql for TextParam {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }
    tokio_postgres::types::to_sql_checked!();
}

fn text_of(v: &Value) -> TextParam {
    match v {
        Value::Int(i) => TextParam(i.to_string()),
        Value::Text(s) => TextParam(s.clone()),
    }
}

fn sqlite_value(v: &Value) -> rusqlite::types::Value {
    match v {
        Value::Int(i) => rusqlite::types::Value::Integer(*i),
        Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
    }
}

fn draw_all(names: &[String], gens: &BTreeMap<String, Gen>, rng: &mut Rng, scale: i64, into: &mut BTreeMap<String, Value>) {
    for n in names {
        if !into.contains_key(n) {
            into.insert(n.clone(), gens[n].draw(rng, scale));
        }
    }
}

async fn pg_tables_present(c: &tokio_postgres::Client, tables: &[String]) -> Result<usize> {
    let n: i64 = c
        .query_one("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)", &[&tables])
        .await
        .map_err(|e| DbError::sql("looking for the workload's tables", pg_message(&e)))?
        .get(0);
    Ok(n as usize)
}

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

/// Creates and loads the schema unless every table of the workload exists.
pub async fn prepare(db: &Db, w: &Workload, seed: u64, progress: &Progress) -> Result<bool> {
    let mut rng = Rng::new(seed ^ 0x10AD);
    match db {
        Db::Postgres(t) => prepare_pg(t, w, &mut rng, progress).await,
        Db::Sqlite { path } => {
            let (p, w, pr) = (path.clone(), w.clone(), progress.clone());
            tokio::task::spawn_blocking(move || prepare_sqlite(&p, &w, &mut rng, &pr)).await.map_err(|e| DbError::sql("loader", e))?
        }
    }
}

async fn prepare_pg(t: &Target, w: &Workload, rng: &mut Rng, progress: &Progress) -> Result<bool> {
    let c = t.connect().await?;
    if !decide(pg_tables_present(&c, &w.tables).await?, w, &t.display)? {
        return Ok(false);
    }
    for (i, s) in w.schema.iter().enumerate() {
        c.batch_execute(s).await.map_err(|e| DbError::sql(format!("{}: schema[{i}]", w.file), pg_message(&e)))?;
    }
    progress.total.store(w.load.len() as u64, Ordering::Relaxed);
    for (i, l) in w.load.iter().enumerate() {
        let what = format!("{}: load[{i}]", w.file);
        let st = c.prepare(&l.stmt.pg_sql).await.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
        let rows = l.rows.at(w.scale);
        let mut done = 0;
        while done < rows {
            if progress.stop.load(Ordering::Relaxed) {
                return Err(DbError::Input("interrupted while loading".into()));
            }
            // 10,000 rows per transaction, pipelined: tokio-postgres sends
            // the queued executes without waiting for each reply.
            let n = (rows - done).min(10_000);
            let mut batch = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let mut vals = BTreeMap::new();
                draw_all(&l.stmt.params, &l.params, rng, w.scale, &mut vals);
                batch.push(l.stmt.params.iter().map(|p| text_of(&vals[p])).collect::<Vec<_>>());
            }
            c.batch_execute("BEGIN").await.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
            let futs = batch.iter().map(|ps| {
                let refs: Vec<&(dyn ToSql + Sync)> = ps.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let st = st.clone();
                let c = &c;
                async move { c.execute(&st, &refs).await }
            });
            for r in futures_util::future::join_all(futs).await {
                r.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
            }
            c.batch_execute("COMMIT").await.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
            done += n;
        }
        progress.done.fetch_add(1, Ordering::Relaxed);
    }
    for (i, s) in w.after_load.iter().enumerate() {
        c.batch_execute(s).await.map_err(|e| DbError::sql(format!("{}: after_load[{i}]", w.file), pg_message(&e)))?;
    }
    Ok(true)
}

fn prepare_sqlite(path: &std::path::Path, w: &Workload, rng: &mut Rng, progress: &Progress) -> Result<bool> {
    let c = sqlite_io::open(path)?;
    let q = format!("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ({})", w.tables.iter().map(|t| format!("'{}'", t.replace('\'', "''"))).collect::<Vec<_>>().join(","));
    let present: i64 = c.query_row(&q, [], |r| r.get(0)).map_err(|e| DbError::sql("looking for the workload's tables", e))?;
    if !decide(present as usize, w, &path.display().to_string())? {
        return Ok(false);
    }
    for (i, s) in w.schema.iter().enumerate() {
        c.execute_batch(s).map_err(|e| DbError::sql(format!("{}: schema[{i}]", w.file), e))?;
    }
    progress.total.store(w.load.len() as u64, Ordering::Relaxed);
    for (i, l) in w.load.iter().enumerate() {
        let what = format!("{}: load[{i}]", w.file);
        let mut st = c.prepare(&l.stmt.sqlite_sql).map_err(|e| DbError::sql(&what, e))?;
        c.execute_batch("BEGIN").map_err(|e| DbError::sql(&what, e))?;
        for k in 0..l.rows.at(w.scale) {
            let mut vals = BTreeMap::new();
            draw_all(&l.stmt.params, &l.params, rng, w.scale, &mut vals);
            st.execute(rusqlite::params_from_iter(l.stmt.params.iter().map(|p| sqlite_value(&vals[p])))).map_err(|e| DbError::sql(&what, e))?;
            if k % 10_000 == 9_999 {
                c.execute_batch("COMMIT; BEGIN").map_err(|e| DbError::sql(&what, e))?;
            }
        }
        c.execute_batch("COMMIT").map_err(|e| DbError::sql(&what, e))?;
        progress.done.fetch_add(1, Ordering::Relaxed);
    }
    for (i, s) in w.after_load.iter().enumerate() {
        c.execute_batch(s).map_err(|e| DbError::sql(format!("{}: after_load[{i}]", w.file), e))?;
    }
    Ok(true)
}

/// A PostgreSQL user's connection: each transaction's statements, and
/// BEGIN and COMMIT, prepared once (as pgbench's `-M prepared` does).
struct PgConn {
    c: wire::Conn,
    statements: Vec<Vec<wire::Stmt>>,
    begin: wire::Stmt,
    commit: wire::Stmt,
}

enum Conn {
    Pg(PgConn),
    Sqlite(Option<rusqlite::Connection>),
}

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
    plans: Arc<Vec<TxPlan>>,
    conn: Conn,
    rng: Rng,
    total_weight: u64,
    planned: usize,
    /// Transactions since the last commit; 0 = no transaction open.
    open: u32,
}

pub async fn session(db: &Db, w: &Workload, vu: u32, seed: u64) -> Result<Box<dyn Session>> {
    let conn = match db {
        Db::Postgres(t) => {
            let mut c = wire::Conn::connect(t).await?;
            let mut all = vec![];
            for tx in &w.transactions {
                let mut v = vec![];
                for (k, s) in tx.statements.iter().enumerate() {
                    v.push(c.prepare(&s.pg_sql).await.map_err(|e| DbError::sql(format!("{}: transaction '{}', statement {}", w.file, tx.name, k + 1), e.message()))?);
                }
                all.push(v);
            }
            let begin = c.prepare("BEGIN").await.map_err(|e| DbError::sql("preparing BEGIN", e.message()))?;
            let commit = c.prepare("COMMIT").await.map_err(|e| DbError::sql("preparing COMMIT", e.message()))?;
            Conn::Pg(PgConn { c, statements: all, begin, commit })
        }
        Db::Sqlite { path } => {
            let p = path.clone();
            let c = tokio::task::spawn_blocking(move || sqlite_io::open(&p)).await.map_err(|e| DbError::sql("opening", e))??;
            for tx in &w.transactions {
                for (k, s) in tx.statements.iter().enumerate() {
                    c.prepare_cached(&s.sqlite_sql).map_err(|e| DbError::sql(format!("{}: transaction '{}', statement {}", w.file, tx.name, k + 1), e))?;
                }
            }
            Conn::Sqlite(Some(c))
        }
    };
    Ok(Box::new(Custom {
        total_weight: w.transactions.iter().map(|t| u64::from(t.weight)).sum(),
        plans: Arc::new(w.transactions.iter().map(|t| TxPlan::new(w, t)).collect()),
        w: Arc::new(w.clone()),
        conn,
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
            let (w, plans) = (self.w.clone(), self.plans.clone());
            let ti = self.planned;
            let plan = &plans[ti];
            let vals: Vec<Value> = plan.gens.iter().map(|g| g.draw(&mut self.rng, w.scale)).collect();
            let begin = self.open == 0;
            self.open += 1;
            let commit = self.open >= w.commit_every;
            if commit {
                self.open = 0;
            }
            match &mut self.conn {
                Conn::Pg(pg) => {
                    let r = async {
                        if begin {
                            pg.c.execute(&pg.begin, |_| {}).await?;
                        }
                        for (st, slots) in pg.statements[ti].iter().zip(&plan.slots) {
                            pg.c.execute(st, |p| {
                                for i in slots {
                                    match &vals[*i] {
                                        Value::Int(v) => p.int(*v),
                                        Value::Text(v) => p.text(v),
                                    };
                                }
                            })
                            .await?;
                        }
                        if commit {
                            pg.c.execute(&pg.commit, |_| {}).await?;
                        }
                        Ok::<_, wire::WireError>(())
                    }
                    .await;
                    match r {
                        Ok(()) => (Outcome::Commit, 1),
                        Err(e) if e.is_closed() => (Outcome::Lost(e.message()), 0),
                        Err(e) => {
                            let _ = pg.c.simple("ROLLBACK").await;
                            self.open = 0;
                            (Outcome::Error(e.message()), 0)
                        }
                    }
                }
                Conn::Sqlite(slot) => {
                    let out = sqlite_io::on_pool(slot, move |c| {
                        let (tx, plan) = (&w.transactions[ti], &plans[ti]);
                        sqlite_io::txn(c, begin.then_some("BEGIN IMMEDIATE"), commit, |c| {
                            for (s, slots) in tx.statements.iter().zip(&plan.slots) {
                                let mut st = c.prepare_cached(&s.sqlite_sql)?;
                                let mut rows = st.query(rusqlite::params_from_iter(slots.iter().map(|i| sqlite_value(&vals[*i]))))?;
                                while rows.next()?.is_some() {}
                            }
                            Ok(true)
                        })
                    })
                    .await
                    .unwrap_or_else(|e| Outcome::Lost(e.to_string()));
                    if out != Outcome::Commit {
                        self.open = 0;
                    }
                    let n = u64::from(out == Outcome::Commit);
                    (out, n)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_parameters_become_positional_and_casts_survive() {
        let s = parse_stmt("UPDATE a SET x = x + :delta WHERE id = :aid AND t = ':no' AND y = :delta::int");
        assert_eq!(s.params, vec!["delta", "aid"]);
        assert_eq!(s.pg_sql, "UPDATE a SET x = x + $1 WHERE id = $2 AND t = ':no' AND y = $1::int");
        assert_eq!(s.sqlite_sql, "UPDATE a SET x = x + ?1 WHERE id = ?2 AND t = ':no' AND y = ?1::int");
    }

    #[test]
    fn bounds_scale() {
        let b = parse_bound("f", "x", &toml::Value::String("100000 * scale".into())).unwrap();
        assert_eq!(b.at(3), 300_000);
        assert!(parse_bound("f", "x", &toml::Value::String("lots".into())).is_err());
    }

    #[test]
    fn uuid_is_version_4() {
        let mut rng = Rng::new(1);
        let Value::Text(u) = Gen::Uuid.draw(&mut rng, 1) else { panic!() };
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!("89ab".contains(&u[19..20]), "{u}");
    }

    #[test]
    fn unknown_parameter_is_named_with_the_nearest() {
        let text = "name = \"x\"\ntables = [\"t\"]\n[params]\naid = { uniform = [1, 10] }\n[[transaction]]\nname = \"t1\"\nstatements = [\"SELECT :aidx\"]\n";
        let e = Workload::parse("w.toml", text).unwrap_err().to_string();
        assert!(e.contains("w.toml") && e.contains("transaction 't1', statement 1") && e.contains("did you mean ':aid'"), "{e}");
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let e = Workload::parse("w.toml", "name = \"x\"\ntables = [\n").unwrap_err().to_string();
        assert!(e.starts_with("w.toml:"), "{e}");
    }
}
