//! The discrete-event core: a priority queue of events ordered by `(time, sequence)` and a
//! seeded RNG owned by the run. It knows nothing about scheduling.

use crate::time::Nanos;
use rand_core::{RngCore, SeedableRng};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A pending event and its key, `time << 64 | seq`: one integer comparison orders two
/// events by time, then by push order (`seq` is unique). Ordered for the max-heap
/// `BinaryHeap`: the least key is the greatest entry. The event is never compared.
#[derive(Debug)]
struct Entry<E> {
    key: u128,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// An event queue. Events at equal times come out in the order they were pushed (FIFO).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Nanos,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            now: 0,
            popped: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `ev` at `at` (clamped to now: time never goes back).
    pub fn push(&mut self, at: Nanos, ev: E) {
        let at = at.max(self.now);
        let key = u128::from(at) << 64 | u128::from(self.seq);
        self.heap.push(Entry { key, ev });
        self.seq += 1;
    }

    /// Pops the earliest event and advances `now` to it.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Entry { key, ev } = self.heap.pop()?;
        let t = (key >> 64) as Nanos;
        debug_assert!(t >= self.now, "time went back");
        self.now = t;
        self.popped += 1;
        Some((t, ev))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| (e.key >> 64) as Nanos)
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
