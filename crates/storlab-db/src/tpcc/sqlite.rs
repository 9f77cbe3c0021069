//! TPC-C on SQLite: client-side SQL (SQLite has no stored procedures), one
//! connection per virtual user in WAL mode. Write transactions take the
//! write lock up front (`BEGIN IMMEDIATE`) so two writers never deadlock on
//! a lock upgrade; readers never wait in WAL mode.

use super::load::{generate, Gen, RowSink, Table};
use super::load::now_text;
use super::DISTRICTS;
use crate::error::{DbError, Result};
use crate::session::Value as Param;
use crate::Progress;
use rusqlite::types::Value;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;
use std::sync::atomic::Ordering;

pub const SCHEMA: &str = include_str!("../../sql/sqlite_tpcc_schema.sql");

pub use crate::sqlite_io::open;

/// Rows into one prepared INSERT, committed every 10,000 rows (batches, so
/// ITEM is not one 100,000-row transaction).
struct Inserts<'c> {
    conn: &'c Connection,
    stmt: rusqlite::Statement<'c>,
    row: Vec<Value>,
    pending: usize,
}

impl RowSink for Inserts<'_> {
    fn int(&mut self, v: i64) {
        self.row.push(Value::Integer(v));
    }
    fn dec(&mut self, v: i64, scale: u32) {
        if scale == 0 {
            self.row.push(Value::Integer(v));
        } else {
            self.row.push(Value::Real(v as f64 / 10f64.powi(scale as i32)));
        }
    }
    fn text(&mut self, s: &str) {
        self.row.push(Value::Text(s.to_string()));
    }
    fn null(&mut self) {
        self.row.push(Value::Null);
    }
    fn end_row(&mut self) -> Result<()> {
        self.stmt.execute(rusqlite::params_from_iter(self.row.drain(..))).map_err(|e| DbError::sql("loading", e))?;
        self.pending += 1;
        if self.pending == 10_000 {
            self.conn.execute_batch("COMMIT; BEGIN").map_err(|e| DbError::sql("loading", e))?;
            self.pending = 0;
        }
        Ok(())
    }
}

fn load_table(c: &Connection, table: Table, w: u32, seed: u64, now: &str) -> Result<()> {
    let marks = vec!["?"; table.columns()].join(", ");
    let stmt = c.prepare(&format!("INSERT INTO {} VALUES ({marks})", table.name())).map_err(|e| DbError::sql("loading", e))?;
    let mut g = Gen::new(seed ^ (u64::from(w) << 8) ^ table as u64, now.to_string());
    c.execute_batch("BEGIN").map_err(|e| DbError::sql("loading", e))?;
    let mut s = Inserts { conn: c, stmt, row: Vec::with_capacity(21), pending: 0 };
    generate(table, w, &mut g, &mut s)?;
    c.execute_batch("COMMIT").map_err(|e| DbError::sql("loading", e))
}

/// What the file holds: nothing of ours, or a TPC-C schema of N warehouses.
pub fn existing(c: &Connection, path: &Path) -> Result<Option<u32>> {
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('warehouse','district','customer','history','new_order','orders','order_line','item','stock')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| DbError::sql(format!("reading {}", path.display()), e))?;
    match n {
        0 => Ok(None),
        9 => Ok(Some(c.query_row("SELECT count(*) FROM warehouse", [], |r| r.get::<_, i64>(0)).map_err(|e| DbError::sql("counting warehouses", e))? as u32)),
        k => Err(DbError::Schema(format!("{} holds {k} of the 9 TPC-C tables — remove the file or use another --dir", path.display()))),
    }
}

/// Builds the schema of `warehouses` warehouses, or reuses one of the same
/// size. SQLite takes one writer at a time, so one loader does it all.
pub fn prepare(path: &Path, warehouses: u32, seed: u64, progress: &Progress) -> Result<bool> {
    let c = open(path)?;
    match existing(&c, path)? {
        Some(w) if w == warehouses => return Ok(false),
        Some(w) => {
            return Err(DbError::Schema(format!(
                "{} already holds a TPC-C schema of {w} warehouse(s), not {warehouses} — use --warehouses {w}, or another --dir",
                path.display()
            )))
        }
        None => {}
    }
    c.execute_batch(SCHEMA).map_err(|e| DbError::sql("creating the TPC-C tables", e))?;
    let now = now_text();
    progress.total.store(1 + u64::from(warehouses) * Table::PER_WAREHOUSE.len() as u64, Ordering::Relaxed);
    let r = (|| {
        load_table(&c, Table::Item, 0, seed, &now)?;
        progress.done.fetch_add(1, Ordering::Relaxed);
        for w in 1..=warehouses {
            for t in Table::PER_WAREHOUSE {
                if progress.stop.load(Ordering::Relaxed) {
                    return Err(DbError::Input("interrupted while loading".into()));
                }
                load_table(&c, t, w, seed, &now)?;
                progress.done.fetch_add(1, Ordering::Relaxed);
            }
        }
        c.execute_batch(&super::keys_sql(false)).map_err(|e| DbError::sql("creating the TPC-C indexes", e))
    })();
    if let Err(e) = r {
        let _ = c.execute_batch("ROLLBACK");
        let _ = c.execute_batch(
            "DROP TABLE IF EXISTS warehouse; DROP TABLE IF EXISTS district; DROP TABLE IF EXISTS customer; DROP TABLE IF EXISTS history; DROP TABLE IF EXISTS new_order; DROP TABLE IF EXISTS orders; DROP TABLE IF EXISTS order_line; DROP TABLE IF EXISTS item; DROP TABLE IF EXISTS stock;",
        );
        return Err(e);
    }
    Ok(true)
}

