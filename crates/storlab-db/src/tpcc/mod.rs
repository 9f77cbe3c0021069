//! TPC-C (TPC-C v5.11) the HammerDB way: the schema, the initial population
//! (clause 4.3.3.1), the five transactions' inputs (clause 2.4–2.8) drawn on
//! the client, and the mix of HammerDB's TPROC-C (a uniform draw from 1..23:
//! 10 New-Order, 10 Payment, 1 each of Delivery, Stock-Level, Order-Status).
//! The inputs are drawn here once, so SQLite (client-side SQL) and PostgreSQL
//! (server-side functions) run the same transactions.

pub mod load;
pub mod mysql;
pub mod pg;
pub mod session;
pub mod sqlite;

use crate::error::{DbError, Result};
use crate::session::Db;
use crate::Progress;
use storlab_stats::Rng;

#[derive(Debug, Clone)]
pub struct TpccOptions {
    pub warehouses: u32,
    /// HammerDB's "use all warehouses": a warehouse of the VU's slice per transaction.
    pub all_warehouses: bool,
    /// Keying and thinking times of clause 5.2.5.7 (off by default, as in HammerDB).
    pub key_and_think: bool,
    /// PostgreSQL: append "w_id d_id o_id" of every New-Order to this file
    /// once its COMMIT is acknowledged (one write(2) per line), so that a
    /// crash test can check that every order the client saw committed
    /// survived. Off by default.
    pub commit_log: Option<std::path::PathBuf>,
}

/// Builds (or reuses) the schema of `warehouses` warehouses. Each engine
/// has its own bulk path: PostgreSQL's COPY through `loaders` connections,
/// SQLite's one writer.
pub async fn prepare(db: &Db, warehouses: u32, loaders: u32, seed: u64, progress: &Progress) -> Result<bool> {
    match db {
        Db::Postgres(t) => pg::prepare(t, warehouses, loaders, seed, progress).await,
        Db::Mysql(t) => mysql::prepare(t, warehouses, loaders, seed, progress).await,
        Db::Sqlite { path } => {
            let (p, pr) = (path.clone(), progress.clone());
            tokio::task::spawn_blocking(move || sqlite::prepare(&p, warehouses, seed, &pr)).await.map_err(|e| DbError::sql("loader", e))?
        }
    }
}

pub const ITEMS: u32 = 100_000;
pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS: u32 = 3_000;
pub const ORDERS: u32 = 3_000;
/// Orders 2101..=3000 of each district start undelivered (clause 4.3.3.1).
pub const FIRST_NEW_ORDER: u32 = 2_101;

/// NURand's C for C_LAST at load time and at run time. Clause 2.1.6.1 asks
/// that the two differ by 65..=119, not 96 or 112: 223 − 157 = 66.
pub const C_LAST_LOAD: u32 = 157;
pub const C_LAST_RUN: u32 = 223;
/// C for C_ID (A = 1023) and OL_I_ID (A = 8191); any value in range is allowed.
pub const C_ID: u32 = 259;
pub const C_OL_I_ID: u32 = 7_911;

/// The five transactions, in the order results list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Kind {
    pub const ALL: [Kind; 5] = [Kind::NewOrder, Kind::Payment, Kind::OrderStatus, Kind::Delivery, Kind::StockLevel];
    /// Position in `ALL`, the order results list the types in.
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new_order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order_status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock_level",
        }
    }
    /// Order-Status and Stock-Level read only (clauses 2.6, 2.8): no
    /// transaction id, so no commit flush.
    pub fn read_only(self) -> bool {
        matches!(self, Kind::OrderStatus | Kind::StockLevel)
    }
    /// Keying time and mean think time in seconds (clause 5.2.5.7).
    pub fn key_think_s(self) -> (f64, f64) {
        match self {
            Kind::NewOrder => (18.0, 12.0),
            Kind::Payment => (3.0, 12.0),
            Kind::OrderStatus => (2.0, 10.0),
            Kind::Delivery => (2.0, 5.0),
            Kind::StockLevel => (2.0, 5.0),
        }
    }
    /// HammerDB's mix: `RandomNumber 1 23`, ≤10 New-Order, ≤20 Payment,
    /// 21 Delivery, 22 Stock-Level, 23 Order-Status.
    pub fn draw(rng: &mut Rng) -> Kind {
        match rng.below(23) + 1 {
            1..=10 => Kind::NewOrder,
            11..=20 => Kind::Payment,
            21 => Kind::Delivery,
            22 => Kind::StockLevel,
            _ => Kind::OrderStatus,
        }
    }
}

