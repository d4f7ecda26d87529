//! A shared policy's aggregation: `sugov_next_freq_shared()` (kernel/sched/
//! cpufreq_schedutil.c, v6.11) walks every CPU of the policy for `sugov_iowait_apply()`
//! and `sugov_get_util()` and takes the largest `util`; here only the CPUs whose inputs
//! changed (or that hold an iowait boost) are computed again, and the largest is kept
//! ([`SugovPolicy::shared_util`]). `bw_min`, which `ignore_dl_rate_limit()` reads, is
//! kept the same way ([`SugovPolicy::shared_bw_min`]).

use super::*;

impl SugovPolicy {
    /// `sugov_iowait_apply()` + `sugov_get_util()` of the `j`-th CPU of a shared policy at
    /// `now`; it is stale after a boost, and no longer boosted once its boost is gone.
    /// The policy's largest `util` follows: a new `util` at least as large is the largest;
    /// a lower one of the CPU that had the largest leaves it to be found again.
    #[inline(always)]
    fn shared_cpu_util<I: SugovInputs + ?Sized>(&mut self, j: usize, now: u64, inputs: &I) {
        let boost = self.iowait_apply(j, now);
        let old = self.sg_cpu[j].util;
        self.get_util(j, &inputs.shared_input(j), boost);
        let c = &self.sg_cpu[j];
        let (util, boost_left) = (c.util, c.iowait_boost);
        if util >= self.max_util {
            // every other CPU's util is at most the old largest, so at most this one
            self.max_util = util;
            self.max_stale = false;
        } else if old == self.max_util {
            self.max_stale = true;
        }
        let (w, bit) = word_bit(j);
        if boost == 0 {
            self.stale[w] &= !bit;
        } else {
            self.stale[w] |= bit;
        }
        if boost_left == 0 {
            self.boosted[w] &= !bit;
        }
    }

    /// `sugov_next_freq_shared()`'s utilisation: the largest `util` after
    /// `sugov_iowait_apply()` + `sugov_get_util()` of each CPU at `now`. Only the CPUs that
    /// are stale or may hold a boost are computed (the others have no boost to apply, and
    /// their inputs did not change since their last computation without boost, so they
    /// keep their `util` and `bw_min`: the same values, not read again), and the largest
    /// `util` is kept from one aggregation to the next ([`Self::shared_cpu_util`]): it is
    /// looked for over every CPU only when the CPU that had it got lower.
    pub(super) fn shared_util<I: SugovInputs + ?Sized>(&mut self, now: u64, inputs: &I) -> u64 {
        // the first word inline, its first CPU straight (most aggregations compute one
        // CPU: the caller's); the others only for a policy of more than 64 CPUs
        let todo = (self.stale[0] | self.boosted[0]) & self.valid[0];
        if todo != 0 {
            self.shared_cpu_util(todo.trailing_zeros() as usize, now, inputs);
            let rest = todo & (todo - 1);
            if rest != 0 {
                self.shared_util_rest(rest, now, inputs);
            }
        }
        if self.words > 1 {
            self.shared_util_past_64(now, inputs);
        }
        #[cfg(debug_assertions)]
        for j in 0..self.cpus.len() {
            let (w, bit) = word_bit(j);
            if (self.stale[w] | self.boosted[w]) & bit == 0 {
                assert_eq!(
                    self.sugov_get_util(&inputs.input(j), 0),
                    (self.sg_cpu[j].util, self.sg_cpu[j].bw_min),
                    "CPU {} of the policy changed without being marked",
                    self.cpus[j]
                );
            }
        }
        if self.max_stale {
            self.max_util = self.sg_cpu.iter().map(|c| c.util).max().unwrap_or(0);
            self.max_stale = false;
        }
        debug_assert_eq!(
            self.max_util,
            self.sg_cpu.iter().map(|c| c.util).max().unwrap_or(0)
        );
        self.max_util
    }

