//! An `FtraceEvent`'s `timestamp` and `pid` fields, encoded once and kept per CPU
//! ([`Head`]): the several events of one update share them.

use hetsched_core::time::Nanos;

use crate::proto::{key1, varint_at, varint_len, Enc, Out};

use super::encode::ev;

/// The varint of `v`, below 2^56, as the little-endian bytes of a word, and its length
/// (at most eight): one or two bytes by themselves, longer ones as their seven-bit groups
/// ([`crate::proto::groups7`]) with the continuation bits on all bytes but the last.
#[inline(always)]
fn varint_word(v: u64) -> (u64, usize) {
    debug_assert!(v < 1 << 56, "{v:#x}");
    if v < 0x80 {
        (v, 1)
    } else if v < 0x4000 {
        // The low seven bits with the continuation bit, then the rest (below 0x80).
        ((v & 0x7f) | 0x80 | ((v >> 7) << 8), 2)
    } else {
        let len = varint_len(v);
        let cont = 0x8080_8080_8080_8080 & ((1u64 << (8 * (len - 1))) - 1);
        (crate::proto::groups7(v) | cont, len)
    }
}

/// Room for an `FtraceEvent`'s `timestamp` and `pid` fields: two one-byte keys and two
/// varints, and room for the word or ten-byte window in which a varint is written (a
/// word past any position below 16: see [`Head::set`]).
pub(super) const HEAD_BYTES: usize = 24;

/// The most bytes of a [`Head`] (its `len`): two one-byte keys, a `u64`'s varint (ten
/// bytes at most) and a `u32`'s (five).
pub(super) const HEAD_MAX: usize = 1 + 10 + 1 + 5;

/// An `FtraceEvent`'s `timestamp` and `pid` fields, encoded: the same for every event of
/// a CPU while its time and current task stay, as they do for the several events of one
/// update (a task's and its queue's PELT and util_est). Always the encoding of its own
/// `ts` and `pid` (the default one of `Nanos::MAX` and 0), so an event at those needs no
/// other test to take it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    /// The bytes, `len` of them meaningful (the rest scratch).
    pub(super) bytes: [u8; HEAD_BYTES],
    /// At most 22 (two keys and varints of ten and five bytes): a byte, so that the
    /// compiler sees where a head put in a window ends.
    pub(super) len: u8,
    /// Where the pid's key is: past the timestamp's key and varint.
    pid_at: u8,
    pub(super) ts: Nanos,
    pub(super) pid: u32,
}

impl Default for Head {
    fn default() -> Head {
        let mut h = Head {
            bytes: [0; HEAD_BYTES],
            len: 0,
            pid_at: 0,
            ts: 0,
            pid: 0,
        };
        h.set(Nanos::MAX, 0);
        h
    }
}

impl Head {
    /// Encodes the fields of an event at `ts` on a CPU whose current task is `pid`: the
    /// two one-byte keys and varints written straight into the bytes, each varint below
    /// 2^56 in one word ([`varint_word`]; a timestamp is below 2^56 for two years of
    /// nanoseconds), so no function is called but for a larger timestamp
    /// ([`Head::set_wide`]). The timestamp's are kept when it is the head's already (the
    /// events of a context switch, whose pid changes at one time); the pid's are written
    /// again in any case (a timestamp's word covers them). Inline: one event in four
    /// needs it, and `record()` calls it from one place (and `record_pair()` from its
    /// own).
    #[inline(always)]
    pub(super) fn set(&mut self, ts: Nanos, pid: u32) {
        if ts >= 1 << 56 {
            self.set_wide(ts, pid);
            return;
        }
        let b = &mut self.bytes;
        let n = if ts == self.ts {
            usize::from(self.pid_at)
        } else {
            b[0] = key1(ev::TIMESTAMP, 0);
            let (word, len) = varint_word(ts);
            *b[1..].first_chunk_mut::<8>().expect("HEAD_BYTES > 9") = word.to_le_bytes();
            1 + len
        };
        // n is at most 9: a key and eight bytes; the pid's key and word fit after it
        // (the mask, which keeps it, tells the compiler so: below 16).
        let n = n & 15;
        b[n] = key1(ev::PID, 0);
        let (word, m) = varint_word(u64::from(pid));
        *b[n + 1..].first_chunk_mut::<8>().expect("HEAD_BYTES >= 24") = word.to_le_bytes();
        // At most 9 and 15 (m at most 5: a u32).
        self.pid_at = n as u8;
        self.len = (n + 1 + m) as u8;
        debug_assert!(usize::from(self.len) <= HEAD_MAX);
        self.ts = ts;
        self.pid = pid;
    }

    /// [`Head::set`] of a timestamp of 2^56 or more (the default head's, `Nanos::MAX`):
    /// each varint in a ten-byte window ([`varint_at`]).
    #[cold]
    #[inline(never)]
    fn set_wide(&mut self, ts: Nanos, pid: u32) {
        let b = &mut self.bytes;
        b[0] = key1(ev::TIMESTAMP, 0);
        let (_, rest) = b.split_first_chunk_mut::<1>().expect("HEAD_BYTES > 1");
        let n = 1 + varint_at(rest.first_chunk_mut::<10>().expect("HEAD_BYTES > 11"), ts);
        // n is at most 11: a key and ten bytes; the pid's key and window fit after it.
        let (_, rest) = b.split_at_mut(n);
        rest[0] = key1(ev::PID, 0);
        let m = varint_at(
            rest[1..].first_chunk_mut::<10>().expect("HEAD_BYTES >= 22"),
            u64::from(pid),
        );
        // At most 11 and 22 (m at most 5: a u32).
        self.pid_at = n as u8;
        self.len = (n + 1 + m) as u8;
        debug_assert!(usize::from(self.len) <= HEAD_MAX);
        self.ts = ts;
        self.pid = pid;
    }

    /// The head as the encoder writes it, for the debug builds' check of [`Head::set`].
    pub(super) fn encoded(ts: Nanos, pid: u32) -> ([u8; HEAD_BYTES], usize) {
        let mut bytes = [0u8; HEAD_BYTES];
        let mut e = Enc::new(&mut bytes);
        e.byte(key1(ev::TIMESTAMP, 0));
        e.varint(ts);
        e.byte(key1(ev::PID, 0));
        e.varint(u64::from(pid));
        let len = e.pos();
        (bytes, len)
    }
}
