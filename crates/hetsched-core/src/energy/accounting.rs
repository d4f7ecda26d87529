//! Energy of a run, for results: active energy from the Energy Model (power of the OPP ×
//! time busy at it) plus idle-state power × residency, per CPU, per performance domain
//! and in total, and an energy-over-time series.
//!
//! This is reporting, not a kernel mechanism (the kernel estimates energy only to compare
//! placements, [`super::eas`]). It is what LISA's `estimate_from_trace()` does with the
//! EM: busy time at each frequency × that frequency's power. Sums are integers in µW·ns
//! (10⁻¹⁵ J) and converted to `f64` only at the end. When any power is assumed, the
//! figures are labelled [`EnergyUnit::AbstractUnits`].
//!
//! # How the engine calls it
//!
//! Keep one [`EnergyMeter`]; whenever a CPU leaves a state, report the interval it spent
//! in it: [`EnergyMeter::busy`] for running at a frequency, [`EnergyMeter::idle`] for an
//! idle state (index 0 = WFI, `i ≥ 1` = `Cpu::idle_states[i − 1]`). At the end read
//! [`EnergyMeter::report`] and [`EnergyMeter::series`].
//!
//! Simplifications: idle-state power is charged per CPU while that CPU is in the state
//! (cluster states included); WFI and states without published power draw 0 and the report
//! says so ([`EnergyReport::idle_power_known`]); no static/leakage power beyond what the
//! OPP power includes.

use super::em::EnergyModel;
use crate::platform::Platform;
use serde::{Deserialize, Serialize};

/// µW·ns per joule.
const UW_NS_PER_J: f64 = 1e15;

/// The unit of reported energies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyUnit {
    /// Joules: every power figure is published (µW).
    Joules,
    /// Abstract units: some power is assumed (labelled in every report).
    AbstractUnits,
}

/// Time per state for every CPU.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Residency {
    /// `busy_ns[cpu][s]`: time running at EM state `s` of the CPU's domain.
    pub busy_ns: Vec<Vec<u64>>,
    /// `idle_ns[cpu][i]`: time in idle state `i` (0 = WFI).
    pub idle_ns: Vec<Vec<u64>>,
}

/// Energy figures of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyReport {
    /// Joules or abstract units.
    pub unit: EnergyUnit,
    /// Some power is assumed.
    pub assumed: bool,
    /// Every idle state used has a published power (else those draw 0).
    pub idle_power_known: bool,
    /// Performance domains without an EM (their active energy is 0).
    pub pds_without_em: Vec<usize>,
    /// Active energy per CPU.
    pub cpu_active: Vec<f64>,
    /// Idle energy per CPU.
    pub cpu_idle: Vec<f64>,
    /// Active energy per performance domain.
    pub pd_active: Vec<f64>,
    /// Idle energy per performance domain.
    pub pd_idle: Vec<f64>,
    /// Σ active.
    pub total_active: f64,
    /// Σ idle.
    pub total_idle: f64,
    /// Active + idle.
    pub total: f64,
}

/// One bucket of the energy-over-time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergySample {
    /// Bucket start (ns, absolute).
    pub start_ns: u64,
    /// Energy per performance domain in the bucket (active + idle).
    pub pd: Vec<f64>,
    /// Σ over domains.
    pub total: f64,
}

/// The EM state a CPU at `freq_khz` is charged at: the lowest at or above it, else the
/// highest (`table` not empty).
fn state_of(table: &[(u64, u64)], freq_khz: u64) -> usize {
    table
        .iter()
        .position(|&(f, _)| f >= freq_khz)
        .unwrap_or(table.len() - 1)
}

