//! The legacy layout's generic events: `GenericFtraceEvent` (ftrace/generic.proto),
//! which Perfetto's trace processor reads in every version and the dense layout
//! ([`super::dense`]) replaces from v52. An event's `event_name` and each `Field`'s head
//! (its key, a placeholder for its length, its `name`, its value's key) are constants
//! built at compile time (the `const fn`s and macros here); [`super::encode`] writes
//! them with the values after them (`--trace-format perfetto-legacy`).

use hetsched_core::trace::TaskRef;

use crate::proto::{key1, Out, WT_LEN};

use super::window::Put;

/// `GenericFtraceEvent` (ftrace/generic.proto).
pub(super) mod generic {
    /// `string event_name = 1`.
    pub(in crate::perfetto) const EVENT_NAME: u32 = 1;
    /// `repeated Field field = 2`.
    pub(in crate::perfetto) const FIELD: u32 = 2;
    /// `Field.name = 1`.
    pub(in crate::perfetto) const NAME: u32 = 1;
    /// `Field.str_value = 3`.
    pub(in crate::perfetto) const STR_VALUE: u32 = 3;
    /// `Field.int_value = 4` (int64).
    pub(in crate::perfetto) const INT_VALUE: u32 = 4;
    /// `Field.uint_value = 5` (uint64).
    pub(in crate::perfetto) const UINT_VALUE: u32 = 5;
}

/// Key of `GenericFtraceEvent.field` (a `Field` message).
pub(super) const FIELD_KEY: u8 = key1(generic::FIELD, WT_LEN);

/// `GenericFtraceEvent.event_name` as a constant: its key, length and bytes.
pub(super) const fn name_field<const N: usize>(name: &str) -> [u8; N] {
    let b = name.as_bytes();
    assert!(N == b.len() + 2 && b.len() < 0x80, "a one-byte length");
    let mut a = [0u8; N];
    a[0] = key1(generic::EVENT_NAME, WT_LEN);
    // Below 0x80 by the assertion.
    a[1] = b.len() as u8;
    let mut i = 0;
    while i < b.len() {
        a[2 + i] = b[i];
        i += 1;
    }
    a
}

/// The head of a `Field`, as a constant: its key and a placeholder for its length, then
/// `name`'s key, length and bytes, then the key of its value (`value_key`), whose varint
/// or length follows.
pub(super) const fn field_head<const N: usize>(name: &str, value_key: u8) -> [u8; N] {
    let b = name.as_bytes();
    assert!(N == b.len() + 5 && b.len() < 0x80, "a one-byte length");
    let mut a = [0u8; N];
    a[0] = FIELD_KEY;
    a[2] = key1(generic::NAME, WT_LEN);
    // Below 0x80 by the assertion.
    a[3] = b.len() as u8;
    let mut i = 0;
    while i < b.len() {
        a[4 + i] = b[i];
        i += 1;
    }
    a[N - 1] = value_key;
    a
}

/// A whole `Field` with a constant string value, as a constant: its key and length, then
/// `name`'s key, length and bytes, then `value`'s.
pub(super) const fn const_field<const N: usize>(name: &str, value: &str) -> [u8; N] {
    let (n, v) = (name.as_bytes(), value.as_bytes());
    assert!(
        N == n.len() + v.len() + 6 && N - 2 < 0x80,
        "one-byte lengths"
    );
    let mut a = [0u8; N];
    a[0] = FIELD_KEY;
    // Below 0x80 by the assertion, and so are both lengths within.
    a[1] = (N - 2) as u8;
    a[2] = key1(generic::NAME, WT_LEN);
    a[3] = n.len() as u8;
    let mut i = 0;
    while i < n.len() {
        a[4 + i] = n[i];
        i += 1;
    }
    a[4 + n.len()] = key1(generic::STR_VALUE, WT_LEN);
    a[5 + n.len()] = v.len() as u8;
    let mut i = 0;
    while i < v.len() {
        a[6 + n.len() + i] = v[i];
        i += 1;
    }
    a
}

