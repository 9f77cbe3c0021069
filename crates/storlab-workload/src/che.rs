//! Cache misses from the way a workload picks its rows: Che's approximation
//! of an LRU cache, at any cache and data size.
//!
//! Che, Tung and Wang, "Hierarchical Web caching systems: modeling, design
//! and experimental results" (IEEE JSAC 20(7), 2002); Fricker, Robert and
//! Roberts, "A versatile and accurate approximation for LRU cache
//! performance" (ITC 24, 2012). Under independent references, item `i`
//! referenced at rate `λ_i` is in an LRU cache of `C` items if it was
//! referenced within the cache's characteristic time `T`, the one root of
//! `Σ_i (1 − e^{−λ_i T}) = C`; its hit ratio is `1 − e^{−λ_i T}`.
//!
//! Appended data (TPC-C's orders, order lines, new orders) is not
//! independent: a page is written once and read again at known ages (a
//! Stock-Level reads the last 20 orders, a Delivery the oldest undelivered
//! one). Such a page is an [`Append`] stream: it stays in the cache for `T`
//! after each reference, so a re-reference hits when its gap is under `T`,
//! and it holds `Σ min(gap, T) + T` of cache time — the same LRU rule,
//! applied to deterministic gaps (the "renewal" reading of Che, Fricker et al.
//! §4).
//!
//! [`tpcc`] builds TPC-C's page popularity from its specification: NURand
//! (clause 2.1.6) over customers and items, the transaction mix of clause
//! 5.2.3 (45 % New-Order, 43 % Payment, 4 % each of Order-Status, Delivery
//! and Stock-Level), the rows read per transaction (clauses 2.4–2.8) and the
//! row sizes of clause 1.3; docs/dbmodel.md, "Cache misses".

use std::sync::OnceLock;

/// Pages referenced independently: `count` pages each at `rate`
/// references per unit time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Group {
    pub rate: f64,
    pub count: f64,
}

/// Pages created at `pages_per_t` a unit time, each referenced again at the
/// gaps `gaps` (units of time after the reference before it), with
/// `refs_per_t[k]` references a unit time at gap `k` (the creation's own
/// references are hits: the page was just written).
#[derive(Debug, Clone, PartialEq)]
pub struct Append {
    pub pages_per_t: f64,
    pub gaps: Vec<f64>,
    pub refs_per_t: Vec<f64>,
}

