//! Allocation-free protobuf wire encoding for the Perfetto writer: varints, tags and
//! length-delimited fields appended to a reusable byte buffer
//! (<https://protobuf.dev/programming-guides/encoding/>).
//!
//! Only what proto2 `int32`/`int64`/`uint32`/`uint64`/`bool`/`enum`/`string` and nested
//! messages need: negative `int32`/`int64` values are sign-extended to ten bytes, as the
//! specification requires (no zig-zag: Perfetto's ftrace messages use no `sint` fields).

/// Wire type of varint fields.
const WT_VARINT: u64 = 0;
/// Wire type of length-delimited fields (strings, bytes, nested messages).
pub(crate) const WT_LEN: u64 = 2;

/// Appends `v` as a base-128 varint.
#[inline(always)]
pub(crate) fn push_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // The low seven bits, with the continuation bit: below 256, so the cast is exact.
        buf.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    // Below 0x80 here.
    buf.push(v as u8);
}

/// `VARINT_LEN[h]`: the length of a varint whose highest set bit is bit `h`, `h / 7 + 1`.
const VARINT_LEN: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut h = 0;
    while h < 64 {
        // At most 10.
        t[h] = (h / 7 + 1) as u8;
        h += 1;
    }
    t
};

/// The length of `v` as a varint.
#[inline(always)]
pub(crate) fn varint_len(v: u64) -> usize {
    // 1 byte per started group of 7 bits, 0 taking one: by the index of the highest set
    // bit (0..=63).
    usize::from(VARINT_LEN[63 - (v | 1).leading_zeros() as usize])
}

/// Appends the key of field `field` with wire type `wt`.
#[inline(always)]
pub(crate) fn push_key(buf: &mut Vec<u8>, field: u32, wt: u64) {
    push_varint(buf, (u64::from(field) << 3) | wt);
}

/// Appends an unsigned varint field (`uint32`, `uint64`, `bool`, `enum`).
#[inline(always)]
pub(crate) fn push_uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    push_key(buf, field, WT_VARINT);
    push_varint(buf, v);
}

/// Appends a signed varint field (`int32`, `int64`): two's complement over 64 bits.
#[cfg(test)]
pub(crate) fn push_int(buf: &mut Vec<u8>, field: u32, v: i64) {
    push_key(buf, field, WT_VARINT);
    // Reinterpreting the bits is the encoding: -1 is ten bytes of 0xff..0x01.
    push_varint(buf, v as u64);
}

/// Appends a length-delimited field holding `bytes` (a string or an encoded message).
#[inline(always)]
pub(crate) fn push_bytes(buf: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    push_key(buf, field, WT_LEN);
    push_varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// Appends a `string` field.
#[inline(always)]
pub(crate) fn push_str(buf: &mut Vec<u8>, field: u32, s: &str) {
    push_bytes(buf, field, s.as_bytes());
}

/// The key byte of field `field` (below 16) with wire type `wt`, for constant tables
/// (and inlined where the field is a constant at run time: a typed message's).
#[inline(always)]
pub(crate) const fn key1(field: u32, wt: u64) -> u8 {
    assert!(field < 16 && wt < 8, "a one-byte key");
    // Below 128 by the assertion.
    ((field << 3) as u8) | wt as u8
}

/// Where an encoder puts bytes: [`Sizer`] counts them, [`Enc`] writes them. A message's
/// body is written by one function generic over `Out`, run once with a `Sizer` for its
/// length (protobuf's `ByteSize()`) and once with an `Enc` to write it behind that length
/// (`SerializeWithCachedSizes()`): each byte is written once, in its place.
pub(crate) trait Out {
    /// One byte.
    fn byte(&mut self, b: u8);
    /// Bytes of a length known at compile time (keys, field names).
    fn fixed<const N: usize>(&mut self, b: &[u8; N]);
    /// A base-128 varint.
    fn varint(&mut self, v: u64);
    /// Bytes of any length (a string's contents).
    fn bytes(&mut self, b: &[u8]);
    /// A length-delimited field of a one-byte key holding a constant part then the
    /// varint `v`, short enough for a one-byte length whatever `v` (a generic event's
    /// `Field` with a number): `head` is the key, a placeholder for the length, and the
    /// constant part.
    fn short_message<const N: usize>(&mut self, head: &[u8; N], v: u64);
    /// [`Out::short_message`] whose varint is copied from `kept` if `kept` holds `v`'s
    /// (and kept there otherwise): a value often repeated from one event to the next.
    fn short_message_kept<const N: usize>(&mut self, head: &[u8; N], v: u64, kept: &mut Kept);
    /// The constant `pre` with its byte at `at` set to `b`, then [`Out::short_message`]
    /// of `head` and `v`; `joined` is `pre` then `head` (one constant, for an encoder
    /// that writes them in one move).
    #[inline(always)]
    fn fixed_then_short<const P: usize, const H: usize, const N: usize>(
        &mut self,
        pre: &[u8; P],
        at: usize,
        b: u8,
        head: &[u8; H],
        joined: &[u8; N],
        v: u64,
    ) {
        debug_assert!(joined[..P] == pre[..] && joined[P..] == head[..]);
        let mut h = *pre;
        h[at] = b;
        self.fixed(&h);
        self.short_message(head, v);
    }
}

/// A value's varint, kept for the next field of the same value
/// ([`Out::short_message_kept`]). Always the encoding of its own `v` (0 at first).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kept {
    v: u64,
    /// The varint, `len` bytes of it meaningful (the rest scratch).
    bytes: [u8; 10],
    len: usize,
}

