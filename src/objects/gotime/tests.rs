//! Unit tests of the port of Go's `time` layouts: Go's own test tables (format, parse, errors,
//! zones, layout chunks) and properties.

use crate::objects::gotime;
use proptest::prelude::*;

/// Go's test time: Thu Feb  4 21:00:57.0123456 PST 2009 (as formatted in zone PST).
fn go_test_time() -> gotime::Time {
    gotime::Time {
        unix: 1_233_810_057,
        nsec: 12_345_600,
        zone: gotime::Zone {
            name: "PST".into(),
            offset: -28_800,
        },
    }
}

#[test]
fn gotime_format_table() {
    // Go's formatTests (time/format_test.go), with the constants expanded.
    let t = go_test_time();
    for (layout, want) in [
        ("Mon Jan _2 15:04:05 2006", "Wed Feb  4 21:00:57 2009"),
        (
            "Mon Jan _2 15:04:05 MST 2006",
            "Wed Feb  4 21:00:57 PST 2009",
        ),
        (
            "Mon Jan 02 15:04:05 -0700 2006",
            "Wed Feb 04 21:00:57 -0800 2009",
        ),
        ("02 Jan 06 15:04 MST", "04 Feb 09 21:00 PST"),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Wednesday, 04-Feb-09 21:00:57 PST",
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 MST",
            "Wed, 04 Feb 2009 21:00:57 PST",
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 -0700",
            "Wed, 04 Feb 2009 21:00:57 -0800",
        ),
        ("2006-01-02T15:04:05Z07:00", "2009-02-04T21:00:57-08:00"),
        (
            "2006-01-02T15:04:05.999999999Z07:00",
            "2009-02-04T21:00:57.0123456-08:00",
        ),
        ("3:04PM", "9:00PM"),
        ("3pm", "9pm"),
        ("3PM", "9PM"),
        ("06 01 02", "09 02 04"),
        (
            "Hi Janet, the Month is January",
            "Hi Janet, the Month is February",
        ),
        ("Jan _2 15:04:05", "Feb  4 21:00:57"),
        ("Jan _2 15:04:05.000", "Feb  4 21:00:57.012"),
        ("Jan _2 15:04:05.000000", "Feb  4 21:00:57.012345"),
        ("Jan _2 15:04:05.000000000", "Feb  4 21:00:57.012345600"),
        ("2006-01-02 15:04:05", "2009-02-04 21:00:57"),
        ("2006-01-02", "2009-02-04"),
        ("15:04:05", "21:00:57"),
        ("Jan  2 002 __2 2", "Feb  4 035  35 4"),
        ("2006 6 06 _6 __6 ___6", "2009 6 09 _6 __6 ___6"),
        ("Jan January 1 01 _1", "Feb February 2 02 _2"),
        ("2 02 _2 __2", "4 04  4  35"),
        ("Mon Monday", "Wed Wednesday"),
        ("15 3 03 _3", "21 9 09 _9"),
        ("4 04 _4", "0 00 _0"),
        ("5 05 _5", "57 57 _57"),
        // TestFormatFractionalSecondSeparators
        ("15:04:05.000", "21:00:57.012"),
        ("15:04:05.999", "21:00:57.012"),
        ("15:04:05,000", "21:00:57,012"),
        ("15:04:05,999", "21:00:57,012"),
        // Zones.
        (
            "Z07 Z0700 Z070000 Z07:00:00 -07 -070000 -07:00:00",
            "-08 -0800 -080000 -08:00:00 -08 -080000 -08:00:00",
        ),
    ] {
        assert_eq!(t.format(layout), want, "layout {layout:?}");
    }
}

