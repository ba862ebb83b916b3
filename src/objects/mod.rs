//! Object-store key partitioning with exact parity with Go.
//!
//! A port of the S3 input source partitioner of Bacalhau (`pkg/s3/partitioning.go`): given a
//! bucket listing, the number of partitions N and a partition index, pick the objects of that
//! partition exactly as the Go code does, so a Node worker and a Go worker can split one
//! listing between them. Where the Go code and its documentation disagree, this follows the
//! code (see docs/objects.md): the `object` type hashes the untrimmed key, only one leading `/` is
//! trimmed, substrings count code points, the date prefix counts UTF-8 bytes.
//!
//! Partition types: `""`/`"none"` (no partitioning: every partition gets every object),
//! `"object"` (FNV-1a of the full key), `"regex"` (Go RE2 syntax, see [`goregex`]),
//! `"substring"` (code points `[start, end)` of the trimmed key), `"date"` (Go time layout,
//! see [`gotime`]). Keys that a strategy cannot place (no regex match, key too short,
//! unparsable date) fall back to partition 0; [`ObjectPartitioner::stats`] counts them.
//!
//! # Examples
//! ```
//! use partkit::objects::{ObjectPartitioner, PartitionConfig, Assignment};
//! let p = ObjectPartitioner::new(4, "prefix/", &PartitionConfig::regex(r"user(\d+)")).unwrap();
//! assert_eq!(p.assign("prefix/user123/file1.txt", false), Assignment::Hashed(3));
//! assert_eq!(p.assign("prefix/invalid/file5.txt", false), Assignment::Fallback);
//! assert_eq!(p.assign("prefix/userdir/", true), Assignment::Directory);
//! ```

mod error;
mod fnv;
pub mod gomatch;
pub mod goregex;
pub mod gotime;
pub mod lines;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::packed::{is_ascii_utf16, push_utf8, Utf16Batch};
use error::ErrorKind;
pub use error::PartitionError;
pub use fnv::fnv1a32;
use fnv::{fnv1a32_units, fnv1a32_update, fnv1a32_x4};

/// ASCII Unit Separator: joins regex capture groups before hashing (as Go does).
pub const CAPTURE_GROUP_DELIMITER: u8 = 0x1F;

/// The partition every unplaceable key goes to.
pub const FALLBACK_PARTITION: u32 = 0;

/// The longest regex pattern accepted, in UTF-8 bytes (Go has no such bound). Compiling costs
/// time and memory in proportion to the pattern (up to about 1.4 KB of wasm memory per
/// character while it parses, about 15 to 30 bytes kept while the partitioner lives); 32 KiB
/// bounds that to a few tens of MiB. Longer patterns get
/// `INPUT_TOO_LARGE`. The compiled program is bounded too (see [`goregex::compile`]).
pub const MAX_PATTERN_BYTES: usize = 32 << 10;

/// The longest date format (Go time layout) accepted, in UTF-8 bytes (Go has no such bound):
/// every key is parsed with it. Longer layouts get `INPUT_TOO_LARGE`.
pub const MAX_DATE_FORMAT_BYTES: usize = 4 << 10;

/// The prefix Go trims from keys: `strings.TrimSuffix(strings.TrimSpace(sourceKey), "*")`.
///
/// Go's `TrimSpace` trims Unicode `White_Space`, as Rust's [`str::trim`] does (U+0085 and
/// U+00A0 are trimmed, U+FEFF is not); exactly one trailing `*` is removed.
///
/// # Examples
/// ```
/// use partkit::objects::listing_prefix;
/// assert_eq!(listing_prefix(" data/users/* "), "data/users/");
/// assert_eq!(listing_prefix("logs/**"), "logs/*");
/// ```
pub fn listing_prefix(source_key: &str) -> &str {
    let p = source_key.trim();
    p.strip_suffix('*').unwrap_or(p)
}

/// Go's `sanitizeKeyForPatternMatching`: the key without `prefix`, then without ONE leading
/// `/`. `prefix` is used as given (pass it through [`listing_prefix`] first, as Go does).
///
/// # Examples
/// ```
/// use partkit::objects::sanitize_key_for_pattern_matching as sanitize;
/// assert_eq!(sanitize("data/users//extra/file.csv", "data/users"), "/extra/file.csv");
/// assert_eq!(sanitize("data/users//extra/file.csv", "data/users/"), "extra/file.csv");
/// assert_eq!(sanitize("/root/file.bin", ""), "root/file.bin");
/// ```
pub fn sanitize_key_for_pattern_matching<'a>(key: &'a str, prefix: &str) -> &'a str {
    let key = key.strip_prefix(prefix).unwrap_or(key);
    key.strip_prefix('/').unwrap_or(key)
}

