//! The line prefix of the ftrace text, `%16s-%-5d [%03d] %5lu.%06lu: `, kept per CPU:
//! most events of a CPU follow one another under the same current task, often at the
//! same instant, so the prefix is written once and copied whole while its task (comm
//! and pid) and timestamp stay the same; a new timestamp rewrites only its own part, a
//! new task at the same timestamp only the task's.

use hetsched_core::time::{Nanos, NSEC_PER_SEC, NSEC_PER_USEC};
use hetsched_core::trace::Ctx;

use crate::fmt::{self, Cursor, Line};

/// Width of the comm column (`%16s`): the longest comm a cached prefix holds.
const COMM_WIDTH: usize = 16;
/// Width of the pid column (`%-5d`).
const PID_WIDTH: usize = 5;
/// Width of the seconds part of the timestamp (`%5lu`).
const SECS_WIDTH: usize = 5;
/// Bytes a cached prefix is copied in: the longest one with a comm of at most
/// [`COMM_WIDTH`] (16 + `-` + 10 pid digits + ` [` + 10 CPU digits + `] ` + 11 digits of
/// seconds + `.` + 6 + `: ` = 61).
const PREFIX_BYTES: usize = 64;
/// CPUs whose prefixes are kept (arm64's largest `NR_CPUS`); lines of others are
/// written without the cache.
const CACHED_CPUS: usize = 4096;
/// A cached prefix's array: [`PREFIX_BYTES`] and the scratch a [`Cursor`] writes past
/// its text.
const PREFIX_ROOM: usize = PREFIX_BYTES + 32;

/// Appends the line prefix of `ctx`, with no cache (`<...>` for an empty comm, as
/// trace-cmd prints a task whose comm it does not know).
pub(crate) fn push_prefix(c: &mut Cursor<'_>, ctx: &Ctx<'_>) {
    push_task(c, comm_of(ctx), ctx.pid, ctx.cpu);
    push_ts(c, ctx.ts);
}

/// The comm printed for the current task.
fn comm_of<'a>(ctx: &Ctx<'a>) -> &'a [u8] {
    if ctx.comm.is_empty() {
        b"<...>"
    } else {
        ctx.comm.as_bytes()
    }
}

/// Appends `%16s-%-5d [%03d] `.
fn push_task(c: &mut Cursor<'_>, comm: &[u8], pid: u32, cpu: u32) {
    c.str_right(comm, COMM_WIDTH);
    c.byte(b'-');
    c.u64_left(u64::from(pid), PID_WIDTH);
    c.str(b" [");
    c.u64_zero_padded(u64::from(cpu), 3);
    c.str(b"] ");
}

/// Appends a timestamp as `%5lu.%06lu: ` (seconds, then µs truncated).
fn push_ts(c: &mut Cursor<'_>, ts: Nanos) {
    c.u64_right(ts / NSEC_PER_SEC, SECS_WIDTH);
    c.byte(b'.');
    c.u64_zero_padded((ts % NSEC_PER_SEC) / NSEC_PER_USEC, 6);
    c.str(b": ");
}

/// One CPU's last prefix, rewritten in place.
#[derive(Debug)]
struct Cached {
    /// The comm it was written for, as the context gives it (empty for `<...>`),
    /// zero-filled past `comm_len` (compared by [`same_comm`]).
    comm: [u8; COMM_WIDTH],
    /// Above [`COMM_WIDTH`] before the first prefix: no comm matches.
    comm_len: usize,
    pid: u32,
    ts: Nanos,
    /// The prefix in `text[..len]`; its timestamp starts at `ts_at` (0 before the
    /// first prefix: no timestamp written).
    text: [u8; PREFIX_ROOM],
    len: usize,
    ts_at: usize,
}

/// The last prefix of every CPU (see the [module documentation](self)).
#[derive(Debug, Default)]
pub(crate) struct Prefixes {
    cpus: Vec<Cached>,
}

impl Prefixes {
    /// Appends the line prefix of `ctx`, from the cache when its CPU's task and time are
    /// those of the previous line there.
    #[inline(always)]
    pub(crate) fn push(&mut self, c: &mut Cursor<'_>, ctx: &Ctx<'_>) {
        match self.cached(ctx) {
            Some((block, len)) => c.block(block, len),
            None => push_prefix(c, ctx),
        }
    }

