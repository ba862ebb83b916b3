//! The TypeScript declarations of the serde shapes that cross the JS boundary, generated from
//! the Rust types with `ts-rs` (a dev-dependency: the library itself carries none of it).
//!
//! `types/generated/*.d.ts` are committed; this test renders them again and fails when they
//! differ, so the declarations cannot drift from the Rust types. After changing a serde type,
//! regenerate them with
//!
//! ```text
//! UPDATE_TYPES=1 cargo test --lib ts_types
//! ```
//!
//! Rendering rules: 64-bit integers are `number` (every number partkit exchanges is at most
//! `Number.MAX_SAFE_INTEGER`). A field serde skips when empty and defaults when absent is
//! `field?: T | undefined` (absent and `undefined` are the same to partkit; the `| undefined`
//! lets projects with `exactOptionalPropertyTypes` pass a value that may be undefined): the JS layer makes inputs with `JSON.stringify` (which drops `undefined`) and
//! outputs with serde-wasm-bindgen's JSON-compatible serializer (which leaves skipped fields
//! out), so such a field is absent, never `null`. For an `Option` that takes
//! `#[cfg_attr(test, ts(optional))]` beside the serde attribute ([`absent_fields_are_not_null`]
//! fails without it); an `Option` serde does not skip is `T | null`. A field the core accepts
//! absent (`#[serde(default)]`) but always writes is declared as it is written, unless it is an
//! input: `#[cfg_attr(test, ts(as = "Option<_>", optional))]`. Each generated file is
//! self-contained: a type it refers to must be in its list below.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ts_rs::{Config, TS};

/// One generated file: its name under `types/generated/`, its header, and its declarations.
struct File {
    name: &'static str,
    header: &'static str,
    decls: Vec<Decl>,
}

/// One exported declaration: its TypeScript name, its text, and the names it refers to.
struct Decl {
    name: String,
    text: String,
    deps: Vec<String>,
}

fn decl<T: TS + 'static>(cfg: &Config) -> Decl {
    let mut text = T::docs().unwrap_or_default();
    text.push_str("export ");
    text.push_str(&optional_takes_undefined(&T::decl(cfg)));
    Decl {
        name: T::ident(cfg),
        text: indent(&js_docs(&text)),
        deps: T::dependencies(cfg)
            .into_iter()
            .map(|d| d.ts_name)
            .collect(),
    }
}

/// `field?: T` as `field?: T | undefined`: an absent field and one set to `undefined` are the
/// same to partkit (inputs go through `JSON.stringify`, which drops `undefined`), and a project
/// with `exactOptionalPropertyTypes` can then pass a value that may be `undefined`.
fn optional_takes_undefined(decl: &str) -> String {
    let optional = regex::Regex::new(r"([A-Za-z0-9_]+)\?: ([^,;]+),").unwrap();
    optional
        .replace_all(decl, "$1?: $2 | undefined,")
        .into_owned()
}

/// Rust doc comments as JSDoc: intra-doc links become plain code spans (`` [`X`] `` and
/// `` [`X`](path) `` → `` `X` ``), and `# Examples` sections (Rust doctests) are left out.
fn js_docs(text: &str) -> String {
    let links = regex::Regex::new(r"\[(`[^`\]]+`)\](\([^)\s]+\))?").unwrap();
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed == "* # Examples" {
            skipping = true;
        }
        if trimmed == "*/" {
            skipping = false;
        }
        if skipping {
            continue;
        }
        out.push_str(&links.replace_all(line, "$1"));
        out.push('\n');
    }
    // A section left out at the end leaves an empty ` *` line before ` */`.
    out.replace(" *\n */\n", " */\n")
}