/// [`sanitize_key_for_pattern_matching`] on UTF-8 bytes.
#[inline]
fn sanitize_bytes<'a>(key: &'a [u8], prefix: &[u8]) -> &'a [u8] {
    let key = key.strip_prefix(prefix).unwrap_or(key);
    key.strip_prefix(b"/").unwrap_or(key)
}

/// The partition key type, as Go spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartitionKeyType {
    /// `""`: no partitioning (same as `none`).
    Unset,
    /// `"none"`: no partitioning.
    None,
    /// `"object"`: hash of the full key.
    Object,
    /// `"regex"`: hash of the capture groups (or the whole match).
    Regex,
    /// `"substring"`: hash of code points `[start, end)`.
    Substring,
    /// `"date"`: hash of the re-formatted date at the start of the key.
    Date,
}

impl PartitionKeyType {
    /// Parses Go's type name.
    ///
    /// # Errors
    /// `unsupported partition key type …` for any other string.
    pub fn parse(name: &str) -> Result<Self, PartitionError> {
        Ok(match name {
            "" => Self::Unset,
            "none" => Self::None,
            "object" => Self::Object,
            "regex" => Self::Regex,
            "substring" => Self::Substring,
            "date" => Self::Date,
            other => return Err(PartitionError(ErrorKind::TypeUnsupported(other.to_owned()))),
        })
    }

    /// Go's name for the type.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unset => "",
            Self::None => "none",
            Self::Object => "object",
            Self::Regex => "regex",
            Self::Substring => "substring",
            Self::Date => "date",
        }
    }
}

/// Go's `PartitionConfig`. Fields a type does not use are ignored, as in Go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionConfig {
    /// `""`, `"none"`, `"object"`, `"regex"`, `"substring"` or `"date"`.
    pub key_type: String,
    /// Regex pattern (Go syntax).
    pub pattern: String,
    /// Substring start (inclusive, code points).
    pub start_index: i64,
    /// Substring end (exclusive, code points).
    pub end_index: i64,
    /// Go time layout.
    pub date_format: String,
}

impl PartitionConfig {
    /// A config of the given type and nothing else.
    pub fn of_type(key_type: &str) -> Self {
        PartitionConfig {
            key_type: key_type.to_owned(),
            ..Self::default()
        }
    }

    /// A `regex` config.
    pub fn regex(pattern: &str) -> Self {
        PartitionConfig {
            pattern: pattern.to_owned(),
            ..Self::of_type("regex")
        }
    }

    /// A `substring` config.
    pub fn substring(start_index: i64, end_index: i64) -> Self {
        PartitionConfig {
            start_index,
            end_index,
            ..Self::of_type("substring")
        }
    }

    /// A `date` config.
    pub fn date(date_format: &str) -> Self {
        PartitionConfig {
            date_format: date_format.to_owned(),
            ..Self::of_type("date")
        }
    }

