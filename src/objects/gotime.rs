//! Go's `time` layout language: `time.Parse` and `Time.Format`, ported byte for byte.
//!
//! This is a port of the parts of Go's `src/time/format.go` that the object partitioner
//! needs: the layout tokenizer (`nextStdChunk`), the parser (`time.Parse`, including every
//! range check and the exact `*time.ParseError` messages) and the formatter
//! (`Time.AppendFormat`). Everything works on bytes, like Go strings: a value may be a
//! byte-slice of a key that ends inside a multi-byte character, exactly as Go's
//! `key[:len(layout)]` does.
//!
//! Why hand-written: no Rust crate implements Go's reference-time layouts (`chrono` and `time`
//! use strftime-style or their own format descriptions), and Go's exact parse errors and
//! range checks decide which keys fall back, so they must match byte for byte.
//!
//! The reference time is `Mon Jan 2 15:04:05 MST 2006`. Supported tokens: `2006` `06`
//! `January` `Jan` `01` `1` `Monday` `Mon` `02` `2` `_2` `002` `__2` `15` `03` `3` `04` `4`
//! `05` `5` `PM` `pm` `MST` `Z0700` `Z070000` `Z07` `Z07:00` `Z07:00:00` `-0700` `-070000`
//! `-07` `-07:00` `-07:00:00` and fractional seconds `.0…` `.9…` `,0…` `,9…`.
//!
//! # Time zones
//! Go's `time.Parse` consults the process's local zone (`time.Local`) when the value carries
//! a zone. This port assumes the Go process runs with `time.Local` = UTC (the default in
//! containers: no `TZ`, no `/etc/localtime`, or `/etc/localtime` → `Etc/UTC`). Under that
//! assumption a numeric offset of zero with no zone name yields a time in `Local` (printed as
//! `UTC`), any other offset a fixed zone, and an unknown abbreviation a fixed zone with
//! offset zero (or `GMT±h` hours), exactly as Go does.
//!
//! # Examples
//! ```
//! use partkit::objects::gotime;
//! let t = gotime::parse("2006-01-02", b"2024-02-29").unwrap();
//! assert_eq!(t.format("Monday 02 Jan 2006"), "Thursday 29 Feb 2024");
//! let err = gotime::parse("2006-01-02", b"2023-02-29").unwrap_err();
//! assert_eq!(err.to_string(), r#"parsing time "2023-02-29": day out of range"#);
//! ```

use std::borrow::Cow;
use std::fmt;

/// One element of a layout, as Go's `nextStdChunk` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    ISO8601TZ,
    ISO8601SecondsTZ,
    ISO8601ShortTZ,
    ISO8601ColonTZ,
    ISO8601ColonSecondsTZ,
    NumTZ,
    NumSecondsTz,
    NumShortTZ,
    NumColonTZ,
    NumColonSecondsTZ,
    /// `.000`: digits (Go keeps `n & 0xfff`), separator is `,` when `comma`.
    FracSecond0 {
        digits: usize,
        comma: bool,
    },
    /// `.999`: trailing zeros trimmed.
    FracSecond9 {
        digits: usize,
        comma: bool,
    },
}

