//! [`Line`]: a trace line written into a fixed window with no bound check per field
//! (the ftrace writer's common path; [`super::Cursor`] writes the lines it gives up on).

use super::*;

/// The longest line a [`Line`] writes is `LINE_MAX - 1` bytes; a power of two, its
/// positions are masked with `LINE_MAX - 1`.
pub(crate) const LINE_MAX: usize = 512;
/// The bytes a [`Line`] writes into: [`LINE_MAX`] and the widest single write past a
/// position below it.
pub(crate) const LINE_ROOM: usize = 2 * LINE_MAX;

/// A line written into `LINE_ROOM` bytes with no bound check per field: every write
/// takes its position modulo [`LINE_MAX`] (one `and`), which the compiler knows leaves
/// room for a write of up to [`LINE_MAX`] bytes in the array, so it checks nothing.
///
/// The position itself is not masked. It only grows, so when the line ends below
/// [`LINE_MAX`] ([`Line::len`]) every write was at its own, unmasked position and the
/// line is whole. A longer line (or one with a string longer than [`SCRATCH`] bytes,
/// which a `Line` does not copy: [`Line::spill`]) wrote its text at wrapped positions
/// and `len` gives `None`: the caller writes it again with a [`Cursor`]. Either way,
/// nothing outside the array is written, and the array's bytes past the text are
/// scratch, as a [`Cursor`]'s.
pub(crate) struct Line<'a> {
    buf: &'a mut [u8; LINE_ROOM],
    pos: usize,
}

impl<'a> Line<'a> {
    /// A line written from the start of `buf`.
    #[inline(always)]
    pub(crate) fn new(buf: &'a mut [u8; LINE_ROOM]) -> Line<'a> {
        Line { buf, pos: 0 }
    }

    /// The line's length, if it is whole (below [`LINE_MAX`]; see [`Line`]).
    #[inline(always)]
    pub(crate) fn len(&self) -> Option<usize> {
        (self.pos < LINE_MAX).then_some(self.pos)
    }

    /// Runs `f` on a copy of the line and takes back its position (as
    /// [`Cursor::local`]: the copy's position stays in a register).
    #[inline(always)]
    pub(crate) fn local(&mut self, f: impl FnOnce(&mut Line<'_>)) {
        let mut l = Line {
            buf: &mut *self.buf,
            pos: self.pos,
        };
        f(&mut l);
        let pos = l.pos;
        self.pos = pos;
    }

    /// The `N` bytes at the position modulo [`LINE_MAX`] (`N` at most [`LINE_MAX`]):
    /// always in the array, with no check.
    #[inline(always)]
    fn room<const N: usize>(&mut self) -> &mut [u8; N] {
        const { assert!(N <= LINE_ROOM - LINE_MAX) };
        let at = self.pos & (LINE_MAX - 1);
        self.buf[at..]
            .first_chunk_mut::<N>()
            .expect("a position below LINE_MAX leaves LINE_MAX bytes")
    }

    /// Marks the line as one a [`Cursor`] must write (its position past [`LINE_MAX`]).
    #[inline(always)]
    pub(crate) fn spill(&mut self) {
        self.pos = LINE_ROOM;
    }

    /// Appends `block[..len]`, copying the whole block (one move of constant length).
    #[inline(always)]
    pub(crate) fn block<const N: usize>(&mut self, block: &[u8; N], len: usize) {
        *self.room::<N>() = *block;
        self.pos += len;
    }

    /// Appends `key`, a `-` if `neg`, and the digits of `v` ([`Cursor::key_number`]).
    #[inline(always)]
    fn key_number(&mut self, key: &Key, neg: bool, v: u64) {
        self.key_number_as(key, neg, v, false);
    }

    /// [`Line::key_number`], the digits by [`put_u64_ns`] if `ns`.
    #[inline(always)]
    fn key_number_as(&mut self, key: &Key, neg: bool, v: u64, ns: bool) {
        let at = key.len + usize::from(neg);
        let dst = self.room::<{ 2 * SCRATCH }>();
        key.put(dst);
        self.pos += at + sign_digits(dst, key.len, neg, v, ns);
    }

    /// Appends `key` and `v` in decimal (` name=%lld`): a value not below 0 (a
    /// priority, all but a deadline task's -1) as an unsigned one, with no sign to
    /// handle on its path.
    #[inline(always)]
    fn key_signed(&mut self, key: &Key, v: i64) {
        if v >= 0 {
            self.key_number(key, false, v.unsigned_abs());
        } else {
            self.key_number(key, true, v.unsigned_abs());
        }
    }
}

impl Text for Line<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.room::<1>()[0] = b;
        self.pos += 1;
    }

    #[inline(always)]
    fn str(&mut self, s: &[u8]) {
        if s.len() > SCRATCH {
            self.spill();
            return;
        }
        copy_small(self.room::<SCRATCH>(), s);
        self.pos += s.len();
    }

    #[inline(always)]
    fn name_padded(&mut self, name: &[u8], width: usize) {
        if name.len() >= SCRATCH || width >= SCRATCH {
            self.spill();
            return;
        }
        let dst = self.room::<SCRATCH>();
        dst.fill(b' ');
        copy_small(dst, name);
        dst[name.len()] = b':';
        self.pos += name.len().max(width) + 1;
    }

    #[inline(always)]
    fn name_col(&mut self, name: &Name) {
        *self.room::<SCRATCH>() = name.bytes;
        self.pos += name.len;
    }

    #[inline(always)]
    fn key_str(&mut self, key: &Key, v: &[u8]) {
        if v.len() > SCRATCH {
            self.spill();
            return;
        }
        let dst = self.room::<{ 2 * SCRATCH }>();
        key.put(dst);
        let value = dst[key.len..]
            .first_chunk_mut::<SCRATCH>()
            .expect("a key of at most SCRATCH bytes leaves SCRATCH for the value");
        copy_str(value, v);
        self.pos += key.len + v.len();
    }

    #[inline(always)]
    fn key_u64(&mut self, key: &Key, v: u64) {
        self.key_number(key, false, v);
    }

    #[inline(always)]
    fn key_i64(&mut self, key: &Key, v: i64) {
        self.key_signed(key, v);
    }

    #[inline(always)]
    fn key_u64_ns(&mut self, key: &Key, v: u64) {
        self.key_number_as(key, false, v, true);
    }

    #[inline(always)]
    fn key_u64_2(&mut self, key1: &Key, v1: u64, key2: &Key, v2: u64) {
        self.key_number(key1, false, v1);
        self.key_number(key2, false, v2);
    }

    #[inline(always)]
    fn key_u64_i64(&mut self, key1: &Key, v1: u64, key2: &Key, v2: i64) {
        self.key_number(key1, false, v1);
        self.key_signed(key2, v2);
    }

    #[inline(always)]
    fn u64(&mut self, v: u64) {
        let n = put_u64(self.room::<20>(), v);
        self.pos += n;
    }

    #[inline(always)]
    fn i64(&mut self, v: i64) {
        if v < 0 {
            self.byte(b'-');
        }
        self.u64(v.unsigned_abs());
    }

    #[inline(always)]
    fn u64_zero_padded(&mut self, v: u64, width: usize) {
        if (1..=4).contains(&width) && v < POW10[width] {
            // Below 10^4: the cast cannot truncate.
            *self.room::<4>() = (pad4(v as u32) >> (8 * (4 - width))).to_le_bytes();
            self.pos += width;
        } else {
            self.spill();
        }
    }
}
