//! One run of the database model: the users, the vCPUs, the hot rows, the
//! log writer's group commit and the flusher, as a type with one method per
//! event. `Setup` holds what the run never changes; `DbRun` what it does.

use super::*;
use storlab_model::bucket::Bucket;
use storlab_model::deployment::CreditMode;

/// The run's window: measured from `w0` to `w1` (a sweep's steady state may
/// end it early).
#[derive(Clone, Copy)]
struct Window {
    w0: f64,
    w1: f64,
}

impl Window {
    fn has(&self, t: f64) -> bool {
        t >= self.w0 && t <= self.w1
    }

    /// What of `[t, t + d]` lies in the window.
    fn part(&self, t: f64, d: f64) -> f64 {
        (t + d).min(self.w1).max(self.w0) - t.min(self.w1).max(self.w0)
    }

    fn count(&self, pool_ios: &mut [PoolIo], pool: usize, read: bool, bytes: f64, t: f64) {
        if self.has(t) {
            pool_ios[pool].count(read, bytes);
        }
    }
}

/// What a run never changes: the deployment, the profile and what follows
/// from them.
struct Setup<'a> {
    dep: &'a Deployment,
    profile: &'a Profile,
    p: &'a DbParams,
    lats: &'a [Latencies],
    data: usize,
    log: usize,
    /// A commit's WAL write must be durable before it returns: where the
    /// log's device has a volatile write cache, a write plus its flush.
    log_lat: Latencies,
    data_durable: Latencies,
    /// The round trip outside the server, s.
    outside: f64,
    /// A flush's own CPU, taken out of the writing transactions' CPU.
    flush_cpu_us: f64,
    flush_cpu: f64,
    /// A faster core takes less time for the same transaction.
    speed: f64,
    /// A data page (the engine's rules: PostgreSQL and SQL Server 8 KiB,
    /// InnoDB 16 KiB, Db2 4 KiB).
    page: f64,
    miss: f64,
    /// The share of the buffer pool's misses the host's read cache serves
    /// (Azure's ReadOnly or ReadWrite disk caching; 0 without one).
    host_hit: f64,
    vcpus: usize,
    n: usize,
    /// The mix's cumulative shares.
    cum: Vec<f64>,
    /// Hot rows: each type's kinds of rows (index, rows per unit), in one
    /// order for every type so that two users never wait for each other.
    row_kinds: Vec<&'a str>,
    max_rows: u64,
    type_rows: Vec<Vec<(u64, u64)>>,
    units: u64,
    homes: Vec<u64>,
    wb: WritebackModel,
    delay: f64,
    /// The kernel's flusher, or InnoDB's page cleaner where the profile is
    /// InnoDB's (it writes with O_DIRECT).
    wp: Option<WritePath>,
    flusher_period: f64,
    pages_per_redo_byte: f64,
    /// InnoDB's doublewrite copies and binary log (none for PostgreSQL).
    doublewrite: bool,
    binlog_every: u32,
    binlog_per_txn: Option<f64>,
    dblwr_block_pages: f64,
    /// The engine's longest single log write, bytes (`iorules`).
    max_log_write: f64,
    /// `usl_compute` at 0, 1, … `n` users in a transaction: read at every
    /// transaction's start, computed once.
    usl_table: Vec<f64>,
}

impl Setup<'_> {
    /// The USL's N is the concurrency: the users inside a transaction, not
    /// thinking (a closed network's delay station is outside the system).
    /// A scenario's α and β override the profile's penalty (they are the
    /// host's own); otherwise the profile's recorded penalty (or its USL
    /// where it has none), carried to the host's vCPUs (`core_factor`).
    fn usl_at(&self, a: usize) -> f64 {
        self.usl_table.get(a).copied().unwrap_or_else(|| self.usl_compute(a as f64))
    }

    fn usl_compute(&self, a: f64) -> f64 {
        match self.p.usl {
            Some((alpha, beta)) => 1.0 + alpha * (a - 1.0).max(0.0) + beta * a * (a - 1.0).max(0.0),
            None => self.profile.penalty_factor(a) * self.profile.core_factor(a, self.vcpus as f64),
        }
    }
}

/// Where the time went in the window, summed over transactions, s.
#[derive(Default)]
struct Times {
    cpu_queue: f64,
    cpu: f64,
    reads: f64,
    commit: f64,
    think: f64,
    outside: f64,
    locks: f64,
}

/// Caches filling from empty (`cold_cache`): bytes the database cache
/// and the host's read cache hold, each up to its size (or the data), and
/// when the database cache was full.
struct Fill {
    db: f64,
    host: f64,
    db_cap: f64,
    host_cap: f64,
    data: f64,
    full_at: Option<f64>,
}

