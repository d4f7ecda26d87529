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

/// The length of `v` as a varint.
#[inline(always)]
pub(crate) fn varint_len(v: u64) -> usize {
    // 1 byte per started group of 7 bits; 0 takes one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
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
#[inline(always)]
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
