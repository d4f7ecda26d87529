//! The discrete-event core: a priority queue of events ordered by `(time, sequence)` and a
//! seeded RNG owned by the run. It knows nothing about scheduling.

use crate::time::Nanos;
use rand_core::{RngCore, SeedableRng};

/// A pending event and its key `(time, seq)`: events are ordered by time, then by push
/// order (`seq` is unique among the pending events). The event is never compared.
///
/// `seq` is a `u32` so that an entry with a 12-byte event takes 24 bytes: the queue moves
/// less memory. When the counter would wrap, [`EventQueue::renumber`] gives the pending
/// events new numbers in their order.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    t: Nanos,
    seq: u32,
    ev: E,
}

/// An event queue. Events at equal times come out in the order they were pushed (FIFO).
///
/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) in base 256 on the time's slot
/// `t >> slot` (`2^slot` ns, [`EventQueue::with_slot_bits`]), whose earliest events are
/// apart in a sorted run. A discrete-event queue is monotone: no event is pushed at a
/// time before `now`, the last popped time (a push is clamped to `now`). The pending
/// events at or before `run_last` are `run[head..]`, in `(time, seq)` order. Every other
/// pending event is at a time after `run_last`, in a slot `c` after `last` (a slot), and
/// lies in bucket `256 * l + d`, where `l` is the highest base-256 digit in which `c`
/// differs from `last` and `d` is `c`'s value of that digit (greater than `last`'s):
/// every time of a bucket is before every time of a higher bucket, and a bucket of digit
/// 0 holds one slot. A pop takes `run[head]`; when the run is used up, it finds the
/// lowest non-empty bucket (two `trailing_zeros`, of `summary` and of a word of `mask`):
/// a bucket of one event is popped as is (the most common case); a bucket of digit 0
/// becomes `run`, sorted (`sort_run()`); a higher bucket's earliest slot becomes `last`,
/// its events of that slot become `run`, sorted, and its others go to lower buckets (they
/// now differ from `last` in a lower digit only). `run_last` is then the last time of slot
/// `last`. A push at or before `run_last` is inserted into `run` in its place (after the
/// events at its time: its number is greater than every pending one); a later one goes
/// to its bucket. With slots of about the mean time between events, most events are
/// pushed to a bucket of digit 0 or 1 and move down once or not at all (a binary heap's
/// pop goes down ~10 levels when some 2,000 events are pending). The pop order is the
/// `(time, seq)` order, as a binary heap on the same keys gives it (the test
/// `pops_as_a_binary_heap` drives both, with slots of 1 ns to 2³² ns).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// From `head` on, the pending events at or before `run_last`, in `(time, seq)`
    /// order (before `head`, events popped).
    run: Vec<Entry<E>>,
    /// The next pop's index in `run` (`run.len()` when `run` holds no pending event).
    head: usize,
    /// The last time of slot `last`: every event in `run` is at or before it, every event
    /// in a bucket after it.
    run_last: Nanos,
    /// Bucket `256 * l + d` holds the pending events whose slot's highest base-256 digit
    /// differing from `last` is digit `l`, of value `d`.
    buckets: Box<[Vec<Entry<E>>; BUCKETS]>,
    /// The capacity bucket `b` kept when it was last emptied (0 if it was freed).
    kept: Box<[u32; BUCKETS]>,
    /// The sum of `kept`: at most [`KEEP_BUDGET`].
    kept_total: usize,
    /// Empty allocations of emptied buckets that could not keep them (the budget was
    /// spent), for a bucket without one to take at its next push instead of growing a new
    /// one from nothing.
    spare: Vec<Vec<Entry<E>>>,
    /// The sum of `spare`'s capacities: at most [`SPARE_BUDGET`].
    spare_total: usize,
    /// Bit `b % 64` of word `b / 64` is set iff bucket `b` is non-empty.
    mask: [u64; BUCKETS / 64],
    /// Bit `w` is set iff word `w` of `mask` is non-zero.
    summary: u64,
    /// The slot the buckets are relative to: before the slot of every event in a bucket
    /// (0 before the first pop).
    last: u64,
    /// Number of pending events.
    len: usize,
    /// The next push's number.
    seq: u32,
    /// The number at which the pending events are renumbered (`u32::MAX`; less in tests).
    seq_limit: u32,
    now: Nanos,
    popped: u64,
    /// Bits of the time below its slot.
    slot: u32,
}