    /// Go's `PartitionConfig.Validate`.
    ///
    /// # Errors
    /// Go's messages: `unsupported partition key type X`, `regex pattern cannot be empty`,
    /// `invalid regex pattern: …`, `start index cannot be negative`, `end index must be
    /// greater than start index`, `date format cannot be empty`, `invalid date format: …`.
    ///
    /// # Examples
    /// ```
    /// use partkit::objects::PartitionConfig;
    /// assert!(PartitionConfig::date("2006-01-02").validate().is_ok());
    /// assert_eq!(
    ///     PartitionConfig::regex("(").validate().unwrap_err().to_string(),
    ///     "invalid regex pattern: error parsing regexp: missing closing ): `(`"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), PartitionError> {
        self.compile().map(|_| ())
    }

    fn compile(&self) -> Result<Rule, PartitionError> {
        let fail = |k| Err(PartitionError(k));
        let bounded = |field, value: &str, bound| {
            if value.len() > bound {
                Err(PartitionError(ErrorKind::TooLarge {
                    field,
                    len: value.len(),
                    bound,
                }))
            } else {
                Ok(())
            }
        };
        Ok(match PartitionKeyType::parse(&self.key_type)? {
            PartitionKeyType::Unset | PartitionKeyType::None => Rule::All,
            PartitionKeyType::Object => Rule::Object,
            PartitionKeyType::Regex => {
                if self.pattern.is_empty() {
                    return fail(ErrorKind::PatternEmpty);
                }
                bounded("pattern", &self.pattern, MAX_PATTERN_BYTES)?;
                match goregex::compile(&self.pattern) {
                    Ok(re) => Rule::Regex(Box::new(re)),
                    Err(e) => return fail(ErrorKind::PatternInvalid(e.to_string())),
                }
            }
            PartitionKeyType::Substring => {
                if self.start_index < 0 {
                    return fail(ErrorKind::StartNegative);
                }
                if self.end_index <= self.start_index {
                    return fail(ErrorKind::EndNotAfterStart);
                }
                // Both are > 0 here; beyond usize every key is too short anyway.
                let to_usize = |v: i64| usize::try_from(v).unwrap_or(usize::MAX);
                Rule::Substring {
                    start: to_usize(self.start_index),
                    end: to_usize(self.end_index),
                }
            }
            PartitionKeyType::Date => {
                if self.date_format.is_empty() {
                    return fail(ErrorKind::DateFormatEmpty);
                }
                bounded("dateFormat", &self.date_format, MAX_DATE_FORMAT_BYTES)?;
                if gotime::validate_layout(&self.date_format).is_err() {
                    return fail(ErrorKind::DateFormatInvalid(self.date_format.clone()));
                }
                Rule::Date(Box::new(gotime::Layout::new(self.date_format.as_bytes())))
            }
        })
    }
}

/// A compiled strategy.
#[derive(Clone, Debug)]
enum Rule {
    All,
    Object,
    Regex(Box<gomatch::Matcher>),
    Substring { start: usize, end: usize },
    Date(Box<gotime::Layout>),
}

/// Date prefixes up to this many bytes are cached (see [`DateCache`]).
const DATE_CACHE_MAX: usize = 32;
const DATE_CACHE_SLOTS: usize = 256;

/// One cached date prefix and the FNV-1a of its re-formatted date (`None`: unparsable).
#[derive(Clone, Copy, Debug)]
struct DateSlot {
    len: u8,
    bytes: [u8; DATE_CACHE_MAX],
    hash: Option<u32>,
}

/// Parsing and re-formatting a date costs far more than hashing it, and a listing holds few
/// distinct dates: a direct-mapped cache from the date prefix to its hash, for one
/// partitioner (`owner`, see [`ObjectPartitioner::id`]).
#[derive(Clone, Debug)]
struct DateCache {
    owner: u64,
    slots: Box<[DateSlot]>,
}

impl DateCache {
    fn new(owner: u64) -> Self {
        let empty = DateSlot {
            len: u8::MAX,
            bytes: [0; DATE_CACHE_MAX],
            hash: None,
        };
        DateCache {
            owner,
            slots: vec![empty; DATE_CACHE_SLOTS].into_boxed_slice(),
        }
    }

    /// The padded prefix and its slot index; `None` for prefixes too long to cache.
    #[inline]
    fn key(date: &[u8]) -> Option<([u8; DATE_CACHE_MAX], usize)> {
        if date.len() > DATE_CACHE_MAX {
            return None;
        }
        let mut k = [0u8; DATE_CACHE_MAX];
        k[..date.len()].copy_from_slice(date);
        let mut h = date.len() as u64;
        for (i, w) in k.chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            h ^= u64::from_le_bytes(b).rotate_left(i as u32 * 17);
        }
        let slot = (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % DATE_CACHE_SLOTS;
        Some((k, slot))
    }
}

/// Buffers reused across keys (regex capture slots, the re-formatted date, a cache of parsed
/// dates, the UTF-8 form of a batch key): get one from [`ObjectPartitioner::scratch`] for a
/// batch and pass it to [`ObjectPartitioner::assign_with`]. A scratch may be shared between
/// partitioners (each recognises its own cache), but is cheapest with one.
#[derive(Debug, Default)]
pub struct Scratch {
    regex: gomatch::Cache,
    buf: Vec<u8>,
    key: Vec<u8>,
    dates: Option<DateCache>,
}

