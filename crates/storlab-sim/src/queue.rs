//! The one event queue of every simulation (I/O jobs, database users, bulk
//! imports): events keyed by the model's time (`Secs`), earliest first, ties
//! broken by the event's own order so every run of a seed is the same.
//!
//! Times are kept as their bit patterns: for non-negative finite f64 these
//! order as the numbers do, and integer compares are cheaper.

use std::collections::BinaryHeap;
use std::cmp::Reverse;
use storlab_model::pacing::Secs;

pub struct EventQueue<K: Ord + Copy> {
    heap: BinaryHeap<Reverse<(u64, K)>>,
}

impl<K: Ord + Copy> EventQueue<K> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n) }
    }

    #[inline]
    fn key(t: Secs) -> u64 {
        debug_assert!(t.0 >= 0.0 && t.0.is_finite(), "event time {}", t.0);
        t.0.to_bits()
    }

    #[inline]
    pub fn push(&mut self, t: Secs, k: K) {
        self.heap.push(Reverse((Self::key(t), k)));
    }

    /// The earliest event, removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(Secs, K)> {
        self.heap.pop().map(|Reverse((b, k))| (Secs(f64::from_bits(b)), k))
    }

    /// The earliest event, left in place.
    #[inline]
    pub fn peek(&self) -> Option<(Secs, K)> {
        self.heap.peek().map(|&Reverse((b, k))| (Secs(f64::from_bits(b)), k))
    }

    /// Replaces the earliest event by `(t, k)`: one sift-down where a pop
    /// and a push would take two.
    #[inline]
    pub fn replace_top(&mut self, t: Secs, k: K) {
        let e = Reverse((Self::key(t), k));
        if let Some(mut top) = self.heap.peek_mut() {
            *top = e;
            return;
        }
        self.heap.push(e);
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_by_key() {
        let mut q = EventQueue::with_capacity(4);
        q.push(Secs(2.0), (0u32, 1u32));
        q.push(Secs(1.0), (5, 0));
        q.push(Secs(1.0), (2, 9));
        q.replace_top(Secs(3.0), (1, 1)); // the (1.0, (2, 9)) event becomes (3.0, (1, 1))
        let order: Vec<(f64, (u32, u32))> = std::iter::from_fn(|| q.pop().map(|(t, k)| (t.0, k))).collect();
        assert_eq!(order, vec![(1.0, (5, 0)), (2.0, (0, 1)), (3.0, (1, 1))]);
        assert!(q.is_empty());
    }

    // Any mix of pushes, pops and top replacements pops what a sorted list
    // of the same events would: earliest time first, ties by key.
    #[test]
    fn pops_in_the_order_a_sorted_list_gives() {
        let mut q = EventQueue::with_capacity(0);
        let mut model: Vec<(u64, u32)> = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = (x % 64) as f64 * 0.25; // many equal times
            match x % 5 {
                0 | 1 | 2 => {
                    q.push(Secs(t), step % 97);
                    model.push((t.to_bits(), step % 97));
                }
                3 => {
                    model.sort();
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    assert_eq!(q.pop().map(|(s, k)| (s.0.to_bits(), k)), want);
                }
                _ => {
                    model.sort();
                    if !model.is_empty() {
                        model.remove(0);
                    }
                    model.push((t.to_bits(), step % 97));
                    q.replace_top(Secs(t), step % 97);
                }
            }
            assert_eq!(q.len(), model.len());
        }
        model.sort();
        let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop().map(|(s, k)| (s.0.to_bits(), k))).collect();
        assert_eq!(rest, model);
    }
}