#[test]
fn gotime_format_misc() {
    // TestFormatSingleDigits, TestNoonIs12PM, TestMidnightIs12AM.
    assert_eq!(
        gotime::Time::utc(2001, 2, 3, 4, 5, 6, 700_000_000).format("3:4:5"),
        "4:5:6"
    );
    assert_eq!(
        gotime::Time::utc(0, 1, 1, 12, 0, 0, 0).format("3:04PM"),
        "12:00PM"
    );
    assert_eq!(
        gotime::Time::utc(0, 1, 1, 12, 0, 0, 0).format("03:04PM"),
        "12:00PM"
    );
    assert_eq!(
        gotime::Time::utc(0, 1, 1, 0, 0, 0, 0).format("3:04PM"),
        "12:00AM"
    );
    // TestFormatShortYear.
    for y in [
        -100_001i64,
        -10_000,
        -9999,
        -1001,
        -999,
        -101,
        -11,
        -10,
        -9,
        -1,
        0,
        1,
        9,
        99,
        999,
        9999,
        10_000,
        100_001,
    ] {
        let want = if y < 0 {
            format!("-{:04}.01.01", -y)
        } else {
            format!("{y:04}.01.01")
        };
        assert_eq!(
            gotime::Time::utc(y, 1, 1, 0, 0, 0, 0).format("2006.01.02"),
            want
        );
    }
    // UTC prints Z for ISO zones and "UTC" for MST.
    let t = gotime::Time::utc(2006, 1, 2, 15, 4, 5, 0);
    assert_eq!(t.format("Z07:00 Z0700 Z07 -0700 MST"), "Z Z Z +0000 UTC");
    // An unnamed zone prints a numeric MST.
    let t = gotime::Time {
        unix: 0,
        nsec: 0,
        zone: gotime::Zone {
            name: "".into(),
            offset: -(34 * 60 + 8),
        },
    };
    assert_eq!(t.format("MST Z07:00:00"), "-0034 -00:34:08");
    // .9 trims zeros; .0 keeps them; 0 digits after 4096 wrap (Go keeps n & 0xfff).
    let t = gotime::Time::utc(2006, 1, 2, 15, 4, 5, 500_000_000);
    assert_eq!(t.format(".000 .999 ,9 .0"), ".500 .5 ,5 .5");
    assert_eq!(
        gotime::Time::utc(2006, 1, 2, 15, 4, 5, 0).format("05.999"),
        "05"
    );
}

#[test]
fn gotime_seconds_zone_offsets() {
    // TestParseSecondsInTimeZone / TestFormatSecondsInTimeZone.
    for (layout, value, offset) in [
        (
            "2006-01-02T15:04:05-070000",
            "1871-01-01T05:33:02-003408",
            -(34 * 60 + 8),
        ),
        (
            "2006-01-02T15:04:05-07:00:00",
            "1871-01-01T05:33:02-00:34:08",
            -(34 * 60 + 8),
        ),
        (
            "2006-01-02T15:04:05-070000",
            "1871-01-01T05:33:02+003408",
            34 * 60 + 8,
        ),
        (
            "2006-01-02T15:04:05-07:00:00",
            "1871-01-01T05:33:02+00:34:08",
            34 * 60 + 8,
        ),
        (
            "2006-01-02T15:04:05Z070000",
            "1871-01-01T05:33:02-003408",
            -(34 * 60 + 8),
        ),
        (
            "2006-01-02T15:04:05Z07:00:00",
            "1871-01-01T05:33:02+00:34:08",
            34 * 60 + 8,
        ),
        ("2006-01-02T15:04:05-07", "1871-01-01T05:33:02+01", 3600),
        (
            "2006-01-02T15:04:05-07",
            "1871-01-01T05:33:02-02",
            -2 * 3600,
        ),
        (
            "2006-01-02T15:04:05Z07",
            "1871-01-01T05:33:02-02",
            -2 * 3600,
        ),
    ] {
        let t = gotime::parse(layout, value.as_bytes()).unwrap();
        assert_eq!(t.zone.offset, offset, "{value}");
        assert_eq!(t.format(layout), value);
    }
}

