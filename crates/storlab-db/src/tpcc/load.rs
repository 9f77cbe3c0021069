//! The initial population of clause 4.3.3.1, generated once on the client
//! and written through a `RowSink`: COPY text for PostgreSQL, bound inserts
//! for SQLite. Money is written as decimal text (`dec(cents, 2)`), timestamps
//! as ISO text, so both engines get the same rows for the same seed.

use super::*;
use crate::error::Result;
use crate::session::push_random_string;

/// Where generated rows go, column by column.
pub trait RowSink {
    fn int(&mut self, v: i64);
    /// `v / 10^scale`, as exact decimal text.
    fn dec(&mut self, v: i64, scale: u32);
    fn text(&mut self, s: &str);
    fn null(&mut self);
    fn end_row(&mut self) -> Result<()>;
}

/// The tables in load order; `Item` once, the rest per warehouse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Item,
    Warehouse,
    District,
    Stock,
    Customer,
    History,
    Orders,
    NewOrder,
    OrderLine,
}

impl Table {
    pub const PER_WAREHOUSE: [Table; 8] =
        [Table::Warehouse, Table::District, Table::Stock, Table::Customer, Table::History, Table::Orders, Table::NewOrder, Table::OrderLine];
    pub fn name(self) -> &'static str {
        match self {
            Table::Item => "item",
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Stock => "stock",
            Table::Customer => "customer",
            Table::History => "history",
            Table::Orders => "orders",
            Table::NewOrder => "new_order",
            Table::OrderLine => "order_line",
        }
    }
    pub fn columns(self) -> usize {
        match self {
            Table::Item => 5,
            Table::Warehouse => 9,
            Table::District => 11,
            Table::Stock => 17,
            Table::Customer => 21,
            Table::History => 8,
            Table::Orders => 8,
            Table::NewOrder => 3,
            Table::OrderLine => 10,
        }
    }
}

/// Random strings of clause 4.3.2.2 (a-string and n-string), into a reused buffer.
pub struct Gen {
    pub rng: Rng,
    buf: String,
    /// The load's timestamp, `YYYY-MM-DD HH:MM:SS`.
    pub now: String,
}

impl Gen {
    pub fn new(seed: u64, now: String) -> Gen {
        Gen { rng: Rng::new(seed), buf: String::with_capacity(512), now }
    }
    fn astr(&mut self, lo: u32, hi: u32) -> &str {
        self.buf.clear();
        push_random_string(&mut self.rng, u64::from(lo), u64::from(hi), &mut self.buf);
        &self.buf
    }
    fn nstr(&mut self, n: u32) -> &str {
        self.buf.clear();
        for _ in 0..n {
            self.buf.push((b'0' + self.rng.below(10) as u8) as char);
        }
        &self.buf
    }
    /// i_data / s_data: 26..50 characters, 10 % with "ORIGINAL" somewhere (4.3.3.1).
    fn data_with_original(&mut self) -> &str {
        let original = uniform(&mut self.rng, 1, 10) == 1;
        let n = uniform(&mut self.rng, 26, 50) as usize;
        let at = if original { self.rng.below((n - 8) as u64) as usize } else { 0 };
        self.astr(n as u32, n as u32);
        if original {
            self.buf.replace_range(at..at + 8, "ORIGINAL");
        }
        &self.buf
    }
    fn zip(&mut self) -> String {
        format!("{}11111", self.nstr(4))
    }
    fn address(&mut self, s: &mut dyn RowSink) {
        for _ in 0..3 {
            let v = self.astr(10, 20).to_string();
            s.text(&v);
        }
        let st = self.astr(2, 2).to_string();
        s.text(&st);
        let z = self.zip();
        s.text(&z);
    }
}

/// Writes the rows of `table` for warehouse `w` (ignored for `Item`).
pub fn generate(table: Table, w: u32, g: &mut Gen, s: &mut dyn RowSink) -> Result<()> {
    let w = i64::from(w);
    match table {
        Table::Item => {
            for i in 1..=i64::from(ITEMS) {
                s.int(i);
                s.int(i64::from(uniform(&mut g.rng, 1, 10_000)));
                let name = g.astr(14, 24).to_string();
                s.text(&name);
                s.dec(i64::from(uniform(&mut g.rng, 100, 10_000)), 2);
                let d = g.data_with_original().to_string();
                s.text(&d);
                s.end_row()?;
            }
        }
        Table::Warehouse => {
            s.int(w);
            let name = g.astr(6, 10).to_string();
            s.text(&name);
            g.address(s);
            s.dec(i64::from(uniform(&mut g.rng, 0, 2000)), 4);
            s.dec(300_000_00, 2);
            s.end_row()?;
        }
        Table::District => {
            for d in 1..=i64::from(DISTRICTS) {
                s.int(d);
                s.int(w);
                let name = g.astr(6, 10).to_string();
                s.text(&name);
                g.address(s);
                s.dec(i64::from(uniform(&mut g.rng, 0, 2000)), 4);
                s.dec(30_000_00, 2);
                s.int(i64::from(ORDERS + 1));
                s.end_row()?;
            }
        }
        Table::Stock => {
            for i in 1..=i64::from(ITEMS) {
                s.int(i);
                s.int(w);
                s.int(i64::from(uniform(&mut g.rng, 10, 100)));
                for _ in 0..10 {
                    let v = g.astr(24, 24).to_string();
                    s.text(&v);
                }
                s.int(0);
                s.int(0);
                s.int(0);
                let d = g.data_with_original().to_string();
                s.text(&d);
                s.end_row()?;
            }
        }
        Table::Customer => customers(w, g, s)?,
        Table::History => {
            for d in 1..=i64::from(DISTRICTS) {
                for c in 1..=i64::from(CUSTOMERS) {
                    s.int(c);
                    s.int(d);
                    s.int(w);
                    s.int(d);
                    s.int(w);
                    s.text(&g.now);
                    s.dec(10_00, 2);
                    let data = g.astr(12, 24).to_string();
                    s.text(&data);
                    s.end_row()?;
                }
            }
        }
        Table::Orders | Table::OrderLine => orders(table, w, g, s)?,
        Table::NewOrder => {
            for d in 1..=i64::from(DISTRICTS) {
                for o in FIRST_NEW_ORDER..=ORDERS {
                    s.int(i64::from(o));
                    s.int(d);
                    s.int(w);
                    s.end_row()?;
                }
            }
        }
    }
    Ok(())
}

