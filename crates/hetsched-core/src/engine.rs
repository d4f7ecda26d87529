//! The discrete-event core: a priority queue of events ordered by `(time, sequence)` and a
//! seeded RNG owned by the run. It knows nothing about scheduling.

use crate::time::Nanos;
use rand_core::{RngCore, SeedableRng};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A pending event and its key `(time, seq)`: events are ordered by time, then by push
/// order (`seq` is unique among the pending events). Ordered for the max-heap
/// `BinaryHeap`: the least key is the greatest entry. The event is never compared.
///
/// `seq` is a `u32` so that an entry with a 12-byte event takes 24 bytes (a `u128` key
/// aligned to 16 made it 32): the heap moves less memory. When the counter would wrap,
/// [`EventQueue::renumber`] gives the pending events new numbers in their order.
#[derive(Debug)]
struct Entry<E> {
    t: Nanos,
    seq: u32,
    ev: E,
}

impl<E> Entry<E> {
    /// The key as one integer, `time << 64 | seq`: one integer comparison orders two
    /// entries by time, then by number (a tuple's comparison branches more).
    #[inline(always)]
    fn key(&self) -> u128 {
        u128::from(self.t) << 64 | u128::from(self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// An event queue. Events at equal times come out in the order they were pushed (FIFO).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// The next push's number.
    seq: u32,
    /// The number at which the pending events are renumbered (`u32::MAX`; less in tests).
    seq_limit: u32,
    now: Nanos,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            seq_limit: u32::MAX,
            now: 0,
            popped: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `ev` at `at` (clamped to now: time never goes back).
    #[inline]
    pub fn push(&mut self, at: Nanos, ev: E) {
        if self.seq == self.seq_limit {
            self.renumber();
        }
        let t = at.max(self.now);
        self.heap.push(Entry {
            t,
            seq: self.seq,
            ev,
        });
        self.seq += 1;
    }

    /// Numbers the pending events `0..len` in their `(time, seq)` order, and the next push
    /// `len`: the order of every pending event and of every later push is the one the old
    /// numbers gave (a later push gets a greater number than any pending event). About
    /// once every 2³² pushes.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        let mut v = std::mem::take(&mut self.heap).into_vec();
        v.sort_unstable_by_key(|e| (e.t, e.seq));
        for (i, e) in v.iter_mut().enumerate() {
            e.seq = i as u32;
        }
        self.seq = u32::try_from(v.len())
            .ok()
            .filter(|&n| n < self.seq_limit)
            .expect("too many pending events");
        self.heap = BinaryHeap::from(v);
    }

    /// Pops the earliest event and advances `now` to it.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Entry { t, ev, .. } = self.heap.pop()?;
        debug_assert!(t >= self.now, "time went back");
        self.now = t;
        self.popped += 1;
        Some((t, ev))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.t)
    }

    /// Advances `now` to `t` for work done outside the queue (never backwards).
    pub fn advance_to(&mut self, t: Nanos) {
        debug_assert!(t >= self.now, "time went back");
        self.now = self.now.max(t);
    }

    /// Counts one event handled outside the queue.
    pub fn count_external(&mut self, n: u64) {
        self.popped += n;
    }

    /// Current time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Number of events popped so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The run's random number generator: PCG-XSH-RR 64/32 (`rand_pcg::Pcg32`), seeded from
/// the run's seed. Same seed, same sequence, on every machine.
#[derive(Debug, Clone)]
pub struct Rng(rand_pcg::Pcg32);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(rand_pcg::Pcg32::seed_from_u64(seed))
    }

    /// A uniformly random `u64`.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniformly random integer in `0..n` (`n > 0`), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_on_equal_times() {
        let mut q = EventQueue::default();
        q.push(10, 3u32);
        q.push(5, 2);
        q.push(10, 1);
        assert_eq!(q.pop(), Some((5, 2)));
        assert_eq!(q.pop(), Some((10, 3)));
        assert_eq!(q.pop(), Some((10, 1)));
        assert_eq!(q.pop(), None);
        q.push(1, 9);
        assert_eq!(q.pop(), Some((10, 9)), "time never goes back");
    }

    /// Random pushes and pops, many at equal times, against a reference: the pending
    /// `(time, seq, ev)` triples, whose least is the next pop.
    #[test]
    fn pops_in_time_then_push_order() {
        let mut q = EventQueue::default();
        let mut rng = Rng::new(1);
        let mut pending: Vec<(Nanos, u64, u32)> = Vec::new();
        for i in 0..20_000u32 {
            if rng.below(5) < 3 {
                let at = q.now() + rng.below(8) * 10;
                q.push(at, i);
                pending.push((at, u64::from(i), i));
            } else {
                let want = pending.iter().copied().min();
                pending.retain(|p| Some(*p) != want);
                assert_eq!(q.pop(), want.map(|(t, _, ev)| (t, ev)));
            }
            assert_eq!(q.len(), pending.len());
            assert_eq!(q.peek_time(), pending.iter().map(|p| p.0).min());
        }
    }

    /// The same with the numbers renumbered every few pushes: the order is unchanged.
    #[test]
    fn renumbering_keeps_the_order() {
        for limit in [40u32, 64, 1000] {
            let mut q = EventQueue {
                seq_limit: limit,
                ..EventQueue::default()
            };
            let mut rng = Rng::new(u64::from(limit));
            let mut pending: Vec<(Nanos, u64, u32)> = Vec::new();
            for i in 0..20_000u32 {
                if rng.below(5) < 3 && pending.len() < 30 {
                    let at = q.now() + rng.below(4) * 10;
                    q.push(at, i);
                    pending.push((at.max(q.now()), u64::from(i), i));
                } else {
                    let want = pending.iter().copied().min();
                    pending.retain(|p| Some(*p) != want);
                    assert_eq!(q.pop(), want.map(|(t, _, ev)| (t, ev)));
                }
                assert_eq!(q.len(), pending.len());
                assert_eq!(q.peek_time(), pending.iter().map(|p| p.0).min());
            }
        }
    }

    #[test]
    fn entry_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Entry<[u32; 3]>>(), 24);
    }

    #[test]
    fn rng_is_deterministic() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut c = Rng::new(43);
        assert_ne!(Rng::new(42).next_u64(), c.next_u64());
        assert!(a.below(7) < 7);
    }
}