impl Default for Kept {
    fn default() -> Kept {
        Kept {
            v: 0,
            bytes: [0; 10],
            len: 1,
        }
    }
}

impl Kept {
    /// The varint of `v` in ten bytes and its length: the one kept if it is `v`'s, else
    /// `v`'s encoded and kept.
    #[inline(always)]
    pub(crate) fn of(&mut self, v: u64) -> (&[u8; 10], usize) {
        if self.v != v {
            // A PELT time (five or six bytes) inline, not through varint_long's call.
            self.len = if (1 << 14..1 << 56).contains(&v) {
                varint_mid(&mut self.bytes, v)
            } else {
                varint_at(&mut self.bytes, v)
            };
            self.v = v;
        }
        debug_assert!(
            {
                let mut fresh = Vec::new();
                push_varint(&mut fresh, v);
                fresh[..] == self.bytes[..self.len]
            },
            "a stale kept varint"
        );
        (&self.bytes, self.len)
    }
}

/// An [`Out`] that counts the bytes it is given.
#[derive(Debug, Default)]
pub(crate) struct Sizer(pub(crate) usize);

impl Out for Sizer {
    #[inline(always)]
    fn byte(&mut self, _: u8) {
        self.0 += 1;
    }
    #[inline(always)]
    fn fixed<const N: usize>(&mut self, _: &[u8; N]) {
        self.0 += N;
    }
    #[inline(always)]
    fn varint(&mut self, v: u64) {
        self.0 += varint_len(v);
    }
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        self.0 += b.len();
    }
    #[inline(always)]
    fn short_message<const N: usize>(&mut self, _: &[u8; N], v: u64) {
        const { assert!(N >= 2 && N + 8 < 0x80, "a one-byte length") };
        self.0 += N + varint_len(v);
    }
    #[inline(always)]
    fn short_message_kept<const N: usize>(&mut self, head: &[u8; N], v: u64, _: &mut Kept) {
        self.short_message(head, v);
    }
}

/// An [`Out`] that writes into a slice from its start, its length reserved beforehand
/// (by a [`Sizer`] run over the same fields): the room left is a slice that each write
/// splits (one bound check, then stores of a constant length), no capacity check or
/// length update of a `Vec` per byte.
#[derive(Debug)]
pub(crate) struct Enc<'a> {
    /// The room not written yet.
    rest: &'a mut [u8],
    /// The room's length at the start.
    len: usize,
}

