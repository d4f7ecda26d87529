use super::line::LINE_MAX;
use super::*;

fn s(f: impl FnMut(&mut Cursor<'_>)) -> String {
    let mut b = Vec::new();
    append(&mut b, f);
    String::from_utf8(b).expect("ASCII output")
}

/// The text `$body` writes with `$t` a [`Line`], if it ends whole, and with `$t` a
/// [`Cursor`] (the same [`Text`] calls).
macro_rules! both {
    (|$t:ident| $body:block) => {{
        let mut room = [b'#'; LINE_ROOM];
        let mut line = Line::new(&mut room);
        {
            let $t = &mut line;
            $body
        }
        let line = line
            .len()
            .map(|n| String::from_utf8(room[..n].to_vec()).expect("ASCII"));
        let cursor = s(|c| {
            let $t = c;
            $body
        });
        (line, cursor)
    }};
}

#[test]
fn integers() {
    assert_eq!(s(|c| c.u64(0)), "0");
    assert_eq!(s(|c| c.u64(u64::MAX)), u64::MAX.to_string());
    assert_eq!(s(|c| c.i64(-5000)), "-5000");
    assert_eq!(s(|c| c.i64(i64::MIN)), i64::MIN.to_string());
    assert_eq!(s(|c| c.u64_zero_padded(7, 3)), "007");
    assert_eq!(s(|c| c.u64_zero_padded(1234, 3)), "1234");
    assert_eq!(s(|c| c.u64_zero_padded(5, 6)), "000005");
    assert_eq!(s(|c| c.u64_right(52, 5)), "   52");
    assert_eq!(s(|c| c.u64_right(123456, 5)), "123456");
    assert_eq!(s(|c| c.u64_left(52, 5)), "52   ");
    assert_eq!(s(|c| c.u64_left(123456, 5)), "123456");
    assert_eq!(s(|c| c.str_right(b"<idle>", 16)), "          <idle>");
    assert_eq!(s(|c| c.spaces(40)), " ".repeat(40));
    assert_eq!(s(|c| c.spaces(3)), "   ");
    let long = "x".repeat(40);
    assert_eq!(s(|c| c.str_right(long.as_bytes(), 16)), long);
    assert_eq!(s(|c| c.str_right(b"ab", 40)), format!("{:>40}", "ab"));
    assert_eq!(s(|c| c.key_u64(b" pid=", 1000)), " pid=1000");
    assert_eq!(s(|c| c.key_i64(b" prio=", -1)), " prio=-1");
    assert_eq!(s(|c| c.key_i64(b" prio=", 120)), " prio=120");
    assert_eq!(s(|c| c.key_str(b" comm=", b"small-0")), " comm=small-0");
    assert_eq!(
        s(|c| c.name_padded(b"cpu_idle", 20)),
        format!("{:<21}", "cpu_idle:")
    );
    let long = "k".repeat(40);
    for (key, v) in [(long.as_str(), -12), (" x=", i64::MIN), (long.as_str(), 7)] {
        assert_eq!(s(|c| c.key_i64(key.as_bytes(), v)), format!("{key}{v}"));
        assert_eq!(
            s(|c| c.key_u64_i64(key.as_bytes(), 5, b" y=", v)),
            format!("{key}5 y={v}")
        );
        assert_eq!(
            s(|c| c.key_u64_2(b" y=", 5, key.as_bytes(), v.unsigned_abs())),
            format!(" y=5{key}{}", v.unsigned_abs())
        );
        assert_eq!(
            s(|c| c.key_str(key.as_bytes(), key.as_bytes())),
            key.repeat(2)
        );
    }
    let name = "n".repeat(33);
    assert_eq!(
        s(|c| c.name_padded(name.as_bytes(), 20)),
        format!("{name}:")
    );
    assert_eq!(s(|c| c.name_padded(b"ab", 40)), format!("{:<41}", "ab:"));
}

#[test]
fn every_digit_count_and_string_length() {
    let mut v = 1u64;
    for _ in 0..20 {
        for x in [
            v - 1,
            v,
            v + 1,
            v.saturating_mul(9),
            v.saturating_mul(10) - 1,
        ] {
            assert_eq!(digit_count(x), x.to_string().len(), "{x}");
            assert_eq!(s(|c| c.u64(x)), x.to_string());
            let mut d = [0u8; 20];
            let n = put_u64_ns(&mut d, x);
            assert_eq!(&d[..n], x.to_string().as_bytes());
            let (line, cursor) = both!(|t| {
                Text::key_u64_ns(t, key!(b" update_time="), x);
                Text::key_u64(t, key!(b" k="), x);
            });
            assert_eq!(
                (line.as_deref(), cursor.as_str()),
                (
                    Some(&*format!(" update_time={x} k={x}")),
                    &*format!(" update_time={x} k={x}")
                )
            );
            assert_eq!(s(|c| c.u64_zero_padded(x, 6)), format!("{x:06}"));
            for w in 1..=4 {
                assert_eq!(s(|c| c.u64_zero_padded(x, w)), format!("{x:0w$}"));
            }
            assert_eq!(s(|c| c.key_u64(b" k=", x)), format!(" k={x}"));
            assert_eq!(
                s(|c| c.key_u64_2(b" k=", x, b" key_of_32_bytes_long__________=", x)),
                format!(" k={x} key_of_32_bytes_long__________={x}")
            );
            let y = (x as i64).wrapping_neg();
            assert_eq!(
                s(|c| c.key_u64_i64(b" key_of_32_bytes_long__________=", x, b" p=", y)),
                format!(" key_of_32_bytes_long__________={x} p={y}")
            );
            assert_eq!(s(|c| c.u64_right(x, 5)), format!("{x:>5}"));
            assert_eq!(s(|c| c.u64_left(x, 5)), format!("{x:<5}"));
        }
        v = v.saturating_mul(10);
    }
    let text = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(2);
    for n in 0..=text.len() {
        let t = &text[..n];
        assert_eq!(s(|c| c.str(t.as_bytes())), t);
        assert_eq!(s(|c| c.str_right(t.as_bytes(), 16)), format!("{t:>16}"));
    }
}

#[test]
fn text_past_the_buffer_is_written_again_into_a_grown_one() {
    let mut b = b"keep|scratch".to_vec();
    let long = "y".repeat(3000);
    let mut calls = 0;
    let end = write_at(&mut b, 5, |c| {
        calls += 1;
        c.u64(42);
        c.key_u64_i64(b" a=", 123_456, b" b=", -7);
        c.byte(b' ');
        c.cpumask(&[0xf], 8);
        c.str(long.as_bytes());
        c.str(b" end");
    });
    assert_eq!(calls, 2);
    b.truncate(end);
    assert_eq!(b, format!("keep|42 a=123456 b=-7 0f{long} end").as_bytes());
    // Room enough: written once, the scratch past the end left as it was.
    let mut b = format!("keep|{}", "s".repeat(40)).into_bytes();
    let end = write_at(&mut b, 5, |c| c.str(b"ab"));
    assert_eq!((end, b.len(), &b[..9]), (7, 45, &b"keep|abss"[..]));
}

#[test]
fn a_line_is_the_cursors_text_or_none() {
    let (line, cursor) = both!(|t| {
        Text::name_padded(t, b"sched_wakeup", 20);
        Text::name_col(t, &Name::new(b"sched_util_est_cfs", 20));
        Text::name_col(t, &Name::new(b"cpufreq_sched_update_capacity", 20));
        Text::name_col(t, &Name::new(b"", 0));
        Text::name_col(t, &Name::new(b"n", 30));
        Text::key_str(t, key!(b" comm="), b"sixteen-chars-16");
        Text::key_u64_i64(t, key!(b" pid="), u64::MAX, key!(b" prio="), i64::MIN);
        Text::key_u64_2(t, key!(b" a="), 0, key!(b" b="), 10_000);
        Text::key_i64(t, key!(b" c="), -1);
        Text::str(t, b" target_cpu=");
        Text::u64_zero_padded(t, 7, 3);
        Text::byte(t, b' ');
        Text::i64(t, -12);
        Text::u64(t, 123_456_789_012);
        Text::key_u64_ns(t, key!(b" update_time="), 99_999_999);
        Text::key_u64_ns(t, key!(b" update_time="), 100_000_000);
        Text::key_u64_ns(t, key!(b" update_time="), 999_999_999_999);
        Text::key_u64_ns(t, key!(b" update_time="), 1_000_000_000_000);
        Text::cpumask(t, &[0x1_0000_0001], 33);
    });
    assert_eq!(line.as_deref(), Some(cursor.as_str()));
    // Up to LINE_MAX - 1 bytes a line is whole; from LINE_MAX on it is not.
    for n in [
        LINE_MAX - 2,
        LINE_MAX - 1,
        LINE_MAX,
        LINE_MAX + 1,
        3 * LINE_MAX,
    ] {
        let (line, cursor) = both!(|t| {
            for _ in 0..n / 16 {
                Text::str(t, b"0123456789abcdef");
            }
            for _ in 0..n % 16 {
                Text::byte(t, b'x');
            }
        });
        assert_eq!(cursor.len(), n);
        assert_eq!(line, (n < LINE_MAX).then_some(cursor), "{n}");
    }
    // A string longer than SCRATCH, a width the table of four digits does not give,
    // a name too long: not written by a `Line` (a `Key` is at most SCRATCH bytes).
    let long = [b'y'; SCRATCH + 1];
    let spilled = [
        both!(|t| {
            Text::str(t, b"ok");
            Text::str(t, &long);
        }),
        both!(|t| {
            Text::key_str(t, key!(b" k="), &long);
        }),
        both!(|t| {
            Text::u64_zero_padded(t, 1000, 3);
        }),
        both!(|t| {
            Text::u64_zero_padded(t, 1, 6);
        }),
        both!(|t| {
            Text::name_padded(t, &long, 20);
        }),
        both!(|t| {
            Text::name_padded(t, b"n", SCRATCH);
        }),
    ];
    for (line, cursor) in spilled {
        assert_eq!(line, None, "{cursor}");
    }
    // Keys of every length, each copied by its own move.
    let text = b"=abcdefghijklmnopqrstuvwxyz012345";
    for n in 0..=SCRATCH {
        let k = Key::new(&text[..n]);
        assert_eq!(k.as_bytes(), &text[..n]);
        let (line, cursor) = both!(|t| {
            Text::key_u64(t, &k, 7);
            Text::key_str(t, &k, b"v");
            Text::key_i64(t, &k, -7);
            Text::key_i64(t, &k, 0);
        });
        assert_eq!(line.as_deref(), Some(cursor.as_str()));
        let k = String::from_utf8(text[..n].to_vec()).expect("ASCII");
        assert_eq!(cursor, format!("{k}7{k}v{k}-7{k}0"));
    }
}

fn m(words: &[u64], nr_bits: usize) -> String {
    s(|c| c.cpumask(words, nr_bits))
}

#[test]
fn cpumask_like_kernel_pb() {
    assert_eq!(m(&[0xff], 8), "ff");
    assert_eq!(m(&[0x0f], 8), "0f");
    assert_eq!(m(&[0x3f], 6), "3f");
    assert_eq!(m(&[0x1], 4), "1");
    assert_eq!(m(&[0x1], 5), "01");
    // Bits past nr_bits are dropped.
    assert_eq!(m(&[0x1ff], 8), "ff");
    assert_eq!(m(&[0xffff_ffff], 32), "ffffffff");
    assert_eq!(m(&[0x1_0000_0001], 33), "1,00000001");
    assert_eq!(m(&[u64::MAX, 0x3], 66), "3,ffffffff,ffffffff");
    assert_eq!(m(&[], 8), "00");
    assert_eq!(m(&[1], 0), "0");
}