/// Accumulates residencies and a time series while the run goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnergyMeter {
    /// Per CPU: performance domain.
    cpu_pd: Vec<usize>,
    /// Per CPU: EM (frequency kHz, power µW) per state; empty without EM.
    active: Vec<Vec<(u64, u64)>>,
    /// Per CPU: where its idle states are in `idle_slots`, how many, and its performance
    /// domain.
    idle_cpu: Vec<IdleCpu>,
    /// Every CPU's idle states (index 0 = WFI) one after the other: power (`None` =
    /// unknown) and residency. One flat table, so that charging an idle interval reads one
    /// per-CPU record and one slot (the idle interval's charge is the meter's most
    /// frequent; [`EnergyMeter::residency`] gives the per-CPU table).
    idle_slots: Vec<IdleSlot>,
    /// Per CPU: the frequency of its last busy interval, that frequency's state in
    /// `active` ([`state_of`]) and its power, and the CPU's performance domain, kept so
    /// that a CPU at the same frequency does not search the table again, and finds all it
    /// charges in one place (not part of the meter's value: `u64::MAX` and its state at
    /// first, [`NO_EM`] for a CPU without EM).
    #[serde(skip)]
    busy_state: KeptStates,
    nr_pd: usize,
    assumed: bool,
    pds_without_em: Vec<usize>,
    /// Time running at each EM state of each CPU's domain, every CPU's states one after
    /// the other: CPU `cpu`'s state `s` is `busy_ns[busy_off[cpu] + s]` (one flat table,
    /// so that a busy charge indexes it once; [`EnergyMeter::residency`] gives the
    /// per-CPU table).
    busy_ns: Vec<u64>,
    /// Per CPU: where its states are in `busy_ns` (their number is `active[cpu].len()`).
    busy_off: Vec<usize>,
    idle_unknown_used: bool,
    origin_ns: u64,
    bucket_ns: u64,
    /// In µW·ns, bucket `k`'s domain `pd` at `buckets[k * nr_pd + pd]` (one flat table,
    /// indexed once per charge).
    buckets: Vec<u128>,
    /// The bucket the last sample ended in (not part of the meter's value).
    #[serde(skip)]
    cursor: BucketCursor,
}

/// The bucket [`EnergyMeter::sample`] charged last, `[start, end)` = bucket `k` (its
/// domains from `base = k * nr_pd` in [`EnergyMeter::buckets`]): an
/// interval within it (the engine's intervals end at its clock, which only moves forward,
/// so most do) is charged there without computing its bucket by a division. It names a
/// bucket only once that bucket exists (`start == end == 0` before: no interval ends at
/// or before the origin). A cache, so meters equal whatever their cursors.
#[derive(Debug, Clone, Copy, Default)]
struct BucketCursor {
    k: usize,
    base: usize,
    start: u64,
    end: u64,
}

/// [`EnergyMeter`]'s kept busy states: a cache, so meters equal whatever they hold.
#[derive(Debug, Clone, Default)]
struct KeptStates(Vec<Kept>);

/// One CPU's kept busy state (see [`EnergyMeter::busy_state`]), and where the CPU's
/// states start in [`EnergyMeter::busy_ns`].
#[derive(Debug, Clone, Copy)]
struct Kept {
    freq: u64,
    state: usize,
    off: usize,
    power: u64,
    pd: usize,
}

/// Where a CPU's idle states are in [`EnergyMeter::idle_slots`], and its domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct IdleCpu {
    off: usize,
    len: usize,
    pd: usize,
}

/// One idle state of one CPU: its power (`None` = unknown) and the time spent in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct IdleSlot {
    power: Option<u64>,
    ns: u64,
}

/// [`Kept::state`] of a CPU without EM: its busy time is not charged.
const NO_EM: usize = usize::MAX;

impl PartialEq for KeptStates {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for KeptStates {}

impl PartialEq for BucketCursor {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for BucketCursor {}

impl EnergyMeter {
    /// A meter for `platform` with its EM; the series starts at `origin_ns` with buckets of
    /// `bucket_ns` (0 = no series).
    pub fn new(platform: &Platform, em: &EnergyModel, origin_ns: u64, bucket_ns: u64) -> Self {
        let mut active = Vec::with_capacity(platform.nr_cpus());
        let mut idle_cpu = Vec::with_capacity(platform.nr_cpus());
        let mut idle_slots = Vec::new();
        let mut busy_ns = Vec::new();
        let mut busy_off = Vec::with_capacity(platform.nr_cpus());
        for cpu in &platform.cpus {
            let table: Vec<(u64, u64)> = em
                .pds
                .get(cpu.perf_domain)
                .and_then(Option::as_ref)
                .map(|pd| pd.table.iter().map(|s| (s.frequency, s.power)).collect())
                .unwrap_or_default();
            busy_off.push(busy_ns.len());
            busy_ns.resize(busy_ns.len() + table.len(), 0);
            active.push(table);
            let off = idle_slots.len();
            idle_slots.push(IdleSlot { power: None, ns: 0 });
            idle_slots.extend(cpu.idle_states.iter().map(|s| IdleSlot {
                power: s.power_uw,
                ns: 0,
            }));
            idle_cpu.push(IdleCpu {
                off,
                len: idle_slots.len() - off,
                pd: cpu.perf_domain,
            });
        }
        let pds_without_em = (0..platform.perf_domains.len())
            .filter(|&i| em.pds.get(i).is_none_or(Option::is_none))
            .collect();
        let busy_state = KeptStates(
            active
                .iter()
                .zip(&platform.cpus)
                .zip(&busy_off)
                .map(|((t, c), &off)| {
                    let state = if t.is_empty() {
                        NO_EM
                    } else {
                        state_of(t, u64::MAX)
                    };
                    Kept {
                        freq: u64::MAX,
                        state,
                        off,
                        power: t.get(state).map_or(0, |e| e.1),
                        pd: c.perf_domain,
                    }
                })
                .collect(),
        );
        EnergyMeter {
            cpu_pd: platform.cpus.iter().map(|c| c.perf_domain).collect(),
            busy_state,
            active,
            idle_cpu,
            idle_slots,
            nr_pd: platform.perf_domains.len(),
            assumed: em.assumed,
            pds_without_em,
            busy_ns,
            busy_off,
            idle_unknown_used: false,
            origin_ns,
            bucket_ns,
            buckets: Vec::new(),
            cursor: BucketCursor::default(),
        }
    }