impl<'a> Enc<'a> {
    /// An encoder writing at the start of `buf`.
    #[inline(always)]
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        let len = buf.len();
        Enc { rest: buf, len }
    }
    /// Bytes written.
    #[inline(always)]
    pub(crate) fn pos(&self) -> usize {
        self.len - self.rest.len()
    }
    /// The next `N` bytes of the room, taken.
    #[inline(always)]
    fn take<const N: usize>(&mut self) -> &'a mut [u8; N] {
        let (head, rest) = std::mem::take(&mut self.rest)
            .split_first_chunk_mut::<N>()
            .expect("room reserved by a Sizer");
        self.rest = rest;
        head
    }
    /// Skips `n` bytes of the room (written already).
    #[inline(always)]
    fn skip(&mut self, n: usize) {
        self.rest = &mut std::mem::take(&mut self.rest)[n..];
    }
    /// Copies `b` whole and keeps its first `n` bytes: the rest of the copy is room again
    /// (`N` bytes of room are needed, `n` kept).
    #[inline(always)]
    pub(crate) fn fixed_prefix<const N: usize>(&mut self, b: &[u8; N], n: usize) {
        *self
            .rest
            .first_chunk_mut::<N>()
            .expect("room reserved, with slack") = *b;
        self.skip(n);
    }
    /// Writes the varint `v` and returns its length.
    #[inline(always)]
    fn put_varint(&mut self, v: u64) -> usize {
        if v < 0x80 {
            // One byte, below 0x80.
            self.take::<1>()[0] = v as u8;
            1
        } else if v < 0x4000 {
            // Two bytes: the low seven bits with the continuation bit, then the rest
            // (below 0x80).
            *self.take::<2>() = [(v as u8) | 0x80, (v >> 7) as u8];
            2
        } else if let Some(d) = self.rest.first_chunk_mut::<10>() {
            let n = varint_long(d, v);
            self.skip(n);
            n
        } else {
            // Near the end of the room (the last field of a message): byte by byte.
            let mut v = v;
            let mut n = 1;
            while v >= 0x80 {
                self.byte((v as u8) | 0x80);
                v >>= 7;
                n += 1;
            }
            self.byte(v as u8);
            n
        }
    }
}

/// Writes the varint `v` at the start of `d` and returns its length: one and two bytes
/// inline, longer ones by [`varint_long`]. The bytes of `d` past it may be overwritten.
#[inline(always)]
pub(crate) fn varint_at(d: &mut [u8; 10], v: u64) -> usize {
    if v < 0x80 {
        // One byte, below 0x80.
        d[0] = v as u8;
        1
    } else if v < 0x4000 {
        // The low seven bits with the continuation bit, then the rest (below 0x80).
        d[0] = (v as u8) | 0x80;
        d[1] = (v >> 7) as u8;
        2
    } else {
        varint_long(d, v)
    }
}