/// A batch key's directory flag: a file.
pub const DIR_FLAG_FILE: u8 = 0;
/// A batch key's directory flag: a directory.
pub const DIR_FLAG_DIRECTORY: u8 = 1;
/// A batch key's directory flag: a directory when the key ends in `/` (any other value, and
/// the flag of every key when the flags are empty).
pub const DIR_FLAG_AUTO: u8 = 2;

/// Distinguishes compiled partitioners, for [`DateCache`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Where one object goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Assignment {
    /// A directory: never selected by any partition.
    Directory,
    /// No partitioning (type `""`/`"none"`, or one partition): every partition selects it.
    All,
    /// The key was hashed: `hash % uint32(total)`.
    Hashed(u32),
    /// The strategy could not place the key: partition 0.
    Fallback,
}

impl Assignment {
    /// The partition index: `Some(i)` for `Hashed(i)`, `Some(0)` for `Fallback`, `None`
    /// for `Directory` and `All`.
    pub fn index(self) -> Option<u32> {
        match self {
            Assignment::Hashed(i) => Some(i),
            Assignment::Fallback => Some(FALLBACK_PARTITION),
            Assignment::Directory | Assignment::All => None,
        }
    }

    /// Whether partition `partition_index` selects the object.
    pub fn selected_by(self, partition_index: i64) -> bool {
        match self {
            Assignment::Directory => false,
            Assignment::All => true,
            other => other.index().map(i64::from) == Some(partition_index),
        }
    }
}

/// Distribution of a sample of keys over the partitions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Objects per partition (with no partitioning, every partition counts every object).
    pub counts: Vec<u64>,
    /// Objects that fell back to partition 0 (included in `counts[0]`).
    pub fallback: u64,
    /// Directories (in no partition).
    pub directories: u64,
}

/// Accumulates [`Stats`] one [`Assignment`] at a time.
#[derive(Clone, Debug)]
pub struct StatsBuilder {
    stats: Stats,
    all: u64,
}

impl StatsBuilder {
    /// Empty statistics over `total` partitions.
    pub fn new(total: usize) -> Self {
        StatsBuilder {
            stats: Stats {
                counts: vec![0; total],
                ..Stats::default()
            },
            all: 0,
        }
    }

    /// Counts one object.
    pub fn record(&mut self, a: Assignment) {
        match a {
            Assignment::Directory => self.stats.directories += 1,
            Assignment::All => self.all += 1,
            Assignment::Fallback | Assignment::Hashed(_) => {
                if a == Assignment::Fallback {
                    self.stats.fallback += 1;
                }
                if let Some(c) = a
                    .index()
                    .and_then(|p| self.stats.counts.get_mut(p as usize))
                {
                    *c += 1;
                }
            }
        }
    }

    /// The statistics (with no partitioning, every partition counts every object).
    pub fn finish(mut self) -> Stats {
        if self.all > 0 {
            self.stats.counts.iter_mut().for_each(|c| *c = self.all);
        }
        self.stats
    }
}

/// A compiled partitioner: config validated and compiled once (regex, layout), then applied
/// to any number of keys.
///
/// # Examples
/// ```
/// use partkit::objects::{ObjectPartitioner, PartitionConfig};
/// let p = ObjectPartitioner::new(2, "", &PartitionConfig::of_type("object")).unwrap();
/// let keys = ["file1.txt", "file2.txt", "dir/", "file3.txt", "file4.txt"];
/// let dirs = keys.map(|k| k.ends_with('/'));
/// let plan = p.plan(keys.iter().copied().zip(dirs));
/// assert_eq!(plan, vec![vec![0, 3], vec![1, 4]]);
/// ```
#[derive(Clone, Debug)]
pub struct ObjectPartitioner {
    total: i64,
    modulus: u32,
    prefix: String,
    strategy: Rule,
    /// Unique per compiled config (clones share it): tags the date cache in a [`Scratch`].
    id: u64,
}