    /// Whether [`EnergyMeter::busy`] charges anything on `cpu`: its domain has an EM (fixed
    /// when the meter is made).
    pub fn charges_busy(&self, cpu: usize) -> bool {
        self.busy_state.0.get(cpu).is_some_and(|k| k.state != NO_EM)
    }

    /// `cpu` ran at `freq_khz` during `[from, to)`. A frequency between states is charged
    /// at the lowest state at or above it.
    ///
    /// Its only calls are tail calls (a new frequency's, and the series' outside the
    /// current bucket), so that it saves no registers: a CPU without EM returns at once.
    /// Out of line (where the metrics sink calls it, inlined into the engine's context
    /// switch).
    #[inline(never)]
    pub fn busy(&mut self, cpu: usize, freq_khz: u64, from: u64, to: u64) {
        let Some(&k) = self.busy_state.0.get(cpu) else {
            return;
        };
        if k.state == NO_EM || to <= from {
            return;
        }
        if k.freq != freq_khz {
            return self.busy_new_freq(cpu, freq_khz, from, to);
        }
        self.charge_busy(cpu, k, from, to);
    }

    /// [`EnergyMeter::busy`] at a frequency other than the kept one: its state kept, then
    /// charged.
    #[inline(never)]
    fn busy_new_freq(&mut self, cpu: usize, freq_khz: u64, from: u64, to: u64) {
        let k = self.keep_busy_state(cpu, freq_khz);
        self.charge_busy(cpu, k, from, to);
    }

    /// Charges `[from, to)` on `cpu` at its kept state `k`.
    #[inline(always)]
    fn charge_busy(&mut self, cpu: usize, k: Kept, from: u64, to: u64) {
        debug_assert_eq!(
            (k.state, k.power, k.pd, k.off),
            {
                let s = state_of(&self.active[cpu], k.freq);
                (
                    s,
                    self.active[cpu][s].1,
                    self.cpu_pd[cpu],
                    self.busy_off[cpu],
                )
            },
            "the kept state is the table's"
        );
        self.busy_ns[k.off + k.state] += to - from;
        self.sample(k.pd, k.power, from, to);
    }

    /// [`EnergyMeter::busy`] at a frequency other than the kept one: its state, kept.
    #[inline]
    fn keep_busy_state(&mut self, cpu: usize, freq_khz: u64) -> Kept {
        let table = &self.active[cpu];
        let state = state_of(table, freq_khz);
        let k = &mut self.busy_state.0[cpu];
        *k = Kept {
            freq: freq_khz,
            state,
            off: k.off,
            power: table[state].1,
            pd: k.pd,
        };
        *k
    }

    /// `cpu` was in idle state `state` (0 = WFI) during `[from, to)`.
    pub fn idle(&mut self, cpu: usize, state: usize, from: u64, to: u64) {
        self.idle_inline(cpu, state, from, to);
    }

    /// [`EnergyMeter::idle`], inlined where the metrics sink closes an idle state.
    #[inline(always)]
    pub(crate) fn idle_inline(&mut self, cpu: usize, state: usize, from: u64, to: u64) {
        let Some(&ic) = self.idle_cpu.get(cpu) else {
            return;
        };
        if state >= ic.len || to <= from {
            return;
        }
        // `off + state` is within the table: the CPU's `len` slots start at `off`
        let Some(slot) = self.idle_slots.get_mut(ic.off + state) else {
            return;
        };
        slot.ns += to - from;
        match slot.power {
            Some(power) => self.sample(ic.pd, power, from, to),
            None => self.idle_unknown_used = true,
        }
    }