/// The cache's characteristic time for `cache_pages`: the `T` at which the
/// expected pages held equals the cache. `INFINITY` when everything fits.
pub fn characteristic_time(groups: &[Group], appends: &[Append], cache_pages: f64) -> f64 {
    let held = |t: f64| -> f64 {
        let irm: f64 = groups.iter().map(|g| g.count * -(-g.rate * t).exp_m1()).sum();
        let app: f64 = appends.iter().map(|a| a.pages_per_t * (a.gaps.iter().map(|&g| g.min(t)).sum::<f64>() + t)).sum();
        irm + app
    };
    let total: f64 = groups.iter().map(|g| g.count).sum();
    if appends.is_empty() && cache_pages >= total {
        return f64::INFINITY;
    }
    if cache_pages <= 0.0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while held(hi) < cache_pages {
        hi *= 2.0;
        if hi > 1e30 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if held(mid) < cache_pages {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Misses a unit time: independent references miss with `e^{−λT}`, an
/// append stream's re-reference misses when its gap is `T` or more.
pub fn misses_per_t(groups: &[Group], appends: &[Append], t: f64) -> f64 {
    let irm: f64 = groups.iter().map(|g| g.count * g.rate * (-g.rate * t).exp()).sum();
    let app: f64 = appends.iter().flat_map(|a| a.gaps.iter().zip(&a.refs_per_t)).filter(|(g, _)| **g >= t).map(|(_, r)| r).sum();
    irm + app
}

/// NURand(A, x, y) of TPC-C clause 2.1.6, `((random(0, A) | random(x, y)) +
/// C) % (y − x + 1) + x`, as probabilities of x..=y (index 0 is x), for `A`
/// one less than a power of two (255, 1023, 8191 as TPC-C uses). The run-time
/// constant C only rotates the values and is taken as 0.
///
/// `a | b = u` needs `b ⊆ u` with `u`'s bits above A equal to `b`'s; `a`
/// then has `2^{popcount(b & A)}` choices of its `A + 1`, so
/// `P(u) = Σ_{b ⊆ u} 2^{popcount(b & A)} / ((A + 1)(y − x + 1))`.
pub fn nurand(a: u32, x: u32, y: u32) -> Vec<f64> {
    assert!((a + 1).is_power_of_two() && x <= y, "NURand(A, x, y) with A = 2^k − 1");
    let n = (y - x + 1) as usize;
    let mut p = vec![0.0; n];
    let top = (y | a) as u64;
    let denom = f64::from(a + 1) * n as f64;
    for u in 0..=top {
        let (high, low) = (u & !u64::from(a), u & u64::from(a));
        // Submasks of `low`, each a b = high | s.
        let mut s = low;
        let mut sum = 0.0;
        loop {
            let b = high | s;
            if b >= u64::from(x) && b <= u64::from(y) {
                sum += f64::from(1u32 << s.count_ones());
            }
            if s == 0 {
                break;
            }
            s = (s - 1) & low;
        }
        if sum > 0.0 {
            p[(u % n as u64) as usize] += sum / denom;
        }
    }
    p
}

/// Probabilities of `values` grouped into pages of `per_page` consecutive
/// values (a clustered key): one probability a page.
pub fn pages(p: &[f64], per_page: f64) -> Vec<f64> {
    let per = per_page.max(1.0);
    let n = (p.len() as f64 / per).ceil().max(1.0) as usize;
    let mut out = vec![0.0; n];
    for (i, v) in p.iter().enumerate() {
        out[((i as f64 / per) as usize).min(n - 1)] += v;
    }
    out
}

// TPC-C clause 1.3: row sizes in bytes (the specification's column widths).
const ROW_WAREHOUSE: f64 = 89.0;
const ROW_DISTRICT: f64 = 95.0;
const ROW_CUSTOMER: f64 = 655.0;
const ROW_HISTORY: f64 = 46.0;
const ROW_NEW_ORDER: f64 = 8.0;
const ROW_ORDERS: f64 = 24.0;
const ROW_ORDER_LINE: f64 = 54.0;
const ROW_ITEM: f64 = 82.0;
const ROW_STOCK: f64 = 306.0;
/// Initial rows per warehouse (clause 4.3.3.1) and the item table's.
const CUSTOMERS_PER_DISTRICT: u32 = 3000;
const ITEMS: u32 = 100_000;
/// Bytes a warehouse holds by the specification's row sizes, and the
/// item table's.
pub const SPEC_BYTES_PER_WAREHOUSE: f64 = ROW_WAREHOUSE
    + 10.0 * ROW_DISTRICT
    + 30_000.0 * (ROW_CUSTOMER + ROW_HISTORY + ROW_ORDERS)
    + 9_000.0 * ROW_NEW_ORDER
    + 300_000.0 * ROW_ORDER_LINE
    + 100_000.0 * ROW_STOCK;
pub const SPEC_ITEM_BYTES: f64 = 100_000.0 * ROW_ITEM;

// Clause 5.2.3: the mix; clauses 2.4–2.8: rows read.
const NO: f64 = 0.45;
const PAY: f64 = 0.43;
const OS: f64 = 0.04;
const DEL: f64 = 0.04;
const SL: f64 = 0.04;
/// Undelivered orders per district in steady state (9,000 new orders a
/// warehouse at load, delivered as fast as they come).
const UNDELIVERED: f64 = 900.0;
/// Stock-Level's window: the last 20 orders of its district.
const SL_ORDERS: f64 = 20.0;

fn customer_pdf() -> &'static [f64] {
    static P: OnceLock<Vec<f64>> = OnceLock::new();
    P.get_or_init(|| nurand(1023, 1, CUSTOMERS_PER_DISTRICT))
}

fn item_pdf() -> &'static [f64] {
    static P: OnceLock<Vec<f64>> = OnceLock::new();
    P.get_or_init(|| nurand(8191, 1, ITEMS))
}

/// TPC-C's pages as Che sees them, time in transactions: `warehouses`,
/// the engine's `page_bytes`, and `bytes_per_warehouse` as recorded (its
/// ratio to the specification's row bytes spreads indexes, fill factor and
/// row headers over every table alike).
#[derive(Debug, Clone)]
pub struct TpccPages {
    pub groups: Vec<Group>,
    pub appends: Vec<Append>,
    /// Row references a transaction (each one page reference).
    pub refs_per_txn: f64,
    pub total_pages: f64,
}

pub fn tpcc(warehouses: f64, page_bytes: f64, bytes_per_warehouse: f64) -> TpccPages {
    let w = warehouses.max(1.0);
    let overhead = (bytes_per_warehouse / SPEC_BYTES_PER_WAREHOUSE).max(1.0);
    let per_page = |row: f64| page_bytes / (row * overhead);
    let mut groups = Vec::new();
    let mut refs = 0.0;
    // A table of `copies` identical parts, each with its pages' probability
    // of a reference, `rate` references a transaction over all the copies.
    let mut add = |probs: &[f64], copies: f64, rate: f64| {
        for &q in probs {
            if q > 0.0 {
                groups.push(Group { rate: rate * q / copies, count: copies });
            }
        }
        refs += rate;
    };
    // Warehouse and district rows: New-Order and Payment read both;
    // Stock-Level reads its district.
    add(&pages(&vec![1.0 / w; w as usize], per_page(ROW_WAREHOUSE))[..], 1.0, NO + PAY);
    add(&pages(&vec![1.0 / (10.0 * w); 10 * w as usize], per_page(ROW_DISTRICT))[..], 1.0, NO + PAY + SL);
    // Customers by NURand(1023) in each district: New-Order, Payment (by id
    // or by name, taken alike), Order-Status, and one for each of Delivery's
    // 10 orders.
    add(&pages(customer_pdf(), per_page(ROW_CUSTOMER)), 10.0 * w, NO + PAY + OS + 10.0 * DEL);
    // Items by NURand(8191): one table, 10 lines a New-Order.
    add(&pages(item_pdf(), per_page(ROW_ITEM)), 1.0, 10.0 * NO);
    // Stock in each warehouse: New-Order's 10 lines, Stock-Level's ~200
    // recent order lines (their items are NURand too).
    add(&pages(item_pdf(), per_page(ROW_STOCK)), w, 10.0 * NO + 200.0 * SL);
    // Appended tables, time in transactions: a district's orders come every
    // 10 w / 0.45 transactions.
    let per_order = 10.0 * w / NO;
    let ol_per_page = per_page(ROW_ORDER_LINE);
    let o_per_page = per_page(ROW_ORDERS);
    let no_per_page = per_page(ROW_NEW_ORDER);
    // Order lines: Stock-Level within its window, Delivery at 900 orders,
    // Order-Status at the customer's last order (a customer orders every
    // 3,000 orders of its district).
    // A Stock-Level reads an order line at a mean age of half its window,
    // the last reference before being the line's insert.
    let (d_gap, os_gap) = ((UNDELIVERED - SL_ORDERS).max(0.0) * per_order, (3000.0 - UNDELIVERED) * per_order);
    let appends = vec![
        Append { pages_per_t: 10.0 * NO / ol_per_page, gaps: vec![0.5 * SL_ORDERS * per_order, d_gap, os_gap], refs_per_t: vec![200.0 * SL, 10.0 * DEL * 10.0, 10.0 * OS] },
        Append { pages_per_t: NO / o_per_page, gaps: vec![UNDELIVERED * per_order, os_gap], refs_per_t: vec![10.0 * DEL, OS] },
        Append { pages_per_t: NO / no_per_page, gaps: vec![UNDELIVERED * per_order], refs_per_t: vec![10.0 * DEL] },
        // History: written by Payment, never read.
        Append { pages_per_t: PAY / per_page(ROW_HISTORY), gaps: vec![], refs_per_t: vec![] },
    ];
    refs += 200.0 * SL + 100.0 * DEL + 10.0 * OS + 10.0 * DEL + OS + 10.0 * DEL + 10.0 * NO + NO + NO + PAY;
    let total_pages = (w * bytes_per_warehouse.max(SPEC_BYTES_PER_WAREHOUSE) + SPEC_ITEM_BYTES * overhead) / page_bytes;
    TpccPages { groups, appends, refs_per_txn: refs, total_pages }
}

impl TpccPages {
    /// Misses a transaction with a cache of `cache_pages`.
    pub fn misses_per_txn(&self, cache_pages: f64) -> f64 {
        if cache_pages >= self.total_pages {
            return 0.0;
        }
        let t = characteristic_time(&self.groups, &self.appends, cache_pages);
        if !t.is_finite() {
            return 0.0;
        }
        misses_per_t(&self.groups, &self.appends, t)
    }

    /// The share of row references that miss.
    pub fn miss_ratio(&self, cache_pages: f64) -> f64 {
        self.misses_per_txn(cache_pages) / self.refs_per_txn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A hand-computed case. Two groups: 1 page at rate 1, 2 pages at rate
    // 0.25 (a unit time), cache of 1.5 pages. T solves
    // (1 − e^{−T}) + 2(1 − e^{−T/4}) = 1.5; at T = 1.2:
    // 1 − e^{−1.2} = 0.698806, 2(1 − e^{−0.3}) = 0.518364, sum 1.217170;
    // at T = 1.6: 0.798103 + 0.659360 = 1.457463; at T = 1.7:
    // 0.817316 + 0.692460 = 1.509776. So 1.6 < T < 1.7, and by linear
    // interpolation T ≈ 1.6 + 0.1 × 0.042537 / 0.052313 = 1.6813.
    // Misses a unit time: e^{−T} + 2 × 0.25 × e^{−T/4} at T = 1.6813 =
    // 0.18613 + 0.5 × 0.65683 = 0.51455; of 1.5 references: 0.3430.
    #[test]
    fn che_on_a_hand_computed_case() {
        let g = [Group { rate: 1.0, count: 1.0 }, Group { rate: 0.25, count: 2.0 }];
        let t = characteristic_time(&g, &[], 1.5);
        assert!((t - 1.6813).abs() < 0.002, "T = {t}");
        let m = misses_per_t(&g, &[], t) / 1.5;
        assert!((m - 0.3430).abs() < 0.001, "miss ratio {m}");
        // Everything fits: no misses; no cache: every reference misses.
        assert!(characteristic_time(&g, &[], 3.0).is_infinite());
        assert_eq!(misses_per_t(&g, &[], 0.0), 1.5);
    }

    // An append stream alone: 2 pages a unit time, re-read once at gap 10
    // (1 reference a unit time). Held = 2 (min(10, T) + T): a cache of 30
    // pages gives T = 7.5 (gap 10 misses), 50 pages T = 15 (2 × (10 + 15)
    // = 50: it hits).
    #[test]
    fn append_stream_hits_when_its_gap_is_under_t() {
        let a = [Append { pages_per_t: 2.0, gaps: vec![10.0], refs_per_t: vec![1.0] }];
        let t = characteristic_time(&[], &a, 30.0);
        assert!((t - 7.5).abs() < 1e-6, "{t}");
        assert_eq!(misses_per_t(&[], &a, t), 1.0);
        let t = characteristic_time(&[], &a, 50.0);
        assert!((t - 15.0).abs() < 1e-6, "{t}");
        assert_eq!(misses_per_t(&[], &a, t), 0.0);
    }

    // NURand(A, x, y) by brute force over every (a, b) on a small case:
    // A = 3, x = 1, y = 6 — 4 × 6 = 24 pairs, ((a | b) % 6) + 1.
    #[test]
    fn nurand_matches_enumeration() {
        let p = nurand(3, 1, 6);
        let mut count = [0u32; 6];
        for a in 0..=3u32 {
            for b in 1..=6u32 {
                count[((a | b) % 6) as usize] += 1;
            }
        }
        for i in 0..6 {
            assert!((p[i] - f64::from(count[i]) / 24.0).abs() < 1e-12, "{i}: {} vs {}", p[i], count[i]);
        }
        let s: f64 = nurand(1023, 1, 3000).iter().sum();
        assert!((s - 1.0).abs() < 1e-9);
    }

    // Scale: the same cache fraction gives nearly the same miss ratio at 2
    // and 2,000 warehouses (every warehouse is alike), except that the item
    // table, fixed in size, fits at scale.
    #[test]
    fn tpcc_miss_ratio_depends_on_the_cache_fraction() {
        let small = tpcc(10.0, 8192.0, 115e6);
        let big = tpcc(1000.0, 8192.0, 115e6);
        for f in [0.05, 0.2, 0.5] {
            let (a, b) = (small.miss_ratio(f * small.total_pages), big.miss_ratio(f * big.total_pages));
            assert!(a > 0.0 && b > 0.0 && (a / b - 1.0).abs() < 0.5, "f {f}: {a} vs {b}");
        }
        // More cache, fewer misses.
        let m: Vec<f64> = [0.02, 0.1, 0.3, 0.9].iter().map(|f| big.miss_ratio(f * big.total_pages)).collect();
        assert!(m.windows(2).all(|w| w[1] < w[0]), "{m:?}");
    }
}
