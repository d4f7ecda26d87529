//! A fixed-size CPU mask (`struct cpumask`), up to [`MAX_CPUS`] CPUs, `Copy` and
//! allocation-free for the hot paths.

use serde::{Deserialize, Serialize};

/// The largest platform the engine accepts.
pub const MAX_CPUS: usize = 256;
const WORDS: usize = MAX_CPUS / 64;

/// A set of CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct CpuSet {
    bits: [u64; WORDS],
}

impl CpuSet {
    /// The empty set.
    pub const EMPTY: CpuSet = CpuSet { bits: [0; WORDS] };

    /// CPUs `0..n`.
    pub fn first_n(n: usize) -> CpuSet {
        // Word by word (this is on the balancer's per-CPU path): full words, then the
        // low `n % 64` bits of the next one.
        let n = n.min(MAX_CPUS);
        let mut s = CpuSet::EMPTY;
        for (i, w) in s.bits.iter_mut().enumerate() {
            let lo = i * 64;
            if n >= lo + 64 {
                *w = u64::MAX;
            } else if n > lo {
                *w = (1u64 << (n - lo)) - 1;
            }
        }
        s
    }

    /// The set of the listed CPUs (ids ≥ [`MAX_CPUS`] are ignored; callers validate first).
    pub fn from_cpus(cpus: &[usize]) -> CpuSet {
        let mut s = CpuSet::EMPTY;
        for &c in cpus {
            if c < MAX_CPUS {
                s.set(c);
            }
        }
        s
    }

    /// Adds `cpu`.
    pub fn set(&mut self, cpu: usize) {
        self.bits[cpu / 64] |= 1 << (cpu % 64);
    }