/// Uniform integer in lo..=hi.
#[inline]
pub fn uniform(rng: &mut Rng, lo: u32, hi: u32) -> u32 {
    lo + rng.below(u64::from(hi - lo + 1)) as u32
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x (clause 2.1.6).
#[inline]
pub fn nurand(rng: &mut Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// C_LAST from a number 0..=999, three syllables (clause 4.3.2.3).
pub fn last_name(n: u32) -> String {
    let mut s = String::with_capacity(15);
    s.push_str(SYLLABLES[(n / 100) as usize]);
    s.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    s.push_str(SYLLABLES[(n % 10) as usize]);
    s
}

/// One transaction's inputs, drawn on the client.
#[derive(Debug, Clone)]
pub enum Input {
    NewOrder { w_id: i32, d_id: i32, c_id: i32, i_ids: Vec<i32>, supply_w_ids: Vec<i32>, quantities: Vec<i32> },
    Payment { w_id: i32, d_id: i32, c_w_id: i32, c_d_id: i32, c_id: i32, c_last: String, by_name: bool, amount_cents: i64 },
    OrderStatus { w_id: i32, d_id: i32, c_id: i32, c_last: String, by_name: bool },
    Delivery { w_id: i32, carrier_id: i32 },
    StockLevel { w_id: i32, d_id: i32, threshold: i32 },
}

/// What a virtual user draws from: its warehouses, the cluster's size and its
/// own stream.
pub struct Terminal {
    pub rng: Rng,
    pub warehouses: u32,
    /// The warehouses this terminal works on: one home warehouse, or with
    /// all-warehouses a round-robin slice of them.
    pub own: Vec<u32>,
    /// Stock-Level's district, fixed per terminal as in HammerDB.
    pub slev_district: u32,
}

impl Terminal {
    /// Terminal `vu` (0-based) of `vus`. Home warehouses go round-robin so
    /// that VUs ≤ W never share one; with `all_warehouses` terminal p takes
    /// warehouses p+1, p+1+L, … (HammerDB's slices) and picks one per
    /// transaction.
    pub fn new(seed: u64, vu: u32, vus: u32, warehouses: u32, all_warehouses: bool) -> Terminal {
        let mut rng = Rng::new(seed ^ (u64::from(vu) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let own = if all_warehouses && vus < warehouses {
            (1..=warehouses).filter(|w| (w - 1) % vus == vu % vus).collect()
        } else {
            vec![vu % warehouses + 1]
        };
        let slev_district = uniform(&mut rng, 1, DISTRICTS);
        Terminal { rng, warehouses, own, slev_district }
    }

    fn warehouse(&mut self) -> u32 {
        if self.own.len() == 1 {
            self.own[0]
        } else {
            self.own[self.rng.below(self.own.len() as u64) as usize]
        }
    }

    fn other_warehouse(&mut self, w: u32) -> u32 {
        if self.warehouses == 1 {
            return w;
        }
        let o = uniform(&mut self.rng, 1, self.warehouses - 1);
        if o >= w {
            o + 1
        } else {
            o
        }
    }

    /// The inputs of one transaction of kind `k` (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
    pub fn input(&mut self, k: Kind) -> Input {
        let w = self.warehouse();
        let r = &mut self.rng;
        match k {
            Kind::NewOrder => {
                let d = uniform(r, 1, DISTRICTS);
                let c = nurand(r, 1023, 1, CUSTOMERS, C_ID);
                let n = uniform(r, 5, 15) as usize;
                let rollback = uniform(r, 1, 100) == 1;
                let mut i_ids = Vec::with_capacity(n);
                let mut supply = Vec::with_capacity(n);
                let mut qty = Vec::with_capacity(n);
                for line in 0..n {
                    let mut item = nurand(&mut self.rng, 8191, 1, ITEMS, C_OL_I_ID) as i32;
                    if rollback && line == n - 1 {
                        item = ITEMS as i32 + 1; // an unused item: the 1% rollback (2.4.1.4)
                    }
                    let remote = self.warehouses > 1 && uniform(&mut self.rng, 1, 100) == 1;
                    let sw = if remote { self.other_warehouse(w) } else { w };
                    i_ids.push(item);
                    supply.push(sw as i32);
                    qty.push(uniform(&mut self.rng, 1, 10) as i32);
                }
                Input::NewOrder { w_id: w as i32, d_id: d as i32, c_id: c as i32, i_ids, supply_w_ids: supply, quantities: qty }
            }
            Kind::Payment => {
                let d = uniform(r, 1, DISTRICTS);
                let local = uniform(r, 1, 100) <= 85;
                let (cw, cd) = if local || self.warehouses == 1 {
                    (w, d)
                } else {
                    let cd = uniform(&mut self.rng, 1, DISTRICTS);
                    (self.other_warehouse(w), cd)
                };
                let r = &mut self.rng;
                let by_name = uniform(r, 1, 100) <= 60;
                let c_last = if by_name { last_name(nurand(r, 255, 0, 999, C_LAST_RUN)) } else { String::new() };
                let c_id = if by_name { 0 } else { nurand(r, 1023, 1, CUSTOMERS, C_ID) };
                let amount_cents = i64::from(uniform(r, 100, 500_000));
                Input::Payment { w_id: w as i32, d_id: d as i32, c_w_id: cw as i32, c_d_id: cd as i32, c_id: c_id as i32, c_last, by_name, amount_cents }
            }
            Kind::OrderStatus => {
                let d = uniform(r, 1, DISTRICTS);
                let by_name = uniform(r, 1, 100) <= 60;
                let c_last = if by_name { last_name(nurand(r, 255, 0, 999, C_LAST_RUN)) } else { String::new() };
                let c_id = if by_name { 0 } else { nurand(r, 1023, 1, CUSTOMERS, C_ID) };
                Input::OrderStatus { w_id: w as i32, d_id: d as i32, c_id: c_id as i32, c_last, by_name }
            }
            Kind::Delivery => Input::Delivery { w_id: w as i32, carrier_id: uniform(r, 1, 10) as i32 },
            Kind::StockLevel => {
                let d = self.slev_district;
                Input::StockLevel { w_id: w as i32, d_id: d as i32, threshold: uniform(&mut self.rng, 10, 20) as i32 }
            }
        }
    }
}

/// The keys and secondary indexes, built after the load: (table, columns,
/// primary key). The two secondary indexes serve the by-name customer
/// lookup (Payment, Order-Status) and a customer's latest order.
pub const KEYS: [(&str, &str, bool); 10] = [
    ("warehouse", "w_id", true),
    ("district", "d_w_id, d_id", true),
    ("customer", "c_w_id, c_d_id, c_id", true),
    ("customer", "c_w_id, c_d_id, c_last, c_first", false),
    ("new_order", "no_w_id, no_d_id, no_o_id", true),
    ("orders", "o_w_id, o_d_id, o_id", true),
    ("orders", "o_w_id, o_d_id, o_c_id, o_id", false),
    ("order_line", "ol_w_id, ol_d_id, ol_o_id, ol_number", true),
    ("item", "i_id", true),
    ("stock", "s_w_id, s_i_id", true),
];

/// `KEYS` as SQL, then ANALYZE. PostgreSQL gets real primary keys; SQLite
/// cannot add one to a loaded table, so it gets unique indexes.
pub fn keys_sql(postgres: bool) -> String {
    let mut out = String::new();
    for (i, (table, cols, pk)) in KEYS.iter().enumerate() {
        out += &match (pk, postgres) {
            (true, true) => format!("ALTER TABLE {table} ADD PRIMARY KEY ({cols});\n"),
            (true, false) => format!("CREATE UNIQUE INDEX {table}_pk ON {table} ({cols});\n"),
            (false, _) => format!("CREATE INDEX {table}_idx{i} ON {table} ({cols});\n"),
        };
    }
    out + "ANALYZE;\n"
}

/// The TPC-C consistency conditions 1–4 (clause 3.3.2.1–3.3.2.4), as queries
/// that return the number of warehouses or districts violating each; all
/// zero means consistent. Portable between SQLite and PostgreSQL; money is
/// REAL in SQLite, so condition 1 allows half a cent of rounding.
pub const CONSISTENCY: [(&str, &str); 4] = [
    ("w_ytd = sum(d_ytd)", "SELECT count(*) FROM warehouse w WHERE abs(w.w_ytd - (SELECT sum(d.d_ytd) FROM district d WHERE d.d_w_id = w.w_id)) > 0.005"),
    ("d_next_o_id - 1 = max(o_id) = max(no_o_id)", "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT max(o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) OR d.d_next_o_id - 1 <> coalesce((SELECT max(no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id), d.d_next_o_id - 1)"),
    ("max(no_o_id) - min(no_o_id) + 1 = count(new_order)", "SELECT count(*) FROM (SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) x"),
    ("sum(o_ol_cnt) = count(order_line)", "SELECT count(*) FROM district d WHERE (SELECT sum(o_ol_cnt) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) <> (SELECT count(*) FROM order_line l WHERE l.ol_w_id = d.d_w_id AND l.ol_d_id = d.d_id)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllable_table() {
        // Clause 4.3.2.3's own example: 371 -> PRICALLYOUGHT.
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn every_table_gets_one_primary_key_in_both_dialects() {
        for pg in [true, false] {
            let sql = keys_sql(pg);
            for t in ["warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"] {
                let pk = if pg { format!("ALTER TABLE {t} ADD PRIMARY KEY") } else { format!("CREATE UNIQUE INDEX {t}_pk ") };
                // HISTORY has no key in TPC-C (clause 1.3).
                assert_eq!(sql.matches(&pk).count(), usize::from(t != "history"), "{t} pg={pg}");
            }
            assert_eq!(sql.matches("CREATE INDEX").count(), 2);
        }
    }

    #[test]
    fn index_is_the_position_in_all() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{}", k.name());
        }
    }

    #[test]
    fn mix_matches_hammerdb_shares() {
        let mut rng = Rng::new(3);
        let mut n = [0u32; 5];
        let total = 230_000;
        for _ in 0..total {
            let k = Kind::draw(&mut rng);
            n[Kind::ALL.iter().position(|x| *x == k).unwrap()] += 1;
        }
        // 10/23 = 43.48 %, 1/23 = 4.35 %
        for (i, share) in [10.0 / 23.0, 10.0 / 23.0, 1.0 / 23.0, 1.0 / 23.0, 1.0 / 23.0].iter().enumerate() {
            let got = f64::from(n[i]) / f64::from(total);
            assert!((got - share).abs() < 0.004, "{i}: {got} vs {share}");
        }
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Rng::new(5);
        let mut hits = vec![0u32; 1000];
        for _ in 0..200_000 {
            let v = nurand(&mut rng, 255, 0, 999, C_LAST_RUN);
            assert!(v <= 999);
            hits[v as usize] += 1;
        }
        // Non-uniform: the most drawn name is drawn far more than the mean of 200.
        assert!(*hits.iter().max().unwrap() > 400);
    }

    #[test]
    fn new_order_rolls_back_one_percent_and_remote_lines_only_with_two_warehouses() {
        let mut t = Terminal::new(1, 0, 1, 1, false);
        let (mut rb, mut remote, n) = (0, 0, 20_000);
        for _ in 0..n {
            if let Input::NewOrder { i_ids, supply_w_ids, w_id, .. } = t.input(Kind::NewOrder) {
                assert!((5..=15).contains(&i_ids.len()));
                rb += i32::from(*i_ids.last().unwrap() == ITEMS as i32 + 1);
                remote += supply_w_ids.iter().filter(|s| **s != w_id).count();
            }
        }
        assert!((150..=250).contains(&rb), "{rb} rollbacks of {n}");
        assert_eq!(remote, 0);
    }

    #[test]
    fn all_warehouses_slices_cover_every_warehouse_once() {
        let vus = 3;
        let mut seen = vec![];
        for vu in 0..vus {
            seen.extend(Terminal::new(1, vu, vus, 10, true).own);
        }
        seen.sort();
        assert_eq!(seen, (1..=10).collect::<Vec<_>>());
    }
}
