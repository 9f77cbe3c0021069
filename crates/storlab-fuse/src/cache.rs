//! A least-recently-used set of 4 KiB pages: the Azure host cache (which
//! reads it serves) and the instance's OS page cache (`--ram`). It decides
//! hits only; the data itself always comes from the backing file.
//!
//! `Dirty` is the page cache's other half: the pages written but not yet
//! written back to the volume. Linux holds a buffered write in the page
//! cache and writes it back at `fsync`, when it has been dirty for
//! `dirty_expire_centisecs` (30 s by default), or when its page is
//! reclaimed — so a page written many times between two of those reaches
//! the volume once. The emulator charges the volume at those moments; the
//! data itself is in the backing file from the first write on.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Instant;

pub const PAGE: u64 = 4096;

pub struct Lru {
    capacity: usize,
    stamp: u64,
    pages: HashMap<(u64, u64), u64>,
    order: VecDeque<((u64, u64), u64)>,
}

impl Lru {
    /// A cache of `bytes` (rounded down to whole pages).
    pub fn new(bytes: u64) -> Lru {
        Lru { capacity: (bytes / PAGE).min(usize::MAX as u64) as usize, stamp: 0, pages: HashMap::new(), order: VecDeque::new() }
    }

    fn pages_of(offset: u64, len: u64) -> std::ops::Range<u64> {
        let first = offset / PAGE;
        let end = (offset + len.max(1)).div_ceil(PAGE);
        first..end
    }

    /// Whether every page of the extent is cached.
    pub fn contains(&self, ino: u64, offset: u64, len: u64) -> bool {
        self.capacity > 0 && Self::pages_of(offset, len).all(|p| self.pages.contains_key(&(ino, p)))
    }

    /// Marks the extent's pages most recently used, evicting the least;
    /// the evicted pages, (inode, page number).
    pub fn touch(&mut self, ino: u64, offset: u64, len: u64) -> Vec<(u64, u64)> {
        let mut evicted = Vec::new();
        if self.capacity == 0 {
            return evicted;
        }
        for p in Self::pages_of(offset, len) {
            self.stamp += 1;
            self.pages.insert((ino, p), self.stamp);
            self.order.push_back(((ino, p), self.stamp));
        }
        while self.pages.len() > self.capacity {
            match self.order.pop_front() {
                Some((k, s)) if self.pages.get(&k) == Some(&s) => {
                    self.pages.remove(&k);
                    evicted.push(k);
                }
                Some(_) => {}
                None => break,
            }
        }
        // Re-touched pages leave stale entries behind; drop them now and then.
        if self.order.len() > 4 * self.pages.len() + 4096 {
            let pages = &self.pages;
            self.order.retain(|(k, s)| pages.get(k) == Some(s));
        }
        evicted
    }

    /// Forgets a file's pages (it was truncated or removed).
    pub fn drop_file(&mut self, ino: u64) {
        self.pages.retain(|k, _| k.0 != ino);
    }

    pub fn len_pages(&self) -> usize {
        self.pages.len()
    }
}

/// Pages one write-back I/O carries at most (1 MiB, the mount's max_write).
pub const MAX_EXTENT_PAGES: u64 = 256;

/// One write-back I/O: contiguous dirty pages of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub pool: usize,
    pub ino: u64,
    pub offset: u64,
    pub len: u64,
    /// It starts where the file's previous write-back ended.
    pub sequential: bool,
}

/// Dirty pages of the instance's page cache, by (inode, page): the pool
/// they belong to and when they were first dirtied.
#[derive(Default)]
pub struct Dirty {
    pages: BTreeMap<(u64, u64), (usize, Instant)>,
    ends: HashMap<u64, u64>,
}

impl Dirty {
    /// A buffered write: its pages are dirty from `now` (or earlier).
    pub fn mark(&mut self, pool: usize, ino: u64, offset: u64, len: u64, now: Instant) {
        for p in Lru::pages_of(offset, len) {
            self.pages.entry((ino, p)).or_insert((pool, now));
        }
    }

    pub fn len_pages(&self) -> usize {
        self.pages.len()
    }

    /// Every dirty page of a file (`fsync`), as write-back I/Os.
    pub fn take_file(&mut self, ino: u64) -> Vec<Extent> {
        let keys: Vec<(u64, u64)> = self.pages.range((ino, 0)..=(ino, u64::MAX)).map(|(k, _)| *k).collect();
        self.take(keys)
    }

    /// The pages dirty since before `before` (the flusher's expiry).
    pub fn take_older(&mut self, before: Instant) -> Vec<Extent> {
        let keys: Vec<(u64, u64)> = self.pages.iter().filter(|(_, v)| v.1 < before).map(|(k, _)| *k).collect();
        self.take(keys)
    }

    /// The dirty ones among pages the cache just reclaimed.
    pub fn take_pages(&mut self, pages: &[(u64, u64)]) -> Vec<Extent> {
        let mut keys: Vec<(u64, u64)> = pages.iter().filter(|k| self.pages.contains_key(k)).copied().collect();
        keys.sort_unstable();
        self.take(keys)
    }