/// Go's parseTests: each value parses and formats back to Thu Feb 4 21:00:57 2010.
#[test]
fn gotime_parse_table() {
    for (layout, value, frac) in [
        ("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57 2010", 0),
        (
            "Mon Jan _2 15:04:05 MST 2006",
            "Thu Feb  4 21:00:57 PST 2010",
            0,
        ),
        (
            "Mon Jan 02 15:04:05 -0700 2006",
            "Thu Feb 04 21:00:57 -0800 2010",
            0,
        ),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Thursday, 04-Feb-10 21:00:57 PST",
            0,
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 MST",
            "Thu, 04 Feb 2010 21:00:57 PST",
            0,
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 -0700",
            "Thu, 04 Feb 2010 21:00:57 -0800",
            0,
        ),
        ("2006-01-02T15:04:05Z07:00", "2010-02-04T21:00:57-08:00", 0),
        ("2006-01-02 15:04:05-07", "2010-02-04 21:00:57-08", 0),
        ("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57.0 2010", 1),
        (
            "Mon Jan _2 15:04:05 MST 2006",
            "Thu Feb  4 21:00:57.01 PST 2010",
            2,
        ),
        (
            "Mon Jan 02 15:04:05 -0700 2006",
            "Thu Feb 04 21:00:57.012 -0800 2010",
            3,
        ),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Thursday, 04-Feb-10 21:00:57.0123 PST",
            4,
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 MST",
            "Thu, 04 Feb 2010 21:00:57.01234 PST",
            5,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2010-02-04T21:00:57.012345678-08:00",
            9,
        ),
        ("2006-01-02 15:04:05", "2010-02-04 21:00:57.0", 0),
        ("Mon Jan _2 15:04:05 2006", "Thu Feb 4 21:00:57 2010", 0),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu      Feb     4     21:00:57     2010",
            0,
        ),
        ("Mon Jan _2 15:04:05 2006", "THU FEB 4 21:00:57 2010", 0),
        ("Mon Jan _2 15:04:05 2006", "thu feb 4 21:00:57 2010", 0),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 21:00:57.012 2010",
            3,
        ),
        (
            "Mon Jan _2 15:04:05.000000 2006",
            "Thu Feb  4 21:00:57.012345 2010",
            6,
        ),
        (
            "Mon Jan _2 15:04:05.000000000 2006",
            "Thu Feb  4 21:00:57.012345678 2010",
            9,
        ),
        (
            "Mon Jan _2 15:04:05,000 2006",
            "Thu Feb  4 21:00:57.012 2010",
            3,
        ),
        ("2006.01.02.15.04.05.0", "2010.02.04.21.00.57.0", 1),
        ("2006.01.02.15.04.05.00", "2010.02.04.21.00.57.01", 2),
        (
            "Hi Janet, the Month is January: Jan _2 15:04:05 2006",
            "Hi Janet, the Month is February: Feb  4 21:00:57 2010",
            0,
        ),
        (
            "2006-01-02 15:04:05.9999 -0700 MST",
            "2010-02-04 21:00:57 -0800 PST",
            0,
        ),
        (
            "2006-01-02 15:04:05.999999999 -0700 MST",
            "2010-02-04 21:00:57.0123 -0800 PST",
            4,
        ),
        (
            "2006-01-02 15:04:05,9999 -0700 MST",
            "2010-02-04 21:00:57.012345678 -0800 PST",
            9,
        ),
        ("2006-01-02 002 15:04:05", "2010-02-04 035 21:00:57", 0),
        ("2006-01 002 15:04:05", "2010-02 035 21:00:57", 0),
        ("2006-002 15:04:05", "2010-035 21:00:57", 0),
        ("200600201 15:04:05", "201003502 21:00:57", 0),
        ("200600204 15:04:05", "201003504 21:00:57", 0),
    ] {
        let t = gotime::parse(layout, value.as_bytes())
            .unwrap_or_else(|e| panic!("{layout:?} {value:?}: {e}"));
        // Wall clock in the parsed zone.
        assert_eq!(t.format("2006-01-02 15:04"), "2010-02-04 21:00", "{value}");
        assert_eq!(t.format("05"), "57", "{value}");
        let want_ns: i64 = format!("{:0<9}", &"012345678"[..frac]).parse().unwrap();
        assert_eq!(t.nsec, want_ns, "{value}");
        if value.contains("-08") {
            assert_eq!(t.zone.offset, -28_800);
        }
        // Weekday is checked for syntax only; Thu is right for 2010-02-04.
        assert_eq!(t.format("Mon"), "Thu");
    }
    // TestUnderscoreTwoThousand: "_2006" is "_" then the year.
    let t = gotime::parse("15:04_20060102", b"14:38_20150618").unwrap();
    assert_eq!(t.format("2006-01-02 15:04"), "2015-06-18 14:38");
    // GMT with an hour offset: the instant is NOT shifted, only the displayed zone.
    let t = gotime::parse(
        "Mon Jan _2 15:04:05 MST 2006",
        b"Fri Feb  5 05:00:57 GMT-8 2010",
    )
    .unwrap();
    assert_eq!(
        t.format("Mon Jan _2 15:04:05 MST 2006"),
        "Thu Feb  4 21:00:57 GMT-8 2010"
    );
    // An unknown abbreviation is a zone with offset 0 (time.Local = UTC).
    let t = gotime::parse("15:04 MST", b"21:00 PST").unwrap();
    assert_eq!(
        (t.format("15:04 MST -0700"), t.zone.offset),
        ("21:00 PST +0000".to_owned(), 0)
    );
    // +0000 with Local = UTC is Local: formats as UTC.
    let t = gotime::parse("15:04 -0700", b"21:00 +0000").unwrap();
    assert_eq!(t.format("MST Z07:00"), "UTC Z");
    // TestParseYday.
    for i in 1..=365 {
        let t = gotime::parse("2006-002", format!("2020-{i:03}").as_bytes()).unwrap();
        assert_eq!(t.format("2006 002"), format!("2020 {i:03}"));
    }
    // Year 0 is a leap year: day 366 exists.
    assert_eq!(
        gotime::parse("002", b"366").unwrap().format("2006-01-02"),
        "0000-12-31"
    );
    // 12PM is noon, 12AM is midnight.
    assert_eq!(
        gotime::parse("3:04PM", b"12:00PM").unwrap().format("15"),
        "12"
    );
    assert_eq!(
        gotime::parse("03:04PM", b"12:00AM").unwrap().format("15"),
        "00"
    );
    // Two-digit years: >= 69 is 19xx.
    assert_eq!(gotime::parse("06", b"68").unwrap().format("2006"), "2068");
    assert_eq!(gotime::parse("06", b"69").unwrap().format("2006"), "1969");
    // Go's atoi accepts a sign inside the two digits: "-1" is 1999.
    assert_eq!(gotime::parse("06", b"-1").unwrap().format("2006"), "1999");
    assert_eq!(gotime::parse("05.00", b"01.+5").unwrap().nsec, 50_000_000);
}