/// `nextStdChunk`: the text before the first token, the token, and the text after it.
/// All three are byte slices of `layout`; `None` means no token was found (then `prefix`
/// is the whole layout and `suffix` is empty). Kept in the shape of Go's switch.
#[allow(clippy::collapsible_if, clippy::collapsible_match)]
fn next_std_chunk(layout: &[u8]) -> (&[u8], Option<Std>, &[u8]) {
    let l = layout;
    let n = l.len();
    let at = |i: usize, s: &[u8]| n >= i + s.len() && &l[i..i + s.len()] == s;
    let starts_lower = |i: usize| i < n && l[i].is_ascii_lowercase();
    for i in 0..n {
        let c = l[i];
        let hit = |std: Std, len: usize| (&l[..i], Some(std), &l[i + len..]);
        match c {
            b'J' => {
                if at(i, b"Jan") {
                    if at(i, b"January") {
                        return hit(Std::LongMonth, 7);
                    }
                    if !starts_lower(i + 3) {
                        return hit(Std::Month, 3);
                    }
                }
            }
            b'M' => {
                if n >= i + 3 {
                    if at(i, b"Mon") {
                        if at(i, b"Monday") {
                            return hit(Std::LongWeekDay, 6);
                        }
                        if !starts_lower(i + 3) {
                            return hit(Std::WeekDay, 3);
                        }
                    }
                    if at(i, b"MST") {
                        return hit(Std::TZ, 3);
                    }
                }
            }
            b'0' => {
                if n >= i + 2 && (b'1'..=b'6').contains(&l[i + 1]) {
                    let std = [
                        Std::ZeroMonth,
                        Std::ZeroDay,
                        Std::ZeroHour12,
                        Std::ZeroMinute,
                        Std::ZeroSecond,
                        Std::Year,
                    ][(l[i + 1] - b'1') as usize];
                    return hit(std, 2);
                }
                if n >= i + 3 && l[i + 1] == b'0' && l[i + 2] == b'2' {
                    return hit(Std::ZeroYearDay, 3);
                }
            }
            b'1' => {
                if n >= i + 2 && l[i + 1] == b'5' {
                    return hit(Std::Hour, 2);
                }
                return hit(Std::NumMonth, 1);
            }
            b'2' => {
                if at(i, b"2006") {
                    return hit(Std::LongYear, 4);
                }
                return hit(Std::Day, 1);
            }
            b'_' => {
                if n >= i + 2 && l[i + 1] == b'2' {
                    // _2006 is really a literal _, followed by stdLongYear
                    if n >= i + 5 && &l[i + 1..i + 5] == b"2006" {
                        return (&l[..i + 1], Some(Std::LongYear), &l[i + 5..]);
                    }
                    return hit(Std::UnderDay, 2);
                }
                if n >= i + 3 && l[i + 1] == b'_' && l[i + 2] == b'2' {
                    return hit(Std::UnderYearDay, 3);
                }
            }
            b'3' => return hit(Std::Hour12, 1),
            b'4' => return hit(Std::Minute, 1),
            b'5' => return hit(Std::Second, 1),
            b'P' => {
                if n >= i + 2 && l[i + 1] == b'M' {
                    return hit(Std::PM, 2);
                }
            }
            b'p' => {
                if n >= i + 2 && l[i + 1] == b'm' {
                    return hit(Std::Pm, 2);
                }
            }
            b'-' => {
                if at(i, b"-070000") {
                    return hit(Std::NumSecondsTz, 7);
                }
                if at(i, b"-07:00:00") {
                    return hit(Std::NumColonSecondsTZ, 9);
                }
                if at(i, b"-0700") {
                    return hit(Std::NumTZ, 5);
                }
                if at(i, b"-07:00") {
                    return hit(Std::NumColonTZ, 6);
                }
                if at(i, b"-07") {
                    return hit(Std::NumShortTZ, 3);
                }
            }
            b'Z' => {
                if at(i, b"Z070000") {
                    return hit(Std::ISO8601SecondsTZ, 7);
                }
                if at(i, b"Z07:00:00") {
                    return hit(Std::ISO8601ColonSecondsTZ, 9);
                }
                if at(i, b"Z0700") {
                    return hit(Std::ISO8601TZ, 5);
                }
                if at(i, b"Z07:00") {
                    return hit(Std::ISO8601ColonTZ, 6);
                }
                if at(i, b"Z07") {
                    return hit(Std::ISO8601ShortTZ, 3);
                }
            }
            b'.' | b',' => {
                if i + 1 < n && (l[i + 1] == b'0' || l[i + 1] == b'9') {
                    let ch = l[i + 1];
                    let mut j = i + 1;
                    while j < n && l[j] == ch {
                        j += 1;
                    }
                    // String of digits must end here - only fractional second is all digits.
                    if !is_digit(l, j) {
                        let digits = (j - (i + 1)) & 0xfff;
                        let comma = c == b',';
                        let std = if ch == b'9' {
                            Std::FracSecond9 { digits, comma }
                        } else {
                            Std::FracSecond0 { digits, comma }
                        };
                        return (&l[..i], Some(std), &l[j..]);
                    }
                }
            }
            _ => {}
        }
    }
    (l, None, &[])
}

/// One `nextStdChunk` result, as offsets into the layout: literal text, then a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    /// Literal text before the token.
    prefix: (usize, usize),
    /// The token; `None` for the final chunk.
    std: Option<Std>,
    /// End of the token's text (`layout[prefix.1..std_end]` is Go's `stdstr`).
    std_end: usize,
}

/// A layout split into chunks once (Go re-scans the layout on every call; the result is the
/// same). Reuse one `Layout` to parse and format many values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    text: Vec<u8>,
    chunks: Vec<Chunk>,
}

impl Layout {
    /// Splits `layout` with Go's `nextStdChunk`.
    pub fn new(layout: &[u8]) -> Self {
        let mut chunks = Vec::new();
        let mut pos = 0;
        loop {
            let (prefix, std, suffix) = next_std_chunk(&layout[pos..]);
            let std_end = layout.len() - suffix.len();
            chunks.push(Chunk {
                prefix: (pos, pos + prefix.len()),
                std,
                std_end,
            });
            if std.is_none() {
                break;
            }
            pos = std_end;
        }
        Layout {
            text: layout.to_vec(),
            chunks,
        }
    }

    /// The layout text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }

    /// Whether the layout has any layout element (`2006`, `01`, `Jan`, `15`, …): without one,
    /// parsing only matches the literal text and yields no date.
    pub fn has_elements(&self) -> bool {
        self.chunks.iter().any(|c| c.std.is_some())
    }
}

fn is_digit(s: &[u8], i: usize) -> bool {
    i < s.len() && s[i].is_ascii_digit()
}

const LONG_DAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const SHORT_DAY_NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const SHORT_MONTH_NAMES: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const LONG_MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Go's `match`: ASCII case-insensitive comparison of equal-length byte strings.
fn match_fold(s1: &[u8], s2: &[u8]) -> bool {
    s1.iter().zip(s2).all(|(&a, &b)| {
        if a == b {
            return true;
        }
        let (a, b) = (a | 0x20, b | 0x20);
        a == b && a.is_ascii_lowercase()
    })
}

