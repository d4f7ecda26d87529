//! Allocation-free text formatting for the ftrace writer: integers, padding and the
//! `%*pb` cpumask form, appended to a reusable byte buffer by a [`Cursor`] (hand-written,
//! no `core::fmt`: a trace line costs a few hundred instructions).

/// Bytes [`append`] and a grown buffer leave for a [`Cursor`] past the text: more than
/// any line of the ftrace writer but for long strings.
const ROOM: usize = 1024;
/// Widest field written by a copy of constant length: 20 digits, a padded comm.
const SCRATCH: usize = 32;

/// `"00".."99"`: two digits per table entry, so formatting takes one division by 100 per
/// two digits.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `10^i` for every `i` a `u64` holds.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// The number of decimal digits of `v` (1 for 0): the bit length times log10(2)
/// (1233/4096), corrected by one comparison. `v | 1` has the digit count of `v` (a power
/// of ten is even) and makes 0 count as 1.
#[inline(always)]
fn digit_count(v: u64) -> usize {
    let v = v | 1;
    let bits = 64 - v.leading_zeros() as usize;
    let t = (bits * 1233) >> 12;
    t + usize::from(v >= POW10[t.min(19)])
}

/// Writes the decimal digits of `v` into the whole of `dst`, which is exactly
/// `digit_count(v)` bytes long.
#[inline(always)]
fn write_digits(dst: &mut [u8], mut v: u64) {
    let mut i = dst.len();
    while v >= 100 {
        // Below 100: the cast cannot truncate.
        let pair = 2 * (v % 100) as usize;
        v /= 100;
        i -= 2;
        dst[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    // Below 100 here.
    let pair = 2 * v as usize;
    if v >= 10 {
        dst[i - 2..i].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        dst[i - 1] = DIGIT_PAIRS[pair + 1];
    }
}

/// The digits of `0..10_000` as little-endian `u32`s, the first digit in the lowest
/// byte: left-aligned with zero bytes after the digits (`pad` false) or zero-padded to
/// four digits (`pad` true).
const fn dec4_table(pad: bool) -> [u32; 10_000] {
    let mut t = [0u32; 10_000];
    let mut v = 0;
    while v < 10_000 {
        let n = if pad || v >= 1000 {
            4
        } else if v >= 100 {
            3
        } else if v >= 10 {
            2
        } else {
            1
        };
        let mut x = 0u32;
        let mut rest = v as u32;
        let mut i = n;
        while i > 0 {
            i -= 1;
            x |= (b'0' as u32 + rest % 10) << (8 * i);
            rest /= 10;
        }
        t[v] = x;
        v += 1;
    }
    t
}

/// `"0"..="9999"`, left-aligned, zero bytes after the digits ([`dec4_table`]), in the
/// low half of each entry; the digit count in the high half (read by a shift, where
/// counting the digit bytes took a bit scan and four more instructions per number).
static DEC4: [u64; 10_000] = {
    let digits = dec4_table(false);
    let mut t = [0u64; 10_000];
    let mut v = 0;
    while v < 10_000 {
        let n = if v >= 1000 {
            4
        } else if v >= 100 {
            3
        } else if v >= 10 {
            2
        } else {
            1
        };
        t[v] = (digits[v] as u64) | (n << 32);
        v += 1;
    }
    t
};
/// `"0000"..="9999"` ([`dec4_table`]).
static PAD4: [u32; 10_000] = dec4_table(true);

/// The left-aligned digits of `v < 10_000` ([`DEC4`]) and their count: the digit bytes
/// are not zero, the bytes after them are.
#[inline(always)]
pub(crate) fn dec4(v: u32) -> (u32, usize) {
    let e = DEC4[v as usize];
    // The low half is the digits, the high half their count (at most 4).
    let (d, n) = (e as u32, (e >> 32) as usize);
    debug_assert_eq!(n, 4 - (d.leading_zeros() / 8) as usize, "DEC4's count");
    (d, n)
}

/// The four zero-padded digits of `v < 10_000` ([`PAD4`]).
#[inline(always)]
pub(crate) fn pad4(v: u32) -> u32 {
    PAD4[v as usize]
}

/// Writes the digits of `v < 10_000` at the start of `dst` and returns their count: the
/// whole [`DEC4`] entry in one 8-byte move (its count's bytes land past the digits, in
/// the scratch), where storing the digits alone took one more instruction.
#[inline(always)]
fn put_dec4(dst: &mut [u8; 20], v: u32) -> usize {
    let e = DEC4[v as usize];
    dst[..8].copy_from_slice(&e.to_le_bytes());
    // The high half is the count (at most 4).
    let n = (e >> 32) as usize;
    debug_assert_eq!(n, dec4(v).1, "DEC4's count");
    n
}

/// A digit count of [`put_dec4`] (at most 4) as an index the compiler knows is below 8
/// (`& 7` leaves it as it is), so that the moves past it need no bound check.
#[inline(always)]
fn below_8(n: usize) -> usize {
    debug_assert!(n <= 4, "a count of DEC4");
    n & 7
}

/// Writes the decimal digits of `v` at the start of `dst` and returns their count; the
/// bytes of `dst` past them may be overwritten (scratch). Numbers below 10^12 (all but
/// rare ones in a trace) take one table load per four digits ([`DEC4`], [`PAD4`]) and
/// one division by a constant per group past the first.
#[inline(always)]
pub(crate) fn put_u64(dst: &mut [u8; 20], v: u64) -> usize {
    if v < 10_000 {
        // Below 10^4: the cast cannot truncate.
        return put_dec4(dst, v as u32);
    }
    // Most numbers of a trace line are below 10^4 (ids, PELT averages and loads): the
    // wider ones' code is laid out of their way, so that theirs falls through to the
    // next field instead of jumping over it.
    unlikely();
    if v < 100_000_000 {
        // Both below 10^4: the casts cannot truncate.
        let n = below_8(put_dec4(dst, (v / 10_000) as u32));
        let lo = pad4((v % 10_000) as u32);
        dst[n..n + 4].copy_from_slice(&lo.to_le_bytes());
        return n + 4;
    }
    if v < 1_000_000_000_000 {
        return put_u64_9_to_12(dst, v);
    }
    put_u64_long(dst, v)
}

/// Marks the path that calls it as unlikely (a call to a cold function), so that the
/// compiler lays it out of the likely path's way; the call itself (an empty function's
/// `call` and `ret`) is paid on the unlikely path only.
#[cold]
#[inline(never)]
fn unlikely() {}

/// [`put_u64`] of `10^8 <= v < 10^12` (9 to 12 digits): three table loads.
#[inline(always)]
fn put_u64_9_to_12(dst: &mut [u8; 20], v: u64) -> usize {
    debug_assert!((100_000_000..1_000_000_000_000).contains(&v));
    // Below 10^4 and 10^8: the casts cannot truncate.
    let n = below_8(put_dec4(dst, (v / 100_000_000) as u32));
    let rest = (v % 100_000_000) as u32;
    dst[n..n + 4].copy_from_slice(&pad4(rest / 10_000).to_le_bytes());
    dst[n + 4..n + 8].copy_from_slice(&pad4(rest % 10_000).to_le_bytes());
    n + 8
}

/// [`put_u64`] of a value that mostly has 9 to 12 digits (a time in ns, 0.1 s to
/// 16 min: PELT's `update_time`): that range is tested first, with one comparison.
#[inline(always)]
pub(crate) fn put_u64_ns(dst: &mut [u8; 20], v: u64) -> usize {
    if (100_000_000..1_000_000_000_000).contains(&v) {
        return put_u64_9_to_12(dst, v);
    }
    put_u64(dst, v)
}

/// [`put_u64`] of a number of 13 digits or more.
#[cold]
#[inline(never)]
fn put_u64_long(dst: &mut [u8; 20], v: u64) -> usize {
    let n = digit_count(v);
    write_digits(&mut dst[..n], v);
    n
}

/// [`copy_small`] of a string of any length up to [`SCRATCH`] (a comm), its length
/// classes tested from the longest: a comm of 4 to 15 bytes takes two comparisons, where
/// `copy_small`'s order (0, below 4, below 8) took three.
#[inline(always)]
fn copy_str(dst: &mut [u8; SCRATCH], src: &[u8]) {
    let n = src.len();
    debug_assert!(n <= SCRATCH);
    if n >= 8 {
        if n >= 16 {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..]);
        } else {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// Copies `src`, at most [`SCRATCH`] bytes, to the start of `dst` in at most two
/// overlapping moves of a constant length each (no call to `memcpy` for a few bytes).
/// `dst` needs room for `src` only.
#[inline(always)]
pub(crate) fn copy_small(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        }
        8..=15 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
        _ => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..]);
        }
    }
}

