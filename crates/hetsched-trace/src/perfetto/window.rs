//! Writing an event without sizing it first: an upper bound of its body ([`Bound`]), then
//! the event written once into a window of its CPU's bundle ([`Win`]) behind lengths of
//! the widths the last event of its kind had, moved if they differ
//! ([`Bundle::close_win`](super::Bundle)).
//!
//! A window is an array of [`WIN`] bytes and [`WIN_TAIL`] more, every write at the
//! position masked by `WIN - 1`: the compiler sees that each write of a constant length
//! (a key, a field's head, a varint's ten-byte window) is within the array, so it checks
//! none of them; only strings, of any length, are checked. An event is written there only
//! if its bound says it fits in [`WIN`] bytes, so the mask never changes a position; the
//! others (long strings) are written by the slice encoder ([`Enc`]).

use crate::proto::{varint_at, varint_len, Enc, Kept, Out, Sizer};

/// Bytes of a window: an event written in one fits in them (its prefix and body).
pub(super) const WIN: usize = 1024;

/// Bytes past [`WIN`] that a write of a constant length may touch: the longest constant
/// (a generic event's name, a field's head, the event's cached head) and a varint's
/// ten-byte window behind it.
pub(super) const WIN_TAIL: usize = 64;

/// An [`Out`] that counts an upper bound of the bytes it is given: every varint as ten
/// bytes, its most. Over an event's fields, a constant but for the strings' lengths (the
/// values are not looked at): whether the event fits in a window.
#[derive(Debug, Default)]
pub(super) struct Bound(pub(super) usize);

impl Out for Bound {
    #[inline(always)]
    fn byte(&mut self, _: u8) {
        self.0 += 1;
    }
    #[inline(always)]
    fn fixed<const N: usize>(&mut self, _: &[u8; N]) {
        self.0 += N;
    }
    #[inline(always)]
    fn varint(&mut self, _: u64) {
        self.0 += 10;
    }
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        self.0 += b.len();
    }
    #[inline(always)]
    fn short_message<const N: usize>(&mut self, _: &[u8; N], _: u64) {
        self.0 += N + 10;
    }
    #[inline(always)]
    fn short_message_kept<const N: usize>(&mut self, _: &[u8; N], _: u64, _: &mut Kept) {
        self.0 += N + 10;
    }
}

/// An [`Out`] that can write a generic event's string `Field` (`gs`): the encoders write
/// it as it is ([`str_field`]); [`Bound`] counts its most without looking at its length's
/// width.
pub(super) trait Put: Out {
    /// A `Field` of head `head` (`head!(name, s)`) holding the string `v`.
    fn str_field<const N: usize>(&mut self, head: &[u8; N], v: &[u8]);
    /// The constant `pre` with its byte at `at` set to `b`, then [`Put::str_field`] of
    /// `head` and `v`; `joined` is `pre` then `head` (one constant, for an encoder that
    /// writes them in one move).
    #[inline(always)]
    fn fixed_then_str<const P: usize, const H: usize, const N: usize>(
        &mut self,
        pre: &[u8; P],
        at: usize,
        b: u8,
        head: &[u8; H],
        joined: &[u8; N],
        v: &[u8],
    ) {
        debug_assert!(joined[..P] == pre[..] && joined[P..] == head[..]);
        let mut h = *pre;
        h[at] = b;
        self.fixed(&h);
        self.str_field(head, v);
    }
    /// A one-byte key and the varint `v` (a typed message's number).
    #[inline(always)]
    fn key_varint(&mut self, key: u8, v: u64) {
        self.byte(key);
        self.varint(v);
    }
    /// A one-byte key, the length of `b` and `b` (a typed message's string).
    #[inline(always)]
    fn key_bytes(&mut self, key: u8, b: &[u8]) {
        self.byte(key);
        self.varint(b.len() as u64);
        self.bytes(b);
    }
    /// [`Put::key_varint`], the varint copied from `kept` ([`Kept::of`]) where the
    /// encoder writes it so (a window).
    #[inline(always)]
    fn key_varint_kept(&mut self, key: u8, v: u64, _kept: &mut Kept) {
        self.key_varint(key, v);
    }
}

/// A generic event's `Field` with a string value: the head with its length (one byte if
/// the field is short, as the head's constant has room for), then the string's length and
/// bytes.
#[inline(always)]
pub(super) fn str_field<O: Out, const N: usize>(o: &mut O, head: &[u8; N], v: &[u8]) {
    let len = v.len();
    // The head's own key and length byte are not part of the length.
    let field_len = N - 2 + varint_len(len as u64) + len;
    if field_len < 0x80 {
        let mut h = *head;
        // Below 0x80.
        h[1] = field_len as u8;
        o.fixed(&h);
    } else {
        o.byte(head[0]);
        o.varint(field_len as u64);
        o.bytes(&head[2..]);
    }
    o.varint(len as u64);
    o.bytes(v);
}