/// Bits per digit of the slots' radix.
const DIGIT: u32 = 8;
/// Number of buckets: a digit value for each digit position of a 64-bit slot.
const BUCKETS: usize = (64usize.div_ceil(DIGIT as usize)) << DIGIT;
/// The most bits of the time below its slot: the times of a slot differ by less than
/// 2³².
pub const MAX_SLOT_BITS: u32 = 32;
/// Entries' worth of allocation the emptied buckets may keep between uses, all together:
/// an emptied bucket keeps its allocation while the kept total stays within this, else it
/// goes to `spare` (see [`SPARE_BUDGET`]). The buckets do not each hold their high-water
/// mark (2,048 of them could hold megabytes over a long run), and the hot ones are not
/// reallocated at every spread.
const KEEP_BUDGET: usize = 16 * 1024;
/// Entries' worth of allocation `spare` may hold, all together (another 384 KiB at most):
/// an emptied bucket that may not keep its allocation gives it to `spare` while the spare
/// total stays within this, else frees it; a push into a bucket without an allocation
/// takes a spare one. Once the kept budget is spent (on `large`, 256 CPUs), the buckets
/// that are filled and spread in turn pass a few allocations round instead of growing each
/// one again from nothing (`realloc` at 4, 8, 16, … entries) after freeing it.
const SPARE_BUDGET: usize = 16 * 1024;
const _: () = assert!(BUCKETS / 64 <= 64, "`summary` has a bit per word of `mask`");

/// Sorts `run`, the events of one slot starting at `base`, in `(time, seq)` order. A
/// bucket holds its events in number order (a push has the greatest number, and a spread
/// moves events only to empty buckets, in their order; only a renumbering breaks it), so
/// they are in order but for the times: an insertion sort moves little. The times of one
/// slot differ by less than 2³²: the key `(t - base) << 32 | seq` is one `u64`.
#[inline(always)]
fn sort_run<E>(run: &mut [Entry<E>], base: Nanos) {
    let key = |e: &Entry<E>| ((e.t - base) << 32) | u64::from(e.seq);
    let Some(first) = run.first() else {
        return;
    };
    let mut prev = key(first);
    for i in 1..run.len() {
        let k = key(&run[i]);
        if k > prev {
            prev = k;
            continue;
        }
        // `run[..i]` is in order: `run[i]` goes after the lesser keys
        let j = run[..i].partition_point(|e| key(e) < k);
        run[j..=i].rotate_right(1);
    }
}

impl<E: Copy> Default for EventQueue<E> {
    /// A queue of slots of 4,096 ns.
    fn default() -> Self {
        EventQueue::with_slot_bits(12)
    }
}

impl<E: Copy> EventQueue<E> {
    /// A queue of slots of `2^bits` ns (`bits <= MAX_SLOT_BITS`). The slot does not change
    /// the pops, only their cost: a bucket of digit 0 holds one slot, sorted when it
    /// becomes `run`, and a push into the run's slot is inserted in its place; a slot of
    /// about the mean time between events keeps both short.
    pub fn with_slot_bits(bits: u32) -> Self {
        assert!(bits <= MAX_SLOT_BITS, "slots of at most 2^32 ns");
        EventQueue {
            run: Vec::with_capacity(256),
            head: 0,
            run_last: (1 << bits) - 1,
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
            slot: bits,
        }
    }

    /// The last time of slot `c`.
    #[inline(always)]
    fn slot_last(&self, c: u64) -> Nanos {
        (c << self.slot) | ((1 << self.slot) - 1)
    }

    /// Schedules `ev` at `at` (clamped to now: time never goes back).
    ///
    /// Its rare paths (the renumbering, a push into `run`, a full bucket) are calls of
    /// functions out of line that do not take the entry, so that the common ones keep it
    /// in registers and save none.
    #[inline(always)]
    pub fn push(&mut self, at: Nanos, ev: E) {
        if self.seq == self.seq_limit {
            return self.push_renumbered(at, ev);
        }
        let t = at.max(self.now);
        let seq = self.seq;
        self.seq += 1;
        self.len += 1;
        if t <= self.run_last {
            return self.push_run(t, seq, ev);
        }
        self.file(Entry { t, seq, ev });
    }

    /// [`EventQueue::push`] once the numbers are used up: renumbers, then pushes.
    #[cold]
    #[inline(never)]
    fn push_renumbered(&mut self, at: Nanos, ev: E) {
        self.renumber();
        self.push(at, ev);
    }

    /// [`EventQueue::push`] of the entry `(t, seq, ev)` (at or before `run_last`) into
    /// `run`: after the events at its time and before the others, it pops after them (its
    /// number is the greatest).
    #[inline(never)]
    fn push_run(&mut self, t: Nanos, seq: u32, ev: E) {
        let i = self.head + self.run[self.head..].partition_point(|x| x.t <= t);
        self.run.insert(i, Entry { t, seq, ev });
    }