#[test]
fn gotime_parse_errors_exact() {
    for (layout, value, want) in [
        (
            "2006-01-02",
            "x",
            r#"parsing time "x" as "2006-01-02": cannot parse "x" as "2006""#,
        ),
        (
            "2006-01-02",
            "2023-13-01",
            r#"parsing time "2023-13-01": month out of range"#,
        ),
        (
            "2006-01-02",
            "2023-00-01",
            r#"parsing time "2023-00-01": month out of range"#,
        ),
        (
            "2006-01-02",
            "2023-02-29",
            r#"parsing time "2023-02-29": day out of range"#,
        ),
        (
            "2006-01-02",
            "2023-04-31",
            r#"parsing time "2023-04-31": day out of range"#,
        ),
        (
            "2006-01-02",
            "2023-01-00",
            r#"parsing time "2023-01-00": day out of range"#,
        ),
        (
            "2006-01-02",
            "2023-01-02-data",
            r#"parsing time "2023-01-02-data": extra text: "-data""#,
        ),
        (
            "2006-01-02",
            "2023-01-2",
            r#"parsing time "2023-01-2" as "2006-01-02": cannot parse "2" as "02""#,
        ),
        (
            "2006-01-02",
            "invalid-da",
            r#"parsing time "invalid-da" as "2006-01-02": cannot parse "invalid-da" as "2006""#,
        ),
        (
            "2006-01-02",
            "2023/01/02",
            r#"parsing time "2023/01/02" as "2006-01-02": cannot parse "/01/02" as "-""#,
        ),
        (
            "15:04",
            "24:00",
            r#"parsing time "24:00": hour out of range"#,
        ),
        (
            "15:04",
            "23:60",
            r#"parsing time "23:60": minute out of range"#,
        ),
        (
            "15:04:05",
            "23:59:60",
            r#"parsing time "23:59:60": second out of range"#,
        ),
        ("3PM", "13PM", r#"parsing time "13PM": hour out of range"#),
        (
            "3PM",
            "1XM",
            r#"parsing time "1XM" as "3PM": cannot parse "XM" as "PM""#,
        ),
        (
            "-0700",
            "+2500",
            r#"parsing time "+2500": time zone offset hour out of range"#,
        ),
        (
            "-0700",
            "+0061",
            r#"parsing time "+0061": time zone offset minute out of range"#,
        ),
        (
            "-0700",
            "*0100",
            r#"parsing time "*0100" as "-0700": cannot parse "*0100" as "-0700""#,
        ),
        (
            "2006 002",
            "2023 366",
            r#"parsing time "2023 366": day-of-year out of range"#,
        ),
        (
            "2006 002",
            "2020 367",
            r#"parsing time "2020 367": day-of-year out of range"#,
        ),
        (
            "Jan _2 002 2006",
            "Feb  4 034 2006",
            r#"parsing time "Feb  4 034 2006": day-of-year does not match day"#,
        ),
        (
            "Jan _2 002 2006",
            "Feb  4 004 2006",
            r#"parsing time "Feb  4 004 2006": day-of-year does not match month"#,
        ),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 23:00:59.-123 2010",
            r#"parsing time "Thu Feb  4 23:00:59.-123 2010": fractional second out of range"#,
        ),
        // Go's parseErrorTests with exact messages.
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04:05Z07:00",
            r#"parsing time "2006-01-02T15:04:05Z07:00": extra text: "07:00""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04_abc",
            r#"parsing time "2006-01-02T15:04_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as ":""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04:05_abc",
            r#"parsing time "2006-01-02T15:04:05_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as "Z07:00""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04:05Z_abc",
            r#"parsing time "2006-01-02T15:04:05Z_abc": extra text: "_abc""#,
        ),
        (
            "\"2006-01-02T15:04:05Z07:00\"",
            "0",
            r#"parsing time "0" as "\"2006-01-02T15:04:05Z07:00\"": cannot parse "0" as "\"""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "\"",
            r#"parsing time "\"" as "2006-01-02T15:04:05Z07:00": cannot parse "\"" as "2006""#,
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Feb  4 21:00:60 2010",
            r#"parsing time "Feb  4 21:00:60 2010" as "Mon Jan _2 15:04:05 2006": cannot parse "Feb  4 21:00:60 2010" as "Mon""#,
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 21:00:57 @2010",
            r#"parsing time "Thu Feb  4 21:00:57 @2010" as "Mon Jan _2 15:04:05 2006": cannot parse "@2010" as "2006""#,
        ),
        (
            "Jan _2 15:04:05.000000000",
            "Dec  7 11:22:01.000000",
            r#"parsing time "Dec  7 11:22:01.000000" as "Jan _2 15:04:05.000000000": cannot parse ".000000" as ".000000000""#,
        ),
        (
            "Jan _2 15:04:05.000000000",
            "Dec  7 11:22:01.0000000000",
            r#"parsing time "Dec  7 11:22:01.0000000000": extra text: "0""#,
        ),
        (
            "☺2006",
            "☺x",
            r#"parsing time "\xe2\x98\xbax" as "\xe2\x98\xba2006": cannot parse "x" as "2006""#,
        ),
        (
            "2006\x04",
            "2006",
            r#"parsing time "2006" as "2006\x04": cannot parse "" as "\x04""#,
        ),
    ] {
        let e = gotime::parse(layout, value.as_bytes()).expect_err(value);
        assert_eq!(e.to_string(), want, "{layout:?} {value:?}");
    }
}

