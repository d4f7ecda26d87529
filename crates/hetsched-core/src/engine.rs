//! The discrete-event core: a priority queue of events ordered by `(time, sequence)` and a
//! seeded RNG owned by the run. It knows nothing about scheduling.

use crate::time::Nanos;
use rand_core::{RngCore, SeedableRng};
use std::collections::VecDeque;

/// A pending event and its key `(time, seq)`: events are ordered by time, then by push
/// order (`seq` is unique among the pending events). The event is never compared.
///
/// `seq` is a `u32` so that an entry with a 12-byte event takes 24 bytes: the queue moves
/// less memory. When the counter would wrap, [`EventQueue::renumber`] gives the pending
/// events new numbers in their order.
#[derive(Debug)]
struct Entry<E> {
    t: Nanos,
    seq: u32,
    ev: E,
}

/// An event queue. Events at equal times come out in the order they were pushed (FIFO).
///
/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) on the time in base 256, with the
/// events at the last popped time apart in push order. A discrete-event queue is
/// monotone: no event is pushed at a time before the last popped one (`last`), as a push
/// is at a time `>= now >= last` (clamped). The events at `last` are `cur`, in number
/// order. Every other pending event is at a time `t > last` and lies in bucket
/// `256 * l + d`, where `l` is the highest base-256 digit in which `t` differs from
/// `last` and `d` is `t`'s value of that digit (greater than `last`'s): every time of a
/// bucket is before every time of a higher bucket. A pop takes the front of `cur`; when
/// `cur` is empty, it finds the lowest non-empty bucket (two `trailing_zeros`, of
/// `summary` and of a word of `mask`); a bucket of one event is popped as is (the most
/// common case), else its earliest time becomes `last`, its events at `last` go to `cur`
/// (sorted by number) and its others to lower buckets (they now differ from `last` in a
/// lower digit only). A push at `last` goes to the back of `cur`: its number is greater
/// than every pending one. An event moves down at most 7 times, in practice once or twice
/// (a binary heap's pop goes down ~10 levels when some 2,000 events are pending). The
/// pop order is the `(time, seq)` order, as a binary heap on the same keys gives it (the
/// test `pops_as_a_binary_heap` drives both).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// The pending events at `last`, in number order.
    cur: VecDeque<Entry<E>>,
    /// Bucket `256 * l + d` holds the pending events whose time's highest base-256 digit
    /// differing from `last` is digit `l`, of value `d`.
    buckets: Box<[Vec<Entry<E>>; BUCKETS]>,
    /// The capacity bucket `b` kept when it was last spread (0 if it was freed).
    kept: Box<[u32; BUCKETS]>,
    /// The sum of `kept`: at most [`KEEP_BUDGET`].
    kept_total: usize,
    /// Empty allocations of spread buckets that could not keep them (the budget was
    /// spent), for a bucket without one to take at its next push instead of growing a new
    /// one from nothing.
    spare: Vec<Vec<Entry<E>>>,
    /// The sum of `spare`'s capacities: at most [`SPARE_BUDGET`].
    spare_total: usize,
    /// Bit `b % 64` of word `b / 64` is set iff bucket `b` is non-empty.
    mask: [u64; BUCKETS / 64],
    /// Bit `w` is set iff word `w` of `mask` is non-zero.
    summary: u64,
    /// The last popped time (0 before the first pop).
    last: Nanos,
    /// Number of pending events.
    len: usize,
    /// The next push's number.
    seq: u32,
    /// The number at which the pending events are renumbered (`u32::MAX`; less in tests).
    seq_limit: u32,
    now: Nanos,
    popped: u64,
}

