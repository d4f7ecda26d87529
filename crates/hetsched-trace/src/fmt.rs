//! Allocation-free text formatting helpers for the ftrace writer: integers, padding and
//! the `%*pb` cpumask form, appended to a reusable byte buffer.

/// Spaces used for padding (longer than any field width we pad to).
const SPACES: &[u8; 32] = b"                                ";

/// Appends `n` spaces.
pub(crate) fn push_spaces(buf: &mut Vec<u8>, mut n: usize) {
    while n > 0 {
        let k = n.min(SPACES.len());
        buf.extend_from_slice(&SPACES[..k]);
        n -= k;
    }
}

/// Writes the decimal digits of `v` at the end of `tmp` and returns the first used index.
fn digits(mut v: u64, tmp: &mut [u8; 20]) -> usize {
    let mut i = tmp.len();
    loop {
        i -= 1;
        // `v % 10` is below 10, so the cast cannot truncate.
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return i;
        }
    }
}

/// Appends `v` in decimal (`%llu`).
pub(crate) fn push_u64(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 20];
    let i = digits(v, &mut tmp);
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `v` in decimal (`%lld`).
pub(crate) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// Appends `v` zero-padded to at least `width` digits (`%0*llu`).
pub(crate) fn push_u64_zero_padded(buf: &mut Vec<u8>, v: u64, width: usize) {
    let mut tmp = [0u8; 20];
    let i = digits(v, &mut tmp);
    for _ in (20 - i)..width {
        buf.push(b'0');
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `v` right-aligned in `width` columns (`%*llu`).
pub(crate) fn push_u64_right(buf: &mut Vec<u8>, v: u64, width: usize) {
    let mut tmp = [0u8; 20];
    let i = digits(v, &mut tmp);
    push_spaces(buf, width.saturating_sub(20 - i));
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `s` right-aligned in `width` columns (`%*s`).
pub(crate) fn push_str_right(buf: &mut Vec<u8>, s: &str, width: usize) {
    push_spaces(buf, width.saturating_sub(s.len()));
    buf.extend_from_slice(s.as_bytes());
}

/// Appends a cpumask the way the kernel's `%*pb` (`bitmap_string()`, lib/vsprintf.c) prints
/// it: hexadecimal, in 32-bit chunks separated by commas, most significant first, each
/// chunk zero-padded, the first one to the digits that `nr_bits` needs.
///
/// `words` are 64-bit words, least significant first; bits at or above `nr_bits` are
/// ignored. `nr_bits == 0` prints `0`.
pub(crate) fn push_cpumask(buf: &mut Vec<u8>, words: &[u64], nr_bits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    const CHUNK: usize = 32;
    if nr_bits == 0 {
        buf.push(b'0');
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
            buf.push(b',');
        }
        first = false;
        let width = chunk_bits.div_ceil(4);
        for d in (0..width).rev() {
            // A nibble is below 16, so the cast cannot truncate.
            buf.push(HEX[((val >> (4 * d)) & 0xf) as usize]);
        }
        if lo == 0 {
            return;
        }
        lo -= CHUNK;
        chunk_bits = CHUNK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut b = Vec::new();
        f(&mut b);
        String::from_utf8(b).expect("ASCII output")
    }

    #[test]
    fn integers() {
        assert_eq!(s(|b| push_u64(b, 0)), "0");
        assert_eq!(s(|b| push_u64(b, u64::MAX)), u64::MAX.to_string());
        assert_eq!(s(|b| push_i64(b, -5000)), "-5000");
        assert_eq!(s(|b| push_i64(b, i64::MIN)), i64::MIN.to_string());
        assert_eq!(s(|b| push_u64_zero_padded(b, 7, 3)), "007");
        assert_eq!(s(|b| push_u64_zero_padded(b, 1234, 3)), "1234");
        assert_eq!(s(|b| push_u64_zero_padded(b, 5, 6)), "000005");
        assert_eq!(s(|b| push_u64_right(b, 52, 5)), "   52");
        assert_eq!(s(|b| push_u64_right(b, 123456, 5)), "123456");
        assert_eq!(s(|b| push_str_right(b, "<idle>", 16)), "          <idle>");
        assert_eq!(s(|b| push_spaces(b, 40)).len(), 40);
    }

    #[test]
    fn cpumask_like_kernel_pb() {
        assert_eq!(s(|b| push_cpumask(b, &[0xff], 8)), "ff");
        assert_eq!(s(|b| push_cpumask(b, &[0x0f], 8)), "0f");
        assert_eq!(s(|b| push_cpumask(b, &[0x3f], 6)), "3f");
        assert_eq!(s(|b| push_cpumask(b, &[0x1], 4)), "1");
        assert_eq!(s(|b| push_cpumask(b, &[0x1], 5)), "01");
        // Bits past nr_bits are dropped.
        assert_eq!(s(|b| push_cpumask(b, &[0x1ff], 8)), "ff");
        assert_eq!(s(|b| push_cpumask(b, &[0xffff_ffff], 32)), "ffffffff");
        assert_eq!(s(|b| push_cpumask(b, &[0x1_0000_0001], 33)), "1,00000001");
        assert_eq!(
            s(|b| push_cpumask(b, &[u64::MAX, 0x3], 66)),
            "3,ffffffff,ffffffff"
        );
        assert_eq!(s(|b| push_cpumask(b, &[], 8)), "00");
        assert_eq!(s(|b| push_cpumask(b, &[1], 0)), "0");
    }
}