    /// Forgets a file's dirty pages (it was truncated or removed).
    pub fn drop_file(&mut self, ino: u64) {
        let keys: Vec<(u64, u64)> = self.pages.range((ino, 0)..=(ino, u64::MAX)).map(|(k, _)| *k).collect();
        for k in keys {
            self.pages.remove(&k);
        }
        self.ends.remove(&ino);
    }

    /// Removes `keys` (sorted) and merges runs of contiguous pages of one
    /// file into I/Os of up to `MAX_EXTENT_PAGES`.
    fn take(&mut self, keys: Vec<(u64, u64)>) -> Vec<Extent> {
        let mut out: Vec<(usize, u64, u64, u64)> = Vec::new(); // pool, ino, first page, pages
        for (ino, page) in keys {
            let Some((pool, _)) = self.pages.remove(&(ino, page)) else { continue };
            match out.last_mut() {
                Some(e) if e.0 == pool && e.1 == ino && e.2 + e.3 == page && e.3 < MAX_EXTENT_PAGES => e.3 += 1,
                _ => out.push((pool, ino, page, 1)),
            }
        }
        out.into_iter()
            .map(|(pool, ino, first, n)| {
                let (offset, len) = (first * PAGE, n * PAGE);
                let sequential = self.ends.get(&ino) == Some(&offset);
                self.ends.insert(ino, offset + len);
                Extent { pool, ino, offset, len, sequential }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used_page() {
        // Two pages of room: a, b, touch a again, then c pushes b out.
        let mut c = Lru::new(2 * PAGE);
        c.touch(1, 0, PAGE);
        c.touch(1, PAGE, PAGE);
        c.touch(1, 0, PAGE);
        c.touch(1, 2 * PAGE, PAGE);
        assert!(c.contains(1, 0, PAGE));
        assert!(!c.contains(1, PAGE, PAGE));
        assert!(c.contains(1, 2 * PAGE, PAGE));
        assert_eq!(c.len_pages(), 2);
    }

    #[test]
    fn an_extent_hits_only_when_every_page_is_cached() {
        let mut c = Lru::new(1 << 20);
        c.touch(7, 0, 8192);
        assert!(c.contains(7, 100, 4000));
        assert!(!c.contains(7, 4096, 8192));
        assert!(!c.contains(8, 0, 4096));
        c.drop_file(7);
        assert!(!c.contains(7, 0, 4096));
    }

    #[test]
    fn a_zero_sized_cache_never_hits() {
        let mut c = Lru::new(0);
        c.touch(1, 0, 4096);
        assert!(!c.contains(1, 0, 4096));
    }

    // Pages 0-2 and 5 of file 1, page 0 of file 2, written twice: an fsync
    // of file 1 writes back two I/Os (12 KiB at 0, 4 KiB at 20 KiB), once
    // each however often they were written; file 2 stays dirty.
    #[test]
    fn dirty_pages_are_written_back_once_merged_per_file() {
        let t = Instant::now();
        let mut d = Dirty::default();
        for _ in 0..2 {
            d.mark(0, 1, 0, 3 * PAGE, t);
            d.mark(0, 1, 5 * PAGE, 100, t);
            d.mark(1, 2, 0, PAGE, t);
        }
        assert_eq!(d.len_pages(), 5);
        let e = d.take_file(1);
        assert_eq!(e, vec![Extent { pool: 0, ino: 1, offset: 0, len: 3 * PAGE, sequential: false }, Extent { pool: 0, ino: 1, offset: 5 * PAGE, len: PAGE, sequential: false }]);
        assert!(d.take_file(1).is_empty());
        assert_eq!(d.len_pages(), 1);
        // The next write-back of file 1 starting at 24 KiB follows the last one.
        d.mark(0, 1, 6 * PAGE, PAGE, t);
        assert!(d.take_file(1)[0].sequential);
    }

    #[test]
    fn expiry_takes_only_the_old_pages_and_eviction_only_the_dirty_ones() {
        let t0 = Instant::now();
        let t1 = t0 + std::time::Duration::from_secs(40);
        let mut d = Dirty::default();
        d.mark(0, 1, 0, PAGE, t0);
        d.mark(0, 1, PAGE, PAGE, t1);
        let e = d.take_older(t0 + std::time::Duration::from_secs(30));
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].offset, e[0].len), (0, PAGE));
        assert_eq!(d.take_pages(&[(1, 1), (1, 7), (3, 0)]).len(), 1);
        assert_eq!(d.len_pages(), 0);
    }

    #[test]
    fn a_full_lru_reports_what_it_evicts() {
        let mut c = Lru::new(2 * PAGE);
        assert!(c.touch(1, 0, 2 * PAGE).is_empty());
        assert_eq!(c.touch(1, 2 * PAGE, PAGE), vec![(1, 0)]);
    }
}