#[test]
fn gotime_parse_errors_contain() {
    // Go's parseErrorTests whose expectation is a substring.
    for (layout, value, part) in [
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 21:00:60 2010",
            "second out of range",
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 21:61:57 2010",
            "minute out of range",
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 24:00:60 2010",
            "hour out of range",
        ),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 23:00:59x01 2010",
            "cannot parse",
        ),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 23:00:59.xxx 2010",
            "cannot parse",
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2010-02-04T21:00:67.012345678-08:00",
            "second out of range",
        ),
        ("_2 Jan 06 15:04 MST", "4 --- 00 00:00 GMT", "cannot parse"),
        (
            "_2 January 06 15:04 MST",
            "4 --- 00 00:00 GMT",
            "cannot parse",
        ),
        ("01 MST", "0 MST", "cannot parse \"0 MST\""),
        ("01 MST", "1 MST", "cannot parse \"1 MST\""),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Thursday, 04-Feb-1 21:00:57 PST",
            "cannot parse \"1 21",
        ),
    ] {
        let e = gotime::parse(layout, value.as_bytes())
            .expect_err(value)
            .to_string();
        assert!(e.contains(part), "{layout:?} {value:?}: {e}");
    }
    // dayOutOfRangeTests (ANSIC).
    for (date, ok) in [
        ("Thu Jan 99 21:00:57 2010", false),
        ("Thu Jan 31 21:00:57 2010", true),
        ("Thu Jan 32 21:00:57 2010", false),
        ("Thu Feb 28 21:00:57 2012", true),
        ("Thu Feb 29 21:00:57 2012", true),
        ("Thu Feb 29 21:00:57 2010", false),
        ("Thu Mar 32 21:00:57 2010", false),
        ("Thu Apr 30 21:00:57 2010", true),
        ("Thu Apr 31 21:00:57 2010", false),
        ("Thu Jun 31 21:00:57 2010", false),
        ("Thu Sep 31 21:00:57 2010", false),
        ("Thu Nov 31 21:00:57 2010", false),
        ("Thu Dec 31 21:00:57 2010", true),
        ("Thu Dec 00 21:00:57 2010", false),
        ("Thu Feb 29 21:00:57 1900", false),
        ("Thu Feb 29 21:00:57 2000", true),
    ] {
        match gotime::parse("Mon Jan _2 15:04:05 2006", date.as_bytes()) {
            Ok(_) => assert!(ok, "{date}"),
            Err(e) => {
                assert!(!ok, "{date}: {e}");
                assert!(e.to_string().contains("day out of range"), "{e}");
            }
        }
    }
    // monthOutOfRangeTests.
    assert!(gotime::parse("01-02", b"00-01")
        .unwrap_err()
        .to_string()
        .contains("month out of range"));
    assert!(gotime::parse("01-02", b"13-01")
        .unwrap_err()
        .to_string()
        .contains("month out of range"));
    assert!(gotime::parse("01-02", b"01-01").is_ok());
}