    /// Adds `power_uw` over `[from, to)` to the series' buckets of domain `pd`. Inline, the
    /// interval within the bucket charged last (most are: the engine's intervals end at
    /// its clock, which only moves forward); [`EnergyMeter::sample_buckets`] otherwise.
    #[inline]
    fn sample(&mut self, pd: usize, power_uw: u64, from: u64, to: u64) {
        let t = from.max(self.origin_ns);
        let c = self.cursor;
        if c.start <= t && t < to && to <= c.end {
            // within the last bucket charged (a cursor is set only with a series, and
            // `t < to` holds only for `to` after the origin): the loop of
            // `sample_buckets` would charge [t, to) to it
            debug_assert!(self.bucket_ns != 0 && to > self.origin_ns);
            debug_assert_eq!(c.k as u64, (t - self.origin_ns) / self.bucket_ns);
            debug_assert_eq!(c.base, c.k * self.nr_pd);
            self.buckets[c.base + pd] += u128::from(power_uw) * u128::from(to - t);
            return;
        }
        self.sample_buckets(pd, power_uw, from, to);
    }

    /// [`EnergyMeter::sample`] outside the bucket charged last: each bucket `[from, to)`
    /// meets, found by division.
    #[inline(never)]
    fn sample_buckets(&mut self, pd: usize, power_uw: u64, from: u64, to: u64) {
        if self.bucket_ns == 0 || to <= self.origin_ns {
            return;
        }
        let mut t = from.max(self.origin_ns);
        let b = self.bucket_ns;
        while t < to {
            let k = ((t - self.origin_ns) / b) as usize;
            let start = self.origin_ns + k as u64 * b;
            let bucket_end = start + b;
            let end = bucket_end.min(to);
            let base = k * self.nr_pd;
            if self.buckets.len() < base + self.nr_pd {
                self.buckets.resize(base + self.nr_pd, 0);
            }
            self.buckets[base + pd] += u128::from(power_uw) * u128::from(end - t);
            self.cursor = BucketCursor {
                k,
                base,
                start,
                end: bucket_end,
            };
            t = end;
        }
    }

    /// The busy time at each EM state of `cpu`.
    fn busy_states(&self, cpu: usize) -> &[u64] {
        let off = self.busy_off[cpu];
        &self.busy_ns[off..off + self.active[cpu].len()]
    }

    /// The idle states of `cpu`.
    fn idle_states(&self, cpu: usize) -> &[IdleSlot] {
        let ic = self.idle_cpu[cpu];
        &self.idle_slots[ic.off..ic.off + ic.len]
    }

    /// Residencies so far.
    pub fn residency(&self) -> Residency {
        Residency {
            busy_ns: (0..self.busy_off.len())
                .map(|cpu| self.busy_states(cpu).to_vec())
                .collect(),
            idle_ns: (0..self.idle_cpu.len())
                .map(|cpu| self.idle_states(cpu).iter().map(|s| s.ns).collect())
                .collect(),
        }
    }

    /// Totals so far.
    pub fn report(&self) -> EnergyReport {
        let nr_cpus = self.cpu_pd.len();
        let mut cpu_active = vec![0u128; nr_cpus];
        let mut cpu_idle = vec![0u128; nr_cpus];
        let mut idle_known = !self.idle_unknown_used;
        for cpu in 0..nr_cpus {
            for (s, &t) in self.busy_states(cpu).iter().enumerate() {
                cpu_active[cpu] += u128::from(self.active[cpu][s].1) * u128::from(t);
            }
            for &IdleSlot { power, ns: t } in self.idle_states(cpu) {
                match power {
                    Some(p) => cpu_idle[cpu] += u128::from(p) * u128::from(t),
                    None if t > 0 => idle_known = false,
                    None => {}
                }
            }
        }
        let mut pd_active = vec![0u128; self.nr_pd];
        let mut pd_idle = vec![0u128; self.nr_pd];
        for cpu in 0..nr_cpus {
            pd_active[self.cpu_pd[cpu]] += cpu_active[cpu];
            pd_idle[self.cpu_pd[cpu]] += cpu_idle[cpu];
        }
        let ta: u128 = cpu_active.iter().sum();
        let ti: u128 = cpu_idle.iter().sum();
        let j = |v: &[u128]| {
            v.iter()
                .map(|&x| x as f64 / UW_NS_PER_J)
                .collect::<Vec<_>>()
        };
        EnergyReport {
            unit: if self.assumed {
                EnergyUnit::AbstractUnits
            } else {
                EnergyUnit::Joules
            },
            assumed: self.assumed,
            idle_power_known: idle_known,
            pds_without_em: self.pds_without_em.clone(),
            cpu_active: j(&cpu_active),
            cpu_idle: j(&cpu_idle),
            pd_active: j(&pd_active),
            pd_idle: j(&pd_idle),
            total_active: ta as f64 / UW_NS_PER_J,
            total_idle: ti as f64 / UW_NS_PER_J,
            total: (ta + ti) as f64 / UW_NS_PER_J,
        }
    }