/// Go's `lookup`: index of the first table entry that prefixes `val` (case-insensitively).
fn lookup<'a>(tab: &[&str], val: &'a [u8]) -> Result<(usize, &'a [u8]), ()> {
    for (i, v) in tab.iter().enumerate() {
        let v = v.as_bytes();
        if val.len() >= v.len() && match_fold(&val[..v.len()], v) {
            return Ok((i, &val[v.len()..]));
        }
    }
    Err(())
}

/// Go's `appendInt`: decimal `x`, zero-padded to `width` digits (sign excluded).
fn append_int(b: &mut Vec<u8>, x: i64, width: usize) {
    let mut u = x.unsigned_abs();
    if x < 0 {
        b.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (u % 10) as u8;
        n += 1;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    for _ in n..width {
        b.push(b'0');
    }
    b.extend(digits[..n].iter().rev());
}

/// Go's `atoi` (time package flavour): optional sign, then `leadingInt`, nothing left over.
fn atoi(s: &[u8]) -> Result<i64, ()> {
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (q, rem) = leading_int(s)?;
    if !rem.is_empty() {
        return Err(());
    }
    // Go: x = int(q); q <= 1<<63, so int(q) wraps only for exactly 1<<63.
    let x = q as i64;
    Ok(if neg { x.wrapping_neg() } else { x })
}

/// Go's `leadingInt`: consumes the leading `[0-9]*`, failing on overflow past 1<<63.
fn leading_int(s: &[u8]) -> Result<(u64, &[u8]), ()> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if !c.is_ascii_digit() {
            break;
        }
        if x > (1u64 << 63) / 10 {
            return Err(());
        }
        x = x * 10 + u64::from(c - b'0');
        if x > 1u64 << 63 {
            return Err(());
        }
        i += 1;
    }
    Ok((x, &s[i..]))
}

/// Go's `getnum`: one or two digits (`fixed` forces two).
fn getnum(s: &[u8], fixed: bool) -> Result<(i64, &[u8]), ()> {
    if !is_digit(s, 0) {
        return Err(());
    }
    if !is_digit(s, 1) {
        if fixed {
            return Err(());
        }
        return Ok((i64::from(s[0] - b'0'), &s[1..]));
    }
    Ok((
        i64::from(s[0] - b'0') * 10 + i64::from(s[1] - b'0'),
        &s[2..],
    ))
}

/// Go's `getnum3`: one to three digits (`fixed` forces three).
fn getnum3(s: &[u8], fixed: bool) -> Result<(i64, &[u8]), ()> {
    let mut n = 0i64;
    let mut i = 0;
    while i < 3 && is_digit(s, i) {
        n = n * 10 + i64::from(s[i] - b'0');
        i += 1;
    }
    if i == 0 || (fixed && i != 3) {
        return Err(());
    }
    Ok((n, &s[i..]))
}

fn cutspace(mut s: &[u8]) -> &[u8] {
    while let [b' ', rest @ ..] = s {
        s = rest;
    }
    s
}

/// Go's `skip`: removes `prefix` from `value`, runs of spaces being equivalent. On failure
/// returns the value as far as it had been consumed (Go reports that remainder).
fn skip<'a>(mut value: &'a [u8], mut prefix: &[u8]) -> Result<&'a [u8], &'a [u8]> {
    while let Some(&p0) = prefix.first() {
        if p0 == b' ' {
            if !value.is_empty() && value[0] != b' ' {
                return Err(value);
            }
            prefix = cutspace(prefix);
            value = cutspace(value);
            continue;
        }
        if value.is_empty() || value[0] != p0 {
            return Err(value);
        }
        prefix = &prefix[1..];
        value = &value[1..];
    }
    Ok(value)
}

fn comma_or_period(b: u8) -> bool {
    b == b'.' || b == b','
}