/// Customer's rows of warehouse `w`: 3,000 a district.
fn customers(w: i64, g: &mut Gen, s: &mut dyn RowSink) -> Result<()> {
    for d in 1..=i64::from(DISTRICTS) {
        for c in 1..=CUSTOMERS {
            s.int(i64::from(c));
            s.int(d);
            s.int(w);
            let first = g.astr(8, 16).to_string();
            s.text(&first);
            s.text("OE");
            let n = if c <= 1000 { c - 1 } else { nurand(&mut g.rng, 255, 0, 999, C_LAST_LOAD) };
            s.text(&last_name(n));
            g.address(s);
            let phone = g.nstr(16).to_string();
            s.text(&phone);
            s.text(&g.now);
            s.text(if uniform(&mut g.rng, 1, 10) == 1 { "BC" } else { "GC" });
            s.dec(50_000_00, 2);
            s.dec(i64::from(uniform(&mut g.rng, 0, 5000)), 4);
            s.dec(-10_00, 2);
            s.dec(10_00, 2);
            s.int(1);
            s.int(0);
            let data = g.astr(300, 500).to_string();
            s.text(&data);
            s.end_row()?;
        }
    }
    Ok(())
}

/// Orders' or Order-Line's rows of warehouse `w`.
fn orders(table: Table, w: i64, g: &mut Gen, s: &mut dyn RowSink) -> Result<()> {
    // Orders and their lines share the per-order draws (o_ol_cnt),
    // so both tables replay the same stream from a per-warehouse seed.
    let mut rng = Rng::new(0x5EED_0000 ^ w as u64);
    for d in 1..=i64::from(DISTRICTS) {
        let mut perm: Vec<u32> = (1..=CUSTOMERS).collect();
        for i in (1..perm.len()).rev() {
            perm.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for o in 1..=ORDERS {
            let cnt = uniform(&mut rng, 5, 15);
            let carrier = uniform(&mut rng, 1, 10);
            let delivered = o < FIRST_NEW_ORDER;
            if table == Table::Orders {
                s.int(i64::from(o));
                s.int(d);
                s.int(w);
                s.int(i64::from(perm[(o - 1) as usize]));
                s.text(&g.now);
                if delivered {
                    s.int(i64::from(carrier));
                } else {
                    s.null();
                }
                s.int(i64::from(cnt));
                s.int(1);
                s.end_row()?;
            } else {
                for l in 1..=cnt {
                    s.int(i64::from(o));
                    s.int(d);
                    s.int(w);
                    s.int(i64::from(l));
                    s.int(i64::from(uniform(&mut g.rng, 1, ITEMS)));
                    s.int(w);
                    if delivered {
                        s.text(&g.now);
                    } else {
                        s.null();
                    }
                    s.int(5);
                    s.dec(if delivered { 0 } else { i64::from(uniform(&mut g.rng, 1, 999_999)) }, 2);
                    let info = g.astr(24, 24).to_string();
                    s.text(&info);
                    s.end_row()?;
                }
            }
        }
    }
    Ok(())
}

/// Now as `YYYY-MM-DD HH:MM:SS` (UTC), without a date crate.
pub fn now_text() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
    // `YYYY-MM-DDTHH:MM:SSZ` → `YYYY-MM-DD HH:MM:SS`.
    storlab_record::db::utc_text(secs).replace('T', " ").trim_end_matches('Z').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts rows and columns, checking every row has the table's width.
    struct Count {
        cols: usize,
        width: usize,
        rows: usize,
        texts: Vec<String>,
    }
    impl RowSink for Count {
        fn int(&mut self, _: i64) {
            self.cols += 1;
        }
        fn dec(&mut self, _: i64, _: u32) {
            self.cols += 1;
        }
        fn text(&mut self, s: &str) {
            self.cols += 1;
            if self.rows < 3000 {
                self.texts.push(s.to_string());
            }
        }
        fn null(&mut self) {
            self.cols += 1;
        }
        fn end_row(&mut self) -> Result<()> {
            assert_eq!(self.cols, self.width);
            self.cols = 0;
            self.rows += 1;
            Ok(())
        }
    }

    #[test]
    fn cardinalities_follow_clause_4_3_3_1() {
        let mut g = Gen::new(1, now_text());
        let want = [
            (Table::Item, 100_000),
            (Table::Warehouse, 1),
            (Table::District, 10),
            (Table::Stock, 100_000),
            (Table::Customer, 30_000),
            (Table::History, 30_000),
            (Table::Orders, 30_000),
            (Table::NewOrder, 9_000),
        ];
        for (t, n) in want {
            let mut c = Count { cols: 0, width: t.columns(), rows: 0, texts: vec![] };
            generate(t, 1, &mut g, &mut c).unwrap();
            assert_eq!(c.rows, n, "{}", t.name());
        }
        // Order lines: 5..15 per order, mean 10 -> about 300,000 per warehouse.
        let mut c = Count { cols: 0, width: Table::OrderLine.columns(), rows: 0, texts: vec![] };
        generate(Table::OrderLine, 1, &mut g, &mut c).unwrap();
        assert!((290_000..310_000).contains(&c.rows), "{}", c.rows);
    }

    #[test]
    fn first_thousand_customers_take_the_thousand_last_names_in_order() {
        let mut g = Gen::new(1, now_text());
        let mut c = Count { cols: 0, width: Table::Customer.columns(), rows: 0, texts: vec![] };
        generate(Table::Customer, 1, &mut g, &mut c).unwrap();
        // Text columns per customer: first, middle, last, 3 address + state + zip, phone, since, credit, data = 12.
        let last_of = |k: usize| c.texts[k * 12 + 2].clone();
        assert_eq!(last_of(0), "BARBARBAR");
        assert_eq!(last_of(371), "PRICALLYOUGHT");
    }

    #[test]
    fn civil_date_is_iso() {
        let t = now_text();
        assert_eq!(t.len(), 19);
        assert!(t.starts_with("20"));
    }
}

