//! Quotes of caller input in messages, cut to a bounded length: a 2 MB token or a 300,000-character
//! `bucket_ranges` must not make a 2 MB message (docs/errors.md, "Messages").

use std::borrow::Cow;

/// Longest quote of a caller's value in a message, in characters; a longer value is cut to this
/// many, followed by `…` and its full length.
pub(crate) const QUOTE_CHARS: usize = 100;

/// `value` for a message: as it is when at most [`QUOTE_CHARS`] characters long, else its first
/// [`QUOTE_CHARS`] characters, then `… (N characters)`, N its length in UTF-16 code units (what
/// JavaScript's `length` says).
pub(crate) fn cut(value: &str) -> Cow<'_, str> {
    let Some((at, _)) = value.char_indices().nth(QUOTE_CHARS) else {
        return Cow::Borrowed(value);
    };
    // Written by hand, not with `format!`: the bucketing module, which has no other use of
    // integer formatting into a new String, would grow by kilobytes.
    let units: usize = value.chars().map(char::len_utf16).sum();
    let mut out = String::with_capacity(at + 32);
    out.push_str(&value[..at]);
    out.push_str("… (");
    let mut digits = [0u8; 20];
    let (mut n, mut i) = (units, digits.len());
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits[i..].iter().for_each(|&d| out.push(char::from(d)));
    out.push_str(" characters)");
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_stay_whole_and_long_ones_are_cut_with_their_length() {
        assert_eq!(cut("abc"), "abc");
        let exact = "x".repeat(QUOTE_CHARS);
        assert_eq!(cut(&exact), exact.as_str());
        let long = "é".repeat(300_000);
        let quoted = cut(&long);
        assert_eq!(
            quoted,
            format!("{}… (300000 characters)", "é".repeat(QUOTE_CHARS))
        );
        assert_eq!(
            cut(&"😀".repeat(200)),
            format!("{}… (400 characters)", "😀".repeat(QUOTE_CHARS))
        );
    }
}