/// A generic event's `event_name` field and its `cpu` field of a one-byte value, as a
/// constant whose byte at `name.len() + 10` is the value's (0 here): the name's key,
/// length and bytes, then the `Field`'s key and length (7), `cpu`'s key, length and
/// bytes, the value's key and byte; then, if `path` is not empty, the constant `Field`
/// `path=<path>` ([`const_field`]).
pub(super) const fn name_cpu_field<const N: usize>(name: &str, path: &str) -> [u8; N] {
    let (n, v) = (name.as_bytes(), path.as_bytes());
    let tail = if v.is_empty() { 0 } else { 10 + v.len() };
    assert!(
        N == n.len() + 11 + tail && n.len() < 0x80 && 8 + v.len() < 0x80,
        "one-byte lengths"
    );
    let mut a = [0u8; N];
    a[0] = key1(generic::EVENT_NAME, WT_LEN);
    // Below 0x80 by the assertion, as are the lengths below.
    a[1] = n.len() as u8;
    let mut i = 0;
    while i < n.len() {
        a[2 + i] = n[i];
        i += 1;
    }
    let f = n.len() + 2;
    a[f] = FIELD_KEY;
    // The name's key, length and 3 bytes, the value's key and one byte.
    a[f + 1] = 7;
    a[f + 2] = key1(generic::NAME, WT_LEN);
    a[f + 3] = 3;
    a[f + 4] = b'c';
    a[f + 5] = b'p';
    a[f + 6] = b'u';
    a[f + 7] = key1(generic::UINT_VALUE, 0);
    if !v.is_empty() {
        let f = f + 9;
        a[f] = FIELD_KEY;
        a[f + 1] = (8 + v.len()) as u8;
        a[f + 2] = key1(generic::NAME, WT_LEN);
        a[f + 3] = 4;
        a[f + 4] = b'p';
        a[f + 5] = b'a';
        a[f + 6] = b't';
        a[f + 7] = b'h';
        a[f + 8] = key1(generic::STR_VALUE, WT_LEN);
        a[f + 9] = v.len() as u8;
        let mut i = 0;
        while i < v.len() {
            a[f + 10 + i] = v[i];
            i += 1;
        }
    }
    a
}

/// Writes the constant `b` with its byte at `at` set to `v`.
#[inline(always)]
pub(super) fn fixed_with<O: Out, const N: usize>(o: &mut O, b: &[u8; N], at: usize, v: u8) {
    let mut h = *b;
    h[at] = v;
    o.fixed(&h);
}

/// The constant `Field` of a string literal name with a string literal value.
macro_rules! const_field {
    ($name:literal, $value:literal) => {{
        const F: [u8; $name.len() + $value.len() + 6] = const_field($name, $value);
        &F
    }};
}

/// The constant `event_name` field of a generic event named by a string literal.
macro_rules! name {
    ($name:literal) => {{
        const F: [u8; $name.len() + 2] = name_field($name);
        &F
    }};
}

/// The constant head of a `Field` named by a string literal whose value is a
/// `uint_value` (`u`), an `int_value` (`i`) or a `str_value` (`s`).
macro_rules! head {
    ($name:literal, u) => {
        head!($name, key1(generic::UINT_VALUE, 0))
    };
    ($name:literal, i) => {
        head!($name, key1(generic::INT_VALUE, 0))
    };
    ($name:literal, s) => {
        head!($name, key1(generic::STR_VALUE, WT_LEN))
    };
    ($name:literal, $key:expr) => {{
        const H: [u8; $name.len() + 5] = field_head($name, $key);
        &H
    }};
}

/// A generic event's `event_name` (a string literal) and its first field, `cpu` (and a
/// constant `path` field after it, if given): for a CPU below 128, one constant
/// ([`name_cpu_field`]) with the CPU's byte set in it; field by field otherwise.
macro_rules! name_cpu {
    ($o:ident, $name:literal, $cpu:expr) => {{
        let cpu = $cpu;
        if cpu < 0x80 {
            const F: [u8; $name.len() + 11] = name_cpu_field($name, "");
            // Below 0x80.
            fixed_with($o, &F, $name.len() + 10, cpu as u8);
        } else {
            $o.fixed(name!($name));
            gu($o, head!("cpu", u), u64::from(cpu));
        }
    }};
    ($o:ident, $name:literal, $cpu:expr, $path:literal) => {{
        let cpu = $cpu;
        if cpu < 0x80 {
            const F: [u8; $name.len() + 21 + $path.len()] = name_cpu_field($name, $path);
            // Below 0x80.
            fixed_with($o, &F, $name.len() + 10, cpu as u8);
        } else {
            $o.fixed(name!($name));
            gu($o, head!("cpu", u), u64::from(cpu));
            $o.fixed(const_field!("path", $path));
        }
    }};
}