    /// Removes `cpu`.
    pub fn clear(&mut self, cpu: usize) {
        self.bits[cpu / 64] &= !(1 << (cpu % 64));
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// Intersection.
    pub fn and(&self, o: &CpuSet) -> CpuSet {
        let mut r = *self;
        for (a, b) in r.bits.iter_mut().zip(o.bits.iter()) {
            *a &= *b;
        }
        r
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// Number of CPUs in the set.
    pub fn weight(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has at most one CPU (`weight() <= 1`), without counting: the
    /// first non-empty word decides unless it has a single bit. `count_ones()` is a dozen
    /// instructions a word without the `popcnt` target feature.
    pub fn at_most_one(&self) -> bool {
        let mut seen = false;
        for &w in &self.bits {
            if w != 0 {
                if seen || w & (w - 1) != 0 {
                    return false;
                }
                seen = true;
            }
        }
        true
    }

    /// Lowest CPU in the set: the lowest bit of the first non-empty word.
    pub fn first(&self) -> Option<usize> {
        for (i, &w) in self.bits.iter().enumerate() {
            if w != 0 {
                return Some(i * 64 + w.trailing_zeros() as usize);
            }
        }
        None
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.into_cpus()
    }

    /// CPUs in ascending order, the iterator owning its copy of the set.
    pub fn into_cpus(self) -> CpuIter {
        CpuIter {
            bits: self.bits,
            w: 0,
            cur: self.bits[0],
        }
    }

    /// The CPUs of `self` that are not in `o` (`cpumask_andnot()`).
    pub fn andnot(&self, o: &CpuSet) -> CpuSet {
        let mut r = *self;
        for (a, b) in r.bits.iter_mut().zip(o.bits.iter()) {
            *a &= !*b;
        }
        r
    }

    /// Union.
    pub fn or(&self, o: &CpuSet) -> CpuSet {
        let mut r = *self;
        for (a, b) in r.bits.iter_mut().zip(o.bits.iter()) {
            *a |= *b;
        }
        r
    }

    /// Whether every CPU of `self` is in `o` (`cpumask_subset()`).
    pub fn is_subset(&self, o: &CpuSet) -> bool {
        self.bits
            .iter()
            .zip(o.bits.iter())
            .all(|(a, b)| a & !b == 0)
    }

    /// Whether the two sets share a CPU (`cpumask_intersects()`).
    pub fn intersects(&self, o: &CpuSet) -> bool {
        self.bits.iter().zip(o.bits.iter()).any(|(a, b)| a & b != 0)
    }

    /// Word `i` (CPUs `64 i .. 64 i + 63`), `i <` [`MAX_CPUS`]` / 64`.
    pub fn word(&self, i: usize) -> u64 {
        self.bits[i]
    }

    /// The words, least significant first, trimmed to `nr_cpus` CPUs.
    pub fn words(&self, nr_cpus: usize) -> &[u64] {
        &self.bits[..nr_cpus.div_ceil(64).clamp(1, WORDS)]
    }
}

/// The CPUs of a [`CpuSet`] in ascending order ([`CpuSet::iter`], [`CpuSet::into_cpus`]):
/// the bits of one word, lowest first, then the next word's. One loop over the words
/// with the current word in a register, rather than an iterator per word chained by
/// `flat_map` (which tests its front, inner and back iterators at each step).
#[derive(Debug, Clone)]
pub struct CpuIter {
    bits: [u64; WORDS],
    /// The word being walked.
    w: usize,
    /// Its bits not returned yet.
    cur: u64,
}

impl Iterator for CpuIter {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            if self.w + 1 >= WORDS {
                return None;
            }
            self.w += 1;
            self.cur = self.bits[self.w];
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.w * 64 + b)
    }
}

/// The kernel's `%*pbl` list format: `0,3-5`; empty set prints as an empty string.
impl std::fmt::Display for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        let mut it = self.iter().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end += 1;
                it.next();
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic() {
        let mut s = CpuSet::from_cpus(&[0, 3, 70, 255]);
        assert_eq!(s.weight(), 4);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3, 70, 255]);
        s.clear(3);
        assert!(!s.contains(3));
        assert_eq!(s.first(), Some(0));
        assert_eq!(CpuSet::first_n(3).and(&s).weight(), 1);
        assert_eq!(s.words(8).len(), 1);
        // at most one CPU, in any word
        assert!(CpuSet::from_cpus(&[200]).at_most_one());
        assert!(!CpuSet::from_cpus(&[3, 200]).at_most_one());
        assert!(!CpuSet::from_cpus(&[130, 131]).at_most_one());
    }

    #[test]
    fn iter_and_first_are_the_bits_ascending() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for round in 0..500 {
            let mut s = CpuSet::EMPTY;
            for c in 0..MAX_CPUS {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % 16 < round % 17 {
                    s.set(c);
                }
            }
            let want: Vec<usize> = (0..MAX_CPUS).filter(|&c| s.contains(c)).collect();
            assert_eq!(s.iter().collect::<Vec<_>>(), want);
            assert_eq!(s.into_cpus().collect::<Vec<_>>(), want);
            assert_eq!(s.first(), want.first().copied());
            let mut it = s.iter();
            for _ in 0..want.len() {
                it.next();
            }
            assert_eq!((it.next(), it.next()), (None, None));
        }
    }

    #[test]
    fn first_n_word_boundaries() {
        // CPUs 0..n one by one, the definition the word-wise version must match
        for n in [0, 1, 63, 64, 65, 127, 128, 200, 255, 256, 300] {
            let mut want = CpuSet::EMPTY;
            for c in 0..n.min(MAX_CPUS) {
                want.set(c);
            }
            assert_eq!(CpuSet::first_n(n), want, "n = {n}");
            assert_eq!(CpuSet::first_n(n).weight(), n.min(MAX_CPUS));
            assert_eq!(CpuSet::first_n(n).at_most_one(), n <= 1);
        }
    }

    #[test]
    fn set_ops_and_cpulist() {
        let a = CpuSet::from_cpus(&[0, 3, 4, 5]);
        let b = CpuSet::from_cpus(&[1, 2]);
        assert_eq!(a.to_string(), "0,3-5");
        assert_eq!(a.or(&b).to_string(), "0-5");
        assert!(b.is_subset(&a.or(&b)));
        assert!(!a.is_subset(&b));
        assert!(!a.intersects(&b));
        assert_eq!(CpuSet::EMPTY.to_string(), "");
    }
}