    /// [`Prefixes::push`] into a [`Line`]; a prefix the cache does not keep makes the
    /// line one for a [`Cursor`] ([`Line::spill`]).
    #[inline(always)]
    pub(crate) fn push_line(&mut self, l: &mut Line<'_>, ctx: &Ctx<'_>) {
        match self.cached(ctx) {
            Some((block, len)) => l.block(block, len),
            None => l.spill(),
        }
    }

    /// The line prefix of `ctx` from its CPU's cache, updated first if its task or time
    /// are not those of the previous line there: `block[..len]`. `None` for a prefix
    /// the cache does not keep (a comm longer than [`COMM_WIDTH`], a CPU past
    /// [`CACHED_CPUS`]).
    #[inline(always)]
    fn cached(&mut self, ctx: &Ctx<'_>) -> Option<(&[u8; PREFIX_BYTES], usize)> {
        // The cache is keyed by the comm as given (an empty one prints as `<...>`, which
        // only `set_task` writes), so the common path chooses nothing.
        let comm = ctx.comm.as_bytes();
        let cpu = ctx.cpu as usize;
        if comm.len() > COMM_WIDTH || cpu >= CACHED_CPUS {
            return None;
        }
        if cpu >= self.cpus.len() {
            return self.cached_new_cpu(ctx);
        }
        // Below the length just read: no bound check.
        let p = &mut self.cpus[cpu];
        if p.pid != ctx.pid || p.comm_len != comm.len() || !same_comm(&p.comm, comm) {
            let mut key = [0u8; COMM_WIDTH];
            fmt::copy_small(&mut key, comm);
            p.set_task(key, comm.len(), ctx);
        } else if p.ts != ctx.ts {
            p.set_ts(ctx.ts);
        }
        let (block, _) = p
            .text
            .split_first_chunk::<PREFIX_BYTES>()
            .expect("PREFIX_ROOM > PREFIX_BYTES");
        Some((block, p.len))
    }
}

impl Prefixes {
    /// [`Prefixes::cached`] for a CPU past those kept so far: makes room for it, out of
    /// the common path (where the index is then known to be in bounds).
    #[cold]
    #[inline(never)]
    fn cached_new_cpu(&mut self, ctx: &Ctx<'_>) -> Option<(&[u8; PREFIX_BYTES], usize)> {
        self.cpus.resize_with(ctx.cpu as usize + 1, Cached::empty);
        self.cached(ctx)
    }
}

/// Whether `comm` is `cached[..comm.len()]`, for a comm of at most [`COMM_WIDTH`] bytes
/// whose length is the cached one's: two overlapping windows of 8 or 4 bytes compared as
/// integers (or the bytes at 0, `n / 2` and `n - 1` below 4), which cover the `n` bytes,
/// where building a zero-padded copy of the comm to compare whole took about 12
/// instructions per line.
#[inline(always)]
fn same_comm(cached: &[u8; COMM_WIDTH], comm: &[u8]) -> bool {
    let n = comm.len();
    let same = if n >= 8 {
        let w =
            |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
        w(comm, 0) == w(cached, 0) && w(comm, n - 8) == w(cached, n - 8)
    } else if n >= 4 {
        let w =
            |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("4 bytes"));
        w(comm, 0) == w(cached, 0) && w(comm, n - 4) == w(cached, n - 4)
    } else {
        n == 0
            || (comm[0] == cached[0]
                && comm[n / 2] == cached[n / 2]
                && comm[n - 1] == cached[n - 1])
    };
    debug_assert_eq!(same, *comm == cached[..n], "the windows cover the comm");
    same
}