    /// The energy-over-time series (one sample per bucket, from the origin).
    pub fn series(&self) -> Vec<EnergySample> {
        // `max(1)`: without a domain no bucket is made
        self.buckets
            .chunks(self.nr_pd.max(1))
            .enumerate()
            .map(|(k, b)| EnergySample {
                start_ns: self.origin_ns + k as u64 * self.bucket_ns,
                pd: b.iter().map(|&x| x as f64 / UW_NS_PER_J).collect(),
                total: b.iter().sum::<u128>() as f64 / UW_NS_PER_J,
            })
            .collect()
    }
}

/// Energy from a complete residency table (the same sums as [`EnergyMeter::report`]).
pub fn energy_from_residency(
    platform: &Platform,
    em: &EnergyModel,
    residency: &Residency,
) -> EnergyReport {
    let mut m = EnergyMeter::new(platform, em, 0, 0);
    for (cpu, states) in residency.busy_ns.iter().enumerate() {
        let Some(&off) = m.busy_off.get(cpu) else {
            continue;
        };
        for (s, &t) in states.iter().enumerate().take(m.active[cpu].len()) {
            m.busy_ns[off + s] += t;
        }
    }
    for (cpu, states) in residency.idle_ns.iter().enumerate() {
        let Some(&ic) = m.idle_cpu.get(cpu) else {
            continue;
        };
        for (i, &t) in states.iter().enumerate().take(ic.len) {
            m.idle_slots[ic.off + i].ns += t;
        }
    }
    m.report()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::em::tests::juno;
    use crate::energy::em::EmVersion;
    use crate::platform::{IdleLevel, IdleState};

    #[test]
    fn sums_per_cpu_pd_and_total() {
        let mut p = juno();
        p.cpus[1].idle_states = vec![IdleState {
            name: "cpu-sleep-0".into(),
            level: IdleLevel::Cpu,
            entry_latency_us: 0,
            exit_latency_us: 0,
            min_residency_us: 0,
            power_uw: Some(10_000),
        }];
        let em = EnergyModel::build(&p, EmVersion::V6_9);
        let mut m = EnergyMeter::new(&p, &em, 0, 10_000_000);
        // CPU 0 (LITTLE) 1 s at 450 MHz (33 mW) = 0.033 J.
        m.busy(0, 450_000, 0, 1_000_000_000);
        // CPU 1 (big) 0.5 s at 1.1 GHz (616 mW) = 0.308 J, then 0.5 s in cpu-sleep-0
        // (10 mW) = 0.005 J.
        m.busy(1, 1_100_000, 0, 500_000_000);
        m.idle(1, 1, 500_000_000, 1_000_000_000);
        let r = m.report();
        assert_eq!(r.unit, EnergyUnit::Joules);
        assert!((r.cpu_active[0] - 0.033).abs() < 1e-12);
        assert!((r.cpu_active[1] - 0.308).abs() < 1e-12);
        assert!((r.cpu_idle[1] - 0.005).abs() < 1e-12);
        assert!((r.pd_active[0] - 0.033).abs() < 1e-12);
        assert!((r.pd_active[1] - 0.308).abs() < 1e-12);
        assert!((r.total - 0.346).abs() < 1e-12);
        assert!(r.idle_power_known);
        // 100 buckets of 10 ms; the first holds 33 mW × 10 ms + 616 mW × 10 ms = 6.49 mJ.
        let s = m.series();
        assert_eq!(s.len(), 100);
        assert!((s[0].total - 0.00649).abs() < 1e-12);
        let sum: f64 = s.iter().map(|b| b.total).sum();
        assert!((sum - r.total).abs() < 1e-9);
        // WFI has no published power: flagged.
        m.idle(0, 0, 1_000_000_000, 1_100_000_000);
        assert!(!m.report().idle_power_known);
        // The same residency table gives the same totals.
        let again = energy_from_residency(&p, &em, &m.residency());
        assert!((again.total - r.total).abs() < 1e-12);
    }

    #[test]
    fn assumed_models_are_labelled() {
        let mut p = juno();
        p.perf_domains[0].power_source = crate::platform::PowerSource::Assumed;
        let em = EnergyModel::build(&p, EmVersion::V6_9);
        let r = EnergyMeter::new(&p, &em, 0, 0).report();
        assert_eq!(r.unit, EnergyUnit::AbstractUnits);
        assert!(r.assumed);
    }
}