/// Go's `parseNanoseconds`: `value[0]` is the separator, `value[1..nbytes]` the digits.
/// Returns (ns, range error). Callers guarantee `nbytes <= value.len()`.
fn parse_nanoseconds(value: &[u8], nbytes: usize) -> Result<(i64, Option<&'static str>), ()> {
    if value.is_empty() || !comma_or_period(value[0]) {
        return Err(());
    }
    let nbytes = nbytes.min(10).min(value.len());
    let mut ns = atoi(&value[1..nbytes])?;
    if ns < 0 {
        return Ok((ns, Some("fractional second")));
    }
    for _ in 0..10usize.saturating_sub(nbytes) {
        ns = ns.wrapping_mul(10);
    }
    Ok((ns, None))
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start of `value`.
fn parse_time_zone(value: &[u8]) -> Option<usize> {
    if value.len() < 3 {
        return None;
    }
    if value.len() >= 4 && (&value[..4] == b"ChST" || &value[..4] == b"MeST") {
        return Some(4);
    }
    if &value[..3] == b"GMT" {
        return Some(parse_gmt(value));
    }
    if value[0] == b'+' || value[0] == b'-' {
        let n = parse_signed_offset(value);
        return if n > 0 { Some(n) } else { None };
    }
    let mut n_upper = 0;
    while n_upper < 6 {
        if n_upper >= value.len() || !value[n_upper].is_ascii_uppercase() {
            break;
        }
        n_upper += 1;
    }
    match n_upper {
        5 if value[4] == b'T' => Some(5),
        4 if value[3] == b'T' || &value[..4] == b"WITA" => Some(4),
        3 => Some(3),
        _ => None,
    }
}

fn parse_gmt(value: &[u8]) -> usize {
    let rest = &value[3..];
    if rest.is_empty() {
        return 3;
    }
    3 + parse_signed_offset(rest)
}

/// Go's `parseSignedOffset`: `+h`/`-h` with h in 0..=23; 0 when there is none.
fn parse_signed_offset(value: &[u8]) -> usize {
    let sign = value[0];
    if sign != b'-' && sign != b'+' {
        return 0;
    }
    match leading_int(&value[1..]) {
        Ok((x, rem)) if rem.len() != value.len() - 1 && x <= 23 => value.len() - rem.len(),
        _ => 0,
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days before the start of month `m` (1-based; `m` = 13 gives 365) in a non-leap year.
fn days_before(m: i64) -> i64 {
    const DB: [i64; 13] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];
    DB[(m.clamp(1, 13) - 1) as usize]
}

fn days_in(month: i64, year: i64) -> i64 {
    if month == 2 && is_leap(year) {
        return 29;
    }
    days_before(month + 1) - days_before(month)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (any year).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A time zone as Go's `Location` reports it for one instant: abbreviation and offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zone {
    /// Abbreviation printed by the `MST` token (`""` prints a numeric offset instead).
    pub name: Cow<'static, str>,
    /// Seconds east of UTC.
    pub offset: i64,
}

impl Zone {
    /// UTC (and `time.Local` under the UTC assumption).
    pub fn utc() -> Self {
        Zone {
            name: Cow::Borrowed("UTC"),
            offset: 0,
        }
    }
}

/// A point in time with its zone, as Go's `time.Time` holds it after `time.Parse`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Time {
    /// Seconds since 1970-01-01T00:00:00Z (the instant).
    pub unix: i64,
    /// Nanoseconds within the second, `0..1_000_000_000`.
    pub nsec: i64,
    /// The zone the time is displayed in.
    pub zone: Zone,
}

impl Time {
    /// A UTC time from civil fields (Go's `time.Date(..., time.UTC)` for in-range fields).
    pub fn utc(year: i64, month: i64, day: i64, hour: i64, min: i64, sec: i64, nsec: i64) -> Self {
        let unix = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec;
        Time {
            unix,
            nsec,
            zone: Zone::utc(),
        }
    }

    /// Go's `Time.Format(layout)`.
    ///
    /// # Examples
    /// ```
    /// use partkit::objects::gotime::Time;
    /// let t = Time::utc(2006, 1, 2, 15, 4, 5, 0);
    /// assert_eq!(t.format("Mon Jan _2 15:04:05 MST 2006"), "Mon Jan  2 15:04:05 UTC 2006");
    /// assert_eq!(t.format("2006-01-02T15:04:05Z07:00"), "2006-01-02T15:04:05Z");
    /// ```
    pub fn format(&self, layout: &str) -> String {
        let bytes = self.format_bytes(layout.as_bytes());
        // Every byte comes from the (UTF-8) layout, split at ASCII bytes, or is ASCII.
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// [`Time::format`] on raw bytes.
    pub fn format_bytes(&self, layout: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(layout.len() + 10);
        self.format_into(layout, &mut b);
        b
    }

    /// [`Time::format_bytes`], appending to `b`.
    pub fn format_into(&self, layout: &[u8], b: &mut Vec<u8>) {
        self.format_layout(&Layout::new(layout), b);
    }

    /// Formats with a pre-split [`Layout`], appending to `b`.
    pub fn format_layout(&self, layout: &Layout, b: &mut Vec<u8>) {
        let abs = self.unix + self.zone.offset;
        let days = abs.div_euclid(86_400);
        let secs = abs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        let yday = days - days_from_civil(year, 1, 1) + 1;
        let weekday = (days + 4).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
        let (hour, min, sec) = (secs / 3600, secs / 60 % 60, secs % 60);
        let offset = self.zone.offset;
        for chunk in &layout.chunks {
            b.extend_from_slice(&layout.text[chunk.prefix.0..chunk.prefix.1]);
            let Some(std) = chunk.std else { break };
            match std {
                Std::Year => append_int(b, year.abs() % 100, 2),
                Std::LongYear => append_int(b, year, 4),
                Std::Month => {
                    b.extend_from_slice(&LONG_MONTH_NAMES[(month - 1) as usize].as_bytes()[..3])
                }
                Std::LongMonth => {
                    b.extend_from_slice(LONG_MONTH_NAMES[(month - 1) as usize].as_bytes())
                }
                Std::NumMonth => append_int(b, month, 0),
                Std::ZeroMonth => append_int(b, month, 2),
                Std::WeekDay => b.extend_from_slice(&LONG_DAY_NAMES[weekday].as_bytes()[..3]),
                Std::LongWeekDay => b.extend_from_slice(LONG_DAY_NAMES[weekday].as_bytes()),
                Std::Day => append_int(b, day, 0),
                Std::UnderDay => {
                    if day < 10 {
                        b.push(b' ');
                    }
                    append_int(b, day, 0);
                }
                Std::ZeroDay => append_int(b, day, 2),
                Std::UnderYearDay => {
                    if yday < 100 {
                        b.push(b' ');
                        if yday < 10 {
                            b.push(b' ');
                        }
                    }
                    append_int(b, yday, 0);
                }
                Std::ZeroYearDay => append_int(b, yday, 3),
                Std::Hour => append_int(b, hour, 2),
                Std::Hour12 | Std::ZeroHour12 => {
                    let hr = match hour % 12 {
                        0 => 12,
                        h => h,
                    };
                    append_int(b, hr, if std == Std::Hour12 { 0 } else { 2 });
                }
                Std::Minute => append_int(b, min, 0),
                Std::ZeroMinute => append_int(b, min, 2),
                Std::Second => append_int(b, sec, 0),
                Std::ZeroSecond => append_int(b, sec, 2),
                Std::PM => b.extend_from_slice(if hour >= 12 { b"PM" } else { b"AM" }),
                Std::Pm => b.extend_from_slice(if hour >= 12 { b"pm" } else { b"am" }),
                Std::ISO8601TZ
                | Std::ISO8601ColonTZ
                | Std::ISO8601SecondsTZ
                | Std::ISO8601ShortTZ
                | Std::ISO8601ColonSecondsTZ
                | Std::NumTZ
                | Std::NumColonTZ
                | Std::NumSecondsTz
                | Std::NumShortTZ
                | Std::NumColonSecondsTZ => {
                    let iso = matches!(
                        std,
                        Std::ISO8601TZ
                            | Std::ISO8601ColonTZ
                            | Std::ISO8601SecondsTZ
                            | Std::ISO8601ShortTZ
                            | Std::ISO8601ColonSecondsTZ
                    );
                    if offset == 0 && iso {
                        b.push(b'Z');
                        continue;
                    }
                    let mut zone = offset / 60;
                    let mut absoffset = offset;
                    if zone < 0 {
                        b.push(b'-');
                        zone = -zone;
                        absoffset = -absoffset;
                    } else {
                        b.push(b'+');
                    }
                    append_int(b, zone / 60, 2);
                    if matches!(
                        std,
                        Std::ISO8601ColonTZ
                            | Std::NumColonTZ
                            | Std::ISO8601ColonSecondsTZ
                            | Std::NumColonSecondsTZ
                    ) {
                        b.push(b':');
                    }
                    if std != Std::NumShortTZ && std != Std::ISO8601ShortTZ {
                        append_int(b, zone % 60, 2);
                    }
                    if matches!(
                        std,
                        Std::ISO8601SecondsTZ
                            | Std::NumSecondsTz
                            | Std::NumColonSecondsTZ
                            | Std::ISO8601ColonSecondsTZ
                    ) {
                        if std == Std::NumColonSecondsTZ || std == Std::ISO8601ColonSecondsTZ {
                            b.push(b':');
                        }
                        append_int(b, absoffset % 60, 2);
                    }
                }
                Std::TZ => {
                    if !self.zone.name.is_empty() {
                        b.extend_from_slice(self.zone.name.as_bytes());
                        continue;
                    }
                    let mut zone = offset / 60;
                    if zone < 0 {
                        b.push(b'-');
                        zone = -zone;
                    } else {
                        b.push(b'+');
                    }
                    append_int(b, zone / 60, 2);
                    append_int(b, zone % 60, 2);
                }
                Std::FracSecond0 { digits, comma } => {
                    append_nano(b, self.nsec, digits, comma, false)
                }
                Std::FracSecond9 { digits, comma } => {
                    append_nano(b, self.nsec, digits, comma, true)
                }
            }
        }
    }
}

/// Go's `appendNano`.
fn append_nano(b: &mut Vec<u8>, nanosec: i64, n: usize, comma: bool, trim: bool) {
    if trim && (n == 0 || nanosec == 0) {
        return;
    }
    let dot = if comma { b',' } else { b'.' };
    b.push(dot);
    let start = b.len();
    append_int(b, nanosec, 9);
    if n < 9 {
        b.truncate(start + n);
    }
    if trim {
        while b.last() == Some(&b'0') {
            b.pop();
        }
        if b.last() == Some(&dot) {
            b.pop();
        }
    }
}

/// Go's `*time.ParseError`. `Display` is Go's `Error()` verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The layout being parsed with.
    pub layout: Vec<u8>,
    /// The whole value.
    pub value: Vec<u8>,
    /// The layout element that failed.
    pub layout_elem: Vec<u8>,
    /// The value remainder at the failure.
    pub value_elem: Vec<u8>,
    /// A message like `": month out of range"`; empty for "cannot parse" errors.
    pub message: String,
}

/// Go's `time.quote`: every byte >= 0x80 or < 0x20 as `\xNN`, `"` and `\` escaped.
fn quote(s: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &c in s {
        if !(b' '..0x80).contains(&c) {
            out.push_str("\\x");
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 0xf) as usize] as char);
        } else {
            if c == b'"' || c == b'\\' {
                out.push('\\');
            }
            out.push(c as char);
        }
    }
    out.push('"');
    out
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(
                f,
                "parsing time {} as {}: cannot parse {} as {}",
                quote(&self.value),
                quote(&self.layout),
                quote(&self.value_elem),
                quote(&self.layout_elem)
            )
        } else {
            write!(f, "parsing time {}{}", quote(&self.value), self.message)
        }
    }
}