pub(super) struct DbRun<'a> {
    s: Setup<'a>,
    fill: Option<Fill>,
    /// Data reads in the window, and those the host cache served.
    window_reads: (u64, u64),
    win: Window,
    st: DeploymentState,
    sink: series::SeriesSink,
    labels: IntMap<PacerId, Resource>,
    rng: Rng,
    heap: EventQueue<u32>,
    vus: Vec<Vu>,
    // Users inside a transaction (not thinking), and the penalty's mean.
    active: usize,
    thinking: Vec<bool>,
    usl_sum: f64,
    usl_n: u64,
    // The vCPUs: idle ones, and the users waiting for one (user, since, demand).
    cpu_idle: usize,
    cpu_queue: VecDeque<(usize, f64, f64)>,
    cpu_demand: Vec<f64>,
    cpu_busy: f64,
    // A burstable host in standard mode: its CPU credits (vCPU-seconds),
    // the vCPU time it ran held to the baseline in the window, and the
    // balance (credits) at the first completion of each period.
    cpu_credits: Option<(Bucket, f64)>,
    throttled_s: f64,
    credit_periods: Vec<f64>,
    // Hot rows: who holds each, who waits; each user's wanted and held rows.
    row_locks: RowLocks,
    wanted: Vec<Vec<u64>>,
    held: Vec<usize>,
    lock_since: Vec<f64>,
    hists: Vec<Histogram>,
    counts: Vec<u64>,
    pool_ios: Vec<PoolIo>,
    reads: Path,
    bg: Path,
    // Group commit: the commits waiting for the next flush, and those the
    // flush in progress serves (VU, WAL bytes).
    log_paths: IntMap<u64, Path>,
    waiting: Vec<(usize, f64)>,
    flushing: Vec<usize>,
    flush_busy: bool,
    flushes: u64,
    flushed_commits: u64,
    commit_start: Vec<f64>,
    flush_started: f64,
    flush_time: f64,
    binlog_groups: u64,
    binlog_bytes: f64,
    // Write-back: the transactions and data reads since the flusher last
    // woke, and the writes owed but not yet whole (checkpoint writes, their
    // pages, dirty evictions).
    flusher_awake: bool,
    slice_txns: f64,
    slice_reads: f64,
    last_wake: f64,
    owed_ops: f64,
    owed_pages: f64,
    owed_evictions: f64,
    ckpt_paths: IntMap<u64, Path>,
    dblwr_owed: f64,
    dblwr_paths: IntMap<u64, Path>,
    window_open: bool,
    times: Times,
    txn_periods: Vec<f64>,
    events: u64,
    stopped_at: Option<f64>,
    // A sweep's steady state: batches' rates and the one being counted.
    batches: Vec<f64>,
    batch_txns: u64,
    batch_end: f64,
    steady_at: Option<f64>,
    // Buckets that emptied in the window, not yet cut at, in time order.
    empties: u64,
    pending: Vec<(f64, PacerId)>,
    known: Vec<PacerId>,
    snaps: Vec<DbSnap>,
    next_cut: f64,
}

/// The rows each transaction type locks: the kinds of row (by name), the
/// most of one kind a unit has, and per type its (kind, rows a unit) pairs.
fn row_plan(profile: &Profile) -> (Vec<&str>, u64, Vec<Vec<(u64, u64)>>) {
    let mut row_kinds: Vec<&str> = Vec::new();
    let mut max_rows = 1u64;
    let type_rows: Vec<Vec<(u64, u64)>> = profile
        .transactions
        .iter()
        .map(|tp| {
            let mut v: Vec<(u64, u64)> = tp
                .row_locks
                .iter()
                .map(|l| {
                    let k = row_kinds.iter().position(|&r| r == l.rows).unwrap_or_else(|| {
                        row_kinds.push(&l.rows);
                        row_kinds.len() - 1
                    });
                    max_rows = max_rows.max(u64::from(l.per_unit));
                    (k as u64, u64::from(l.per_unit.max(1)))
                })
                .collect();
            v.sort_unstable();
            v
        })
        .collect();
    (row_kinds, max_rows, type_rows)
}

/// Each user's home unit (a TPC-C warehouse) among `units`.
fn home_units(p: &DbParams, n: usize, units: u64) -> Vec<u64> {
    // Home units go round-robin, as storlab's TPC-C driver gives home
    // warehouses (users 1..W each their own, user W+1 shares the first),
    // or are drawn at random per user, as HammerDB draws them (two users
    // may share one below W users). Their own stream, so that the draws
    // do not move the rest of the run.
    if p.random_homes {
        let mut r = Rng::new(p.seed ^ 0x686f_6d65);
        (0..n).map(|_| r.below(units)).collect()
    } else {
        (0..n as u64).map(|v| v % units).collect()
    }
}

/// The share of the buffer pool's misses a host read cache serves. The
/// host cache sees the buffer pool's misses and keeps what it read, so it
/// holds the pages read recently, the buffer pool's own among them: an
/// inclusive two-level LRU, whose pair misses about as the larger cache
/// alone (Wong and Wilkes, "My cache or yours? Making storage more
/// exclusive", USENIX ATC 2002). Misses past both are the profile's curve
/// at the larger of the two over the data; a host that publishes no cache
/// size holds the data, as for I/O jobs.
pub fn host_cache_hit(dep: &Deployment, pool: usize, profile: &Profile, memory: f64, data_bytes: f64) -> f64 {
    if dep.pools[pool].host_cache == storlab_model::scenario::HostCacheMode::None {
        return 0.0;
    }
    let m1 = profile.mrc.miss_ratio_at(memory / data_bytes);
    if m1 <= 0.0 {
        return 0.0;
    }
    let Some(gib) = dep.host.cache_gib else { return 1.0 };
    let host = gib * (1u64 << 30) as f64;
    let both = profile.mrc.miss_ratio_at(memory.max(host) / data_bytes);
    (1.0 - both / m1).clamp(0.0, 1.0)
}