impl ObjectPartitioner {
    /// Validates the config (first, as Go does), then the total, and compiles.
    /// `source_key` is the listing prefix as configured (`SourceSpec.Key`); it is trimmed
    /// with [`listing_prefix`].
    ///
    /// # Errors
    /// Any [`PartitionConfig::validate`] error; `job partitions/count must be greater than 0`;
    /// `PARTITION_COUNT_UNSUPPORTED` for a total that is a multiple of 2^32 with a hashing
    /// type (Go's `hash % uint32(total)` divides by zero there).
    pub fn new(
        total_partitions: i64,
        source_key: &str,
        config: &PartitionConfig,
    ) -> Result<Self, PartitionError> {
        let strategy = config.compile()?;
        if total_partitions <= 0 {
            return Err(PartitionError(ErrorKind::CountInvalid));
        }
        // Go: `int(hash % uint32(totalPartitions))` truncates the total to 32 bits.
        let modulus = total_partitions as u64 as u32;
        let strategy = if total_partitions == 1 {
            Rule::All
        } else {
            strategy
        };
        if modulus == 0 && !matches!(strategy, Rule::All) {
            return Err(PartitionError(ErrorKind::CountUnsupported {
                total: total_partitions,
            }));
        }
        Ok(ObjectPartitioner {
            total: total_partitions,
            modulus,
            prefix: listing_prefix(source_key).to_owned(),
            strategy,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The number of partitions.
    pub fn total(&self) -> i64 {
        self.total
    }

    /// The trimmed listing prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether keys are spread over partitions (false for `none` and for one partition).
    pub fn is_partitioned(&self) -> bool {
        !matches!(self.strategy, Rule::All)
    }

    /// What is almost surely a mistake in the config although Go accepts it, each in a sentence;
    /// the partitioning is Go's all the same. Today: a date layout with no Go layout element
    /// (`YYYY-MM-DD`), with which no key parses as a date and every key falls back to
    /// partition 0.
    ///
    /// ```
    /// use partkit::objects::{ObjectPartitioner, PartitionConfig};
    /// let p = ObjectPartitioner::new(3, "", &PartitionConfig::date("YYYY-MM-DD")).unwrap();
    /// assert!(p.warnings()[0].contains("no Go layout element"));
    /// let p = ObjectPartitioner::new(3, "", &PartitionConfig::date("2006-01-02")).unwrap();
    /// assert!(p.warnings().is_empty());
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        match &self.strategy {
            Rule::Date(layout) if !layout.has_elements() => vec![format!(
                "dateFormat {:?} has no Go layout element (2006, 01, 02, Jan, 15, 04, 05, …): no key \
                 parses as a date, so every key falls back to partition 0, as in Go; Go layouts \
                 write the reference time, e.g. \"2006-01-02\"",
                String::from_utf8_lossy(layout.as_bytes())
            )],
            _ => Vec::new(),
        }
    }

    /// Checks a partition index against the total.
    ///
    /// # Errors
    /// `partition index must be between 0 and N-1`.
    pub fn check_index(&self, partition_index: i64) -> Result<(), PartitionError> {
        if partition_index < 0 || partition_index >= self.total {
            return Err(PartitionError(ErrorKind::IndexOutOfRange {
                total: self.total,
            }));
        }
        Ok(())
    }

    #[inline]
    fn hashed(&self, h: u32) -> Assignment {
        Assignment::Hashed(h % self.modulus)
    }

    /// Fresh buffers for [`ObjectPartitioner::assign_with`].
    pub fn scratch(&self) -> Scratch {
        Scratch::default()
    }

    /// Where the object with `key` goes (`is_dir`: the object is a directory).
    pub fn assign(&self, key: &str, is_dir: bool) -> Assignment {
        self.assign_with(key, is_dir, &mut Scratch::default())
    }

    /// [`ObjectPartitioner::assign`] reusing `scratch` between keys (no allocation per key).
    pub fn assign_with(&self, key: &str, is_dir: bool, scratch: &mut Scratch) -> Assignment {
        if is_dir {
            return Assignment::Directory;
        }
        self.assign_utf8(key.as_bytes(), scratch)
    }

    /// Where a file key goes, from its UTF-8 bytes. Every caller passes valid UTF-8 (a `&str`
    /// or [`push_utf8`] output); the byte-level code below relies on it only for its results,
    /// never for memory safety or to avoid panics.
    fn assign_utf8(&self, key: &[u8], scratch: &mut Scratch) -> Assignment {
        match &self.strategy {
            Rule::All => Assignment::All,
            Rule::Object => self.hashed(fnv1a32(key)),
            Rule::Regex(r) => {
                // A `&str`: Go never matches an empty string inside a character, nor does
                // the matcher on a `&str`. Checking UTF-8 costs little next to the search.
                let Ok(key) = std::str::from_utf8(sanitize_bytes(key, self.prefix.as_bytes()))
                else {
                    return Assignment::Fallback;
                };
                // Go: FindStringSubmatch, leftmost-first; an empty whole match falls back.
                let c = &mut scratch.regex;
                if !r.captures(c, key) {
                    return Assignment::Fallback;
                }
                self.hash_groups(key, r.groups(), |i| r.group(c, i))
            }
            Rule::Substring { start, end } => {
                let key = sanitize_bytes(key, self.prefix.as_bytes());
                // Byte offsets of code points `start` and `end` (Go: []rune(key)[start:end]):
                // in UTF-8, every byte that is not a continuation byte starts a code point.
                let mut from = None;
                let mut to = None;
                let starts = (0..key.len()).filter(|&i| key[i] & 0xC0 != 0x80);
                for (n, i) in starts.chain(std::iter::once(key.len())).enumerate() {
                    if n == *start {
                        from = Some(i);
                    }
                    if n == *end {
                        to = Some(i);
                        break;
                    }
                }
                match (from, to) {
                    (Some(a), Some(b)) => self.hashed(fnv1a32(&key[a..b])),
                    _ => Assignment::Fallback,
                }
            }
            Rule::Date(layout) => {
                let key = sanitize_bytes(key, self.prefix.as_bytes());
                // Go: key[:min(len(key), len(dateFormat))] — bytes, possibly mid-character.
                let date = &key[..key.len().min(layout.as_bytes().len())];
                self.date_cached(layout, date, scratch)
            }
        }
    }

    /// Go's hash of a regex match: the non-empty groups joined with 0x1F, or with none the
    /// whole match (group 0); an empty whole match falls back.
    fn hash_groups(
        &self,
        key: &str,
        len: usize,
        group: impl Fn(usize) -> Option<(usize, usize)>,
    ) -> Assignment {
        let whole = group(0).and_then(|(a, b)| key.get(a..b)).unwrap_or("");
        if whole.is_empty() {
            return Assignment::Fallback;
        }
        let mut h = fnv1a32(b"");
        let mut groups = 0usize;
        for i in 1..len {
            let Some((a, b)) = group(i) else { continue };
            let Some(text) = key.get(a..b).filter(|t| !t.is_empty()) else {
                continue;
            };
            if groups > 0 {
                h = fnv1a32_update(h, &[CAPTURE_GROUP_DELIMITER]);
            }
            h = fnv1a32_update(h, text.as_bytes());
            groups += 1;
        }
        if groups == 0 {
            h = fnv1a32(whole.as_bytes());
        }
        self.hashed(h)
    }

    /// The assignment of a date prefix, through the scratch's cache.
    fn date_cached(
        &self,
        layout: &gotime::Layout,
        date: &[u8],
        scratch: &mut Scratch,
    ) -> Assignment {
        let Some((k, slot)) = DateCache::key(date) else {
            return self.date_hash(layout, date, &mut scratch.buf);
        };
        let cache = match &mut scratch.dates {
            Some(c) if c.owner == self.id => c,
            other => other.insert(DateCache::new(self.id)),
        };
        let entry = &mut cache.slots[slot];
        if usize::from(entry.len) != date.len() || entry.bytes != k {
            let hash = match self.date_hash(layout, date, &mut scratch.buf) {
                Assignment::Hashed(_) => Some(fnv1a32(&scratch.buf)),
                _ => None,
            };
            *entry = DateSlot {
                len: date.len() as u8,
                bytes: k,
                hash,
            };
        }
        entry.hash.map_or(Assignment::Fallback, |h| self.hashed(h))
    }

    /// Go's parse of `date` with the layout, re-formatted into `buf` and hashed.
    fn date_hash(&self, layout: &gotime::Layout, date: &[u8], buf: &mut Vec<u8>) -> Assignment {
        match gotime::parse_layout(layout, date) {
            Ok(t) => {
                buf.clear();
                t.format_layout(layout, buf);
                self.hashed(fnv1a32(buf))
            }
            Err(_) => Assignment::Fallback,
        }
    }

    /// Assigns every key of a batch of JavaScript strings (see [`Utf16Batch`]), calling `f`
    /// with each key's [`Assignment`] in order. `dirs` holds one directory flag per key
    /// ([`DIR_FLAG_FILE`], [`DIR_FLAG_DIRECTORY`], [`DIR_FLAG_AUTO`]); when it is shorter,
    /// the missing flags are [`DIR_FLAG_AUTO`]. Lone surrogates are hashed as U+FFFD.
    ///
    /// # Examples
    /// ```
    /// use partkit::objects::{Assignment, ObjectPartitioner, PartitionConfig};
    /// use partkit::packed::Utf16Batch;
    /// let p = ObjectPartitioner::new(4, "", &PartitionConfig::of_type("object")).unwrap();
    /// let units: Vec<u16> = "file1.txtdir/".encode_utf16().collect();
    /// let batch = Utf16Batch::new(&units, &[9, 4]).unwrap();
    /// let mut got = Vec::new();
    /// p.assign_utf16(&batch, &[], &mut p.scratch(), |a| got.push(a));
    /// assert_eq!(got, [p.assign("file1.txt", false), Assignment::Directory]);
    /// ```
    pub fn assign_utf16(
        &self,
        batch: &Utf16Batch<'_>,
        dirs: &[u8],
        scratch: &mut Scratch,
        mut f: impl FnMut(Assignment),
    ) {
        let is_dir = |i: usize, key: &[u16]| match dirs.get(i).copied().unwrap_or(DIR_FLAG_AUTO) {
            DIR_FLAG_FILE => false,
            DIR_FLAG_DIRECTORY => true,
            _ => key.last() == Some(&u16::from(b'/')),
        };
        let mut keys = batch.items().enumerate();
        if matches!(self.strategy, Rule::Object) {
            // Four keys at a time: FNV-1a is one serial multiply chain per key. An ASCII key's
            // code units are its UTF-8 bytes; any other key is hashed again, encoded.
            loop {
                let mut lanes: [(usize, &[u16]); 4] = [(0, &[]); 4];
                let mut n = 0;
                for lane in &mut lanes {
                    let Some(k) = keys.next() else { break };
                    *lane = k;
                    n += 1;
                }
                let h = fnv1a32_x4(lanes.map(|(_, k)| k));
                for (&(i, key), &h) in lanes.iter().zip(&h).take(n) {
                    f(if is_dir(i, key) {
                        Assignment::Directory
                    } else if is_ascii_utf16(key) {
                        self.hashed(h)
                    } else {
                        self.assign_one(key, false, scratch)
                    });
                }
                if n < 4 {
                    return;
                }
            }
        }
        for (i, key) in keys {
            f(self.assign_one(key, is_dir(i, key), scratch));
        }
    }

    /// [`ObjectPartitioner::assign_utf8`] for an ASCII key given as code units (each its
    /// UTF-8 byte), without encoding it first; `None` where the strategy needs the bytes.
    fn assign_ascii(&self, key: &[u16], scratch: &mut Scratch) -> Option<Assignment> {
        let sanitized = || {
            // An ASCII key cannot start with a prefix that is not ASCII.
            let p = self.prefix.as_bytes();
            let key = match key.get(..p.len()) {
                Some(head) if head.iter().zip(p).all(|(&u, &b)| u == u16::from(b)) => {
                    &key[p.len()..]
                }
                _ => key,
            };
            key.strip_prefix(&[u16::from(b'/')]).unwrap_or(key)
        };
        let fnv = fnv1a32_units;
        match &self.strategy {
            Rule::Object => Some(self.hashed(fnv(key))),
            Rule::Substring { start, end } => Some(match sanitized().get(*start..*end) {
                Some(sub) => self.hashed(fnv(sub)),
                None => Assignment::Fallback,
            }),
            Rule::Date(layout) => {
                let key = sanitized();
                let date = &key[..key.len().min(layout.as_bytes().len())];
                if date.len() > DATE_CACHE_MAX {
                    return None;
                }
                let mut bytes = [0u8; DATE_CACHE_MAX];
                for (b, &u) in bytes.iter_mut().zip(date) {
                    *b = u as u8;
                }
                Some(self.date_cached(layout, &bytes[..date.len()], scratch))
            }
            Rule::All | Rule::Regex(_) => None,
        }
    }

    /// One key of [`ObjectPartitioner::assign_utf16`].
    #[inline]
    fn assign_one(&self, key: &[u16], is_dir: bool, scratch: &mut Scratch) -> Assignment {
        if is_dir {
            return Assignment::Directory;
        }
        if matches!(self.strategy, Rule::All) {
            return Assignment::All;
        }
        if is_ascii_utf16(key) {
            if let Some(a) = self.assign_ascii(key, scratch) {
                return a;
            }
        }
        let mut utf8 = std::mem::take(&mut scratch.key);
        utf8.clear();
        push_utf8(key, &mut utf8);
        let a = self.assign_utf8(&utf8, scratch);
        scratch.key = utf8;
        a
    }

    /// The 0-based partition of a file key (`None` for a directory and when there is no
    /// partitioning, see [`Assignment`]).
    pub fn index_of(&self, key: &str, is_dir: bool) -> Option<u32> {
        self.assign(key, is_dir).index()
    }

    /// Indices (into `objects`) of the objects partition `partition_index` selects, in input
    /// order — Go's `PartitionObjects`.
    ///
    /// # Errors
    /// `partition index must be between 0 and N-1`.
    pub fn select<'a>(
        &self,
        objects: impl IntoIterator<Item = (&'a str, bool)>,
        partition_index: i64,
    ) -> Result<Vec<usize>, PartitionError> {
        self.check_index(partition_index)?;
        let mut scratch = self.scratch();
        Ok(objects
            .into_iter()
            .enumerate()
            .filter(|(_, (key, is_dir))| {
                self.assign_with(key, *is_dir, &mut scratch)
                    .selected_by(partition_index)
            })
            .map(|(i, _)| i)
            .collect())
    }

    /// Every partition's object indices at once, in one pass (input order inside each).
    /// With no partitioning every partition lists every file. `total` must fit in memory:
    /// callers with huge totals should use [`ObjectPartitioner::select`].
    pub fn plan<'a>(&self, objects: impl IntoIterator<Item = (&'a str, bool)>) -> Vec<Vec<usize>> {
        let n = usize::try_from(self.total).unwrap_or(usize::MAX);
        let mut out: Vec<Vec<usize>> = Vec::new();
        out.resize_with(n, Vec::new);
        let mut all = Vec::new();
        let mut scratch = self.scratch();
        for (i, (key, is_dir)) in objects.into_iter().enumerate() {
            match self.assign_with(key, is_dir, &mut scratch) {
                Assignment::Directory => {}
                Assignment::All => all.push(i),
                a => {
                    if let Some(slot) = a.index().and_then(|p| out.get_mut(p as usize)) {
                        slot.push(i);
                    }
                }
            }
        }
        if !all.is_empty() {
            for slot in &mut out {
                slot.clone_from(&all);
            }
        }
        out
    }