/// ts-rs writes an object type's fields at the start of lines: indents them by nesting depth
/// (braces and parentheses outside comments and string literals) and drops trailing blanks.
fn indent(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut depth: usize = 0;
    for line in text.lines() {
        let line = line.trim_end();
        let trimmed = line.trim_start();
        let comment = trimmed.starts_with("/**") || trimmed.starts_with('*');
        // A line that starts by closing a level is printed at the outer level.
        let closes = !comment && trimmed.starts_with(['}', ')']);
        let level = if closes {
            depth.saturating_sub(1)
        } else {
            depth
        };
        if !trimmed.is_empty() {
            out.push_str(&"  ".repeat(level));
            // Continuation lines of a doc comment keep the space before `*`.
            if trimmed.starts_with('*') {
                out.push(' ');
            }
        }
        out.push_str(if comment { trimmed } else { line.trim_start() });
        out.push('\n');
        if !comment {
            let mut in_str = false;
            for c in line.chars() {
                match c {
                    '"' => in_str = !in_str,
                    '{' | '(' if !in_str => depth += 1,
                    '}' | ')' if !in_str => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
    }
    out
}

fn config() -> Config {
    Config::new().with_large_int("number")
}

const NOTE: &str = "// Generated by `UPDATE_TYPES=1 cargo test --lib ts_types` from the Rust types (src/ts_types.rs).\n// Do not edit: change the Rust type and regenerate.\n";

fn lifecycle(cfg: &Config) -> File {
    use crate::lifecycle::*;
    File {
        name: "lifecycle.d.ts",
        header: "// Partition lifecycle: events, views and the snapshot, as plain JSON data (src/lifecycle).\n",
        decls: vec![
            decl::<PartitionUuid>(cfg),
            decl::<PartitionStatus>(cfg),
            decl::<WantState>(cfg),
            decl::<JobRunStatus>(cfg),
            decl::<MissingDeps>(cfg),
            decl::<BuildEvent>(cfg),
            decl::<WantCreate>(cfg),
            decl::<WantCancel>(cfg),
            decl::<JobRunBuffer>(cfg),
            decl::<JobRunRef>(cfg),
            decl::<JobRunFailure>(cfg),
            decl::<JobRunDepMiss>(cfg),
            decl::<TaintCreate>(cfg),
            decl::<PartitionInstance>(cfg),
            decl::<Want>(cfg),
            decl::<JobRun>(cfg),
            decl::<Taint>(cfg),
            decl::<AppliedTransition>(cfg),
            decl::<Snapshot>(cfg),
        ],
    }
}

fn sync(cfg: &Config) -> File {
    use crate::sync::*;
    File {
        name: "sync.d.ts",
        header: "// Task coordination: the sync protocol's messages, states, inputs and outputs (src/sync).\n",
        decls: vec![
            with_defaults(
                decl::<SyncOptions>(cfg),
                serde_json::to_value(SyncOptions::default()).unwrap(),
            ),
            decl::<PartitionStatus>(cfg),
            decl::<PartitionState>(cfg),
            decl::<SharedPartition>(cfg),
            decl::<TaskData>(cfg),
            decl::<TaskShare>(cfg),
            decl::<TaskState>(cfg),
            decl::<MessageType>(cfg),
            decl::<SyncMessage>(cfg),
            decl::<CheckpointRef>(cfg),
            decl::<ChunkRef>(cfg),
            decl::<Delta>(cfg),
            decl::<PartitionSpec>(cfg),
            decl::<RebalanceEvent>(cfg),
            decl::<SyncOutput>(cfg),
        ],
    }
}

/// Adds `Default: <value>.` to the doc comment of each field of `defaults` (a serialized
/// `Default`), so the documented defaults are the ones the Rust type has.
fn with_defaults(mut d: Decl, defaults: serde_json::Value) -> Decl {
    let defaults = defaults
        .as_object()
        .expect("defaults serialize as an object");
    let mut out: Vec<String> = Vec::new();
    let mut documented = 0;
    for line in d.text.lines() {
        let trimmed = line.trim_start();
        let key = trimmed.split([':', '?']).next().unwrap_or("");
        if let Some(value) = defaults.get(key) {
            if out.last().is_some_and(|l| l.trim() == "*/") {
                let close = out.pop().unwrap();
                out.push(format!("{} * Default: {value}.", &close[..close.len() - 3]));
                out.push(close);
                documented += 1;
            }
        }
        out.push(line.to_string());
    }
    assert_eq!(
        documented,
        defaults.len(),
        "{}: every field with a default needs a doc comment",
        d.name
    );
    d.text = out.join("\n") + "\n";
    d
}

fn files() -> Vec<File> {
    let cfg = config();
    vec![lifecycle(&cfg), sync(&cfg)]
}

fn render(file: &File) -> String {
    let mut out = String::from(NOTE);
    out.push_str(file.header);
    for d in &file.decls {
        out.push('\n');
        out.push_str(&d.text);
    }
    out
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("types")
        .join("generated")
        .join(name)
}

/// Every type a declaration refers to is declared in the same file (no imports needed).
#[test]
fn generated_files_are_self_contained() {
    for file in files() {
        let declared: BTreeSet<&str> = file.decls.iter().map(|d| d.name.as_str()).collect();
        for d in &file.decls {
            for dep in &d.deps {
                assert!(
                    declared.contains(dep.as_str()),
                    "{}: {} refers to {dep}, which the file does not declare",
                    file.name,
                    d.name
                );
            }
        }
    }
}

/// A field that may be absent is never `null` too: serde leaves a skipped `Option` out, so its
/// field is `field?: T` and needs `#[cfg_attr(test, ts(optional))]` next to its serde attribute
/// (ts-rs alone would say `field?: T | null`).
#[test]
fn absent_fields_are_not_null() {
    let nullable_optional = regex::Regex::new(r"([A-Za-z0-9_]+)\?: [^,;]* \| null[,;\s]").unwrap();
    for file in files() {
        for d in &file.decls {
            if let Some(c) = nullable_optional.captures(&d.text) {
                panic!(
                    "{}: field {} of {} is declared `?: ... | null`; add #[cfg_attr(test, ts(optional))] to it",
                    file.name, &c[1], d.name
                );
            }
        }
    }
}

/// Every optional field takes `undefined` (see [`optional_takes_undefined`]), whatever its type.
#[test]
fn optional_fields_take_undefined() {
    let optional = regex::Regex::new(r"([A-Za-z0-9_]+)\?: ([^,;]*)[,;]").unwrap();
    for file in files() {
        for d in &file.decls {
            for c in optional.captures_iter(&d.text) {
                assert!(
                    c[2].ends_with(" | undefined"),
                    "{}: optional field {} of {} does not take undefined: {}",
                    file.name,
                    &c[1],
                    d.name,
                    &c[0]
                );
            }
        }
    }
}

/// The committed declarations are the ones the Rust types give (`UPDATE_TYPES=1` rewrites them).
#[test]
fn generated_files_are_up_to_date() {
    let update = std::env::var_os("UPDATE_TYPES").is_some_and(|v| !v.is_empty() && v != "0");
    let mut stale = Vec::new();
    for file in files() {
        let text = render(&file);
        let path = path(file.name);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("types/generated/{}", file.name));
        }
    }
    assert!(
        stale.is_empty(),
        "{} differ from what the Rust types give; regenerate with\n    UPDATE_TYPES=1 cargo test --lib ts_types\nand commit the result",
        stale.join(", ")
    );
}
