//! Both UUID types (`imports::Uuid`, `lifecycle::PartitionUuid`) are the `uuid` crate's value
//! with one text form: 36 characters, 8-4-4-4-12 hex digits in any case. These tests pin the
//! forms the crate would take but partkit refuses, and check both parsers against a reference
//! predicate written from RFC 9562's grammar.

use partkit::imports::{normalize_uuid, Uuid};
use partkit::lifecycle::PartitionUuid;
use proptest::prelude::*;

/// The accepted form, independently: hyphens exactly at 8, 13, 18, 23, ASCII hex elsewhere.
fn reference(s: &str) -> Option<[u8; 16]> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut hex = Vec::with_capacity(32);
    for (i, &c) in b.iter().enumerate() {
        if [8, 13, 18, 23].contains(&i) {
            if c != b'-' {
                return None;
            }
        } else if c.is_ascii_hexdigit() {
            hex.push(c);
        } else {
            return None;
        }
    }
    let mut out = [0u8; 16];
    for (o, pair) in out.iter_mut().zip(hex.chunks(2)) {
        *o = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

fn both(s: &str) -> (Option<[u8; 16]>, Option<[u8; 16]>) {
    (
        Uuid::parse(s).map(|u| *u.as_bytes()),
        s.parse::<PartitionUuid>().ok().map(|u| *u.as_bytes()),
    )
}

/// Every form the `uuid` crate's `parse_str` accepts besides the hyphenated one, and near
/// misses of the hyphenated one.
const REFUSED: &[&str] = &[
    "",
    "67e5504410b1426f9247bb680e5fe0c8",
    "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
    "urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8",
    "URN:UUID:67E55044-10B1-426F-9247-BB680E5FE0C8",
    " 67e55044-10b1-426f-9247-bb680e5fe0c8",
    "67e55044-10b1-426f-9247-bb680e5fe0c8 ",
    "67e55044-10b1-426f-9247-bb680e5fe0c8\n",
    "67e55044-10b1-426f-9247-bb680e5fe0c",
    "67e55044-10b1-426f-9247-bb680e5fe0c80",
    "67e5504410b1-426f-9247-bb680e5fe0c8-",
    "67e55044_10b1_426f_9247_bb680e5fe0c8",
    "67e55044-10b1-426f-9247-bb680e5fe0cg",
    "67e5504-410b1-426f-9247-bb680e5fe0c8",
    "+7e55044-10b1-426f-9247-bb680e5fe0c8",
    "67e55044-10b1-426f-9247-bb680e5fe0é",
    "６7e55044-10b1-426f-9247-bb680e5fe0",
    "67e55044-10b1-426f-9247-bb68-e5fe0c8",
];

#[test]
fn the_same_malformed_forms_are_refused() {
    for s in REFUSED {
        assert_eq!(reference(s), None, "{s:?} is malformed");
        assert_eq!(both(s), (None, None), "{s:?}");
        assert_eq!(
            normalize_uuid(s).unwrap_err().code(),
            "UUID_INVALID",
            "{s:?}"
        );
    }
    // ...while the crate itself takes the first five.
    for s in &REFUSED[1..5] {
        assert!(uuid::Uuid::parse_str(s).is_ok(), "{s:?}");
    }
}

#[test]
fn accepted_forms_format_lower_case() {
    let s = "67E55044-10b1-426F-9247-BB680E5FE0C8";
    assert_eq!(normalize_uuid(s).unwrap(), s.to_lowercase());
    assert_eq!(
        s.parse::<PartitionUuid>().unwrap().to_string(),
        s.to_lowercase()
    );
    assert_eq!(
        Uuid::parse("ffffffff-ffff-ffff-ffff-ffffffffffff")
            .unwrap()
            .to_string(),
        "ffffffff-ffff-ffff-ffff-ffffffffffff"
    );
}

proptest! {
    #[test]
    fn parsers_agree_with_the_reference_near_uuids(s in "[0-9a-fA-FgG{}: _-]{30,40}") {
        let want = reference(&s);
        prop_assert_eq!(both(&s), (want, want));
    }

    #[test]
    fn parsers_agree_with_the_reference_on_any_text(s in "\\PC{0,40}") {
        let want = reference(&s);
        prop_assert_eq!(both(&s), (want, want));
    }

    #[test]
    fn format_then_parse_round_trips(bytes in any::<[u8; 16]>()) {
        let u = Uuid::from_bytes(bytes);
        let text = u.to_string();
        prop_assert_eq!(reference(&text), Some(bytes));
        prop_assert_eq!(Uuid::parse(&text), Some(u));
        let p = PartitionUuid::from_bytes(bytes);
        prop_assert_eq!(p.to_string(), text.clone());
        prop_assert_eq!(text.parse::<PartitionUuid>().unwrap(), p);
    }
}