/// The text `f` writes, for the debug builds' check of the fixed-offset writes.
fn uncached(f: impl FnMut(&mut Cursor<'_>)) -> Vec<u8> {
    let mut v = Vec::new();
    fmt::append(&mut v, f);
    v
}

impl Cached {
    /// A prefix no context matches.
    fn empty() -> Cached {
        Cached {
            comm: [0; COMM_WIDTH],
            comm_len: COMM_WIDTH + 1,
            pid: 0,
            ts: 0,
            text: [0; PREFIX_ROOM],
            len: 0,
            ts_at: 0,
        }
    }

    /// Rewrites the prefix for `ctx`, whose comm is `key[..comm_len]`.
    ///
    /// A pid below 10,000 and a CPU below 1,000 fill their columns exactly
    /// (`%16s-%-5d [%03d] `, 29 bytes): the comm is copied right-aligned into 16 spaces
    /// and the pid and CPU come from the tables of four digits ([`fmt::dec4`],
    /// [`fmt::pad4`]); others are written by [`push_task`]. The timestamp's part is
    /// kept when it follows at the same offset and is that of `ctx.ts` (a new task at
    /// the same instant: 41 % of the task changes in `dump periodic`'s first 1.5 M
    /// lines), the 3 of its bytes under the task part's 32-byte write put back;
    /// otherwise it is rewritten ([`Cached::set_ts`]).
    #[inline(never)]
    fn set_task(&mut self, key: [u8; COMM_WIDTH], comm_len: usize, ctx: &Ctx<'_>) {
        self.comm = key;
        self.comm_len = comm_len;
        self.pid = ctx.pid;
        // The comm printed: `<...>` for an empty one (`comm_of`), 5 bytes.
        let (key, comm_len) = if comm_len == 0 {
            let mut k = [0u8; COMM_WIDTH];
            k[..5].copy_from_slice(b"<...>");
            (k, 5)
        } else {
            (key, comm_len)
        };
        debug_assert_eq!(&key[..comm_len], comm_of(ctx), "the comm printed");
        if ctx.pid < 10_000 && ctx.cpu < 1000 && comm_len <= COMM_WIDTH {
            let kept = (self.ts_at == 29 && self.ts == ctx.ts)
                .then(|| [self.text[29], self.text[30], self.text[31]]);
            let t = self.text.first_chunk_mut::<32>().expect("PREFIX_ROOM > 32");
            *t = [b' '; 32];
            fmt::copy_small(&mut t[COMM_WIDTH - comm_len..], &key[..comm_len]);
            t[16] = b'-';
            // `%-5d`: the digits' zero bytes after them become spaces ('0'..'9' have
            // the 0x20 bit set already); t[21] is a space.
            let (pid, _) = fmt::dec4(ctx.pid);
            t[17..21].copy_from_slice(&(pid | 0x2020_2020).to_le_bytes());
            // ` [%03d] `: the last three of the four zero-padded digits.
            t[22] = b' ';
            t[23] = b'[';
            t[24..28].copy_from_slice(&(fmt::pad4(ctx.cpu) >> 8).to_le_bytes());
            t[27] = b']';
            debug_assert_eq!(
                self.text[..29],
                uncached(|c| push_task(c, &key[..comm_len], ctx.pid, ctx.cpu))[..],
                "fixed-offset task part"
            );
            if let Some(kept) = kept {
                self.text[29..32].copy_from_slice(&kept);
                debug_assert_eq!(
                    self.text[29..self.len],
                    uncached(|c| push_ts(c, ctx.ts))[..],
                    "the kept timestamp"
                );
                return;
            }
            self.ts_at = 29;
        } else {
            self.ts_at = fmt::write_into(&mut self.text, |c| {
                push_task(c, &key[..comm_len], ctx.pid, ctx.cpu)
            })
            .expect("a task's part fits a prefix");
        }
        self.set_ts(ctx.ts);
    }

    /// Rewrites the timestamp.
    ///
    /// Below 10,000 s it fills `%5lu.%06lu: ` exactly (14 bytes): the seconds'
    /// left-aligned digits shifted right-aligned into four bytes, their zero bytes made
    /// spaces, and the µs as two and four zero-padded digits ([`fmt::dec4`],
    /// [`fmt::pad4`]); later ones are written by [`push_ts`]. Not inlined: inlined, its
    /// divisions were computed for every line, not only for a new timestamp.
    #[inline(never)]
    fn set_ts(&mut self, ts: Nanos) {
        self.ts = ts;
        let secs = ts / NSEC_PER_SEC;
        if secs < 10_000 {
            // Below 10^4 and 10^6: the casts cannot truncate.
            let (d, n) = fmt::dec4(secs as u32);
            let us = ((ts - secs * NSEC_PER_SEC) / NSEC_PER_USEC) as u32;
            let t = self.text[self.ts_at..]
                .first_chunk_mut::<16>()
                .expect("PREFIX_ROOM leaves 16 bytes past a task's part");
            t[0] = b' ';
            t[1..5].copy_from_slice(&((d << (8 * (4 - n))) | 0x2020_2020).to_le_bytes());
            t[5] = b'.';
            t[6..10].copy_from_slice(&(fmt::pad4(us / 10_000) >> 16).to_le_bytes());
            t[8..12].copy_from_slice(&fmt::pad4(us % 10_000).to_le_bytes());
            t[12] = b':';
            t[13] = b' ';
            self.len = self.ts_at + 14;
            debug_assert_eq!(
                self.text[self.ts_at..self.len],
                uncached(|c| push_ts(c, ts))[..],
                "fixed-offset timestamp"
            );
            return;
        }
        self.len = self.ts_at
            + fmt::write_into(&mut self.text[self.ts_at..], |c| push_ts(c, ts))
                .expect("a timestamp fits a prefix");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_prefixes_are_the_uncached_ones() {
        let long = "a-comm-longer-than-16";
        let ctxs = [
            (0, 0, "<idle>", 1_000_000_000),
            (0, 0, "<idle>", 1_000_000_000),
            (0, 1000, "small-0", 1_000_000_000),
            (0, 1000, "small-1", 1_000_000_000),
            (0, 1000, "small-1", 1_000_999_999),
            (1, 1000, "small-1", 1_000_999_999),
            (0, 1001, "small-1", 1_000_999_999),
            (0, 1001, "", 2_000_000_000),
            (0, 1001, long, 2_000_000_000),
            (0, 1001, long, 2_000_000_000),
            (0, 1001, "small-1", 123_456_000_001_000),
            (u32::MAX, u32::MAX, "sixteen-chars-16", u64::MAX),
            (u32::MAX, u32::MAX, "sixteen-chars-16", 0),
            (4095, u32::MAX, "sixteen-chars-16", u64::MAX),
            (4095, u32::MAX, "sixteen-chars-16", 0),
            (999, 9999, "x", 9_999_999_999_999),
            (999, 9999, "x", 10_000_000_000_000),
            (999, 10_000, "x", 10_000_000_000_000),
            (999, 99_999, "sixteen-chars-16", 0),
            (1000, 7, "a", 12_345_678),
            (3, 7, "a", 999_999_999),
            (3, 7, "ab", 1_000_001_000),
            (3, 0, "<idle>", 59_000_999_999),
            // Comms of the same length differing in one byte, of each length class.
            (3, 0, "<idlf>", 59_000_999_999),
            (3, 0, "<jdlf>", 59_000_999_999),
            (3, 0, "abc", 59_000_999_999),
            (3, 0, "abd", 59_000_999_999),
            (3, 0, "bbd", 59_000_999_999),
            (3, 0, "bcd", 59_000_999_999),
            (3, 0, "ab", 59_000_999_999),
            (3, 0, "b", 59_000_999_999),
            (3, 0, "sixteen-chars-16", 59_000_999_999),
            (3, 0, "sixteen-chars-17", 59_000_999_999),
            (3, 0, "sixteen-chbrs-17", 59_000_999_999),
            (3, 0, "sixteen-charsx17", 59_000_999_999),
            (3, 0, "swapper/1", 59_000_999_999),
            (3, 0, "swapper/2", 59_000_999_999),
            // A new task at the same instant: the timestamp kept.
            (3, 5, "b", 59_000_999_999),
            (3, 5, "b", 59_000_999_000),
            (3, 6, "c", 59_000_999_000),
            (3, 7, "a-comm-longer-than-16", 59_000_999_000),
            (3, 7, "d", 59_000_999_000),
            (3, 10_000, "d", 59_000_999_000),
            (3, 7, "d", 59_000_999_000),
            (7, 0, "", 0),
            (7, 1, "e", 0),
            (7, 1, "e", u64::MAX),
            (7, 2, "f", u64::MAX),
        ];
        let mut prefixes = Prefixes::default();
        for (cpu, pid, comm, ts) in ctxs {
            let ctx = Ctx { ts, cpu, comm, pid };
            let (mut cached, mut uncached) = (Vec::new(), Vec::new());
            fmt::append(&mut cached, |c| prefixes.push(c, &ctx));
            fmt::append(&mut uncached, |c| push_prefix(c, &ctx));
            assert_eq!(
                String::from_utf8(cached).unwrap(),
                String::from_utf8(uncached).unwrap(),
                "{ctx:?}"
            );
        }
    }
}
