//! The bucket count N: bounds, default and the `GTC_IMPORT_BUCKETS_DEFAULT` setting.

use super::error::{ErrorKind, ImportBucketError};

/// The number of buckets per dataset per import when nothing else is configured.
pub const DEFAULT_BUCKETS: u32 = 5;
/// The smallest accepted bucket count.
pub const MIN_BUCKETS: u32 = 1;
/// The largest accepted bucket count.
pub const MAX_BUCKETS: u32 = 50;
/// The environment variable holding the default bucket count.
pub const BUCKETS_DEFAULT_ENV: &str = "GTC_IMPORT_BUCKETS_DEFAULT";

/// A validated bucket count N, an integer in [1, 50].
///
/// # Examples
/// ```
/// use partkit::imports::BucketCount;
/// assert_eq!(BucketCount::new(3).unwrap().get(), 3);
/// assert_eq!(BucketCount::default().get(), 5);
/// assert!(BucketCount::new(51).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BucketCount(u32);

impl Default for BucketCount {
    fn default() -> Self {
        BucketCount(DEFAULT_BUCKETS)
    }
}

impl BucketCount {
    /// A bucket count from an integer.
    ///
    /// # Errors
    /// `BUCKETS_INVALID` when `n` is not in [1, 50].
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// assert_eq!(BucketCount::new(0).unwrap_err().code(), "BUCKETS_INVALID");
    /// ```
    pub fn new(n: u32) -> Result<Self, ImportBucketError> {
        if (MIN_BUCKETS..=MAX_BUCKETS).contains(&n) {
            Ok(BucketCount(n))
        } else {
            Err(ImportBucketError(ErrorKind::BucketsInvalid {
                value: n.to_string(),
            }))
        }
    }

    /// A bucket count from a JavaScript number: it must be an integer (no fraction, finite, not
    /// NaN) in [1, 50]. `3.0` is accepted (it is the integer 3 in JavaScript).
    ///
    /// # Errors
    /// `BUCKETS_INVALID` otherwise.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// assert_eq!(BucketCount::from_f64(3.0).unwrap().get(), 3);
    /// let err = BucketCount::from_f64(2.5).unwrap_err();
    /// assert_eq!(err.to_string(), "bucket count must be an integer in [1, 50], got 2.5");
    /// assert!(BucketCount::from_f64(f64::NAN).is_err());
    /// ```
    pub fn from_f64(n: f64) -> Result<Self, ImportBucketError> {
        BucketCount::from_f64_with(n, |n| format!("{n}"))
    }

    /// [`BucketCount::from_f64`], with Rust's `{}` of a number that is not an integer below 1e21
    /// (the shortest decimal that reads back as it, never with an exponent) made by `shortest`:
    /// the wasm bindings make it from JavaScript's `String(n)` ([`display_from_js`]) and so carry
    /// no float printing.
    pub(crate) fn from_f64_with(
        n: f64,
        shortest: impl FnOnce(f64) -> String,
    ) -> Result<Self, ImportBucketError> {
        if n.is_finite()
            && n.fract() == 0.0
            && n >= f64::from(MIN_BUCKETS)
            && n <= f64::from(MAX_BUCKETS)
        {
            // In range and integral, so the conversion is exact.
            Ok(BucketCount(n as u32))
        } else {
            Err(ImportBucketError(ErrorKind::BucketsInvalid {
                value: render_f64(n, shortest),
            }))
        }
    }

    /// The bucket-count error for a value of the wrong type, rendered by the caller (e.g. a
    /// JavaScript string `"3"`).
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// let err = BucketCount::invalid("a string");
    /// assert_eq!(err.to_string(), "bucket count must be an integer in [1, 50], got a string");
    /// ```
    pub fn invalid(rendered: &str) -> ImportBucketError {
        ImportBucketError(ErrorKind::BucketsInvalid {
            value: rendered.to_owned(),
        })
    }