    /// Distribution of `objects` over the partitions, with fallback and directory counts.
    pub fn stats<'a>(&self, objects: impl IntoIterator<Item = (&'a str, bool)>) -> Stats {
        let mut b = StatsBuilder::new(usize::try_from(self.total).unwrap_or(usize::MAX));
        let mut scratch = self.scratch();
        for (key, is_dir) in objects {
            b.record(self.assign_with(key, is_dir, &mut scratch));
        }
        b.finish()
    }
}

/// Go's `PartitionObjects`: validates, then returns the indices (into `objects`) of the
/// objects partition `partition_index` of `total_partitions` selects, in input order.
///
/// # Errors
/// Validation errors in Go's order: config, total, index.
///
/// # Examples
/// ```
/// use partkit::objects::{partition_objects, PartitionConfig};
/// let keys = [("file1.txt", false), ("file2.txt", false), ("file3.txt", false)];
/// let cfg = PartitionConfig::of_type("object");
/// assert_eq!(partition_objects(keys, 5, 3, "", &cfg).unwrap(), vec![1]);
/// assert_eq!(
///     partition_objects(keys, 2, 2, "", &cfg).unwrap_err().to_string(),
///     "partition index must be between 0 and 1"
/// );
/// ```
pub fn partition_objects<'a>(
    objects: impl IntoIterator<Item = (&'a str, bool)>,
    total_partitions: i64,
    partition_index: i64,
    source_key: &str,
    config: &PartitionConfig,
) -> Result<Vec<usize>, PartitionError> {
    ObjectPartitioner::new(total_partitions, source_key, config)?.select(objects, partition_index)
}

#[cfg(test)]
mod tests;
