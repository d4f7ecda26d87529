//! One CPU's `FtraceEventBundle` (Perfetto's
//! protos/perfetto/trace/ftrace/ftrace_event_bundle.proto) while it is written: its
//! `event` fields kept in place, each `FtraceEvent`'s lengths and head, and the helpers
//! that write a short event with no guess of its widths. The events' own encoders are
//! in encode.rs.

use super::*;

/// Bytes a [`Bundle`] keeps free past an event: an [`Enc`] writes a varint of three bytes
/// or more as ten bytes and the cached [`Head`] as [`HEAD_BYTES`] (keeping their own
/// lengths), so they need not be written byte by byte near the end.
pub(super) const SLACK: usize = 32;

/// Room for the longest prefix of an event's body ([`Bundle::open_win`],
/// [`Bundle::put_long`]): the `FtraceEventBundle.event` key, the event's length (ten bytes
/// at most), its head ([`HEAD_BYTES`]), the body's key (five at most: a `u32` field
/// number) and its length (ten).
pub(super) const PREFIX_BYTES: usize = 1 + 10 + HEAD_BYTES + 5 + 10;

/// The longest body of an `FtraceEvent` at field `field` whose two lengths (the body's,
/// and the event's with its head of at most [`HEAD_MAX`] bytes) are both below 0x80, so
/// one byte each: an event whose [`Bound`](window::Bound) is at most this is written
/// with no guess of their widths ([`Bundle::close_short`]).
#[inline(always)]
pub(super) fn short_bound(field: u32) -> usize {
    let tag_key = (u64::from(field) << 3) | WT_LEN;
    0x7f - HEAD_MAX - varint_len(tag_key) - 1
}

/// Writes `v`, below 2^14, as a varint of `w` bytes (its own width, one or two) at the
/// start of `d`.
#[inline(always)]
pub(super) fn put_short(d: &mut [u8], v: usize, w: usize) {
    debug_assert!(w == varint_len(v as u64) && w <= 2, "{v} in {w} bytes");
    if w == 1 {
        // Below 0x80.
        d[0] = v as u8;
    } else {
        // The low seven bits with the continuation bit, then the rest (below 0x80).
        d[0] = (v as u8) | 0x80;
        d[1] = (v >> 7) as u8;
    }
}

/// Writes the key `key` of an `FtraceEvent` body at the start of `d` and returns its
/// length: [`varint_at`], with the three bytes of a field number from 2^11 to 2^18 (the
/// dense encoding's, from 65536: see [`dense`]) written inline too. Each arm's field is a
/// constant, so only its own case is left.
#[inline(always)]
pub(super) fn key_at(d: &mut [u8; 10], key: u64) -> usize {
    if (1 << 14..1 << 21).contains(&key) {
        // Three groups of seven bits, the first two with the continuation bit.
        d[0] = (key as u8) | 0x80;
        d[1] = ((key >> 7) as u8) | 0x80;
        d[2] = (key >> 14) as u8;
        3
    } else {
        varint_at(d, key)
    }
}

/// One CPU's `FtraceEventBundle.event` fields not yet written: `buf[..used]`. The rest of
/// `buf` is room (zeroed when allocated, then scratch), so an event is written in place
/// without a `Vec` capacity check or length update per byte.
#[derive(Debug, Default)]
pub(super) struct Bundle {
    pub(super) buf: Vec<u8>,
    pub(super) used: usize,
    /// The last event's timestamp and pid fields.
    pub(super) head: Head,
    /// The last PELT `update_time` value's varint (`sched_pelt_cfs` follows the
    /// `sched_pelt_se` of the same update, often with the same time).
    pub(super) update_time: Kept,
    /// Per kind of event ([`Bundle::push`]'s arms), the widths of the last one's lengths.
    pub(super) widths: Widths,
    /// The pid last seen current on the bundle's CPU, announced already (0 at first):
    /// most events need no look-up of the process tree ([`PerfettoSink`]'s
    /// `record`).
    pub(super) current: u32,
    /// With the dense encoding, bit `i`: an event of [`dense::EVENTS`]`[i]` is among the
    /// events not yet written, so its descriptor goes in their bundle.
    pub(super) generic_used: u32,
}

/// Event kinds ([`Bundle::push`]'s arms, each with its own index below this).
pub(super) const KINDS: usize = 28;

/// Per kind of event, the widths of the last one's two lengths (its body's, then the
/// event's), each one or two bytes (at most two kept): where [`Bundle::open_win`] puts the
/// next one's body. One byte each at first.
#[derive(Debug, Clone, Copy)]
pub(super) struct Widths(pub(super) [[u8; 2]; KINDS]);

impl Default for Widths {
    fn default() -> Widths {
        Widths([[1; 2]; KINDS])
    }
}

impl Bundle {
    /// The events written and not yet flushed.
    pub(super) fn events(&self) -> &[u8] {
        &self.buf[..self.used]
    }