    /// The default bucket count from the value of `GTC_IMPORT_BUCKETS_DEFAULT`: unset, empty or
    /// whitespace-only gives 5; otherwise, after trimming ASCII whitespace, it must be decimal
    /// digits only (no sign, fraction or exponent) with a value in [1, 50].
    ///
    /// # Errors
    /// `BUCKETS_INVALID`, naming the variable, for any other value.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// assert_eq!(BucketCount::from_env_value(None).unwrap().get(), 5);
    /// assert_eq!(BucketCount::from_env_value(Some(" 12\n")).unwrap().get(), 12);
    /// let err = BucketCount::from_env_value(Some("0")).unwrap_err();
    /// assert_eq!(err.code(), "BUCKETS_INVALID");
    /// assert_eq!(err.to_string(), "GTC_IMPORT_BUCKETS_DEFAULT must be an integer in [1, 50], got \"0\"");
    /// ```
    pub fn from_env_value(value: Option<&str>) -> Result<Self, ImportBucketError> {
        let Some(raw) = value else {
            return Ok(BucketCount::default());
        };
        let text = raw.trim_matches(|c: char| c.is_ascii_whitespace());
        if text.is_empty() {
            return Ok(BucketCount::default());
        }
        let bad = || {
            ImportBucketError(ErrorKind::BucketsDefaultInvalid {
                value: raw.to_owned(),
            })
        };
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let digits = text.trim_start_matches('0');
        if digits.len() > 2 {
            return Err(bad());
        }
        let n: u32 = digits
            .bytes()
            .fold(0, |acc, b| acc * 10 + u32::from(b - b'0'));
        BucketCount::new(n).map_err(|_| bad())
    }

    /// The count as an integer in [1, 50].
    ///
    /// # Examples
    /// ```
    /// assert_eq!(partkit::imports::BucketCount::new(7).unwrap().get(), 7);
    /// ```
    pub fn get(self) -> u32 {
        self.0
    }
}

/// Renders a number the way JavaScript's `String(n)` does for the values that matter in messages:
/// `NaN`, `Infinity`, an integer below 1e21 in full (as `{n:.0}` writes it), any other number as
/// `shortest` writes it (Rust's `{}`).
fn render_f64(n: f64, shortest: impl FnOnce(f64) -> String) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if n == 0.0 {
        "0".to_owned()
    } else if n.fract() == 0.0 && n.abs() < 1e21 {
        integer(n)
    } else {
        shortest(n)
    }
}

/// An integral `n` with |`n`| < 1e21 (< 2^70) in full, as `{n:.0}` writes it: |`n`| = `hi`·2^32 +
/// `lo` (both exact), then in base 10^9 with `u64`s (no 128-bit formatting in the module).
fn integer(n: f64) -> String {
    const SHIFT: f64 = 4_294_967_296.0;
    const BASE: u64 = 1_000_000_000;
    let a = n.abs();
    let hi = (a / SHIFT).floor();
    let lo = (a - hi * SHIFT) as u64;
    let hi = hi as u64;
    // |n| = (hi / BASE)·2^32·BASE + ((hi % BASE)·2^32 + lo): the second term < 2^62.
    let low = (hi % BASE) * (1 << 32) + lo;
    let upper = (hi / BASE) * (1 << 32) + low / BASE;
    let sign = if n < 0.0 { "-" } else { "" };
    if upper > 0 {
        format!("{sign}{upper}{:09}", low % BASE)
    } else {
        format!("{sign}{low}")
    }
}