impl Put for Bound {
    /// The head's key, a length of up to ten bytes, the rest of the head, the string's
    /// length and bytes.
    #[inline(always)]
    fn str_field<const N: usize>(&mut self, _: &[u8; N], v: &[u8]) {
        self.0 += N - 1 + 10 + 10 + v.len();
    }
}

impl Put for Sizer {
    #[inline(always)]
    fn str_field<const N: usize>(&mut self, head: &[u8; N], v: &[u8]) {
        str_field(self, head, v);
    }
}

impl Put for Enc<'_> {
    #[inline(always)]
    fn str_field<const N: usize>(&mut self, head: &[u8; N], v: &[u8]) {
        str_field(self, head, v);
    }
}

/// The fields of [`Put`] in one write each (one masked position) when their lengths
/// take one byte: the rest as [`Out`] writes them.
impl Put for Win<'_> {
    #[inline(always)]
    fn str_field<const N: usize>(&mut self, head: &[u8; N], v: &[u8]) {
        const { assert!(N < WIN_TAIL, "a head within the window's tail") };
        let len = v.len();
        // With a one-byte length of the string: below 0x80, then so is the string's.
        let field_len = N - 1 + len;
        if field_len < 0x80 {
            let p = self.at();
            let w = &mut *self.w;
            *w[p..].first_chunk_mut::<N>().expect(TAIL) = *head;
            w[p + 1] = field_len as u8;
            w[p + N] = len as u8;
            copy_to(&mut w[p + N + 1..], v);
            self.pos += N + 1 + len;
        } else {
            str_field(self, head, v);
        }
    }
    /// `pre` and `head` as one constant (`joined`), at one masked position, when the
    /// field's length takes one byte; the string at a second one.
    #[inline(always)]
    fn fixed_then_str<const P: usize, const H: usize, const N: usize>(
        &mut self,
        pre: &[u8; P],
        at: usize,
        b: u8,
        head: &[u8; H],
        joined: &[u8; N],
        v: &[u8],
    ) {
        const {
            assert!(
                N == P + H && H >= 2 && N < WIN_TAIL,
                "a head within the window's tail"
            )
        };
        debug_assert!(joined[..P] == pre[..] && joined[P..] == head[..] && at < P);
        let len = v.len();
        // With a one-byte length of the string: below 0x80, then so is the string's.
        let field_len = H - 1 + len;
        if field_len < 0x80 {
            let p = self.at();
            let w = &mut *self.w;
            *w[p..].first_chunk_mut::<N>().expect(TAIL) = *joined;
            w[p + at] = b;
            w[p + P + 1] = field_len as u8;
            w[p + N] = len as u8;
            self.pos += N + 1;
            let q = self.at();
            copy_to(&mut self.w[q..], v);
            self.pos += len;
        } else {
            let mut h = *pre;
            h[at] = b;
            self.fixed(&h);
            str_field(self, head, v);
        }
    }
    #[inline(always)]
    fn key_varint(&mut self, key: u8, v: u64) {
        let p = self.at();
        self.w[p] = key;
        let n = varint_at(self.w[p + 1..].first_chunk_mut::<10>().expect(TAIL), v);
        self.pos += 1 + n;
    }
    #[inline(always)]
    fn key_varint_kept(&mut self, key: u8, v: u64, kept: &mut Kept) {
        let p = self.at();
        let (bytes, n) = kept.of(v);
        let w = &mut *self.w;
        w[p] = key;
        *w[p + 1..].first_chunk_mut::<10>().expect(TAIL) = *bytes;
        self.pos += 1 + n;
    }
    #[inline(always)]
    fn key_bytes(&mut self, key: u8, b: &[u8]) {
        let len = b.len();
        if len < 0x80 {
            let p = self.at();
            let w = &mut *self.w;
            w[p] = key;
            // Below 0x80.
            w[p + 1] = len as u8;
            copy_to(&mut w[p + 2..], b);
            self.pos += 2 + len;
        } else {
            self.byte(key);
            self.varint(len as u64);
            self.bytes(b);
        }
    }
}

/// Copies `b` to the start of `dst`: in moves of a constant length up to 32 bytes
/// ([`copy_small`](crate::fmt::copy_small), no check when `dst` is the tail of a
/// window past a masked position), by `copy_from_slice` past that.
#[inline(always)]
fn copy_to(dst: &mut [u8], b: &[u8]) {
    if b.len() <= 32 {
        crate::fmt::copy_small(dst, b);
    } else {
        dst[..b.len()].copy_from_slice(b);
    }
}

/// An [`Out`] writing into a window of [`WIN`] bytes (and [`WIN_TAIL`] of slack) at a
/// position: each write is at the position masked by
/// `WIN - 1`, whose room the compiler knows to be at least [`WIN_TAIL`] bytes, so a
/// write of a constant length is not checked. The event's bound keeps the position
/// below [`WIN`] (debug builds check it).
#[derive(Debug)]
pub(super) struct Win<'a> {
    w: &'a mut [u8; WIN + WIN_TAIL],
    pos: usize,
}

