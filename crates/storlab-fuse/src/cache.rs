//! A least-recently-used set of 4 KiB pages: the Azure host cache (which
//! reads it serves) and the instance's OS page cache (`--ram`). It decides
//! hits only; the data itself always comes from the backing file.

use std::collections::{HashMap, VecDeque};

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

    /// Marks the extent's pages most recently used, evicting the least.
    pub fn touch(&mut self, ino: u64, offset: u64, len: u64) {
        if self.capacity == 0 {
            return;
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
    }

    /// Forgets a file's pages (it was truncated or removed).
    pub fn drop_file(&mut self, ino: u64) {
        self.pages.retain(|k, _| k.0 != ino);
    }

    pub fn len_pages(&self) -> usize {
        self.pages.len()
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
}