#[test]
fn gotime_time_zone_abbreviations() {
    // Go's parseTimeZoneTests, through the MST token.
    for (value, len) in [
        ("gmt hi there", 0),
        ("GMT hi there", 3),
        ("GMT+12 hi there", 6),
        ("GMT+00 hi there", 6),
        ("GMT+", 3),
        ("GMT+3", 5),
        ("GMT+a", 3),
        ("GMT+3a", 5),
        ("GMT-5 hi there", 5),
        ("GMT-51 hi there", 3),
        ("ChST hi there", 4),
        ("MeST hi there", 4),
        ("MSDx", 3),
        ("MSDY", 0),
        ("ESAST hi", 5),
        ("ESASTT hi", 0),
        ("ESATY hi", 0),
        ("WITA hi", 4),
        ("+03 hi", 3),
        ("-04 hi", 3),
        ("+00", 3),
        ("-23", 3),
        ("-24", 0),
        ("+24", 0),
    ] {
        let got = gotime::parse("MST", value.as_bytes());
        if len == 0 {
            assert!(
                got.unwrap_err().to_string().contains("cannot parse"),
                "{value}"
            );
        } else if len == value.len() {
            assert_eq!(got.unwrap().zone.name, value);
        } else {
            let e = got.unwrap_err().to_string();
            assert!(e.contains("extra text"), "{value}: {e}");
            assert!(
                e.ends_with(&format!("extra text: \"{}\"", &value[len..])),
                "{value}: {e}"
            );
        }
    }
}

