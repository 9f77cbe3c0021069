//! A TPC-C virtual user, written once for both databases: the terminal
//! draws the transaction and its inputs, and the backend runs it as a
//! routine — PostgreSQL's server-side function through one prepared
//! `SELECT fn(…)`, SQLite's client-side SQL in a transaction.

use super::{sqlite, Input, Kind, Terminal, TpccOptions};
use crate::backend::{Backend, Begin, Dialect, Sql, Stmt, Txn};
use std::io::Write;
use crate::error::{DbError, Result};
use crate::session::{BoxFuture, Db, Outcome, Plan, Session, Value};
use std::time::Duration;

/// What the PostgreSQL functions raise for New-Order's unused item
/// (sql/pg_tpcc_functions.sql): an intended rollback.
pub const UNUSED_ITEM: &str = "storlab-tpcc: unused item";

/// The five transactions in `Kind::ALL` order.
pub fn routines() -> [Sql; 5] {
    [
        Sql::Routine {
            postgres: "SELECT r_o_id, r_total FROM neword($1, $2, $3, $4, $5, $6)",
            sqlite: sqlite::new_order_routine,
            mysql: "CALL NEWORD(?, ?, ?, ?, ?, ?, @no_c_discount, @no_c_last, @no_c_credit, @no_d_tax, @no_w_tax, @no_o_id)",
            rollback: UNUSED_ITEM,
        },
        Sql::Routine {
            postgres: "SELECT payment($1, $2, $3, $4, $5, $6, $7, $8::bigint / 100.0)",
            sqlite: sqlite::payment_routine,
            mysql: "CALL PAYMENT(?, ?, ?, ?, ?, ?, ?, ? / 100, @p_c_id, @p_c_balance, @p_c_credit)",
            rollback: UNUSED_ITEM,
        },
        Sql::Routine {
            postgres: "SELECT ostat($1, $2, $3, $4, $5)",
            sqlite: sqlite::order_status_routine,
            mysql: "CALL OSTAT(?, ?, ?, ?, ?, @os_c_id, @os_c_balance, @os_o_id, @os_o_carrier_id, @os_lines, @os_amount)",
            rollback: UNUSED_ITEM,
        },
        Sql::Routine { postgres: "SELECT delivery($1, $2)", sqlite: sqlite::delivery_routine, mysql: "CALL DELIVERY(?, ?)", rollback: UNUSED_ITEM },
        Sql::Routine { postgres: "SELECT slev($1, $2, $3)", sqlite: sqlite::stock_level_routine, mysql: "CALL SLEV(?, ?, ?, @stock_count)", rollback: UNUSED_ITEM },
    ]
}

impl Input {
    pub fn kind(&self) -> Kind {
        match self {
            Input::NewOrder { .. } => Kind::NewOrder,
            Input::Payment { .. } => Kind::Payment,
            Input::OrderStatus { .. } => Kind::OrderStatus,
            Input::Delivery { .. } => Kind::Delivery,
            Input::StockLevel { .. } => Kind::StockLevel,
        }
    }

    /// The routine's parameters, in the order of the functions' arguments.
    pub fn into_values(self) -> Vec<Value> {
        let i = |v: i32| Value::Int(v.into());
        match self {
            Input::NewOrder { w_id, d_id, c_id, i_ids, supply_w_ids, quantities } => {
                vec![i(w_id), i(d_id), i(c_id), Value::IntArray(i_ids), Value::IntArray(supply_w_ids), Value::IntArray(quantities)]
            }
            Input::Payment { w_id, d_id, c_w_id, c_d_id, c_id, c_last, by_name, amount_cents } => {
                vec![i(w_id), i(d_id), i(c_w_id), i(c_d_id), i(c_id), Value::Text(c_last), Value::Bool(by_name), Value::Int(amount_cents)]
            }
            Input::OrderStatus { w_id, d_id, c_id, c_last, by_name } => vec![i(w_id), i(d_id), i(c_id), Value::Text(c_last), Value::Bool(by_name)],
            Input::Delivery { w_id, carrier_id } => vec![i(w_id), i(carrier_id)],
            Input::StockLevel { w_id, d_id, threshold } => vec![i(w_id), i(d_id), i(threshold)],
        }
    }
}