impl<'a> Win<'a> {
    /// A window whose first `pos` bytes are written.
    #[inline(always)]
    pub(super) fn new(w: &'a mut [u8; WIN + WIN_TAIL], pos: usize) -> Self {
        Win { w, pos }
    }

    /// The window and the bytes written into it.
    #[inline(always)]
    pub(super) fn into_parts(self) -> (&'a mut [u8; WIN + WIN_TAIL], usize) {
        (self.w, self.pos)
    }

    /// The position, masked (see [`Win`]): below [`WIN`] for the compiler, which then
    /// knows [`WIN_TAIL`] bytes past it to be within the window.
    #[inline(always)]
    fn at(&self) -> usize {
        debug_assert!(self.pos < WIN, "an event past its window: {}", self.pos);
        self.pos & (WIN - 1)
    }
}

/// Within the window, past a masked position (`WIN_TAIL` bytes past any).
const TAIL: &str = "WIN_TAIL bytes past the window";

impl Out for Win<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        let p = self.at();
        self.w[p] = b;
        self.pos += 1;
    }
    #[inline(always)]
    fn fixed<const N: usize>(&mut self, b: &[u8; N]) {
        const { assert!(N <= WIN_TAIL, "a constant within the window's tail") };
        let p = self.at();
        *self.w[p..].first_chunk_mut::<N>().expect(TAIL) = *b;
        self.pos += N;
    }
    #[inline(always)]
    fn varint(&mut self, v: u64) {
        let p = self.at();
        let d = self.w[p..].first_chunk_mut::<10>().expect(TAIL);
        self.pos += varint_at(d, v);
    }
    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        let p = self.at();
        copy_to(&mut self.w[p..], b);
        self.pos += b.len();
    }
    /// The head is copied with its length byte, which is set after the varint, which
    /// gives its own length.
    #[inline(always)]
    fn short_message<const N: usize>(&mut self, head: &[u8; N], v: u64) {
        const {
            assert!(
                N >= 2 && N + 10 <= WIN_TAIL,
                "a field within the window's tail"
            )
        };
        let p = self.at();
        *self.w[p..].first_chunk_mut::<N>().expect(TAIL) = *head;
        let n = varint_at(self.w[p + N..].first_chunk_mut::<10>().expect(TAIL), v);
        // Below 0x80: N + 8 < 0x80 (the assertion).
        self.w[p + 1] = (N - 2 + n) as u8;
        self.pos += N + n;
    }
    /// `pre` and `head` as one constant (`joined`), at one masked position.
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
        const {
            assert!(
                N == P + H && H >= 2 && N + 10 <= WIN_TAIL,
                "a field within the window's tail"
            )
        };
        debug_assert!(joined[..P] == pre[..] && joined[P..] == head[..] && at < P);
        let p = self.at();
        let w = &mut *self.w;
        *w[p..].first_chunk_mut::<N>().expect(TAIL) = *joined;
        w[p + at] = b;
        let n = varint_at(w[p + N..].first_chunk_mut::<10>().expect(TAIL), v);
        // Below 0x80: H + 8 < 0x80 (the assertion).
        w[p + P + 1] = (H - 2 + n) as u8;
        self.pos += N + n;
    }
    /// As `short_message`, the varint's ten bytes copied from `kept` ([`Kept::of`]).
    #[inline(always)]
    fn short_message_kept<const N: usize>(&mut self, head: &[u8; N], v: u64, kept: &mut Kept) {
        const {
            assert!(
                N >= 2 && N + 10 <= WIN_TAIL,
                "a field within the window's tail"
            )
        };
        let p = self.at();
        let (bytes, n) = kept.of(v);
        let w = &mut *self.w;
        *w[p..].first_chunk_mut::<N>().expect(TAIL) = *head;
        *w[p + N..].first_chunk_mut::<10>().expect(TAIL) = *bytes;
        // Below 0x80: N + 8 < 0x80 (the assertion), n at most 10.
        w[p + 1] = (N - 2 + n) as u8;
        self.pos += N + n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::push_varint;

    #[test]
    fn varints_as_the_reference() {
        let mut values = vec![0, 1, 127, 128, 16_383, 16_384, u64::MAX, 1 << 63];
        for shift in 0..64 {
            values.extend([1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1]);
            // Negative numbers: -2^shift, and one past it each way.
            let neg = (1u64 << shift).wrapping_neg();
            values.extend([neg, neg.wrapping_sub(1), neg.wrapping_add(1)]);
        }
        for v in values {
            let mut want = Vec::new();
            push_varint(&mut want, v);
            let mut d = [0u8; 10];
            let n = varint_at(&mut d, v);
            assert_eq!(&d[..n], want, "{v:#x}");
        }
    }
}