#[test]
fn gotime_next_std_chunk_boundaries() {
    // Go's nextStdChunkTests: formatting the reference time shows the chunking.
    let r = gotime::Time::utc(2006, 1, 2, 15, 4, 5, 0);
    assert_eq!(
        r.format("2006-01-02 002 15:04:05"),
        "2006-01-02 002 15:04:05"
    );
    assert_eq!(r.format("2006002 01"), "2006002 01");
    let t = gotime::Time::utc(2010, 2, 4, 21, 0, 57, 0);
    assert_eq!(
        t.format("(2006)(002)(01) (15):(04):(05)"),
        "(2010)(035)(02) (21):(00):(57)"
    );
    assert_eq!(
        t.format("(2006)(002)(04) (15):(04):(05)"),
        "(2010)(035)(00) (21):(00):(57)"
    );
    // Jan/Mon not followed by a lower-case letter; "_2006" is "_" + year.
    assert_eq!(
        t.format("Janx Jany JanX Monz MonZ _2006"),
        "Janx Jany FebX Monz ThuZ _2010"
    );
    // A run of fraction digits followed by a digit is not a fraction.
    // ".001": "00" then '1' is not a fraction; then "01" is the month.
    assert_eq!(t.format(".001"), ".002");
}

#[test]
fn gotime_validate_layout_matches_go() {
    for ok in [
        "2006-01-02",
        "2006-01-02T15:04:05Z07:00",
        "2006-01-02T15:04:05.999999999Z07:00",
        "Mon Jan _2 15:04:05 MST 2006",
        "02 Jan 06 15:04 -0700",
        "__2 2006",
        "Monday January 2 3:04:05.000 PM",
        "20060102",
        "2006/01/02/15",
        "plain text",
        "",
    ] {
        assert!(gotime::validate_layout(ok).is_ok(), "{ok:?}");
    }
    for ok in ["1502", "01 2", "3 15", "2_2", "Jan2006", ".001"] {
        assert!(gotime::validate_layout(ok).is_ok(), "{ok:?}");
    }
    // "22" formats as "22", which reads back as day 22 and then no second day.
    for bad in ["12006", "22", "05.0000000000", "3 4 5 15 4 5 1 2 22"] {
        assert!(gotime::validate_layout(bad).is_err(), "{bad:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn gotime_never_panics(layout in "[0-9A-Za-z_ :.,+-]{0,16}|\\PC{0,8}", value in prop::collection::vec(any::<u8>(), 0..24)) {
        if let Ok(t) = gotime::parse_bytes(layout.as_bytes(), &value) {
            let _ = t.format_bytes(layout.as_bytes());
        }
        let _ = gotime::validate_layout(&layout);
    }

    #[test]
    fn gotime_round_trips(
        secs in 0i64..253_402_300_799, // years 1970..9999
        nsec in 0i64..1_000_000_000,
        layout in prop::sample::select(vec![
            "2006-01-02T15:04:05.999999999Z07:00",
            "2006-01-02 15:04:05.000000000",
            "Mon Jan _2 15:04:05 2006",
            "Monday, 02-January-2006 03:04:05.000PM",
            "2006 002 15 04 05 .000000000",
            "20060102150405,000000000",
        ]),
    ) {
        let t = gotime::Time { unix: secs, nsec, zone: gotime::Zone::utc() };
        let s = t.format(layout);
        let back = gotime::parse(layout, s.as_bytes()).unwrap();
        prop_assert_eq!(back.format(layout), s);
        if layout.contains("000000000") || layout.contains("999999999") {
            prop_assert_eq!(back.unix, t.unix);
        }
    }
}