/// Writes `v` (of three bytes or more) at the start of `d` and returns its length: at
/// most ten, in a ten-byte window. Below 2^56 (eight bytes at most: nanosecond times for
/// two years), its seven-bit groups ([`groups7`]) with the continuation bits set on all but
/// the last, in one word; a negative `int32`/`int64` (2^63 or more: a deadline task's
/// priority, -1) by [`varint_negative`]; between, byte by byte, the index staying below
/// ten (no bound check per byte). Out of line and free of the encoder, which stays in
/// registers.
#[inline(never)]
fn varint_long(d: &mut [u8; 10], mut v: u64) -> usize {
    if v < 1 << 56 {
        return varint_mid(d, v);
    }
    if v >> 63 != 0 {
        return varint_negative(d, v);
    }
    let mut n = 0;
    while n < 9 && v >= 0x80 {
        // The low seven bits with the continuation bit: the cast keeps them.
        d[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    // After nine groups of seven, at most the 64th bit is left: below 0x80.
    d[n] = v as u8;
    n + 1
}

/// Writes `v`, from 2^14 to 2^56 (three to eight bytes), at the start of `d` as its
/// seven-bit groups ([`groups7`]) with the continuation bits set on all but the last, in
/// one word, and returns its length.
#[inline(always)]
fn varint_mid(d: &mut [u8; 10], v: u64) -> usize {
    debug_assert!((1 << 14..1 << 56).contains(&v), "{v:#x}");
    let n = varint_len(v);
    // Continuation bits on the first n - 1 bytes (n is 3 to 8 here).
    let cont = 0x8080_8080_8080_8080 & ((1u64 << (8 * (n - 1))) - 1);
    *d.first_chunk_mut::<8>().expect("ten bytes") = (groups7(v) | cont).to_le_bytes();
    n
}

/// The low 56 bits of `v` as eight seven-bit groups, one per byte from the lowest (the
/// bytes of a varint but for their continuation bits): 14-bit groups spread to 16-bit
/// lanes, then 7-bit groups to bytes.
#[inline(always)]
pub(crate) fn groups7(v: u64) -> u64 {
    let x = (v & 0x3fff)
        | ((v & (0x3fff << 14)) << 2)
        | ((v & (0x3fff << 28)) << 4)
        | ((v & (0x3fff << 42)) << 6);
    (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
}

/// Writes `v`, 2^63 or more (a negative number's two's complement), as its ten-byte
/// varint: its low 56 bits' eight seven-bit groups ([`groups7`]) with their continuation
/// bits, in one word, then the next seven bits with theirs and the top bit (1).
fn varint_negative(d: &mut [u8; 10], v: u64) -> usize {
    *d.first_chunk_mut::<8>().expect("ten bytes") =
        (groups7(v) | 0x8080_8080_8080_8080).to_le_bytes();
    // Bits 56 to 62, with the continuation bit; then bit 63, set.
    d[8] = ((v >> 56) as u8 & 0x7f) | 0x80;
    d[9] = 1;
    10
}

impl Out for Enc<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.take::<1>()[0] = b;
    }
    #[inline(always)]
    fn fixed<const N: usize>(&mut self, b: &[u8; N]) {
        *self.take::<N>() = *b;
    }
    #[inline(always)]
    fn varint(&mut self, v: u64) {
        self.put_varint(v);
    }
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        let (dst, rest) = std::mem::take(&mut self.rest).split_at_mut(b.len());
        if b.len() <= 32 {
            crate::fmt::copy_small(dst, b);
        } else {
            dst.copy_from_slice(b);
        }
        self.rest = rest;
    }
    /// The head is copied with its length byte, which is set after the varint, which
    /// gives its own length.
    #[inline(always)]
    fn short_message<const N: usize>(&mut self, head: &[u8; N], v: u64) {
        const { assert!(N >= 2 && N + 8 < 0x80, "a one-byte length") };
        let h = self.take::<N>();
        *h = *head;
        let n = self.put_varint(v);
        // Below 0x80 by the assertion.
        h[1] = (N - 2 + n) as u8;
    }
    /// As `short_message`; the varint is encoded into `kept` when `kept` does not hold
    /// `v`'s already, then copied (ten bytes, `kept.len` of them kept: the room has
    /// slack past the event).
    #[inline(always)]
    fn short_message_kept<const N: usize>(&mut self, head: &[u8; N], v: u64, kept: &mut Kept) {
        const { assert!(N >= 2 && N + 8 < 0x80, "a one-byte length") };
        let h = self.take::<N>();
        *h = *head;
        let (bytes, n) = kept.of(v);
        self.fixed_prefix(bytes, n);
        // Below 0x80 by the assertion.
        h[1] = (N - 2 + n) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = Vec::new();
        f(&mut b);
        b
    }

    #[test]
    fn varints_as_the_specification_shows() {
        // protobuf.dev's own examples: 1 is 01, 150 is 96 01.
        assert_eq!(enc(|b| push_varint(b, 1)), [0x01]);
        assert_eq!(enc(|b| push_varint(b, 150)), [0x96, 0x01]);
        assert_eq!(enc(|b| push_varint(b, 0)), [0x00]);
        assert_eq!(enc(|b| push_varint(b, u64::MAX)).len(), 10);
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            assert_eq!(varint_len(v), enc(|b| push_varint(b, v)).len(), "{v}");
        }
        // Field 1 = 150: 08 96 01.
        assert_eq!(enc(|b| push_uint(b, 1, 150)), [0x08, 0x96, 0x01]);
        // int32 -1: ten bytes after the key.
        let m = enc(|b| push_int(b, 3, -1));
        assert_eq!(m[0], 0x18);
        assert_eq!(
            &m[1..],
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        // Field 2 = "testing": 12 07 74 65 73 74 69 6e 67.
        assert_eq!(
            enc(|b| push_str(b, 2, "testing")),
            [0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']
        );
        // A field number past 15 takes a two-byte key: FtraceEvent.generic = 327.
        assert_eq!(enc(|b| push_bytes(b, 327, &[])), [0xba, 0x14, 0x00]);
    }
}