impl<'a> DbRun<'a> {
    pub(super) fn new(dep: &'a Deployment, profile: &'a Profile, p: &'a DbParams, lats: &'a [Latencies]) -> DbRun<'a> {
        let mut st = DeploymentState::for_deployment(dep);
        let sink = crate::series_sink(dep, &mut st, p.period_s);
        let mut labels = IntMap::default();
        let data = pool_for(dep, Role::Data, 0);
        let log = pool_for(dep, Role::Log, data);
        let durable = |pool: usize| Latencies { read: lats[pool].read.clone(), write: lats[pool].flush.clone().unwrap_or_else(|| lats[pool].write.clone()), hit: None, flush: None };
        let flush_cpu_us = profile.concurrency.flush_cpu_us.max(0.0);
        let speed = cpu_speed_ratio(dep, profile).unwrap_or(1.0);
        let rules = Rules::resolve(dep, profile);
        let page = rules.page_bytes;
        let reads = Path::new(&mut st, dep, data, page, false, &mut labels);
        let bg = Path::new(&mut st, dep, data, page, false, &mut labels);
        let memory = p.db_memory_bytes.unwrap_or(dep.host.memory_gib.unwrap_or(0.0) * (1u64 << 30) as f64 * DB_MEMORY_SHARE);
        let data_bytes = profile.data_bytes(p.scale).max(1.0);
        let n = p.vus.max(1) as usize;
        let cum: Vec<f64> = profile
            .transactions
            .iter()
            .scan(0.0, |s, t| {
                *s += t.share;
                Some(*s)
            })
            .collect();
        let (row_kinds, max_rows, type_rows) = row_plan(profile);
        let units = (p.scale.floor() as u64).max(1);
        let homes = home_units(p, n, units);
        let wb = WritebackModel::new(profile, &rules, memory, &homes, data_bytes);
        let wp = WritePath::resolve(dep, profile);
        let s = Setup {
            dep,
            profile,
            p,
            lats,
            data,
            log,
            log_lat: durable(log),
            data_durable: durable(data),
            outside: profile.outside_us_at(f64::from(p.vus)) * 1e-6,
            flush_cpu_us,
            flush_cpu: flush_cpu_us * 1e-6 / speed,
            speed,
            page,
            miss: profile.mrc.miss_ratio_at(memory / data_bytes),
            host_hit: host_cache_hit(dep, data, profile, memory, data_bytes),
            vcpus: dep.host.vcpus.unwrap_or(1.0).max(1.0) as usize,
            n,
            cum,
            row_kinds,
            max_rows,
            type_rows,
            units,
            homes,
            pages_per_redo_byte: wb.pages_per_redo_byte(),
            wb,
            delay: p.writeback_delay_s.max(0.0),
            flusher_period: if wp.is_some() { PAGE_CLEANER_PERIOD_S } else { FLUSHER_PERIOD_S },
            doublewrite: wp.as_ref().is_some_and(|w| w.doublewrite),
            binlog_every: wp.as_ref().map_or(0, |w| w.binlog_sync_every),
            binlog_per_txn: wp.as_ref().and_then(|w| w.binlog_bytes_per_txn),
            dblwr_block_pages: (DOUBLEWRITE_BLOCK_BYTES / page).floor().max(1.0),
            wp,
            max_log_write: rules.max_log_write,
            usl_table: Vec::new(),
        };
        let mut s = s;
        s.usl_table = (0..=n).map(|a| s.usl_compute(a as f64)).collect();
        let win = Window { w0: p.rampup_s, w1: p.rampup_s + p.duration_s };
        // Events are the user (its index), or FLUSH, FLUSH_CPU, WRITEBACK, BINLOG.
        let mut heap: EventQueue<u32> = EventQueue::with_capacity(p.vus as usize + 4);
        heap.push(Secs(s.flusher_period), WRITEBACK);
        let mut vus = vec![Vu { txn: 0, started: 0.0, reads_left: 0, commits: 0, cpu_pending: false, on_cpu: false }; n];
        for (v, vu) in vus.iter_mut().enumerate() {
            heap.push(Secs(0.0), v as u32);
            vu.reads_left = u32::MAX; // not started
        }
        let empties = st.pacers.empties;
        let fill = p.cold_cache.then(|| Fill {
            db: 0.0,
            host: 0.0,
            db_cap: memory.min(data_bytes),
            host_cap: if dep.pools[data].host_cache == storlab_model::scenario::HostCacheMode::None {
                0.0
            } else {
                dep.host.cache_gib.map_or(data_bytes, |g| g * (1u64 << 30) as f64).min(data_bytes)
            },
            data: data_bytes,
            full_at: None,
        });
        DbRun {
            fill,
            window_reads: (0, 0),
            win,
            sink,
            labels,
            rng: Rng::new(p.seed),
            heap,
            vus,
            active: n,
            thinking: vec![false; n],
            usl_sum: 0.0,
            usl_n: 0,
            cpu_idle: s.vcpus,
            cpu_queue: VecDeque::new(),
            cpu_demand: vec![0.0; n],
            cpu_busy: 0.0,
            cpu_credits: dep.host.cpu_credits.as_ref().filter(|c| c.mode == CreditMode::Standard).map(|c| {
                let mut b = c.bucket(s.vcpus as f64);
                if let Some(pct) = dep.buckets_at_start_pct {
                    b.set_balance_percent(pct, Secs::ZERO);
                }
                (b, c.baseline.max(1e-3))
            }),
            throttled_s: 0.0,
            credit_periods: Vec::new(),
            row_locks: IntMap::default(),
            wanted: vec![Vec::new(); n],
            held: vec![0; n],
            lock_since: vec![0.0; n],
            hists: profile.transactions.iter().map(|_| Histogram::default()).collect(),
            counts: vec![0; profile.transactions.len()],
            pool_ios: vec![PoolIo::default(); dep.pools.len()],
            reads,
            bg,
            log_paths: IntMap::default(),
            waiting: Vec::new(),
            flushing: Vec::new(),
            flush_busy: false,
            flushes: 0,
            flushed_commits: 0,
            commit_start: vec![0.0; n],
            flush_started: 0.0,
            flush_time: 0.0,
            binlog_groups: 0,
            binlog_bytes: 0.0,
            flusher_awake: false,
            slice_txns: 0.0,
            slice_reads: 0.0,
            last_wake: 0.0,
            owed_ops: 0.0,
            owed_pages: 0.0,
            owed_evictions: 0.0,
            ckpt_paths: IntMap::default(),
            dblwr_owed: 0.0,
            dblwr_paths: IntMap::default(),
            window_open: false,
            times: Times::default(),
            txn_periods: Vec::new(),
            events: 0,
            stopped_at: None,
            batches: Vec::new(),
            batch_txns: 0,
            batch_end: win.w0 + STEADY_BATCH_S,
            steady_at: None,
            empties,
            pending: Vec::new(),
            known: Vec::new(),
            snaps: Vec::new(),
            next_cut: f64::INFINITY,
            st,
            s,
        }
    }

    fn push(&mut self, t: f64, who: u32) {
        self.heap.push(Secs(t), who);
    }

    /// Runs until the window ends (or `progress` says stop) and sums it up.
    pub(super) fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> DbResult {
        while let Some((Secs(t), who)) = self.heap.pop() {
            if t > self.win.w1 {
                break;
            }
            if self.s.p.steady && t >= self.batch_end && self.batch_done() {
                break;
            }
            self.events += 1;
            if self.events % 4096 == 0 && !progress(t) {
                self.stopped_at = Some(t);
                break;
            }
            self.cut_where_buckets_emptied(t);
            self.sink.advance(Secs(t), &self.st.pacers);
            let flush_done = match who {
                FLUSH => self.on_flush_written(t),
                FLUSH_CPU => {
                    self.cpu_idle += 1;
                    true
                }
                WRITEBACK => {
                    // The flusher: the pages of age are taken below.
                    self.flusher_awake = true;
                    self.push(t + self.s.flusher_period, WRITEBACK);
                    false
                }
                BINLOG => {
                    // The redo log is durable (prepare): the binary log's
                    // write, then the commits.
                    let done = self.log_write(self.binlog_bytes.max(512.0), t);
                    self.push(done, FLUSH);
                    false
                }
                _ => {
                    self.on_user(t, who as usize);
                    false
                }
            };
            if flush_done {
                self.commits_return(t);
            }
            self.run_cpus(t);
            self.log_writer(t);
            if self.flusher_awake {
                self.flusher_awake = false;
                self.flusher(t);
            }
        }
        self.finish()
    }

    /// A steady-state sweep's batch has ended: its rate counted; true when
    /// the rates have settled and the window ends at this edge.
    fn batch_done(&mut self) -> bool {
        self.batches.push(self.batch_txns as f64 / STEADY_BATCH_S);
        self.batch_txns = 0;
        let window = self.batch_end - self.win.w0;
        let rate = self.batches.iter().sum::<f64>() / self.batches.len() as f64;
        let settled = self.st.pacers.balances(Secs(self.batch_end)).iter().all(|b| b.percent <= 0.1 || b.percent >= 99.9)
            && self.cpu_credits.as_ref().is_none_or(|(b, _)| {
                let pct = 100.0 * b.at(Secs(self.batch_end)) / b.capacity.max(1e-9);
                pct <= 0.1 || pct >= 99.9
            });
        if window < self.s.p.duration_s && window >= self.s.wb.interval_s(rate) && settled && steady(&self.batches) {
            self.steady_at = Some(window);
            self.win.w1 = self.batch_end;
            return true;
        }
        self.batch_end += STEADY_BATCH_S;
        false
    }

    /// Opens the window at its start; where a bucket emptied at an
    /// admission made since the last event (no earlier than it), cuts the
    /// window there, before counting what comes after.
    fn cut_where_buckets_emptied(&mut self, t: f64) {
        if !self.window_open && t >= self.win.w0 {
            self.window_open = true;
            let ids: Vec<PacerId> = self.st.pacers.ids().collect();
            self.st.pacers.reset_stats(&ids);
            self.empties = self.st.pacers.empties;
        }
        if self.window_open && self.st.pacers.empties != self.empties {
            self.empties = self.st.pacers.empties;
            for id in self.st.pacers.ids() {
                // The bucket's own pacer (those linked to it follow it).
                if let Some(e) = self.st.pacers.get(id).emptied_at.filter(|_| self.st.pacers.get(id).bucket().is_some()) {
                    if !self.known.contains(&id) {
                        self.known.push(id);
                        self.pending.push((e.0, id));
                    }
                }
            }
            self.pending.sort_by(|a, b| a.0.total_cmp(&b.0));
            self.next_cut = self.pending.first().map_or(f64::INFINITY, |p| p.0);
        }
        while t >= self.next_cut {
            let at = self.next_cut;
            let n = self.pending.iter().take_while(|p| p.0 <= at).count();
            let emptied = self.pending.drain(..n).filter_map(|(_, id)| self.labels.get(&id).map(|r| r.label(false))).collect();
            self.snaps.push(DbSnap { t: at, counts: self.counts.clone(), hists: self.hists.clone(), pool_ios: self.pool_ios.clone(), emptied });
            self.next_cut = self.pending.first().map_or(f64::INFINITY, |p| p.0);
        }
    }

    /// A flush's write done: with a flush CPU, the log writer, woken by the
    /// device, queues for a vCPU before the commits it carries return.
    fn on_flush_written(&mut self, t: f64) -> bool {
        if self.s.flush_cpu > 0.0 {
            self.cpu_queue.push_back((FLUSHER, t, self.s.flush_cpu));
            false
        } else {
            true
        }
    }

    /// A user's event: a new transaction, back from its round trip, a read
    /// done, its commit, or its end.
    fn on_user(&mut self, t: f64, v: usize) {
        let inw = self.win.has(t);
        if self.vus[v].on_cpu {
            self.vus[v].on_cpu = false;
            self.cpu_idle += 1;
        }
        let mut take_cpu = false;
        if self.vus[v].reads_left == u32::MAX {
            // A new transaction: its type, its round trip, then its CPU.
            let x = self.rng.f64();
            let txn = self.s.cum.iter().position(|&c| x < c).unwrap_or(self.s.cum.len() - 1);
            let tp = &self.s.profile.transactions[txn];
            let miss = self.miss_now();
            let vu = &mut self.vus[v];
            vu.txn = txn;
            vu.started = t;
            vu.reads_left = draw_count(tp.page_accesses * miss, &mut self.rng);
            vu.commits = draw_count(tp.commits, &mut self.rng);
            let home = self.s.homes[v];
            self.wanted[v].clear();
            for &(kind, per) in &self.s.type_rows[txn] {
                let row = if per > 1 { self.rng.below(per) } else { 0 };
                self.wanted[v].push((kind * self.s.units + home) * self.s.max_rows + row);
            }
            if self.thinking[v] {
                self.thinking[v] = false;
                self.active += 1;
            }
            if self.s.outside > 0.0 {
                self.vus[v].cpu_pending = true;
                if inw {
                    self.times.outside += self.s.outside;
                }
                self.push(t + self.s.outside, v as u32);
            } else {
                take_cpu = true;
            }
        } else if self.vus[v].cpu_pending {
            self.vus[v].cpu_pending = false;
            take_cpu = true;
        }
        let vu = self.vus[v];
        if take_cpu {
            let tp = &self.s.profile.transactions[vu.txn];
            let usl = self.s.usl_at(self.active);
            if inw {
                self.usl_sum += usl;
                self.usl_n += 1;
            }
            let demand = (tp.cpu_us - self.s.flush_cpu_us * tp.commits).max(0.0) * 1e-6 / self.s.speed * usl;
            self.cpu_demand[v] = demand;
            self.cpu_queue.push_back((v, t, demand));
        } else if vu.cpu_pending {
            // On its round trip: the event that brings it back is queued.
        } else if vu.reads_left > 0 {
            self.vus[v].reads_left -= 1;
            self.slice_reads += 1.0;
            let (data, page) = (self.s.data, self.s.page);
            // Only a pool with a host cache draws, so runs without one keep
            // their random streams.
            let host_hit = self.host_hit_now();
            let class = if host_hit > 0.0 && self.rng.f64() < host_hit { IoClass::ReadHit } else { IoClass::ReadMiss };
            self.filled(t, class);
            if inw {
                self.window_reads.0 += 1;
                self.window_reads.1 += u64::from(class == IoClass::ReadHit);
            }
            let done = self.reads.io(&mut self.st, &self.s.lats[data], class, t, &mut self.rng);
            self.sink.complete(data, true, page, done - t);
            self.win.count(&mut self.pool_ios, data, true, page, done);
            if inw {
                self.times.reads += done - t;
            }
            self.push(done, v as u32);
        } else if vu.commits > 0 {
            self.commit_start[v] = t;
            self.waiting.push((v, self.s.profile.transactions[vu.txn].wal_bytes));
        } else {
            self.txn_done(t, v);
        }
    }

    /// The database cache's miss ratio now: the steady one, or while it
    /// fills from empty the curve at what it holds.
    fn miss_now(&self) -> f64 {
        match &self.fill {
            Some(f) if f.full_at.is_none() => self.s.profile.mrc.miss_ratio_filling(f.db / f.data).max(self.s.miss),
            _ => self.s.miss,
        }
    }

    /// The share of the database cache's misses the host cache serves now
    /// (`host_cache_hit`'s rule at what each cache holds).
    fn host_hit_now(&self) -> f64 {
        match &self.fill {
            Some(f) if f.host_cap > 0.0 && (f.host < f.host_cap || f.full_at.is_none()) => {
                let mrc = &self.s.profile.mrc;
                let one = mrc.miss_ratio_filling(f.db / f.data);
                if one <= 0.0 {
                    return 0.0;
                }
                (1.0 - mrc.miss_ratio_filling(f.db.max(f.host) / f.data) / one).clamp(0.0, 1.0)
            }
            _ => self.s.host_hit,
        }
    }

    /// A page read into the database cache (and, from the disks, into the
    /// host cache) while they fill.
    fn filled(&mut self, t: f64, class: IoClass) {
        let page = self.s.page;
        if let Some(f) = &mut self.fill {
            f.db = (f.db + page).min(f.db_cap);
            if class == IoClass::ReadMiss {
                f.host = (f.host + page).min(f.host_cap);
            }
            if f.full_at.is_none() && f.db >= f.db_cap {
                f.full_at = Some(t);
            }
        }
    }

    /// A user's transaction is done: its latency, its rows to the next user
    /// waiting for each, its think time, then the next.
    fn txn_done(&mut self, t: f64, v: usize) {
        let inw = self.win.has(t);
        let txn = self.vus[v].txn;
        if inw {
            self.counts[txn] += 1;
            self.batch_txns += 1;
            self.hists[txn].record(t - self.vus[v].started);
        }
        let k = (t / self.s.p.period_s) as usize;
        if self.txn_periods.len() <= k {
            self.txn_periods.resize(k + 1, 0.0);
        }
        if let Some((b, _)) = &self.cpu_credits {
            while self.credit_periods.len() <= k {
                self.credit_periods.push(b.at(Secs(t)).max(0.0) / 60.0);
            }
        }
        self.txn_periods[k] += 1.0;
        self.slice_txns += 1.0;
        self.vus[v].reads_left = u32::MAX;
        // Think time: negative exponential with the given mean.
        let think = if self.s.p.think_time_s > 0.0 { -self.s.p.think_time_s * (1.0 - self.rng.f64()).ln() } else { 0.0 };
        if inw {
            self.times.think += think;
        }
        if think > 0.0 {
            self.thinking[v] = true;
            self.active -= 1;
        }
        self.push(t + think, v as u32);
        // Its rows, durable now, go to the next user waiting for each.
        for i in 0..self.held[v] {
            let key = self.wanted[v][i];
            let Some(e) = self.row_locks.get_mut(&key) else { continue };
            match e.1.pop_front() {
                Some(u) => {
                    e.0 = u;
                    let u = u as usize;
                    self.held[u] += 1;
                    if inw {
                        self.times.locks += t - self.lock_since[u];
                    }
                    self.cpu_queue.push_back((u, t, self.cpu_demand[u]));
                }
                None => {
                    self.row_locks.remove(&key);
                }
            }
        }
        self.held[v] = 0;
    }

    /// The flush is durable (and its CPU done): the commits it carried return.
    fn commits_return(&mut self, t: f64) {
        let inw = self.win.has(t);
        self.flushes += u64::from(inw);
        if inw {
            self.flush_time += t - self.flush_started;
        }
        for v in std::mem::take(&mut self.flushing) {
            self.flushed_commits += u64::from(inw);
            if inw {
                self.times.commit += t - self.commit_start[v];
            }
            self.vus[v].commits -= 1;
            self.push(t, v as u32);
        }
        self.flush_busy = false;
    }

    /// The vCPUs, first come first served; a user takes its hot rows as it
    /// starts, and where one is held waits for it off the vCPU.
    fn run_cpus(&mut self, t: f64) {
        while self.cpu_idle > 0 {
            let Some((u, since, demand)) = self.cpu_queue.pop_front() else { break };
            if u == FLUSHER {
                self.cpu_idle -= 1;
                self.cpu_busy += self.win.part(t, demand);
                let took = self.cpu_time(t, demand);
                self.push(t + took, FLUSH_CPU);
                continue;
            }
            if !acquire(&mut self.row_locks, &self.wanted[u], &mut self.held[u], u as u32) {
                self.lock_since[u] = t;
                continue;
            }
            self.cpu_idle -= 1;
            self.vus[u].on_cpu = true;
            if self.win.has(since) {
                self.times.cpu_queue += t - since;
                self.times.cpu += demand;
            }
            self.cpu_busy += self.win.part(t, demand);
            let took = self.cpu_time(t, demand);
            self.push(t + took, u as u32);
        }
    }

    /// How long `demand` s of CPU work takes on one vCPU from `t`: as long
    /// as it is, except on a burstable host in standard mode, whose vCPUs
    /// run at their baseline share once the credit balance cannot pay for
    /// the work. Held to the baseline, the work is paid from the credits
    /// it earns while it runs: the balance may go below zero at the
    /// dispatch and is back by the time the work is done, so credits never
    /// pay twice.
    fn cpu_time(&mut self, t: f64, demand: f64) -> f64 {
        let Some((b, baseline)) = self.cpu_credits.as_mut() else { return demand };
        let now = b.at(Secs(t));
        b.balance = now - demand;
        b.updated = b.updated.max(Secs(t));
        if now >= demand {
            return demand;
        }
        let slow = demand / *baseline;
        self.throttled_s += self.win.part(t, slow);
        slow
    }

    /// The log writer: one flush at a time, serving every commit waiting:
    /// its write now, its CPU when the device wakes it.
    fn log_writer(&mut self, t: f64) {
        if self.flush_busy || self.waiting.is_empty() {
            return;
        }
        let flush_bytes = self.waiting.iter().map(|w| w.1).sum::<f64>().max(512.0);
        self.flushing = self.waiting.drain(..).map(|w| w.0).collect();
        self.flush_busy = true;
        self.flush_started = t;
        let done = self.log_write(flush_bytes, t);
        // The binary log's sync, once every `sync_binlog` groups.
        let binlog_now = self.s.binlog_every > 0 && {
            self.binlog_groups += 1;
            self.binlog_groups % u64::from(self.s.binlog_every) == 0
        };
        self.binlog_bytes = self.s.binlog_per_txn.map_or(flush_bytes, |b| b * self.flushing.len() as f64);
        // The profile's wait on each flush at this many users
        // (`flush_wait_us`; none unless given): its device write, then it.
        let wait = self.s.profile.flush_wait_us_at(self.active as f64) * 1e-6;
        self.push(done + wait, if binlog_now { BINLOG } else { FLUSH });
    }

    /// A durable write of `bytes` on the log pool from `t`, in pieces of at
    /// most the engine's longest log write (`iorules`), all in flight at
    /// once: when the last piece is durable.
    fn log_write(&mut self, bytes: f64, t: f64) -> f64 {
        let log = self.s.log;
        let mut done = t;
        let mut left = bytes;
        while left > 0.0 {
            let size = left.min(self.s.max_log_write);
            let class = (size.max(4096.0) as u64).next_power_of_two();
            // Each flush is an I/O of its own on the volume's IOPS, never
            // merged with the one before: PostgreSQL rewrites the last,
            // partly filled WAL page from its start at the next flush
            // (XLogWrite), so consecutive flushes overlap rather than
            // follow each other, and each ends in a cache flush. EBS
            // merges only physically sequential I/O.
            let (st, labels, dep) = (&mut self.st, &mut self.labels, self.s.dep);
            let path = self.log_paths.entry(class).or_insert_with(|| Path::new(st, dep, log, class as f64, false, labels));
            let d = path.io(&mut self.st, &self.s.log_lat, IoClass::Write, t, &mut self.rng);
            self.sink.complete(log, false, size, d - t);
            self.win.count(&mut self.pool_ios, log, false, size, d);
            done = done.max(d);
            left -= size;
        }
        done
    }

    /// The flusher, awake: the slice's share of the checkpoint's writes and
    /// its dirty evictions, queued at once (nobody waits for them; what
    /// comes after on the pool queues behind them).
    fn flusher(&mut self, t: f64) {
        let (data, page, dep) = (self.s.data, self.s.page, self.s.dep);
        let dt = t - self.last_wake;
        if t >= self.s.delay && dt > 0.0 {
            let s = self.s.wb.slice(self.slice_txns / dt, dt, self.slice_reads);
            self.owed_ops += s.ops;
            self.owed_pages += s.pages;
            self.owed_evictions += s.evictions;
        }
        // The writes due now: all that are owed, or the page cleaner's
        // share of them (`WritePath::pages_to_flush`).
        let due_ops = match &self.s.wp {
            Some(w) if self.owed_pages > 0.0 => self.owed_ops * w.pages_to_flush(self.owed_pages, self.s.pages_per_redo_byte, dt, self.s.delay == 0.0) / self.owed_pages,
            _ => self.owed_ops,
        };
        // One size for the slice's writes: its pages over its I/Os.
        let ops_now = due_ops.floor();
        let size = if self.owed_ops > 0.0 { (self.owed_pages / self.owed_ops).max(1.0) * page } else { page };
        let class = (size as u64).next_power_of_two().clamp(page as u64, self.s.wb.max_io_bytes as u64);
        if self.s.doublewrite {
            self.dblwr_owed += ops_now * size / page + self.owed_evictions.floor();
        }
        // The doublewrite buffer first: the pages' copies in blocks, each
        // one sequential durable write.
        while self.dblwr_owed >= 1.0 {
            let pages = self.dblwr_owed.min(self.s.dblwr_block_pages).floor();
            self.dblwr_owed -= pages;
            let class = ((pages * page) as u64).next_power_of_two();
            let (st, labels) = (&mut self.st, &mut self.labels);
            let path = self.dblwr_paths.entry(class).or_insert_with(|| Path::new(st, dep, data, class as f64, true, labels));
            let done = path.io(&mut self.st, &self.s.data_durable, IoClass::Write, t, &mut self.rng);
            self.sink.complete(data, false, pages * page, done - t);
            self.win.count(&mut self.pool_ios, data, false, pages * page, done);
        }
        (self.slice_txns, self.slice_reads, self.last_wake) = (0.0, 0.0, t);
        if ops_now >= 1.0 {
            let (st, labels) = (&mut self.st, &mut self.labels);
            let path = self.ckpt_paths.entry(class).or_insert_with(|| Path::new(st, dep, data, class as f64, false, labels));
            for _ in 0..ops_now as u64 {
                self.owed_ops -= 1.0;
                self.owed_pages = (self.owed_pages - size / page).max(0.0);
                let done = path.io(&mut self.st, &self.s.lats[data], IoClass::Write, t, &mut self.rng);
                self.sink.complete(data, false, size, done - t);
                self.win.count(&mut self.pool_ios, data, false, size, done);
            }
        }
        while self.owed_evictions >= 1.0 {
            self.owed_evictions -= 1.0;
            let done = self.bg.io(&mut self.st, &self.s.lats[data], IoClass::Write, t, &mut self.rng);
            self.sink.complete(data, false, page, done - t);
            self.win.count(&mut self.pool_ios, data, false, page, done);
        }
    }

    /// The window's figures, what bound it, and the series.
    fn finish(self) -> DbResult {
        let DbRun { s, fill, window_reads, win, st, sink, labels, pool_ios, counts, hists, times, txn_periods, snaps, .. } = self;
        let (dep, profile, p, vcpus, n, units, data) = (s.dep, s.profile, s.p, s.vcpus, s.n, s.units, s.data);
        let (w0, w1) = (win.w0, win.w1);
        let end = self.stopped_at.unwrap_or(w1).min(w1);
        let w = (end - w0).max(1e-9);
        let total: u64 = counts.iter().sum();
        let tpm = total as f64 * 60.0 / w;
        let cpu_utilization = self.cpu_busy / (w * vcpus as f64);
        let (pools, top) = pool_results(dep, &st, &labels, &pool_ios, w);
        let flushes = self.flushes;
        let commits_per_flush = if flushes > 0 { self.flushed_commits as f64 / flushes as f64 } else { 0.0 };
        let flush_s = if flushes > 0 { self.flush_time / flushes as f64 } else { 0.0 };
        let per = |x: f64| if total > 0 { x / total as f64 } else { 0.0 };
        let (q, c, r, cm, th, out) = (per(times.cpu_queue), per(times.cpu), per(times.reads), per(times.commit), per(times.think), per(times.outside));
        let lk = per(times.locks);
        let all = q + c + r + cm + th + out + lk;
        let pct = |x: f64| 100.0 * x / all.max(1e-12);
        let ms = |s: f64| if s >= 1e-3 { format!("{:.2} ms", s * 1e3) } else { format!("{:.0} µs", s * 1e6) };
        let usl = if self.usl_n > 0 { self.usl_sum / self.usl_n as f64 } else { s.usl_at(n) };
        let cores = profile.core_factor(n as f64, vcpus as f64);
        let usl_note = match (usl > 1.05, s.p.usl.is_none() && (cores - 1.0).abs() >= 0.05) {
            (true, true) => format!(", concurrency penalty ×{usl:.2} at {n} users (×{cores:.2} of it from the host's cores)"),
            (true, false) => format!(", concurrency penalty ×{usl:.2} at {n} users"),
            _ => String::new(),
        };
        // The share of the vCPUs' busy time spent held to the baseline.
        let base = self.cpu_credits.as_ref().map_or(1.0, |c| c.1);
        let throttled = self.throttled_s / (self.cpu_busy - self.throttled_s * base + self.throttled_s).max(1e-12);
        let binding = match top {
            _ if throttled >= 0.5 => {
                format!(
                    "host CPU credits: {vcpus} vCPUs held to their {:.0} % baseline ({:.0} % of their busy time), the CPU credit balance spent (cpu_credits = \"standard\")",
                    100.0 * base,
                    100.0 * throttled.min(1.0)
                )
            }
            _ if cpu_utilization >= 0.9 => format!("host CPU {vcpus} vCPUs at {:.0} %{usl_note}", 100.0 * cpu_utilization),
            Some((u, id, res)) if u >= 0.9 => limit_words(dep, &st, u, id, res),
            _ if lk > 0.0 && lk >= (c + q).max(r).max(cm).max(out) => format!(
                "row locks: {} of {} per transaction waiting for another user's {} row until its commit is durable ({:.0} %), {n} users on {units} home {}{}",
                ms(lk),
                ms(all),
                s.row_kinds.join(" or "),
                pct(lk),
                profile.scale_unit,
                if units == 1 { "" } else { "s" }
            ),
            _ if th > 0.5 * all => format!("think time: {} of {} per transaction, no limit reached", ms(th), ms(all)),
            _ if out >= (c + q).max(r).max(cm) => format!("round trip outside the server: {} of {} per transaction ({:.0} %), no limit reached", ms(out), ms(all), pct(out)),
            _ if cm >= r.max(c + q) && flushes > 0 => {
                format!("log flush latency: {} a flush, {commits_per_flush:.1} commits per flush, {:.0} % of a transaction's time", ms(flush_s), pct(cm))
            }
            _ if r >= c + q && r > 0.0 => {
                let reads = if total > 0 { pool_ios[data].reads / total as f64 } else { 0.0 };
                let hits = match window_reads {
                    (n, h) if n > 0 && (s.host_hit > 0.0 || h > 0) => format!(" ({:.0} % from the host cache)", 100.0 * h as f64 / n as f64),
                    _ => String::new(),
                };
                format!("data read latency: {reads:.1} reads per transaction{hits}, {} of reads, {:.0} % of a transaction's time", ms(r), pct(r))
            }
            _ => format!("CPU time: {} per transaction on {vcpus} vCPUs at {:.0} %{usl_note}", ms(c + q), 100.0 * cpu_utilization),
        };
        let mut series = sink.finish(Secs(end), &st.pacers);
        let phases = db_phases(w0, end, snaps, DbSnap { t: end, counts: counts.clone(), hists: hists.clone(), pool_ios: pool_ios.clone(), emptied: Vec::new() });
        // A per-period series of this run, cut at its end.
        let periods = ((end / p.period_s).ceil() as usize).max(1);
        let per_period = |resource: &str, metric: &str, mut values: Vec<f64>| {
            values.truncate(periods);
            series::Series {
                config: dep.name.clone(),
                resource: resource.into(),
                metric: metric.into(),
                unit: "Count".into(),
                period_s: p.period_s,
                timestamps: (0..values.len()).map(|i| storlab_record::Stamp::Seconds(i as f64 * p.period_s)).collect(),
                values,
            }
        };
        series.push(per_period("db", "Transactions", txn_periods));
        if !self.credit_periods.is_empty() {
            series.push(per_period("host", "CPUCreditBalance", self.credit_periods));
        }
        DbResult {
            config: dep.name.clone(),
            vus: p.vus,
            nopm: tpm * profile.nopm_per_txn,
            tpm,
            txn: profile
                .transactions
                .iter()
                .zip(&hists)
                .zip(&counts)
                .map(|((tp, h), &count)| TxnResult { name: tp.name.clone(), count, latency: h.summary().rounded(3) })
                .collect(),
            cpu_utilization,
            pools,
            binding,
            miss_ratio: s.miss,
            cache_full_s: fill.as_ref().and_then(|f| f.full_at),
            commits_per_flush,
            flushes,
            flush_s,
            time_cpu_queue_s: q,
            time_locks_s: lk,
            time_cpu_s: c,
            time_reads_s: r,
            time_commit_s: cm,
            time_think_s: th,
            time_outside_s: out,
            usl_factor: usl,
            steady_at_s: self.steady_at,
            interrupted: self.stopped_at.is_some(),
            window_s: w,
            events: self.events,
            series,
            phases,
        }
    }
}