/// Rust's `{}` of a finite `n` from `js`, JavaScript's `String(n)`: the same shortest digits that
/// read back as `n`, written without an exponent (JavaScript writes one below 1e-6 and from 1e21
/// on), and where two such digit strings are equally near `n` the one further from zero (Rust
/// rounds that tie up, JavaScript to an even last digit: `188.96426391601562` in JavaScript is
/// `188.96426391601563` in Rust).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn display_from_js(js: &str, n: f64) -> String {
    let bytes = js.as_bytes();
    let (negative, rest) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let (mantissa, exponent) = match rest.iter().position(|&b| b == b'e') {
        Some(e) => (&rest[..e], &rest[e + 1..]),
        None => (rest, &b""[..]),
    };
    let mut exp: i32 = 0;
    for &b in exponent {
        if b.is_ascii_digit() {
            exp = exp.saturating_mul(10).saturating_add(i32::from(b - b'0'));
        }
    }
    if exponent.first() == Some(&b'-') {
        exp = -exp;
    }
    let dot = mantissa
        .iter()
        .position(|&b| b == b'.')
        .unwrap_or(mantissa.len());
    let mut digits: Vec<u8> = mantissa.iter().copied().filter(|&b| b != b'.').collect();
    // `0.00123` has its significant digits after two leading zeros.
    let lead = digits
        .iter()
        .take_while(|&&b| b == b'0')
        .count()
        .min(digits.len().saturating_sub(1));
    digits.drain(..lead);
    // Digits before the decimal point, and the power of ten of the last digit.
    let point = exp + dot as i32 - lead as i32;
    let last = point - digits.len() as i32;
    let value = digits.iter().fold(0u64, |a, &b| {
        a.wrapping_mul(10).wrapping_add(u64::from(b - b'0'))
    });
    if midway(n, value, last) {
        // JavaScript took the even one, so the last digit is at most 8: no carry.
        if let Some(d) = digits.last_mut() {
            *d += 1;
        }
    }
    let mut out = Vec::with_capacity(digits.len() + 24);
    if negative {
        out.push(b'-');
    }
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + point.unsigned_abs() as usize, b'0');
        out.extend_from_slice(&digits);
    } else if point as usize >= digits.len() {
        out.extend_from_slice(&digits);
        out.resize(out.len() + (point as usize - digits.len()), b'0');
    } else {
        let (int, frac) = digits.split_at(point as usize);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Whether |`n`| is exactly halfway between `d`·10^`p` and (`d` + 1)·10^`p`, for `p` < 0 (only
/// there can two shortest digit strings tie).
fn midway(n: f64, d: u64, p: i32) -> bool {
    let bits = n.to_bits();
    let (exp, frac) = (((bits >> 52) & 0x7ff) as i32, bits & ((1 << 52) - 1));
    // |n| = m·2^e; the midpoint is (2d + 1)·2^(p-1)·5^p with 2d + 1 odd, so they are equal when
    // m·2^(e+1-p) is odd and times 5^-p is 2d + 1.
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp - 1075)
    };
    if p >= 0 || m == 0 {
        return false;
    }
    let zeros = m.trailing_zeros() as i32;
    if e + 1 - p != -zeros {
        return false;
    }
    let target = u128::from(d) * 2 + 1;
    let mut v = u128::from(m >> zeros);
    for _ in 0..p.unsigned_abs() {
        v *= 5;
        if v > target {
            return false;
        }
    }
    v == target
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `display_from_js` against Rust's `{}`, on numbers and their `String(n)` written by Node
    /// (random bit patterns, float32 values, dyadic fractions: among them ties of two shortest
    /// digit strings, e.g. `188.96426391601562`, and exponents both ways). Checked once on 1.3
    /// million such numbers.
    #[test]
    fn display_from_js_is_rusts_display() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000001, "5e-324"),
            (0x0000000000000003, "1.5e-323"),
            (0x0010000000000000, "2.2250738585072014e-308"),
            (0x089e1414cc8963ef, "3.6438391806883495e-267"),
            (0x269eeb1084bba1d0, "1.1692739443343141e-122"),
            (0x2d50abc3a2aba698, "2.0459817724701524e-90"),
            (0x2e01e4e9f804979c, "4.497626938279669e-87"),
            (0x2ee6edebae960324, "9.442423282042669e-83"),
            (0x2fc591b8607061a6, "1.4552766890659158e-78"),
            (0x307e1b103149e221, "4.15996858186098e-75"),
            (0x3decf5017e000000, "2.1069029767367686e-10"),
            (0x3e1ee1fdccda6230, "1.7976143242457607e-9"),
            (0x3e42515c13000000, "8.529895539899357e-9"),
            (0x3e509f2245200000, "1.5480086830443884e-8"),
            (0x3e8421f5f40d8376, "1.5e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x3ebc46fd8a8b9424, "0.0000016854587931377878"),
            (0x3ee4f8b588e368f1, "0.00001"),
            (0x3f1452945a000000, "0.00007752447572784149"),
            (0x3f5c5dc12d213734, "0.001731337212294415"),
            (0x3fb999999999999a, "0.1"),
            (0x3fc136383fa00000, "0.13446715456666425"),
            (0x3fd3333333333333, "0.3"),
            (0x3fd5555555555555, "0.3333333333333333"),
            (0x3fe0000000000000, "0.5"),
            (0x4004000000000000, "2.5"),
            (0x4011666666666666, "4.35"),
            (0x4049400000000000, "50.5"),
            (0x404af26a43400000, "53.89386788010597"),
            (0x4060d78b40000000, "134.73574829101562"),
            (0x4065e00c40000000, "175.00149536132812"),
            (0x40679edb40000000, "188.96426391601562"),
            (0x40880bda20000000, "769.4815063476562"),
            (0x408f3a8c1a866780, "999.3184099674545"),
            (0x40917606c8400000, "1117.5066232681274"),
            (0x40d15fa6a2000000, "17790.603637695312"),
            (0x40d316b8fa000000, "19546.890258789062"),
            (0x4120f98639400000, "556227.1118164062"),
            (0x4135e41b2f200000, "1434651.1840820312"),
            (0x415a6344a767b188, "6917394.615703948"),
            (0x418f0aa2c27fd1bc, "65098840.312411755"),
            (0x42767a2b75860930, "1544623183968.5742"),
            (0x42adc2aa9dd5d220, "16360961665769.062"),
            (0x42b087f1b84c68d0, "18176062016616.812"),
            (0x42bc2adf59b20550, "30970461401605.312"),
            (0x42be4bdc385fa210, "33311166062498.062"),
            (0x42e8ed589fc5f074, "219261385453443.62"),
            (0x42e99538e942bd64, "225029565060587.12"),
            (0x42ebdac025474844, "245010723912258.12"),
            (0x43023ae17dd5a01a, "641411216749571.2"),
            (0x43072a560a826002, "815059187026944.2"),
            (0x4312a565a310d08d, "1312101381714979.2"),
            (0x4314ac2a233a79b5, "1454699128462957.2"),
            (0x4316b2c55ce05df9, "1597252556035966.2"),
            (0x4340000000000001, "9007199254740994"),
            (0x441ac53a7e04bcda, "123456789012345680000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x4450000000000004, "1.1805916207174124e+21"),
            (0x4454542ba12a337c, "1.5e+21"),
            (0x4480f0cf064dd592, "1e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x529365f685656357, "6.174221944011748e+89"),
            (0x5608cdcc92f22bc7, "2.84438583733473e+106"),
            (0x5b64105b354a6060, "1.7801774251285543e+132"),
            (0x6515cc7c81a6f64d, "8.833433153188172e+178"),
            (0x6de18026cd8fa2dc, "1.976876653503766e+221"),
            (0x7181c25598c4d279, "5.782131794859009e+238"),
            (0x7da89a5ad25d9c35, "2.011281654169088e+297"),
            (0x7e37e43c8800759c, "1e+300"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0x8007e93ce8f03b87, "-1.1001718686210504e-308"),
            (0x81aa749ec2ff5c8a, "-1.2345e-300"),
            (0xbc83169e00000000, "-3.311300606745316e-17"),
            (0xbcdd305000000000, "-1.6202994891981182e-15"),
            (0xbd1b83f400000000, "-2.4438621699235386e-14"),
            (0xbd3393e800000000, "-6.955417145015907e-14"),
            (0xbdc753f800000000, "-4.243339013498826e-11"),
            (0xbe7ad7f29abcaf48, "-1e-7"),
            (0xbfcc642000000000, "-0.22180557250976562"),
            (0xbfcddf5000000000, "-0.23337745666503906"),
            (0xbff1acc800000000, "-1.1046829223632812"),
            (0xbffab76800000000, "-1.6697769165039062"),
            (0xc004000000000000, "-2.5"),
            (0xc005f9e400000000, "-2.7470169067382812"),
            (0xc032830100000000, "-18.511734008789062"),
            (0xc06b92ad40000000, "-220.58364868164062"),
            (0xc0867280a0000000, "-718.3128051757812"),
            (0xc2edaf98eaaf3304, "-261120175995288.12"),
            (0xc3161d8f8e22f5c1, "-1556237972454768.2"),
            (0xc31cfbc66055e5c5, "-2039532196559217.2"),
            (0xc44b1ae4d6e2ef50, "-1e+21"),
            (0xd78f8634474412a9, "-6.065029838264354e+113"),
            (0xdb146bcc95fb3740, "-5.662093870186972e+130"),
            (0xe60fe144c3b2a227, "-4.233163895453235e+183"),
            (0xe8e8db001361c73f, "-2.3224648799399345e+197"),
            (0xfaa72fe476f9d3d3, "-6.734292927415364e+282"),
        ];
        for &(bits, js) in cases {
            let n = f64::from_bits(bits);
            assert_eq!(display_from_js(js, n), format!("{n}"), "{js}");
            let err = BucketCount::from_f64_with(n, |n| display_from_js(js, n)).unwrap_err();
            assert_eq!(err, BucketCount::from_f64(n).unwrap_err(), "{js}");
        }
    }

    #[test]
    fn integers_below_1e21_in_full() {
        for n in [
            51.0,
            -3.0,
            9007199254740993.0 * 2.0,
            1152921504606846976.0,
            999999999999999900000.0,
            -1e20,
        ] {
            assert_eq!(render_f64(n, |_| unreachable!()), format!("{n:.0}"));
        }
    }
}