/// Bits per digit of the times' radix.
const DIGIT: u32 = 8;
/// Number of buckets: a digit value for each digit position of a 64-bit time.
const BUCKETS: usize = (64usize.div_ceil(DIGIT as usize)) << DIGIT;
/// Entries' worth of allocation the spread buckets may keep between uses, all together:
/// a spread bucket keeps its allocation while the kept total stays within this, else it
/// goes to `spare` (see [`SPARE_BUDGET`]). The buckets do not each hold their high-water
/// mark (2,048 of them could hold megabytes over a long run), and the hot ones are not
/// reallocated at every spread.
const KEEP_BUDGET: usize = 16 * 1024;
/// Entries' worth of allocation `spare` may hold, all together (another 384 KiB at most):
/// a spread bucket that may not keep its allocation gives it to `spare` while the spare
/// total stays within this, else frees it; a push into a bucket without an allocation
/// takes a spare one. Once the kept budget is spent (on `large`, 256 CPUs), the buckets
/// that are filled and spread in turn pass a few allocations round instead of growing each
/// one again from nothing (`realloc` at 4, 8, 16, … entries) after freeing it.
const SPARE_BUDGET: usize = 16 * 1024;
const _: () = assert!(BUCKETS / 64 <= 64, "`summary` has a bit per word of `mask`");

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            cur: VecDeque::with_capacity(256),
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            kept: Box::new([0; BUCKETS]),
            kept_total: 0,
            spare: Vec::new(),
            spare_total: 0,
            mask: [0; BUCKETS / 64],
            summary: 0,
            last: 0,
            len: 0,
            seq: 0,
            seq_limit: u32::MAX,
            now: 0,
            popped: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `ev` at `at` (clamped to now: time never goes back).
    ///
    /// Its rare paths (the renumbering, a full `cur` or bucket) are tail calls of cold
    /// functions, so that the common ones save no registers.
    #[inline(always)]
    pub fn push(&mut self, at: Nanos, ev: E) {
        if self.seq == self.seq_limit {
            return self.push_renumbered(at, ev);
        }
        let t = at.max(self.now);
        let e = Entry {
            t,
            seq: self.seq,
            ev,
        };
        self.seq += 1;
        self.len += 1;
        if t == self.last {
            if self.cur.len() == self.cur.capacity() {
                return self.push_cur_grow(e);
            }
            self.cur.push_back(e);
        } else {
            self.file(e);
        }
    }

    /// [`EventQueue::push`] once the numbers are used up: renumbers, then pushes.
    #[cold]
    #[inline(never)]
    fn push_renumbered(&mut self, at: Nanos, ev: E) {
        self.renumber();
        self.push(at, ev);
    }

    /// [`EventQueue::push`] of `e` to a full `cur`.
    #[cold]
    #[inline(never)]
    fn push_cur_grow(&mut self, e: Entry<E>) {
        self.cur.push_back(e);
    }

    /// Files `e` (at a time after `last`) in its bucket.
    #[inline(always)]
    fn file(&mut self, e: Entry<E>) {
        debug_assert!(
            e.t > self.last,
            "an event at or before the last popped time"
        );
        let l = (63 - (e.t ^ self.last).leading_zeros()) / DIGIT;
        let b = ((l << DIGIT) + (e.t >> (DIGIT * l)) as u32 % (1 << DIGIT)) as usize;
        self.mask[b / 64] |= 1 << (b % 64);
        self.summary |= 1 << (b / 64);
        let bucket = &mut self.buckets[b];
        if bucket.len() == bucket.capacity() {
            return Self::grow_push(bucket, &mut self.spare, &mut self.spare_total, e);
        }
        bucket.push(e);
    }

    /// [`EventQueue::file`] of `e` to the full bucket `v` ([`EventQueue::grow`]).
    #[cold]
    #[inline(never)]
    fn grow_push(
        v: &mut Vec<Entry<E>>,
        spare: &mut Vec<Vec<Entry<E>>>,
        total: &mut usize,
        e: Entry<E>,
    ) {
        Self::grow(v, spare, total);
        v.push(e);
    }

    /// Makes room for one more event in the full bucket `v`: one without an allocation takes
    /// the last spare one, if any; else it grows as `Vec::push` would have grown it.
    #[cold]
    #[inline(never)]
    fn grow(v: &mut Vec<Entry<E>>, spare: &mut Vec<Vec<Entry<E>>>, total: &mut usize) {
        if v.capacity() == 0 {
            if let Some(s) = spare.pop() {
                debug_assert!(s.is_empty() && s.capacity() != 0);
                *total -= s.capacity();
                *v = s;
                return;
            }
        }
        v.reserve(1);
    }

    /// The lowest non-empty bucket, if any.
    #[inline(always)]
    fn lowest(&self) -> Option<usize> {
        if self.summary == 0 {
            return None;
        }
        let w = self.summary.trailing_zeros() as usize;
        Some(w * 64 + self.mask[w].trailing_zeros() as usize)
    }

    /// Marks bucket `b` empty.
    #[inline(always)]
    fn emptied(&mut self, b: usize) {
        let w = &mut self.mask[b / 64];
        *w &= !(1 << (b % 64));
        if *w == 0 {
            self.summary &= !(1 << (b / 64));
        }
    }

    /// Numbers the pending events `0..len` in their `(time, seq)` order, and the next push
    /// `len`: the order of every pending event and of every later push is the one the old
    /// numbers gave (a later push gets a greater number than any pending event); the
    /// buckets, which depend on the times only, are kept. About once every 2³² pushes.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        let mut v: Vec<&mut Entry<E>> = self
            .cur
            .iter_mut()
            .chain(self.buckets.iter_mut().flatten())
            .collect();
        v.sort_unstable_by_key(|e| (e.t, e.seq));
        for (i, e) in v.iter_mut().enumerate() {
            e.seq = i as u32;
        }
        self.seq = u32::try_from(v.len())
            .ok()
            .filter(|&n| n < self.seq_limit)
            .expect("too many pending events");
    }

    /// Pops the earliest event and advances `now` to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let Entry { t, ev, .. } = match self.cur.pop_front() {
            Some(e) => e,
            None => self.take_earliest()?,
        };
        self.len -= 1;
        debug_assert!(t >= self.now, "time went back");
        self.now = t;
        self.popped += 1;
        Some((t, ev))
    }

    /// With `cur` empty: makes `last` the earliest pending time and takes its first event;
    /// moves the other events of its bucket at `last` to `cur` in number order, and the
    /// others to lower buckets. A bucket of one event (the most common) moves nothing.
    #[inline]
    fn take_earliest(&mut self) -> Option<Entry<E>> {
        let b = self.lowest()?;
        let bucket = &mut self.buckets[b];
        if bucket.len() == 1 {
            let e = bucket.pop()?;
            self.emptied(b);
            self.last = e.t;
            return Some(e);
        }
        let last = bucket.iter().map(|e| e.t).min()?;
        self.redistribute(b, last);
        self.cur.pop_front()
    }

    /// Pops the earliest event when it is before `limit`; else (or with nothing pending)
    /// `None`, the queue as it was. The same as [`EventQueue::peek_time`], then
    /// [`EventQueue::pop`] when the time is before `limit`, without finding the earliest
    /// bucket and its earliest time twice.
    #[inline]
    pub fn pop_before(&mut self, limit: Nanos) -> Option<(Nanos, E)> {
        let e = if !self.cur.is_empty() {
            if self.last >= limit {
                return None;
            }
            self.cur.pop_front()?
        } else {
            let b = self.lowest()?;
            let bucket = &mut self.buckets[b];
            if bucket.len() == 1 {
                if bucket[0].t >= limit {
                    return None;
                }
                let e = bucket.pop()?;
                self.emptied(b);
                self.last = e.t;
                e
            } else {
                let last = bucket.iter().map(|e| e.t).min()?;
                if last >= limit {
                    return None;
                }
                self.redistribute(b, last);
                self.cur.pop_front()?
            }
        };
        let Entry { t, ev, .. } = e;
        self.len -= 1;
        debug_assert!(t >= self.now, "time went back");
        self.now = t;
        self.popped += 1;
        Some((t, ev))
    }

    /// Makes `last` the earliest time of bucket `b` (the lowest non-empty one, with `cur`
    /// empty; its caller found that time, `last`), moves its events at `last` to `cur` in
    /// number order and its others to lower buckets.
    #[inline(never)]
    fn redistribute(&mut self, b: usize, last: Nanos) {
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        debug_assert_eq!(Some(last), bucket.iter().map(|e| e.t).min());
        self.last = last;
        self.emptied(b);
        // `file()` of each event not at `last`, with the summary word in a local
        let mut summary = self.summary;
        for e in bucket.drain(..) {
            // the growths are calls apart, so that the common paths keep the event in
            // registers
            let x = e.t ^ last;
            if x == 0 {
                if self.cur.len() == self.cur.capacity() {
                    self.push_cur_grow(e);
                } else {
                    self.cur.push_back(e);
                }
                continue;
            }
            let l = (63 - x.leading_zeros()) / DIGIT;
            let b = ((l << DIGIT) + (e.t >> (DIGIT * l)) as u32 % (1 << DIGIT)) as usize;
            self.mask[b / 64] |= 1 << (b % 64);
            summary |= 1 << (b / 64);
            let v = &mut self.buckets[b];
            if v.len() == v.capacity() {
                Self::grow_push(v, &mut self.spare, &mut self.spare_total, e);
            } else {
                v.push(e);
            }
        }
        self.summary = summary;
        self.kept_total -= self.kept[b] as usize;
        let c = bucket.capacity();
        if self.kept_total + c <= KEEP_BUDGET {
            self.kept[b] = c as u32;
            self.kept_total += c;
            self.buckets[b] = bucket;
        } else {
            self.kept[b] = 0;
            if c != 0 && self.spare_total + c <= SPARE_BUDGET {
                self.spare_total += c;
                self.spare.push(bucket);
            }
        }
        if self.cur.len() > 1 {
            self.cur.make_contiguous().sort_unstable_by_key(|e| e.seq);
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Nanos> {
        if !self.cur.is_empty() {
            return Some(self.last);
        }
        let b = self.lowest()?;
        self.buckets[b].iter().map(|e| e.t).min()
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
        self.len
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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

    /// The radix heap against a `BinaryHeap` of `Reverse((time, n, ev))` (`n` the push
    /// count, never renumbered): the same random monotone pushes (times from `now` to far
    /// ahead, many equal, some below `now` and clamped) and pops, with the numbers
    /// renumbered every few pushes or never, give the same pops, lengths and peeks.
    #[test]
    fn pops_as_a_binary_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        for (seed, limit) in [(1u64, u32::MAX), (2, 50), (3, 333), (4, 4096)] {
            let mut q = EventQueue {
                seq_limit: limit,
                ..EventQueue::default()
            };
            let mut heap = BinaryHeap::new();
            let mut rng = Rng::new(seed);
            let mut n = 0u64;
            for step in 0..200_000u32 {
                // phases of growth and of draining
                let push_odds = if (step / 5_000) % 2 == 0 { 6 } else { 3 };
                if rng.below(10) < push_odds && heap.len() < (limit / 2) as usize {
                    let now = q.now();
                    let at = match rng.below(6) {
                        0 => now,
                        1 => now.saturating_sub(rng.below(100)),
                        2 => now + rng.below(16),
                        3 => now + rng.below(1 << 20),
                        4 => now + (rng.below(8) << 22),
                        _ => now + (rng.next_u64() >> (20 + rng.below(40))),
                    };
                    q.push(at, step);
                    heap.push(Reverse((at.max(now), n, step)));
                    n += 1;
                } else if rng.below(3) == 0 {
                    // a pop only before a limit near the next time
                    let limit = match heap.peek() {
                        Some(r) => r.0 .0 + rng.below(3) - 1.min(r.0 .0),
                        None => q.now() + rng.below(3),
                    };
                    let want = match heap.peek() {
                        Some(r) if r.0 .0 < limit => heap.pop().map(|Reverse((t, _, ev))| (t, ev)),
                        _ => None,
                    };
                    assert_eq!(q.pop_before(limit), want);
                } else {
                    let want = heap.pop().map(|Reverse((t, _, ev))| (t, ev));
                    assert_eq!(q.pop(), want);
                }
                assert_eq!(q.len(), heap.len());
                assert_eq!(q.is_empty(), heap.is_empty());
                assert_eq!(q.peek_time(), heap.peek().map(|r| r.0 .0));
            }
            // the spare allocations: empty, counted, within their budget
            assert!(q.spare.iter().all(|v| v.is_empty() && v.capacity() != 0));
            assert_eq!(
                q.spare_total,
                q.spare.iter().map(Vec::capacity).sum::<usize>()
            );
            assert!(q.spare_total <= SPARE_BUDGET && q.kept_total <= KEEP_BUDGET);
            while let Some(Reverse((t, _, ev))) = heap.pop() {
                assert_eq!(q.pop(), Some((t, ev)));
            }
            assert_eq!(q.pop(), None);
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