impl std::error::Error for ParseError {}

/// Go's `time.Parse(layout, value)` (with `time.Local` = UTC, see the module docs).
///
/// # Errors
/// A [`ParseError`] whose `Display` is Go's message, e.g.
/// `parsing time "x" as "2006-01-02": cannot parse "x" as "2006"`.
///
/// # Examples
/// ```
/// use partkit::objects::gotime;
/// let t = gotime::parse("Jan _2 3:04pm", b"Feb  3 4:05pm").unwrap();
/// assert_eq!(t.format("2006-01-02 15:04"), "0000-02-03 16:05");
/// assert_eq!(
///     gotime::parse("2006-01-02", b"2024-1-02").unwrap_err().to_string(),
///     r#"parsing time "2024-1-02" as "2006-01-02": cannot parse "1-02" as "01""#
/// );
/// ```
pub fn parse(layout: &str, value: &[u8]) -> Result<Time, ParseError> {
    parse_bytes(layout.as_bytes(), value)
}

/// [`parse`] with the layout as bytes.
///
/// # Errors
/// As [`parse`].
pub fn parse_bytes(layout: &[u8], value: &[u8]) -> Result<Time, ParseError> {
    parse_layout(&Layout::new(layout), value)
}

/// [`parse`] with a pre-split [`Layout`].
///
/// # Errors
/// As [`parse`].
pub fn parse_layout(lay: &Layout, value: &[u8]) -> Result<Time, ParseError> {
    let (alayout, avalue) = (&lay.text[..], value);
    let err = |layout_elem: &[u8], value_elem: &[u8], message: String| ParseError {
        layout: alayout.to_vec(),
        value: avalue.to_vec(),
        layout_elem: layout_elem.to_vec(),
        value_elem: value_elem.to_vec(),
        message,
    };
    let mut value = value;
    let mut am_set = false;
    let mut pm_set = false;

    let mut year: i64 = 0;
    let mut month: i64 = -1;
    let mut day: i64 = -1;
    let mut yday: i64 = -1;
    let mut hour: i64 = 0;
    let mut min: i64 = 0;
    let mut sec: i64 = 0;
    let mut nsec: i64 = 0;
    let mut z_utc = false;
    let mut zone_offset: i64 = -1;
    let mut zone_name: &[u8] = b"";

    for (k, chunk) in lay.chunks.iter().enumerate() {
        let prefix = &lay.text[chunk.prefix.0..chunk.prefix.1];
        let stdstr = &lay.text[chunk.prefix.1..chunk.std_end];
        let std = chunk.std;
        // Go's `nextStdChunk(layout)` on the rest of the layout: the next chunk's token.
        let next_std = lay.chunks.get(k + 1).and_then(|c| c.std);
        value = match skip(value, prefix) {
            Ok(v) => v,
            Err(v) => return Err(err(prefix, v, String::new())),
        };
        let Some(std) = std else {
            if !value.is_empty() {
                return Err(err(b"", value, format!(": extra text: {}", quote(value))));
            }
            break;
        };
        let hold = value;
        let mut range_err: Option<&'static str> = None;
        // `Ok(())` = parsed, `Err(())` = Go's errBad.
        let res: Result<(), ()> = (|| {
            match std {
                Std::Year => {
                    if value.len() < 2 {
                        return Err(());
                    }
                    let p = &value[..2];
                    value = &value[2..];
                    year = atoi(p)?;
                    year += if year >= 69 { 1900 } else { 2000 };
                }
                Std::LongYear => {
                    if value.len() < 4 || !is_digit(value, 0) {
                        return Err(());
                    }
                    let p = &value[..4];
                    value = &value[4..];
                    year = atoi(p)?;
                }
                Std::Month | Std::LongMonth => {
                    let tab = if std == Std::Month {
                        &SHORT_MONTH_NAMES
                    } else {
                        &LONG_MONTH_NAMES
                    };
                    match lookup(tab, value) {
                        Ok((i, rest)) => {
                            month = i as i64 + 1;
                            value = rest;
                        }
                        Err(()) => return Err(()),
                    }
                }
                Std::NumMonth | Std::ZeroMonth => {
                    let (m, rest) = getnum(value, std == Std::ZeroMonth)?;
                    month = m;
                    value = rest;
                    if m <= 0 || 12 < m {
                        range_err = Some("month");
                    }
                }
                Std::WeekDay | Std::LongWeekDay => {
                    let tab: &[&str] = if std == Std::WeekDay {
                        &SHORT_DAY_NAMES
                    } else {
                        &LONG_DAY_NAMES
                    };
                    let (_, rest) = lookup(tab, value)?;
                    value = rest;
                }
                Std::Day | Std::UnderDay | Std::ZeroDay => {
                    if std == Std::UnderDay && value.first() == Some(&b' ') {
                        value = &value[1..];
                    }
                    let (d, rest) = getnum(value, std == Std::ZeroDay)?;
                    day = d;
                    value = rest;
                }
                Std::UnderYearDay | Std::ZeroYearDay => {
                    for _ in 0..2 {
                        if std == Std::UnderYearDay && value.first() == Some(&b' ') {
                            value = &value[1..];
                        }
                    }
                    let (d, rest) = getnum3(value, std == Std::ZeroYearDay)?;
                    yday = d;
                    value = rest;
                }
                Std::Hour => {
                    let (h, rest) = getnum(value, false)?;
                    hour = h;
                    value = rest;
                    if !(0..24).contains(&hour) {
                        range_err = Some("hour");
                    }
                }
                Std::Hour12 | Std::ZeroHour12 => {
                    let (h, rest) = getnum(value, std == Std::ZeroHour12)?;
                    hour = h;
                    value = rest;
                    if !(0..=12).contains(&hour) {
                        range_err = Some("hour");
                    }
                }
                Std::Minute | Std::ZeroMinute => {
                    let (m, rest) = getnum(value, std == Std::ZeroMinute)?;
                    min = m;
                    value = rest;
                    if !(0..60).contains(&min) {
                        range_err = Some("minute");
                    }
                }
                Std::Second | Std::ZeroSecond => {
                    let (s, rest) = getnum(value, std == Std::ZeroSecond)?;
                    sec = s;
                    value = rest;
                    if !(0..60).contains(&sec) {
                        range_err = Some("second");
                        return Ok(());
                    }
                    // A fractional second in the value but not in the layout?
                    if value.len() >= 2 && comma_or_period(value[0]) && is_digit(value, 1) {
                        if matches!(
                            next_std,
                            Some(Std::FracSecond0 { .. } | Std::FracSecond9 { .. })
                        ) {
                            return Ok(());
                        }
                        let mut n = 2;
                        while n < value.len() && is_digit(value, n) {
                            n += 1;
                        }
                        let r = parse_nanoseconds(value, n);
                        value = &value[n..];
                        let (ns, re) = r?;
                        nsec = ns;
                        range_err = re;
                    }
                }
                Std::PM | Std::Pm => {
                    if value.len() < 2 {
                        return Err(());
                    }
                    let p = &value[..2];
                    value = &value[2..];
                    let (pm, am): (&[u8], &[u8]) = if std == Std::PM {
                        (b"PM", b"AM")
                    } else {
                        (b"pm", b"am")
                    };
                    if p == pm {
                        pm_set = true;
                    } else if p == am {
                        am_set = true;
                    } else {
                        return Err(());
                    }
                }
                Std::ISO8601TZ
                | Std::ISO8601ShortTZ
                | Std::ISO8601ColonTZ
                | Std::ISO8601SecondsTZ
                | Std::ISO8601ColonSecondsTZ
                | Std::NumTZ
                | Std::NumShortTZ
                | Std::NumColonTZ
                | Std::NumSecondsTz
                | Std::NumColonSecondsTZ => {
                    let iso = matches!(
                        std,
                        Std::ISO8601TZ
                            | Std::ISO8601ShortTZ
                            | Std::ISO8601ColonTZ
                            | Std::ISO8601SecondsTZ
                            | Std::ISO8601ColonSecondsTZ
                    );
                    if iso && value.first() == Some(&b'Z') {
                        value = &value[1..];
                        z_utc = true;
                        return Ok(());
                    }
                    let (sign, hh, mm, ss): (&[u8], &[u8], &[u8], &[u8]);
                    if std == Std::ISO8601ColonTZ || std == Std::NumColonTZ {
                        if value.len() < 6 || value[3] != b':' {
                            return Err(());
                        }
                        (sign, hh, mm, ss) = (&value[0..1], &value[1..3], &value[4..6], b"00");
                        value = &value[6..];
                    } else if std == Std::NumShortTZ || std == Std::ISO8601ShortTZ {
                        if value.len() < 3 {
                            return Err(());
                        }
                        (sign, hh, mm, ss) = (&value[0..1], &value[1..3], b"00", b"00");
                        value = &value[3..];
                    } else if std == Std::ISO8601ColonSecondsTZ || std == Std::NumColonSecondsTZ {
                        if value.len() < 9 || value[3] != b':' || value[6] != b':' {
                            return Err(());
                        }
                        (sign, hh, mm, ss) =
                            (&value[0..1], &value[1..3], &value[4..6], &value[7..9]);
                        value = &value[9..];
                    } else if std == Std::ISO8601SecondsTZ || std == Std::NumSecondsTz {
                        if value.len() < 7 {
                            return Err(());
                        }
                        (sign, hh, mm, ss) =
                            (&value[0..1], &value[1..3], &value[3..5], &value[5..7]);
                        value = &value[7..];
                    } else {
                        if value.len() < 5 {
                            return Err(());
                        }
                        (sign, hh, mm, ss) = (&value[0..1], &value[1..3], &value[3..5], b"00");
                        value = &value[5..];
                    }
                    let (mut hr, mut mi, mut se) = (0, 0, 0);
                    let mut e: Result<(), ()> = Ok(());
                    match getnum(hh, true) {
                        Ok((h, _)) => {
                            hr = h;
                            match getnum(mm, true) {
                                Ok((m, _)) => {
                                    mi = m;
                                    match getnum(ss, true) {
                                        Ok((s, _)) => se = s,
                                        Err(()) => e = Err(()),
                                    }
                                }
                                Err(()) => e = Err(()),
                            }
                        }
                        Err(()) => e = Err(()),
                    }
                    if hr > 24 {
                        range_err = Some("time zone offset hour");
                    }
                    if mi > 60 {
                        range_err = Some("time zone offset minute");
                    }
                    if se > 60 {
                        range_err = Some("time zone offset second");
                    }
                    zone_offset = (hr * 60 + mi) * 60 + se;
                    match sign[0] {
                        b'+' => {}
                        b'-' => zone_offset = -zone_offset,
                        _ => e = Err(()),
                    }
                    return e;
                }
                Std::TZ => {
                    if value.len() >= 3 && &value[..3] == b"UTC" {
                        z_utc = true;
                        value = &value[3..];
                        return Ok(());
                    }
                    let n = parse_time_zone(value).ok_or(())?;
                    zone_name = &value[..n];
                    value = &value[n..];
                }
                Std::FracSecond0 { digits, .. } => {
                    let ndigit = 1 + digits;
                    if value.len() < ndigit {
                        return Err(());
                    }
                    let r = parse_nanoseconds(value, ndigit);
                    value = &value[ndigit..];
                    let (ns, re) = r?;
                    nsec = ns;
                    range_err = re;
                }
                Std::FracSecond9 { .. } => {
                    if value.len() < 2 || !comma_or_period(value[0]) || !value[1].is_ascii_digit() {
                        return Ok(()); // fractional second omitted
                    }
                    let mut i = 0;
                    while i + 1 < value.len() && value[i + 1].is_ascii_digit() {
                        i += 1;
                    }
                    let r = parse_nanoseconds(value, 1 + i);
                    value = &value[1 + i..];
                    let (ns, re) = r?;
                    nsec = ns;
                    range_err = re;
                }
            }
            Ok(())
        })();
        if let Some(what) = range_err {
            return Err(err(stdstr, value, format!(": {what} out of range")));
        }
        if res.is_err() {
            return Err(err(stdstr, hold, String::new()));
        }
    }
    if pm_set && hour < 12 {
        hour += 12;
    } else if am_set && hour == 12 {
        hour = 0;
    }

    if yday >= 0 {
        let mut d = 0;
        let mut m = 0;
        if is_leap(year) {
            if yday == 31 + 29 {
                m = 2;
                d = 29;
            } else if yday > 31 + 29 {
                yday -= 1;
            }
        }
        if !(1..=365).contains(&yday) {
            return Err(err(b"", value, ": day-of-year out of range".to_owned()));
        }
        if m == 0 {
            m = (yday - 1) / 31 + 1;
            if days_before(m + 1) < yday {
                m += 1;
            }
            d = yday - days_before(m);
        }
        if month >= 0 && month != m {
            return Err(err(
                b"",
                value,
                ": day-of-year does not match month".to_owned(),
            ));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(err(
                b"",
                value,
                ": day-of-year does not match day".to_owned(),
            ));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(err(b"", value, ": day out of range".to_owned()));
    }

    let mut t = Time::utc(year, month, day, hour, min, sec, nsec);
    if z_utc {
        return Ok(t);
    }
    // Zone names are ASCII (parseTimeZone only accepts letters, digits and signs).
    let zone_name: Cow<'static, str> = if zone_name.is_empty() {
        Cow::Borrowed("")
    } else {
        Cow::Owned(String::from_utf8_lossy(zone_name).into_owned())
    };
    if zone_offset != -1 {
        t.unix -= zone_offset;
        // Local (= UTC) is used when it has this offset and (no name or the same name).
        if zone_offset == 0 && (zone_name.is_empty() || zone_name == "UTC") {
            return Ok(t);
        }
        t.zone = Zone {
            name: zone_name,
            offset: zone_offset,
        };
        return Ok(t);
    }
    if !zone_name.is_empty() {
        // Local (= UTC) knows no abbreviation but "UTC", which was handled above:
        // a fabricated zone with offset 0, or GMT's hour offset. The instant is NOT shifted.
        let mut offset = 0;
        if zone_name.len() > 3 && zone_name.starts_with("GMT") {
            offset = atoi(&zone_name.as_bytes()[3..]).unwrap_or(0) * 3600;
        }
        t.zone = Zone {
            name: zone_name,
            offset,
        };
        return Ok(t);
    }
    Ok(t)
}

/// The validation Go's partitioner applies to a date layout: format the reference time
/// 2006-01-02T15:04:05Z with the layout and parse the result back with the same layout.
///
/// # Errors
/// The parse error of the round trip (the partitioner reports `invalid date format: …`).
///
/// # Examples
/// ```
/// use partkit::objects::gotime;
/// assert!(gotime::validate_layout("2006-01-02").is_ok());
/// assert!(gotime::validate_layout("no tokens at all").is_ok()); // Go is permissive
/// assert!(gotime::validate_layout("12006").is_err()); // "1"+"2006" reads back as month 12, year "006"
/// ```
pub fn validate_layout(layout: &str) -> Result<(), ParseError> {
    let reference = Time::utc(2006, 1, 2, 15, 4, 5, 0);
    let s = reference.format_bytes(layout.as_bytes());
    parse_bytes(layout.as_bytes(), &s).map(|_| ())
}

#[cfg(test)]
mod tests;