    /// The head of an event at `ctx`: the one kept if its time and pid are `ctx`'s, set
    /// anew otherwise.
    #[inline(always)]
    pub(super) fn head_at<'h>(head: &'h mut Head, ctx: &Ctx<'_>) -> &'h Head {
        if head.ts != ctx.ts || head.pid != ctx.pid {
            head.set(ctx.ts, ctx.pid);
        }
        debug_assert!(
            {
                let (bytes, len) = Head::encoded(ctx.ts, ctx.pid);
                head.bytes[..usize::from(head.len)] == bytes[..len]
            },
            "a stale head"
        );
        head
    }

    /// Starts an `FtraceEvent` at `ctx` whose body, of at most
    /// [`WIN`]` - `[`PREFIX_BYTES`] bytes, is the message at field `field`, in a window
    /// at the end of the bundle's bytes (`used`): writes the event's key, its head and the
    /// body's key, leaving room for the two lengths at the widths `guess` (the body's,
    /// then the event's, as the last event of the same kind had them), and returns the
    /// window positioned at the body, with the body's offset in it. [`Bundle::close_win`]
    /// writes the lengths once the body is written; [`Bundle::push`] gives each event's
    /// field and writes its body.
    ///
    /// The body is written once, in place, without being sized first (protobuf's
    /// `ByteSize()` pass): its length is where the encoder stopped. The lengths in front
    /// of it are varints of their true (minimal) widths, as when the body was sized
    /// first: when the guess was wrong, [`Bundle::relocate`] moves the body to where
    /// those widths put it. A function of the bundle's fields it uses (`buf`, `head`),
    /// so that the body written through the returned [`Win`] may use the others
    /// (`update_time`).
    #[inline(always)]
    pub(super) fn open_win<'a>(
        buf: &'a mut Vec<u8>,
        used: usize,
        head: &Head,
        field: u32,
        guess: [u8; 2],
    ) -> (Win<'a>, usize) {
        debug_assert!(guess.iter().all(|w| (1..=2).contains(w)), "{guess:?}");
        let tag_key = (u64::from(field) << 3) | WT_LEN;
        // An event starts below BUNDLE_BYTES (the sink flushes a bundle once it holds
        // that many) in a room of ROOM bytes (a new bundle's buffer is grown first): the
        // mask keeps `used` and tells the compiler so, which then checks nothing more.
        let w = if used < BUNDLE_BYTES && buf.len() >= ROOM {
            let room = buf.first_chunk_mut::<ROOM>().expect("a room");
            room[used & (BUNDLE_BYTES - 1)..]
                .first_chunk_mut::<{ WIN + WIN_TAIL }>()
                .expect("a window past any start below BUNDLE_BYTES")
        } else {
            Bundle::window_grown(buf, used)
        };
        // FtraceEvent: timestamp and pid, then the body behind its key and length; each
        // offset below 600, so within the window without a check.
        w[0] = key1(bundle::EVENT, WT_LEN);
        let at = 1 + usize::from(guess[1]);
        *w[at..]
            .first_chunk_mut::<HEAD_BYTES>()
            .expect("within the window") = head.bytes;
        let at = at + usize::from(head.len);
        let at = at
            + key_at(
                w[at..].first_chunk_mut::<10>().expect("within the window"),
                tag_key,
            );
        let pre = at + usize::from(guess[0]);
        (Win::new(w, pre), pre)
    }

    /// Ends the event [`Bundle::open_win`] started with the widths `guess` in the window
    /// `w` (the body at `pre`, `body_len` bytes): writes both lengths and returns the
    /// event's length. When the widths guessed are the lengths' own (the common case),
    /// the lengths go in the bytes left for them; otherwise [`Bundle::relocate`] moves
    /// the body. `guess` becomes the widths of this event's lengths.
    #[inline(always)]
    pub(super) fn close_win(
        w: &mut [u8; WIN + WIN_TAIL],
        head: &Head,
        field: u32,
        guess: &mut [u8; 2],
        pre: usize,
        body_len: usize,
    ) -> usize {
        let tag_key = (u64::from(field) << 3) | WT_LEN;
        let [body_w, event_w] = guess.map(usize::from);
        // The event's length if the body's is `body_w` bytes wide. Both lengths are
        // below WIN (the event is in the window), so below 2^14: a width is one byte,
        // and a second from 0x80, which the guess is tested against without computing
        // the widths.
        let len = usize::from(head.len) + varint_len(tag_key) + body_w + body_len;
        debug_assert!(pre + body_len < WIN && len < WIN, "{pre} {body_len} {len}");
        if body_w == 1 + usize::from(body_len >= 0x80) && event_w == 1 + usize::from(len >= 0x80) {
            debug_assert_eq!(
                [body_w, event_w],
                [varint_len(body_len as u64), varint_len(len as u64)]
            );
            // Both one or two bytes (a guess is never wider), at offsets below WIN.
            put_short(&mut w[1..], len, event_w);
            put_short(&mut w[(pre - body_w) & (WIN - 1)..], body_len, body_w);
            pre + body_len
        } else {
            Bundle::relocate(w, 0, head, tag_key, guess, pre, body_len)
        }
    }

    /// [`Bundle::close_win`] of an event opened with the widths `[1, 1]` whose body is
    /// at most [`short_bound`]`(field)` bytes long, so that both lengths are below 0x80
    /// whatever its values: writes them, one byte each, and returns the event's length.
    #[inline(always)]
    pub(super) fn close_short(
        w: &mut [u8; WIN + WIN_TAIL],
        head: &Head,
        field: u32,
        pre: usize,
        body_len: usize,
    ) -> usize {
        let tag_key = (u64::from(field) << 3) | WT_LEN;
        let len = usize::from(head.len) + varint_len(tag_key) + 1 + body_len;
        debug_assert!(
            body_len <= short_bound(field) && len < 0x80 && pre < WIN,
            "{pre} {body_len} {len}"
        );
        // Both below 0x80: one byte each.
        w[1] = len as u8;
        w[(pre - 1) & (WIN - 1)] = body_len as u8;
        pre + body_len
    }

    /// Writes an `FtraceEvent` at `ctx` whose body, of at most `bound` bytes, is the
    /// message at field `field` written by `body`: an event too long for a window
    /// ([`Bundle::open_win`]), written through an [`Enc`] over the bundle's room the same
    /// way. Returns the bytes the bundle holds with it.
    #[cold]
    #[inline(never)]
    pub(super) fn put_long(
        buf: &mut Vec<u8>,
        used: usize,
        head: &Head,
        field: u32,
        guess: &mut [u8; 2],
        bound: usize,
        body: impl FnOnce(&mut Enc<'_>),
    ) -> usize {
        let tag_key = (u64::from(field) << 3) | WT_LEN;
        let end = used + PREFIX_BYTES + bound;
        if buf.len() < end + SLACK {
            Bundle::grow(buf, end + SLACK);
        }
        let mut e = Enc::new(&mut buf[used..end + SLACK]);
        e.byte(key1(bundle::EVENT, WT_LEN));
        e.fixed_prefix(&[0; 2], usize::from(guess[1]));
        e.fixed_prefix(&head.bytes, usize::from(head.len));
        e.varint(tag_key);
        e.fixed_prefix(&[0; 2], usize::from(guess[0]));
        let pre = e.pos();
        body(&mut e);
        let body_len = e.pos() - pre;
        let body_w = varint_len(body_len as u64);
        let len = usize::from(head.len) + varint_len(tag_key) + body_w + body_len;
        let event_w = varint_len(len as u64);
        if [body_w, event_w] == guess.map(usize::from) {
            put_short(&mut buf[used + 1..], len, event_w);
            put_short(&mut buf[used + pre - body_w..], body_len, body_w);
            used + pre + body_len
        } else {
            Bundle::relocate(buf, used, head, tag_key, guess, pre, body_len)
        }
    }

    /// [`Bundle::close_win`] when the widths guessed are not the lengths' own: writes
    /// the event's prefix at its true widths and moves the body (written `pre` bytes past
    /// `used`) right behind it. Returns the bytes `buf` holds with the event, and keeps
    /// the widths (at most two: a guess is one or two bytes) as the next guess.
    #[cold]
    #[inline(never)]
    pub(super) fn relocate(
        buf: &mut [u8],
        used: usize,
        head: &Head,
        tag_key: u64,
        guess: &mut [u8; 2],
        pre: usize,
        body_len: usize,
    ) -> usize {
        let body_w = varint_len(body_len as u64);
        let len = usize::from(head.len) + varint_len(tag_key) + body_w + body_len;
        let mut prefix = [0u8; PREFIX_BYTES + SLACK];
        let mut e = Enc::new(&mut prefix);
        e.byte(key1(bundle::EVENT, WT_LEN));
        e.varint(len as u64);
        e.fixed_prefix(&head.bytes, usize::from(head.len));
        e.varint(tag_key);
        e.varint(body_len as u64);
        let n = e.pos();
        buf.copy_within(used + pre..used + pre + body_len, used + n);
        buf[used..used + n].copy_from_slice(&prefix[..n]);
        // Both at most 10: the casts are exact.
        *guess = [body_w.min(2) as u8, varint_len(len as u64).min(2) as u8];
        used + n + body_len
    }

    /// The window at `used`, the room grown to it first if needed: for a new bundle's
    /// buffer, or a bundle of [`BUNDLE_BYTES`] or more (the tests' bundles, which are
    /// not flushed).
    #[cold]
    #[inline(never)]
    pub(super) fn window_grown(buf: &mut Vec<u8>, used: usize) -> &mut [u8; WIN + WIN_TAIL] {
        if buf.len() < used + WIN + WIN_TAIL {
            Bundle::grow(buf, used + WIN + WIN_TAIL);
        }
        buf[used..]
            .first_chunk_mut::<{ WIN + WIN_TAIL }>()
            .expect("grown to a window")
    }

    /// Grows the room to at least `len` bytes, and at first to a bundle's worth and a
    /// window past it (the most an event starts at, and its window).
    #[cold]
    #[inline(never)]
    pub(super) fn grow(buf: &mut Vec<u8>, len: usize) {
        buf.resize(len.max(ROOM), 0);
    }
}