    /// Files `e` (at a time after `run_last`) in its bucket.
    #[inline(always)]
    fn file(&mut self, e: Entry<E>) {
        debug_assert!(e.t > self.run_last, "an event filed in the run's slot");
        let c = e.t >> self.slot;
        // `c` differs from `last` (its time is after `run_last`): `| 1` changes not its
        // highest differing bit, and bounds `l` (no bucket index check)
        let l = (63 - ((c ^ self.last) | 1).leading_zeros()) / DIGIT;
        let b = ((l << DIGIT) + (c >> (DIGIT * l)) as u32 % (1 << DIGIT)) as usize;
        self.mask[b / 64] |= 1 << (b % 64);
        self.summary |= 1 << (b / 64);
        let bucket = &mut self.buckets[b];
        if bucket.len() == bucket.capacity() {
            Self::grow(bucket, &mut self.spare, &mut self.spare_total);
        }
        bucket.push(e);
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

    /// Makes room for one more event in the full `run`.
    #[cold]
    #[inline(never)]
    fn grow_run(run: &mut Vec<Entry<E>>) {
        run.reserve(1);
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
    /// buckets, which depend on the times only, and `run`'s order are kept. About once
    /// every 2³² pushes.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        self.run.drain(..self.head);
        self.head = 0;
        let mut v: Vec<&mut Entry<E>> = self
            .run
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
        let e = match self.run.get(self.head) {
            Some(&e) => {
                self.head += 1;
                e
            }
            None => self.take_earliest()?,
        };
        Some(self.popped_entry(e))
    }

    /// With `run` empty: takes the earliest event of the lowest bucket, the others of a
    /// bucket of several events to `run` and lower buckets ([`EventQueue::refill`]). A
    /// bucket of one event (the most common) moves nothing.
    #[inline]
    fn take_earliest(&mut self) -> Option<Entry<E>> {
        let b = self.lowest()?;
        let bucket = &mut self.buckets[b];
        if bucket.len() == 1 {
            let e = bucket.pop()?;
            self.emptied(b);
            self.last = e.t >> self.slot;
            self.run_last = self.slot_last(self.last);
            self.run_used_up();
            return Some(e);
        }
        self.refill(b);
        self.head = 1;
        self.run.first().copied()
    }

    /// Pops the earliest event when it is before `limit`; else (or with nothing pending)
    /// `None`, the queue holding the same events in the same order. The same as
    /// [`EventQueue::peek_time`], then [`EventQueue::pop`] when the time is before
    /// `limit`, without finding the earliest bucket and its earliest time twice.
    #[inline]
    pub fn pop_before(&mut self, limit: Nanos) -> Option<(Nanos, E)> {
        // the run's next event, read with one bounds check
        if let Some(&e) = self.run.get(self.head) {
            if e.t >= limit {
                return None;
            }
            self.head += 1;
            return Some(self.popped_entry(e));
        }
        // the run used up: the lowest bucket
        let b = self.lowest()?;
        let bucket = &mut self.buckets[b];
        if bucket.len() == 1 {
            let t = bucket[0].t;
            if t >= limit {
                return None;
            }
            let e = bucket.pop()?;
            self.emptied(b);
            self.last = t >> self.slot;
            self.run_last = self.slot_last(self.last);
            self.run_used_up();
            return Some(self.popped_entry(e));
        }
        self.refill(b);
        let e = *self.run.get(self.head)?;
        if e.t >= limit {
            return None;
        }
        self.head += 1;
        Some(self.popped_entry(e))
    }

    /// Empties `run`, all of it popped, when a pop takes a bucket's lone event and moves
    /// the run's slot: the pushes into the new slot start it again. Without this, a run
    /// that is never refilled (every pop from the buckets a lone event's) would keep its
    /// popped events and grow with simulated time.
    #[inline(always)]
    fn run_used_up(&mut self) {
        debug_assert_eq!(self.head, self.run.len(), "pending events in a moved run");
        self.run.clear();
        self.head = 0;
    }

    /// The end of a pop of `e`.
    #[inline(always)]
    fn popped_entry(&mut self, e: Entry<E>) -> (Nanos, E) {
        let Entry { t, ev, .. } = e;
        self.len -= 1;
        debug_assert!(t >= self.now, "time went back");
        self.now = t;
        self.popped += 1;
        (t, ev)
    }

    /// With `run` empty, makes `last` the earliest slot of bucket `b` (the lowest
    /// non-empty one, of several events) and moves its events of that slot to `run`,
    /// sorted: the whole bucket when it is of digit 0 (one slot), else its events of that
    /// slot, its others going to lower buckets ([`EventQueue::redistribute`]).
    #[inline(never)]
    fn refill(&mut self, b: usize) {
        debug_assert!(self.head == self.run.len() && self.buckets[b].len() > 1);
        self.run.clear();
        self.head = 0;
        let last = if b < 1 << DIGIT {
            // the bucket becomes `run`, and takes `run`'s empty allocation
            std::mem::swap(&mut self.run, &mut self.buckets[b]);
            self.emptied(b);
            self.keep(b);
            (self.last & !((1 << DIGIT) - 1)) | b as u64
        } else {
            self.redistribute(b)
        };
        debug_assert!(self.run.iter().all(|e| e.t >> self.slot == last));
        self.last = last;
        self.run_last = self.slot_last(last);
        if self.run.len() > 1 {
            sort_run(&mut self.run, last << self.slot);
        }
    }

    /// The earliest slot of bucket `b` (above digit 0, the lowest non-empty one, with
    /// `run` empty): moves its events of that slot to `run` and its others to the buckets
    /// they take relative to it (lower ones).
    fn redistribute(&mut self, b: usize) -> u64 {
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        let slot = self.slot;
        let last = bucket
            .iter()
            .map(|e| e.t >> slot)
            .min()
            .unwrap_or(self.last);
        self.emptied(b);
        // `file()` of each event not of slot `last`, with the summary word in a local; the
        // events are read in place (a `drain()` copied each through the stack)
        let mut summary = self.summary;
        for &e in bucket.iter() {
            // the growths are calls apart that do not take the event, so that the common
            // paths keep it in registers
            let c = e.t >> slot;
            let x = c ^ last;
            if x == 0 {
                if self.run.len() == self.run.capacity() {
                    Self::grow_run(&mut self.run);
                }
                self.run.push(e);
                continue;
            }
            let l = (63 - x.leading_zeros()) / DIGIT;
            let b = ((l << DIGIT) + (c >> (DIGIT * l)) as u32 % (1 << DIGIT)) as usize;
            self.mask[b / 64] |= 1 << (b % 64);
            summary |= 1 << (b / 64);
            let v = &mut self.buckets[b];
            if v.len() == v.capacity() {
                Self::grow(v, &mut self.spare, &mut self.spare_total);
            }
            v.push(e);
        }
        bucket.clear();
        self.summary = summary;
        self.buckets[b] = bucket;
        self.keep(b);
        last
    }

    /// The emptied bucket `b` keeps its allocation while the kept total stays within
    /// [`KEEP_BUDGET`]; else gives it to `spare` while that stays within
    /// [`SPARE_BUDGET`]; else frees it.
    #[inline(always)]
    fn keep(&mut self, b: usize) {
        debug_assert!(self.buckets[b].is_empty());
        self.kept_total -= self.kept[b] as usize;
        let c = self.buckets[b].capacity();
        if self.kept_total + c <= KEEP_BUDGET {
            self.kept[b] = c as u32;
            self.kept_total += c;
        } else {
            self.kept[b] = 0;
            let bucket = std::mem::take(&mut self.buckets[b]);
            if c != 0 && self.spare_total + c <= SPARE_BUDGET {
                self.spare_total += c;
                self.spare.push(bucket);
            }
        }
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Nanos> {
        if let Some(e) = self.run.get(self.head) {
            return Some(e.t);
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

    /// A run that is never refilled (each pop from the buckets a lone event's, each push
    /// into the run popped before the next slot) keeps no popped events: its length stays
    /// bounded in simulated time (found by review: it grew by one event a round).
    #[test]
    fn a_run_never_refilled_does_not_grow() {
        for bits in [0, 4, 20] {
            let mut q = EventQueue::with_slot_bits(bits);
            for i in 0..100_000u32 {
                // a later slot: a bucket of its own, popped as a lone event
                q.push(q.now() + (1 << bits) * 3 + 7, i);
                assert_eq!(q.pop().map(|(_, ev)| ev), Some(i));
                // at the popped time: into the run, popped from it
                q.push(q.now(), i);
                assert_eq!(q.pop_before(u64::MAX).map(|(_, ev)| ev), Some(i));
                assert!(q.run.len() <= 2, "run of {} after {i} rounds", q.run.len());
            }
        }
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

    /// The same with the numbers renumbered every few pushes (slots of 1, 16 and 4,096
    /// ns): the order is unchanged.
    #[test]
    fn renumbering_keeps_the_order() {
        for (limit, bits) in [(40u32, 12), (64, 0), (1000, 4)] {
            let mut q = EventQueue {
                seq_limit: limit,
                ..EventQueue::with_slot_bits(bits)
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
    /// renumbered every few pushes or never and slots of 1 ns to 2³² ns, give the same
    /// pops, lengths and peeks.
    #[test]
    fn pops_as_a_binary_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        for (seed, limit, bits) in [
            (1u64, u32::MAX, 12),
            (2, 50, 12),
            (3, 333, 0),
            (4, 4096, 17),
            (5, u32::MAX, 4),
            (6, 1000, MAX_SLOT_BITS),
        ] {
            let mut q = EventQueue {
                seq_limit: limit,
                ..EventQueue::with_slot_bits(bits)
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