/// The customer a by-name lookup selects: the one at position ceil(n/2) of
/// those with that last name, ordered by first name (clause 2.5.2.2).
fn customer_by_name(c: &Connection, w: i32, d: i32, last: &str) -> rusqlite::Result<Option<i32>> {
    let mut st = c.prepare_cached("SELECT c_id FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_last = ?3 ORDER BY c_first")?;
    let ids: Vec<i32> = st.query_map(params![w, d, last], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(if ids.is_empty() { None } else { Some(ids[(ids.len() + 1) / 2 - 1]) })
}

fn new_order(c: &Connection, w: i32, d: i32, cid: i32, items: &[i32], supply: &[i32], qty: &[i32], now: &str) -> rusqlite::Result<bool> {
    let w_tax: f64 = c.prepare_cached("SELECT w_tax FROM warehouse WHERE w_id = ?1")?.query_row(params![w], |r| r.get(0))?;
    let (d_tax, o_id): (f64, i64) = c
        .prepare_cached("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ?1 AND d_id = ?2 RETURNING d_tax, d_next_o_id - 1")?
        .query_row(params![w, d], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let disc: f64 = c
        .prepare_cached("SELECT c_discount FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
        .query_row(params![w, d, cid], |r| r.get(0))?;
    let all_local = supply.iter().all(|s| *s == w);
    c.prepare_cached("INSERT INTO orders VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7)")?.execute(params![o_id, d, w, cid, now, items.len() as i64, all_local as i64])?;
    c.prepare_cached("INSERT INTO new_order VALUES (?1, ?2, ?3)")?.execute(params![o_id, d, w])?;
    let dist_col = format!("s_dist_{d:02}");
    let mut total = 0.0;
    for (n, ((&i, &sw), &q)) in items.iter().zip(supply).zip(qty).enumerate() {
        let price: Option<f64> = c.prepare_cached("SELECT i_price FROM item WHERE i_id = ?1")?.query_row(params![i], |r| r.get(0)).optional()?;
        let Some(price) = price else {
            return Ok(false); // the unused item: roll back (clause 2.4.2.3)
        };
        let (s_q, dist): (i64, String) = c
            .prepare_cached(&format!("SELECT s_quantity, {dist_col} FROM stock WHERE s_w_id = ?1 AND s_i_id = ?2"))?
            .query_row(params![sw, i], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let q = i64::from(q);
        let new_q = if s_q >= q + 10 { s_q - q } else { s_q - q + 91 };
        c.prepare_cached("UPDATE stock SET s_quantity = ?1, s_ytd = s_ytd + ?2, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ?3 WHERE s_w_id = ?4 AND s_i_id = ?5")?
            .execute(params![new_q, q, (sw != w) as i64, sw, i])?;
        let amount = q as f64 * price;
        total += amount;
        c.prepare_cached("INSERT INTO order_line VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7, ?8, ?9)")?
            .execute(params![o_id, d, w, n as i64 + 1, i, sw, q, amount, dist])?;
    }
    let _ = total * (1.0 - disc) * (1.0 + w_tax + d_tax);
    Ok(true)
}

#[allow(clippy::too_many_arguments)]
fn payment(c: &Connection, w: i32, d: i32, cw: i32, cd: i32, cid: i32, last: &str, by_name: bool, cents: i64, now: &str) -> rusqlite::Result<()> {
    let cid = if by_name {
        match customer_by_name(c, cw, cd, last)? {
            Some(id) => id,
            None => return Ok(()),
        }
    } else {
        cid
    };
    let amount = cents as f64 / 100.0;
    let w_name: String = c
        .prepare_cached("UPDATE warehouse SET w_ytd = w_ytd + ?1 WHERE w_id = ?2 RETURNING w_name")?
        .query_row(params![amount, w], |r| r.get(0))?;
    let d_name: String = c
        .prepare_cached("UPDATE district SET d_ytd = d_ytd + ?1 WHERE d_w_id = ?2 AND d_id = ?3 RETURNING d_name")?
        .query_row(params![amount, w, d], |r| r.get(0))?;
    let credit: String = c
        .prepare_cached("SELECT c_credit FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
        .query_row(params![cw, cd, cid], |r| r.get(0))?;
    if credit == "BC" {
        let note = format!("{cid} {cd} {cw} {d} {w} {amount:.2} |");
        c.prepare_cached("UPDATE customer SET c_balance = c_balance - ?1, c_ytd_payment = c_ytd_payment + ?1, c_payment_cnt = c_payment_cnt + 1, c_data = substr(?2 || c_data, 1, 500) WHERE c_w_id = ?3 AND c_d_id = ?4 AND c_id = ?5")?
            .execute(params![amount, note, cw, cd, cid])?;
    } else {
        c.prepare_cached("UPDATE customer SET c_balance = c_balance - ?1, c_ytd_payment = c_ytd_payment + ?1, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ?2 AND c_d_id = ?3 AND c_id = ?4")?
            .execute(params![amount, cw, cd, cid])?;
    }
    c.prepare_cached("INSERT INTO history VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?.execute(params![cid, cd, cw, d, w, now, amount, format!("{w_name}    {d_name}")])?;
    Ok(())
}

fn order_status(c: &Connection, w: i32, d: i32, cid: i32, last: &str, by_name: bool) -> rusqlite::Result<()> {
    let cid = if by_name {
        match customer_by_name(c, w, d, last)? {
            Some(id) => id,
            None => return Ok(()),
        }
    } else {
        cid
    };
    let _bal: f64 = c
        .prepare_cached("SELECT c_balance FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3")?
        .query_row(params![w, d, cid], |r| r.get(0))?;
    let o: Option<i64> = c
        .prepare_cached("SELECT o_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_c_id = ?3 ORDER BY o_id DESC LIMIT 1")?
        .query_row(params![w, d, cid], |r| r.get(0))
        .optional()?;
    if let Some(o) = o {
        let mut st = c.prepare_cached("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3")?;
        let mut rows = st.query(params![w, d, o])?;
        while rows.next()?.is_some() {}
    }
    Ok(())
}

fn delivery(c: &Connection, w: i32, carrier: i32, now: &str) -> rusqlite::Result<()> {
    for d in 1..=DISTRICTS as i32 {
        let o: Option<i64> = c
            .prepare_cached("SELECT min(no_o_id) FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2")?
            .query_row(params![w, d], |r| r.get(0))?;
        let Some(o) = o else { continue };
        c.prepare_cached("DELETE FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2 AND no_o_id = ?3")?.execute(params![w, d, o])?;
        let cid: i64 = c
            .prepare_cached("UPDATE orders SET o_carrier_id = ?1 WHERE o_w_id = ?2 AND o_d_id = ?3 AND o_id = ?4 RETURNING o_c_id")?
            .query_row(params![carrier, w, d, o], |r| r.get(0))?;
        c.prepare_cached("UPDATE order_line SET ol_delivery_d = ?1 WHERE ol_w_id = ?2 AND ol_d_id = ?3 AND ol_o_id = ?4")?.execute(params![now, w, d, o])?;
        let sum: f64 = c
            .prepare_cached("SELECT coalesce(sum(ol_amount), 0) FROM order_line WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3")?
            .query_row(params![w, d, o], |r| r.get(0))?;
        c.prepare_cached("UPDATE customer SET c_balance = c_balance + ?1, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ?2 AND c_d_id = ?3 AND c_id = ?4")?
            .execute(params![sum, w, d, cid])?;
    }
    Ok(())
}

fn stock_level(c: &Connection, w: i32, d: i32, threshold: i32) -> rusqlite::Result<()> {
    let next: i64 = c.prepare_cached("SELECT d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2")?.query_row(params![w, d], |r| r.get(0))?;
    let _low: i64 = c
        .prepare_cached(
            "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id \
             WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id >= ?3 - 20 AND ol_o_id < ?3 AND s_quantity < ?4",
        )?
        .query_row(params![w, d, next, threshold], |r| r.get(0))?;
    Ok(())
}

/// The five transactions as the SQLite bodies of `backend::Sql::Routine`,
/// their parameters in the order of the PostgreSQL functions' arguments
/// (`tpcc::Input::into_values`).
pub fn new_order_routine(c: &Connection, v: &[Param]) -> rusqlite::Result<bool> {
    let i = |k: usize| v[k].int() as i32;
    new_order(c, i(0), i(1), i(2), v[3].ints(), v[4].ints(), v[5].ints(), &now_text())
}

pub fn payment_routine(c: &Connection, v: &[Param]) -> rusqlite::Result<bool> {
    let i = |k: usize| v[k].int() as i32;
    payment(c, i(0), i(1), i(2), i(3), i(4), v[5].text(), v[6].bool(), v[7].int(), &now_text()).map(|_| true)
}

pub fn order_status_routine(c: &Connection, v: &[Param]) -> rusqlite::Result<bool> {
    let i = |k: usize| v[k].int() as i32;
    order_status(c, i(0), i(1), i(2), v[3].text(), v[4].bool()).map(|_| true)
}

pub fn delivery_routine(c: &Connection, v: &[Param]) -> rusqlite::Result<bool> {
    delivery(c, v[0].int() as i32, v[1].int() as i32, &now_text()).map(|_| true)
}

pub fn stock_level_routine(c: &Connection, v: &[Param]) -> rusqlite::Result<bool> {
    stock_level(c, v[0].int() as i32, v[1].int() as i32, v[2].int() as i32).map(|_| true)
}