struct TpccSession {
    b: Box<dyn Backend>,
    st: [Stmt; 5],
    t: Terminal,
    input: Option<Input>,
    key_and_think: bool,
    /// `--commit-log`: the file (opened for appending) and its name.
    log: Option<(std::fs::File, String)>,
}

fn pauses(t: &mut Terminal, k: Kind, on: bool) -> (Duration, Duration) {
    if !on {
        return (Duration::ZERO, Duration::ZERO);
    }
    let (key, mean) = k.key_think_s();
    // Think time: −ln(r)·mean, capped at 10× the mean (clause 5.2.5.4).
    let think = (-(1.0 - t.rng.f64()).ln() * mean).min(10.0 * mean);
    (Duration::from_secs_f64(key), Duration::from_secs_f64(think))
}

pub async fn session(db: &Db, o: &TpccOptions, vu: u32, vus: u32, seed: u64) -> Result<Box<dyn Session>> {
    let mut b = crate::connect::connect(db).await?;
    let mut st = Vec::with_capacity(5);
    for sql in &routines() {
        st.push(b.prepare(sql).await.map_err(|e| DbError::sql("preparing the TPC-C calls (are the functions installed?)", e))?);
    }
    let st: [Stmt; 5] = st.try_into().map_err(|_| DbError::Input("five statements".into()))?;
    let log = match &o.commit_log {
        None => None,
        Some(_) if b.dialect() == Dialect::Sqlite => {
            return Err(DbError::Input("--commit-log needs PostgreSQL or MySQL/MariaDB (SQLite's New-Order does not report its order id) — leave it out".into()))
        }
        Some(p) => {
            let f = std::fs::OpenOptions::new().append(true).create(true).open(p).map_err(|e| DbError::Input(format!("--commit-log {}: {e}", p.display())))?;
            Some((f, p.display().to_string()))
        }
    };
    Ok(Box::new(TpccSession { b, st, t: Terminal::new(seed, vu, vus, o.warehouses, o.all_warehouses), input: None, key_and_think: o.key_and_think, log }))
}

impl Session for TpccSession {
    fn plan(&mut self) -> Option<Plan> {
        let k = Kind::draw(&mut self.t.rng);
        self.input = Some(self.t.input(k));
        let (key, think) = pauses(&mut self.t, k, self.key_and_think);
        Some(Plan { kind: k.index(), key, think })
    }
    fn exec(&mut self) -> BoxFuture<'_, (Outcome, u64)> {
        Box::pin(async move {
            let input = self.input.take().expect("planned");
            let k = input.kind();
            let begin = if matches!(k, Kind::OrderStatus | Kind::StockLevel) { Begin::Read } else { Begin::Write };
            let key = match (&input, &self.log) {
                (Input::NewOrder { w_id, d_id, .. }, Some(_)) => Some((*w_id, *d_id)),
                _ => None,
            };
            let tx = Txn::one(begin, self.st[k.index()], input.into_values());
            let Some((w_id, d_id)) = key else {
                return (self.b.transaction(tx).await, 1);
            };
            let (out, mut o_id) = self.b.transaction_value(tx).await;
            if matches!(out, Outcome::Commit) && self.b.dialect() == Dialect::Mysql {
                // NEWORD leaves the order id in its OUT parameter, the
                // session variable @no_o_id; the CALL's reply came after the
                // procedure's COMMIT. The order committed either way: a
                // connection lost before this read only leaves it out of the
                // log, which stays a subset of the acknowledged commits (the
                // next call reports the loss).
                match self.b.query_text("SELECT @no_o_id").await {
                    Ok(v) => o_id = v,
                    Err(_) => return (out, 1),
                }
            }
            if let (Outcome::Commit, Some((f, name))) = (&out, &mut self.log) {
                // The COMMIT was acknowledged (autocommit: the reply came after
                // it): only now is the key written, in one write(2) of an
                // O_APPEND file, so lines of several users never interleave
                // and a line on file is a commit the server acknowledged.
                let Some(o_id) = o_id else {
                    return (Outcome::Error("neword returned no order id (reinstall the TPC-C functions)".into()), 1);
                };
                if let Err(e) = f.write_all(format!("{w_id} {d_id} {o_id}\n").as_bytes()) {
                    return (Outcome::Error(format!("--commit-log {name}: {e}")), 1);
                }
            }
            (out, 1)
        })
    }
}