/// Text written into a byte slice from its start, each field with copies of constant
/// length and one bound check. A field that does not fit is not written, but the position
/// still moves past it and the cursor is marked as overflowed: [`write_at`] then grows the
/// buffer to the length that position gives and writes the text again.
///
/// The slice's bytes past the position are scratch: a field may write up to [`SCRATCH`]
/// bytes there and keep only its own.
pub(crate) struct Cursor<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflow: bool,
}

/// Writes the text `f` gives at `buf[at..]`, growing `buf` as needed, and returns where
/// the text ends. The bytes of `buf` past the text are left as they are (scratch):
/// truncate to the returned length to drop them.
#[inline(always)]
pub(crate) fn write_at(buf: &mut Vec<u8>, at: usize, mut f: impl FnMut(&mut Cursor<'_>)) -> usize {
    loop {
        let mut c = Cursor {
            buf: buf.get_mut(at..).unwrap_or_default(),
            pos: 0,
            overflow: false,
        };
        f(&mut c);
        if !c.overflow {
            return at + c.pos;
        }
        let len = at + c.pos + ROOM;
        grow(buf, len);
    }
}

/// Writes the text `f` gives at the start of `buf`, which does not grow, and returns its
/// length, or `None` if it did not fit (a field may need up to [`SCRATCH`] bytes past
/// its text).
pub(crate) fn write_into(buf: &mut [u8], mut f: impl FnMut(&mut Cursor<'_>)) -> Option<usize> {
    let mut c = Cursor {
        buf,
        pos: 0,
        overflow: false,
    };
    f(&mut c);
    (!c.overflow).then_some(c.pos)
}

/// Grows `buf` to at least `len` bytes.
#[cold]
#[inline(never)]
fn grow(buf: &mut Vec<u8>, len: usize) {
    buf.resize(len.max(buf.len()), 0);
}

/// Appends the text `f` gives to `buf`.
pub(crate) fn append(buf: &mut Vec<u8>, f: impl FnMut(&mut Cursor<'_>)) {
    let at = buf.len();
    buf.resize(at + ROOM, 0);
    let end = write_at(buf, at, f);
    buf.truncate(end);
}

/// Writes `key` (at most [`SCRATCH`] bytes), a `-` if `neg`, and the digits of `v` at the
/// start of `dst` and returns the digits' count.
#[inline(always)]
fn key_digits(dst: &mut [u8; 2 * SCRATCH], key: &[u8], neg: bool, v: u64) -> usize {
    key_digits_as(dst, key, neg, v, false)
}

/// [`key_digits`], the digits by [`put_u64_ns`] if `ns`.
#[inline(always)]
fn key_digits_as(dst: &mut [u8; 2 * SCRATCH], key: &[u8], neg: bool, v: u64, ns: bool) -> usize {
    copy_small(dst, key);
    sign_digits(dst, key.len(), neg, v, ns)
}

/// Writes a `-` if `neg` and the digits of `v` (by [`put_u64_ns`] if `ns`) at `dst[at..]`,
/// `at` at most [`SCRATCH`], and returns the digits' count.
#[inline(always)]
fn sign_digits(dst: &mut [u8; 2 * SCRATCH], at: usize, neg: bool, v: u64, ns: bool) -> usize {
    if neg {
        dst[at] = b'-';
    }
    let at = at + usize::from(neg);
    let digits = dst[at..]
        .first_chunk_mut::<20>()
        .expect("a key of at most SCRATCH bytes leaves 20 for the digits");
    if ns {
        put_u64_ns(digits, v)
    } else {
        put_u64(digits, v)
    }
}

impl Cursor<'_> {
    /// The `n` bytes at the position, if they fit.
    #[inline(always)]
    fn room(&mut self, n: usize) -> Option<&mut [u8]> {
        let end = self.pos + n;
        if end <= self.buf.len() {
            Some(&mut self.buf[self.pos..end])
        } else {
            self.overflow = true;
            None
        }
    }

    /// The `N` bytes at the position, if they fit.
    #[inline(always)]
    fn chunk<const N: usize>(&mut self) -> Option<&mut [u8; N]> {
        let end = self.pos + N;
        match self.buf.get_mut(self.pos..end) {
            Some(dst) => dst.first_chunk_mut::<N>(),
            None => {
                self.overflow = true;
                None
            }
        }
    }

    /// Runs `f` on a copy of the cursor and takes back its position: the copy is a local
    /// whose address is not taken once `f` and what it calls are inlined, so the
    /// compiler keeps its fields in registers, where the original, behind a reference,
    /// is read and written back in memory around every store into the buffer.
    #[inline(always)]
    pub(crate) fn local(&mut self, f: impl FnOnce(&mut Cursor<'_>)) {
        let mut l = Cursor {
            buf: &mut *self.buf,
            pos: self.pos,
            overflow: self.overflow,
        };
        f(&mut l);
        let (pos, overflow) = (l.pos, l.overflow);
        self.pos = pos;
        self.overflow = overflow;
    }

    /// Appends one byte.
    #[inline(always)]
    pub(crate) fn byte(&mut self, b: u8) {
        if let Some(dst) = self.room(1) {
            dst[0] = b;
        }
        self.pos += 1;
    }

    /// Appends `s`.
    #[inline(always)]
    pub(crate) fn str(&mut self, s: &[u8]) {
        if s.len() <= SCRATCH {
            if let Some(dst) = self.room(SCRATCH) {
                copy_small(dst, s);
            }
        } else if let Some(dst) = self.room(s.len()) {
            dst.copy_from_slice(s);
        }
        self.pos += s.len();
    }

    /// Appends `block[..len]`, copying the whole block (one move of constant length).
    #[inline(always)]
    pub(crate) fn block<const N: usize>(&mut self, block: &[u8; N], len: usize) {
        if let Some(dst) = self.room(N) {
            dst.copy_from_slice(block);
        }
        self.pos += len;
    }

    /// Appends `n` spaces.
    #[inline(always)]
    pub(crate) fn spaces(&mut self, n: usize) {
        if let Some(dst) = self.room(n.max(SCRATCH)) {
            dst.fill(b' ');
        }
        self.pos += n;
    }

    /// Appends `name:` and spaces up to `width + 1` columns (the event name column).
    #[inline(always)]
    pub(crate) fn name_padded(&mut self, name: &[u8], width: usize) {
        if name.len() >= SCRATCH || width >= SCRATCH {
            self.str(name);
            self.byte(b':');
            self.spaces(width.saturating_sub(name.len()));
            return;
        }
        if let Some(dst) = self.room(SCRATCH) {
            dst.fill(b' ');
            copy_small(dst, name);
            dst[name.len()] = b':';
        }
        self.pos += name.len().max(width) + 1;
    }

    /// Appends `key` then `v` (` name=value`), both at most [`SCRATCH`] bytes long, in
    /// one move each.
    #[inline(always)]
    pub(crate) fn key_str(&mut self, key: &[u8], v: &[u8]) {
        if key.len() > SCRATCH || v.len() > SCRATCH {
            self.str(key);
            self.str(v);
            return;
        }
        if let Some(dst) = self.room(2 * SCRATCH) {
            copy_small(dst, key);
            copy_small(&mut dst[key.len()..], v);
        }
        self.pos += key.len() + v.len();
    }

    /// Appends `key` then `v` in decimal (` name=%llu`).
    #[inline(always)]
    pub(crate) fn key_u64(&mut self, key: &[u8], v: u64) {
        self.key_number(key, false, v);
    }

    /// Appends `key` then `v` in decimal (` name=%lld`).
    #[inline(always)]
    pub(crate) fn key_i64(&mut self, key: &[u8], v: i64) {
        self.key_number(key, v < 0, v.unsigned_abs());
    }

    /// Appends `key`, a `-` if `neg`, and the digits of `v`: one bound check, the key in
    /// one move when it is at most [`SCRATCH`] bytes long.
    #[inline(always)]
    fn key_number(&mut self, key: &[u8], neg: bool, v: u64) {
        if key.len() > SCRATCH {
            self.str(key);
            if neg {
                self.byte(b'-');
            }
            self.u64(v);
            return;
        }
        let at = key.len() + usize::from(neg);
        if let Some(dst) = self.chunk::<{ 2 * SCRATCH }>() {
            self.pos += at + key_digits(dst, key, neg, v);
        } else {
            self.pos += at + digit_count(v);
        }
    }

    /// Appends `key1` then `v1` in decimal, then `key2` then `v2` (two ` name=%llu`
    /// fields), under one bound check.
    #[inline(always)]
    pub(crate) fn key_u64_2(&mut self, key1: &[u8], v1: u64, key2: &[u8], v2: u64) {
        self.key_numbers_2(key1, false, v1, key2, false, v2);
    }

    /// Appends `key1` then `v1` in decimal (` name=%llu`), then `key2` then `v2` (`
    /// name=%lld`), under one bound check.
    #[inline(always)]
    pub(crate) fn key_u64_i64(&mut self, key1: &[u8], v1: u64, key2: &[u8], v2: i64) {
        self.key_numbers_2(key1, false, v1, key2, v2 < 0, v2.unsigned_abs());
    }

    /// Two fields of [`Cursor::key_number`] under one bound check: room for both, each
    /// key at most [`SCRATCH`] bytes long, is taken at once (the second field's part of
    /// it, past the first field's end, is found by a comparison, not by a second bound
    /// check of the buffer).
    #[inline(always)]
    fn key_numbers_2(
        &mut self,
        key1: &[u8],
        neg1: bool,
        v1: u64,
        key2: &[u8],
        neg2: bool,
        v2: u64,
    ) {
        if key1.len() > SCRATCH || key2.len() > SCRATCH {
            self.key_number(key1, neg1, v1);
            self.key_number(key2, neg2, v2);
            return;
        }
        let at1 = key1.len() + usize::from(neg1);
        let at2 = key2.len() + usize::from(neg2);
        if let Some(dst) = self.chunk::<{ 4 * SCRATCH }>() {
            let (first, _) = dst
                .split_first_chunk_mut::<{ 2 * SCRATCH }>()
                .expect("4 * SCRATCH bytes");
            let n1 = at1 + key_digits(first, key1, neg1, v1);
            // A key of at most SCRATCH bytes and 20 digits end within the first half.
            let second = dst[n1..]
                .first_chunk_mut::<{ 2 * SCRATCH }>()
                .expect("the first field ends within 2 * SCRATCH bytes");
            let n2 = at2 + key_digits(second, key2, neg2, v2);
            self.pos += n1 + n2;
        } else {
            self.pos += at1 + digit_count(v1) + at2 + digit_count(v2);
        }
    }

    /// Appends `s` right-aligned in `width` columns (`%*s`).
    #[inline(always)]
    pub(crate) fn str_right(&mut self, s: &[u8], width: usize) {
        self.spaces(width.saturating_sub(s.len()));
        self.str(s);
    }

    /// Appends `v` in decimal in at least `width` columns (at most [`SCRATCH`]),
    /// right-aligned and filled with `fill` on the left, or left-aligned and filled with
    /// spaces on the right.
    #[inline(always)]
    fn u64_aligned(&mut self, v: u64, width: usize, fill: u8, left: bool) {
        let n = digit_count(v);
        let len = n.max(width.min(SCRATCH));
        if let Some(dst) = self.room(SCRATCH) {
            dst.fill(fill);
            let from = if left { 0 } else { len - n };
            write_digits(&mut dst[from..from + n], v);
        }
        self.pos += len;
    }

    /// Appends `v` in decimal (`%llu`).
    #[inline(always)]
    pub(crate) fn u64(&mut self, v: u64) {
        if let Some(dst) = self.chunk::<20>() {
            self.pos += put_u64(dst, v);
        } else {
            self.pos += digit_count(v);
        }
    }

    /// Appends `v` in decimal (`%lld`).
    #[inline(always)]
    pub(crate) fn i64(&mut self, v: i64) {
        if v < 0 {
            self.byte(b'-');
        }
        self.u64(v.unsigned_abs());
    }

    /// Appends `v` zero-padded to at least `width` digits (`%0*llu`; `width` ≤ 32). A
    /// width of 1 to 4 with `v` below `10^width` takes the table of four zero-padded
    /// digits ([`PAD4`]) less its first `4 - width`.
    #[inline(always)]
    pub(crate) fn u64_zero_padded(&mut self, v: u64, width: usize) {
        if (1..=4).contains(&width) && v < POW10[width] {
            if let Some(dst) = self.chunk::<4>() {
                // Below 10^4: the cast cannot truncate.
                *dst = (pad4(v as u32) >> (8 * (4 - width))).to_le_bytes();
            }
            self.pos += width;
            return;
        }
        self.u64_aligned(v, width, b'0', false);
    }

    /// Appends `v` right-aligned in `width` columns (`%*llu`; `width` ≤ 32).
    #[inline(always)]
    pub(crate) fn u64_right(&mut self, v: u64, width: usize) {
        self.u64_aligned(v, width, b' ', false);
    }

    /// Appends `v` left-aligned in `width` columns (`%-*llu`; `width` ≤ 32).
    #[inline(always)]
    pub(crate) fn u64_left(&mut self, v: u64, width: usize) {
        self.u64_aligned(v, width, b' ', true);
    }

    /// Appends a cpumask the way the kernel's `%*pb` (`bitmap_string()`, lib/vsprintf.c)
    /// prints it: hexadecimal, in 32-bit chunks separated by commas, most significant
    /// first, each chunk zero-padded, the first one to the digits that `nr_bits` needs.
    ///
    /// `words` are 64-bit words, least significant first; bits at or above `nr_bits` are
    /// ignored. `nr_bits == 0` prints `0`. Inlined: the ftrace writer calls it on a
    /// local cursor ([`Cursor::local`]).
    #[inline(always)]
    pub(crate) fn cpumask(&mut self, words: &[u64], nr_bits: usize) {
        put_cpumask(self, words, nr_bits);
    }
}

/// A field's key (` name=`) of at most [`SCRATCH`] bytes, zero-padded to [`SCRATCH`]
/// bytes: built at compile time ([`key!`]), it is copied into a [`Line`] by one move of
/// 4, 8, 16 or 32 bytes from a constant, where a key of 9 to 15 bytes took two
/// overlapping 8-byte moves of constants (four or five instructions against two).
#[derive(Debug)]
pub(crate) struct Key {
    bytes: [u8; SCRATCH],
    len: usize,
}

impl Key {
    /// The key `s` (at most [`SCRATCH`] bytes).
    pub(crate) const fn new(s: &[u8]) -> Key {
        assert!(s.len() <= SCRATCH, "a key of at most SCRATCH bytes");
        let mut bytes = [0u8; SCRATCH];
        let mut i = 0;
        while i < s.len() {
            bytes[i] = s[i];
            i += 1;
        }
        Key {
            bytes,
            len: s.len(),
        }
    }

    /// The key's bytes.
    #[inline(always)]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Copies the key to the start of `dst` in one move of constant length (the
    /// zeros past it land in the scratch).
    #[inline(always)]
    fn put(&self, dst: &mut [u8; 2 * SCRATCH]) {
        match self.len {
            0..=4 => dst[..4].copy_from_slice(&self.bytes[..4]),
            5..=8 => dst[..8].copy_from_slice(&self.bytes[..8]),
            9..=16 => dst[..16].copy_from_slice(&self.bytes[..16]),
            _ => dst[..SCRATCH].copy_from_slice(&self.bytes),
        }
    }
}

/// An event's name column, `name:` and spaces up to `width + 1` columns (as
/// [`Cursor::name_padded`] writes it), built at compile time: copied into a [`Line`] by
/// one 32-byte move of a constant, where the name's moves, its `:` and the padding's
/// took about nine instructions.
#[derive(Debug)]
pub(crate) struct Name {
    bytes: [u8; SCRATCH],
    name_len: usize,
    width: usize,
    len: usize,
}

impl Name {
    /// The column of `name` padded to `width` (both below [`SCRATCH`]).
    pub(crate) const fn new(name: &[u8], width: usize) -> Name {
        assert!(
            name.len() < SCRATCH && width < SCRATCH,
            "a name column of one move"
        );
        let mut bytes = [b' '; SCRATCH];
        let mut i = 0;
        while i < name.len() {
            bytes[i] = name[i];
            i += 1;
        }
        bytes[name.len()] = b':';
        let len = if name.len() > width {
            name.len()
        } else {
            width
        } + 1;
        Name {
            bytes,
            name_len: name.len(),
            width,
            len,
        }
    }

    /// The name.
    #[inline(always)]
    pub(crate) fn name(&self) -> &[u8] {
        &self.bytes[..self.name_len]
    }
}

/// The [`fmt::Key`](Key) of a byte-string literal, a constant.
macro_rules! key {
    ($s:literal) => {{
        const K: $crate::fmt::Key = $crate::fmt::Key::new($s);
        &K
    }};
}
pub(crate) use key;

/// The output [`crate::ftrace`]'s line formatting writes to: a [`Cursor`] (any
/// buffer, a bound check per field) or a [`Line`] (a buffer of [`LINE_ROOM`] bytes, none).
/// The fields' text is the same through both; only where it is written differs.
pub(crate) trait Text {
    /// Appends one byte.
    fn byte(&mut self, b: u8);
    /// Appends `s`.
    fn str(&mut self, s: &[u8]);
    /// Appends `name:` and spaces up to `width + 1` columns.
    fn name_padded(&mut self, name: &[u8], width: usize);
    /// Appends a name column built at compile time ([`Name`]).
    fn name_col(&mut self, name: &Name);
    /// Appends `key` then `v` (` name=value`).
    fn key_str(&mut self, key: &Key, v: &[u8]);
    /// Appends `key` then `v` in decimal (` name=%llu`).
    fn key_u64(&mut self, key: &Key, v: u64);
    /// Appends `key` then `v` in decimal (` name=%lld`).
    fn key_i64(&mut self, key: &Key, v: i64);
    /// [`Text::key_u64`] of a value that mostly has 9 to 12 digits ([`put_u64_ns`]).
    fn key_u64_ns(&mut self, key: &Key, v: u64);
    /// Two fields of [`Text::key_u64`].
    fn key_u64_2(&mut self, key1: &Key, v1: u64, key2: &Key, v2: u64);
    /// A field of [`Text::key_u64`] then one of [`Text::key_i64`].
    fn key_u64_i64(&mut self, key1: &Key, v1: u64, key2: &Key, v2: i64);
    /// Appends `v` in decimal (`%llu`).
    fn u64(&mut self, v: u64);
    /// Appends `v` in decimal (`%lld`).
    fn i64(&mut self, v: i64);
    /// Appends `v` zero-padded to at least `width` digits (`%0*llu`; `width` ≤ 32).
    fn u64_zero_padded(&mut self, v: u64, width: usize);

    /// Appends a cpumask as the kernel's `%*pb` prints it ([`put_cpumask`]).
    #[inline(always)]
    fn cpumask(&mut self, words: &[u64], nr_bits: usize) {
        put_cpumask(self, words, nr_bits);
    }
}

impl Text for Cursor<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        Cursor::byte(self, b);
    }
    #[inline(always)]
    fn str(&mut self, s: &[u8]) {
        Cursor::str(self, s);
    }
    #[inline(always)]
    fn name_padded(&mut self, name: &[u8], width: usize) {
        Cursor::name_padded(self, name, width);
    }
    #[inline(always)]
    fn name_col(&mut self, name: &Name) {
        Cursor::name_padded(self, name.name(), name.width);
    }
    #[inline(always)]
    fn key_str(&mut self, key: &Key, v: &[u8]) {
        Cursor::key_str(self, key.as_bytes(), v);
    }
    #[inline(always)]
    fn key_u64(&mut self, key: &Key, v: u64) {
        Cursor::key_u64(self, key.as_bytes(), v);
    }
    #[inline(always)]
    fn key_i64(&mut self, key: &Key, v: i64) {
        Cursor::key_i64(self, key.as_bytes(), v);
    }
    #[inline(always)]
    fn key_u64_ns(&mut self, key: &Key, v: u64) {
        Cursor::key_u64(self, key.as_bytes(), v);
    }
    #[inline(always)]
    fn key_u64_2(&mut self, key1: &Key, v1: u64, key2: &Key, v2: u64) {
        Cursor::key_u64_2(self, key1.as_bytes(), v1, key2.as_bytes(), v2);
    }
    #[inline(always)]
    fn key_u64_i64(&mut self, key1: &Key, v1: u64, key2: &Key, v2: i64) {
        Cursor::key_u64_i64(self, key1.as_bytes(), v1, key2.as_bytes(), v2);
    }
    #[inline(always)]
    fn u64(&mut self, v: u64) {
        Cursor::u64(self, v);
    }
    #[inline(always)]
    fn i64(&mut self, v: i64) {
        Cursor::i64(self, v);
    }
    #[inline(always)]
    fn u64_zero_padded(&mut self, v: u64, width: usize) {
        Cursor::u64_zero_padded(self, v, width);
    }
}

/// Appends a cpumask the way the kernel's `%*pb` (`bitmap_string()`, lib/vsprintf.c)
/// prints it: hexadecimal, in 32-bit chunks separated by commas, most significant
/// first, each chunk zero-padded, the first one to the digits that `nr_bits` needs.
///
/// `words` are 64-bit words, least significant first; bits at or above `nr_bits` are
/// ignored. `nr_bits == 0` prints `0`. Inlined: the ftrace writer calls it on a
/// local cursor ([`Cursor::local`]).
#[inline(always)]
pub(crate) fn put_cpumask<T: Text + ?Sized>(c: &mut T, words: &[u64], nr_bits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    const CHUNK: usize = 32;
    if nr_bits == 0 {
        c.byte(b'0');
        return;
    }
    let mut chunk_bits = match nr_bits % CHUNK {
        0 => CHUNK,
        r => r,
    };
    let mut lo = nr_bits.div_ceil(CHUNK) * CHUNK - CHUNK;
    let mut first = true;
    loop {
        let word = words.get(lo / 64).copied().unwrap_or(0);
        let mask = (1u64 << chunk_bits) - 1;
        let val = (word >> (lo % 64)) & mask;
        if !first {
            c.byte(b',');
        }
        first = false;
        let width = chunk_bits.div_ceil(4);
        for d in (0..width).rev() {
            // A nibble is below 16, so the cast cannot truncate.
            c.byte(HEX[((val >> (4 * d)) & 0xf) as usize]);
        }
        if lo == 0 {
            return;
        }
        lo -= CHUNK;
        chunk_bits = CHUNK;
    }
}

pub(crate) mod line;
pub(crate) use line::{Line, LINE_ROOM};

#[cfg(test)]
mod tests;