    /// [`Self::shared_util`] for a policy whose next frequency cannot change
    /// ([`SugovPolicy::only_freq`]): of what the aggregation computes only each CPU's
    /// `bw_min` is read again (by `ignore_dl_rate_limit()`), so only it is computed, for the
    /// CPUs whose inputs changed. `util`, the iowait boosts and `cached_raw_freq` are left
    /// as they are: they feed only `get_next_freq()`'s utilisation, whose result is the
    /// one frequency whatever it is.
    #[inline(always)]
    pub(super) fn shared_bw_min<I: SugovInputs + ?Sized>(&mut self, inputs: &I) {
        // the first word inline; the others only for a policy of more than 64 CPUs
        self.shared_bw_min_word(0, inputs);
        if self.words > 1 {
            self.shared_bw_min_past_64(inputs);
        }
        self.debug_check_bw_min(inputs);
    }

    /// Debug builds: every CPU's kept `bw_min` equals its `sugov_get_util()` now (a CPU
    /// whose inputs changed was marked and recomputed).
    #[inline(always)]
    pub(super) fn debug_check_bw_min<I: SugovInputs + ?Sized>(&self, inputs: &I) {
        #[cfg(debug_assertions)]
        for j in 0..self.cpus.len() {
            assert_eq!(
                self.sugov_get_util(&inputs.input(j), 0).1,
                self.sg_cpu[j].bw_min,
                "CPU {} of the policy changed without being marked",
                self.cpus[j]
            );
        }
        #[cfg(not(debug_assertions))]
        let _ = inputs;
    }

    /// The changed CPUs of the words past the first (a policy of more than 64 CPUs) go
    /// into [`Self::stale`]; out of line, so that the other policies' path stays as short.
    #[cold]
    #[inline(never)]
    pub(super) fn mark_changed_past_64<I: SugovInputs + ?Sized>(&mut self, inputs: &I) {
        for w in 1..self.words {
            self.stale[w % POLICY_WORDS] |= inputs.changed(w).unwrap_or(u64::MAX);
        }
    }

    /// [`Self::shared_util_word`] of the words past the first.
    #[cold]
    #[inline(never)]
    fn shared_util_past_64<I: SugovInputs + ?Sized>(&mut self, now: u64, inputs: &I) {
        for w in 1..self.words {
            self.shared_util_word(w % POLICY_WORDS, now, inputs);
        }
    }

    /// [`Self::shared_bw_min_word`] of the words past the first.
    #[cold]
    #[inline(never)]
    fn shared_bw_min_past_64<I: SugovInputs + ?Sized>(&mut self, inputs: &I) {
        for w in 1..self.words {
            self.shared_bw_min_word(w % POLICY_WORDS, inputs);
        }
    }

    /// [`Self::shared_util`]'s computation of the CPUs of the first word past the first
    /// one computed (`rest`, the bits still to do of the set it took): out of line, so
    /// that the loop's invariants are loaded only when there are several CPUs to compute.
    #[inline(never)]
    fn shared_util_rest<I: SugovInputs + ?Sized>(&mut self, rest: u64, now: u64, inputs: &I) {
        let mut todo = rest;
        while todo != 0 {
            let j = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            self.shared_cpu_util(j, now, inputs);
        }
    }

    /// [`Self::shared_util`]'s computation of the CPUs of word `w` (`w` < [`POLICY_WORDS`])
    /// that are stale or may hold a boost.
    #[inline(always)]
    fn shared_util_word<I: SugovInputs + ?Sized>(&mut self, w: usize, now: u64, inputs: &I) {
        let mut todo = (self.stale[w] | self.boosted[w]) & self.valid[w];
        while todo != 0 {
            let j = 64 * w + todo.trailing_zeros() as usize;
            todo &= todo - 1;
            self.shared_cpu_util(j, now, inputs);
        }
    }

    /// [`Self::shared_bw_min`]'s computation of the stale CPUs of word `w`
    /// (`w` < [`POLICY_WORDS`]).
    #[inline(always)]
    pub(super) fn shared_bw_min_word<I: SugovInputs + ?Sized>(&mut self, w: usize, inputs: &I) {
        let mut todo = self.stale[w] & self.valid[w];
        self.stale[w] &= !self.valid[w];
        while todo != 0 {
            let j = 64 * w + todo.trailing_zeros() as usize;
            todo &= todo - 1;
            self.sg_cpu[j].bw_min = self.sugov_bw_min(&inputs.bw_input(j));
        }
    }
}
