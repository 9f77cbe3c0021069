//! TPC-C on PostgreSQL: COPY loaders in parallel (one connection per slice
//! of warehouses, ITEM beside them), keys and indexes after the load, and the
//! five transactions as server-side functions called through prepared
//! statements — one round trip per transaction, as HammerDB does.

use super::load::{generate, Gen, RowSink, Table};
use crate::error::{DbError, Result};
use crate::pg::{batch, pg_message, Target};
use crate::Progress;
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use tokio_postgres::Client;

pub const SCHEMA: &str = include_str!("../../sql/pg_tpcc_schema.sql");
pub const FUNCTIONS: &str = include_str!("../../sql/pg_tpcc_functions.sql");

const TABLES: [&str; 9] = ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"];

/// COPY text rows into 1 MiB chunks.
struct CopyText {
    buf: BytesMut,
    chunks: Vec<Bytes>,
    first: bool,
}

impl CopyText {
    fn new() -> CopyText {
        CopyText { buf: BytesMut::with_capacity(1 << 20), chunks: vec![], first: true }
    }
    #[inline]
    fn sep(&mut self) {
        if !self.first {
            self.buf.put_u8(b'\t');
        }
        self.first = false;
    }
    fn finish(mut self) -> Vec<Bytes> {
        if !self.buf.is_empty() {
            self.chunks.push(self.buf.split().freeze());
        }
        self.chunks
    }
}

impl RowSink for CopyText {
    fn int(&mut self, v: i64) {
        self.sep();
        self.buf.put_slice(v.to_string().as_bytes());
    }
    fn dec(&mut self, v: i64, scale: u32) {
        self.sep();
        let p = 10i64.pow(scale);
        let sign = if v < 0 { "-" } else { "" };
        let a = v.abs();
        self.buf.put_slice(format!("{sign}{}.{:0w$}", a / p, a % p, w = scale as usize).as_bytes());
    }
    fn text(&mut self, s: &str) {
        self.sep();
        for b in s.bytes() {
            match b {
                b'\\' => self.buf.put_slice(b"\\\\"),
                b'\t' => self.buf.put_slice(b"\\t"),
                b'\n' => self.buf.put_slice(b"\\n"),
                _ => self.buf.put_u8(b),
            }
        }
    }
    fn null(&mut self) {
        self.sep();
        self.buf.put_slice(b"\\N");
    }
    fn end_row(&mut self) -> Result<()> {
        self.buf.put_u8(b'\n');
        self.first = true;
        if self.buf.len() >= 1 << 20 {
            let c = self.buf.split().freeze();
            self.chunks.push(c);
        }
        Ok(())
    }
}

async fn copy_table(c: &Client, table: Table, w: u32, seed: u64, now: &str) -> Result<()> {
    let now = now.to_string();
    let chunks = tokio::task::spawn_blocking(move || {
        let mut g = Gen::new(seed ^ (u64::from(w) << 8) ^ table as u64, now);
        let mut s = CopyText::new();
        generate(table, w, &mut g, &mut s).map(|_| s.finish())
    })
    .await
    .map_err(|e| DbError::sql("generating rows", e))??;
    let what = format!("loading {} (warehouse {w})", table.name());
    let sink = c.copy_in(&format!("COPY {} FROM STDIN", table.name())).await.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
    futures_util::pin_mut!(sink);
    for ch in chunks {
        sink.send(ch).await.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
    }
    sink.finish().await.map_err(|e| DbError::sql(&what, pg_message(&e)))?;
    Ok(())
}

/// A loader's connection, writing with COPY.
struct CopyLoader {
    c: Client,
    seed: u64,
    now: String,
}

impl super::load::Loader for CopyLoader {
    fn load(&mut self, table: Table, w: u32) -> crate::session::BoxFuture<'_, Result<()>> {
        Box::pin(copy_table(&self.c, table, w, self.seed, &self.now))
    }
}

/// What the database holds: nothing of ours, or a TPC-C schema of N warehouses.
pub async fn existing(c: &Client, db: &str) -> Result<Option<u32>> {
    let n: i64 = c
        .query_one("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)", &[&TABLES.to_vec()])
        .await
        .map_err(|e| DbError::sql("looking for a TPC-C schema", pg_message(&e)))?
        .get(0);
    match n {
        0 => Ok(None),
        9 => {
            let w: i64 = c.query_one("SELECT count(*) FROM warehouse", &[]).await.map_err(|e| DbError::sql("counting warehouses", pg_message(&e)))?.get(0);
            Ok(Some(w as u32))
        }
        k => Err(super::load::partial_schema(db, k)),
    }
}

/// Builds the schema of `warehouses` warehouses with `loaders` parallel
/// loaders, or reuses one of the same size. Returns whether it loaded.
pub async fn prepare(target: &Target, warehouses: u32, loaders: u32, seed: u64, progress: &Progress) -> Result<bool> {
    let c = target.connect().await?;
    match existing(&c, &target.display).await? {
        Some(w) if w == warehouses => {
            batch(&c, "installing the TPC-C functions", FUNCTIONS).await?;
            return Ok(false);
        }
        Some(w) => return Err(super::load::other_size(&target.display, w, warehouses)),
        None => {}
    }
    batch(&c, "creating the TPC-C tables", SCHEMA).await?;
    let (t, now) = (target.clone(), super::load::now_text());
    let loaded = super::load::load_parallel(warehouses, loaders, progress, move || {
        let (t, now) = (t.clone(), now.clone());
        Box::pin(async move { Ok(CopyLoader { c: t.connect().await?, seed, now }) })
    })
    .await;
    if let Err(e) = loaded {
        // Leave no half-built schema behind: it would block the next run.
        let _ = c.batch_execute(&format!("DROP TABLE IF EXISTS {}", TABLES.join(", "))).await;
        return Err(e);
    }
    batch(&c, "creating the TPC-C keys and indexes", &super::keys_sql(true)).await?;
    batch(&c, "installing the TPC-C functions", FUNCTIONS).await?;
    Ok(true)
}