/// One connection's part of a parallel load: writes a table's rows for a
/// warehouse (0 for ITEM) the engine's way.
pub trait Loader: Send + 'static {
    fn load(&mut self, table: Table, w: u32) -> crate::session::BoxFuture<'_, Result<()>>;
}

/// Loads ITEM and every warehouse's tables on `loaders` connections at once
/// (one slice of warehouses each, ITEM beside them), each made by `connect`,
/// counting tables done in `progress`. Ctrl-C (`progress.stop`) or the first
/// error stops the others; that error is returned.
pub async fn load_parallel<L: Loader>(
    warehouses: u32,
    loaders: u32,
    progress: &crate::Progress,
    connect: impl Fn() -> crate::session::BoxFuture<'static, Result<L>>,
) -> Result<()> {
    use std::sync::atomic::Ordering;
    let total = 1 + warehouses * Table::PER_WAREHOUSE.len() as u32;
    progress.total.store(u64::from(total), Ordering::Relaxed);
    let loaders = loaders.clamp(1, warehouses);
    let mut tasks = tokio::task::JoinSet::new();
    let (item, p) = (connect(), progress.clone());
    tasks.spawn(async move {
        item.await?.load(Table::Item, 0).await?;
        p.done.fetch_add(1, Ordering::Relaxed);
        Ok::<_, crate::DbError>(())
    });
    for k in 0..loaders {
        let (conn, p) = (connect(), progress.clone());
        tasks.spawn(async move {
            let mut c = conn.await?;
            for w in (1..=warehouses).filter(|w| (w - 1) % loaders == k) {
                for table in Table::PER_WAREHOUSE {
                    if p.stop.load(Ordering::Relaxed) {
                        return Err(crate::DbError::Input("interrupted while loading".into()));
                    }
                    c.load(table, w).await?;
                    p.done.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        });
    }
    let mut first_err = None;
    while let Some(r) = tasks.join_next().await {
        let r = r.map_err(|e| crate::DbError::sql("loader", e)).and_then(|x| x);
        if let (Err(e), None) = (r, &first_err) {
            progress.stop.store(true, Ordering::Relaxed);
            first_err = Some(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// A database holding `k` of the nine TPC-C tables: neither ours nor empty.
pub fn partial_schema(db: &str, k: i64) -> crate::DbError {
    crate::DbError::Schema(format!(
        "{db} holds {k} of the 9 TPC-C tables — drop them (warehouse, district, customer, history, new_order, orders, order_line, item, stock) or use another database"
    ))
}

/// A database holding a TPC-C schema of `w` warehouses, asked for `wanted`.
pub fn other_size(db: &str, w: u32, wanted: u32) -> crate::DbError {
    crate::DbError::Schema(format!("{db} already holds a TPC-C schema of {w} warehouse(s), not {wanted} — use --warehouses {w}, or another database"))
}