/// `a` then `b`, as a constant.
pub(super) const fn join<const A: usize, const B: usize, const N: usize>(
    a: &[u8; A],
    b: &[u8; B],
) -> [u8; N] {
    assert!(N == A + B, "the two lengths");
    let mut r = [0u8; N];
    let mut i = 0;
    while i < A {
        r[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < B {
        r[A + j] = b[j];
        j += 1;
    }
    r
}

/// [`name_cpu!`] (with the `path` field `$path`, none if empty) and then the generic
/// event's first field of an unsigned value, `$field` = `$v`: for a CPU below 128, the
/// two constants as one ([`Out::fixed_then_short`]: in a window, one move at one
/// position).
macro_rules! name_cpu_gu {
    ($o:ident, $name:literal, $cpu:expr, $path:literal, $field:literal, $v:expr) => {{
        let cpu = $cpu;
        if cpu < 0x80 {
            const P: usize = $name.len()
                + if $path.is_empty() {
                    11
                } else {
                    21 + $path.len()
                };
            const F: [u8; P] = name_cpu_field($name, $path);
            const H: [u8; $field.len() + 5] = field_head($field, key1(generic::UINT_VALUE, 0));
            const J: [u8; P + $field.len() + 5] = join(&F, &H);
            // Below 0x80.
            $o.fixed_then_short(&F, $name.len() + 10, cpu as u8, &H, &J, $v);
        } else {
            $o.fixed(name!($name));
            gu($o, head!("cpu", u), u64::from(cpu));
            if !$path.is_empty() {
                $o.fixed(const_field!("path", $path));
            }
            gu($o, head!($field, u), $v);
        }
    }};
}

/// [`name_cpu!`] (with the `path` field `$path`) and then the generic event's first
/// field of a string value, `$field` = `$v`: for a CPU below 128, the two constants as
/// one ([`Put::fixed_then_str`]).
macro_rules! name_cpu_gs {
    ($o:ident, $name:literal, $cpu:expr, $path:literal, $field:literal, $v:expr) => {{
        let cpu = $cpu;
        if cpu < 0x80 {
            const P: usize = $name.len() + 21 + $path.len();
            const F: [u8; P] = name_cpu_field($name, $path);
            const H: [u8; $field.len() + 5] = field_head($field, key1(generic::STR_VALUE, WT_LEN));
            const J: [u8; P + $field.len() + 5] = join(&F, &H);
            // Below 0x80.
            $o.fixed_then_str(&F, $name.len() + 10, cpu as u8, &H, &J, $v);
        } else {
            $o.fixed(name!($name));
            gu($o, head!("cpu", u), u64::from(cpu));
            $o.fixed(const_field!("path", $path));
            gs($o, head!($field, s), $v);
        }
    }};
}

/// A generic event's `Field` with an unsigned value (`head!(name, u)`).
#[inline(always)]
pub(super) fn gu<O: Out, const N: usize>(o: &mut O, head: &[u8; N], v: u64) {
    o.short_message(head, v);
}

/// A generic event's `Field` with a signed value (`head!(name, i)`): the bits of a
/// negative value, sign-extended to 64, are its encoding.
#[inline(always)]
pub(super) fn gi<O: Out, const N: usize>(o: &mut O, head: &[u8; N], v: i64) {
    gu(o, head, v as u64);
}

/// A generic event's `Field` with a string value (`head!(name, s)`).
#[inline(always)]
pub(super) fn gs<O: Put, const N: usize>(o: &mut O, head: &[u8; N], v: &[u8]) {
    o.str_field(head, v);
}

/// `comm` (string) and `pid` (unsigned), as the text trace prints a task.
#[inline(always)]
pub(super) fn g_task<O: Put>(o: &mut O, t: TaskRef<'_>) {
    gs(o, head!("comm", s), t.comm.as_bytes());
    gu(o, head!("pid", u), u64::from(t.pid));
}
