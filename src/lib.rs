//! Deterministic partitioning for data connectors.
//!
//! Connectors sync more entities than one run can handle, so work is split across workers and
//! runs, the same way every time. partkit is that splitting, as plain Rust modules with no
//! knowledge of JavaScript, compiled to WebAssembly for the npm package of the same name:
//!
//! | module | what it does | following |
//! | --- | --- | --- |
//! | [`bucketing`] | HMAC-MD5 buckets of entity ids, config validation, round-robin bucket selection | faros' *Bucketing and Round-Robin Execution Spec v1.0* and `faros-airbyte-common` |
//! | [`objects`] | which partition of N an object-store key belongs to, by key, regex groups, substring or date | Bacalhau's `pkg/s3/partitioning.go`, Go's `time` layouts and RE2 syntax included |
//! | [`imports`] | per-dataset UUID buckets for bulk imports, derived from an import id so retries are idempotent | GroundTruthCurator's UUID bucket plan |
//! | [`lifecycle`] | an event-sourced build state of partition instances with derived UUIDs, wants, dep misses and taints | DataBuild's partition-identity design |
//! | [`sync`] | the leader/epoch/partition-sharing protocol of N connector tasks, as a sans-IO state machine | the Debezium Spanner connector's scaling design |
//!
//! Every module takes plain data, reads no clock (times are arguments), returns a typed error
//! with a stable `code()` and never panics on any input.
//!
//! # Getting started
//!
//! The crate is not on crates.io; use it as a path or git dependency. JavaScript and
//! TypeScript users install the npm package instead (`npm install partkit`), whose README shows
//! the same examples in JS. One example per module follows.
//!
//! ## Bucketing and round robin
//!
//! ```
//! use partkit::bucketing::{bucket, Bucketer, RawConfig, Selector, Value};
//!
//! // HMAC-MD5(key, data), first 4 bytes big-endian, % total + 1: faros' `bucket()`.
//! assert_eq!(bucket("farosai/airbyte-github-source", "facebook/react", 12)?, 9);
//! let b = Bucketer::new("farosai/airbyte-github-source", 12)?; // the key schedule, once
//! assert_eq!(b.bucket("facebook/react"), 9);
//!
//! // Round robin over `bucket_ranges: '2-3,5'`: the bucket after 3 is 5.
//! let config = RawConfig {
//!     round_robin: Value::Bool(true),
//!     bucket_total: Value::Number(6.0),
//!     bucket_ranges: Value::Text("2-3,5".into()),
//!     ..RawConfig::default()
//! };
//! assert_eq!(Selector::new(&config)?.next(Some(3)), 5);
//! # Ok::<(), partkit::bucketing::BucketingError>(())
//! ```
//!
//! ## Object-store key partitioning
//!
//! ```
//! use partkit::objects::{Assignment, ObjectPartitioner, PartitionConfig};
//!
//! // 4 partitions of the listing under `prefix/`, by the first regex group (Go RE2 syntax).
//! let p = ObjectPartitioner::new(4, "prefix/", &PartitionConfig::regex(r"user(\d+)"))?;
//! assert_eq!(p.assign("prefix/user123/file1.txt", false), Assignment::Hashed(3));
//! assert_eq!(p.assign("prefix/invalid/file5.txt", false), Assignment::Fallback); // partition 0
//! # Ok::<(), partkit::objects::PartitionError>(())
//! ```
//!
//! ## UUID buckets for bulk imports
//!
//! ```
//! use partkit::imports::{assign_import_buckets, BucketCount, ImportItem, ImportOptions, OsRandom};
//!
//! let items: Vec<ImportItem> = (0..10).map(|_| ImportItem::new("faq", None)).collect();
//! let options = ImportOptions { buckets: BucketCount::new(3)?, import_id: Some("import-42"), ..Default::default() };
//! let buckets = assign_import_buckets(&items, &options, &mut OsRandom)?;
//! assert_eq!(buckets[0], buckets[3]); // round robin over 3 buckets
//! // Derived from the import id, so a retry assigns the same buckets:
//! assert_eq!(buckets, assign_import_buckets(&items, &options, &mut OsRandom)?);
//! # Ok::<(), partkit::imports::ImportBucketError>(())
//! ```
//!
//! ## Partition lifecycle
//!
//! ```
//! use partkit::lifecycle::{derive_partition_uuid, BuildState, PartitionState, WantState};
//!
//! let state = BuildState::replay_json(r#"[
//!   {"type": "WantCreate", "timestamp": 1, "wantId": "w1", "partitions": ["sales/2024-06-01"]},
//!   {"type": "JobRunBuffer", "timestamp": 2, "jobRunId": "job-1", "buildingPartitions": ["sales/2024-06-01"]}
//! ]"#)?;
//! let instance = state.canonical_partition("sales/2024-06-01").unwrap();
//! assert_eq!(instance.state, PartitionState::Building);
//! assert_eq!(instance.uuid, derive_partition_uuid("job-1", "sales/2024-06-01"));
//! assert_eq!(state.want("w1").unwrap().state, WantState::Building);
//! assert_eq!(
//!     derive_partition_uuid("job-1", "data/beta").to_string(),
//!     "b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4"
//! );
//! # Ok::<(), partkit::lifecycle::LifecycleError>(())
//! ```
//!
//! ## Task coordination
//!
//! ```
//! use partkit::sync::{PartitionSpec, RebalanceEvent, SyncTask};
//!
//! let mut task = SyncTask::new("t1")?;
//! let rebalance = RebalanceEvent { generation: 1, leader: true, members: Some(vec!["t1".into()]) };
//! // Everything published goes to the sync topic and is read back, own messages included.
//! let mut log = task.on_rebalance(&rebalance, 0)?.publish;
//! let mut read = 0;
//! while read < log.len() {
//!     let out = task.on_message(&log[read].clone(), 1)?;
//!     log.extend(out.publish);
//!     read += 1;
//! }
//! assert_eq!(task.epoch(), Some("1-t1"));
//! let out = task.add_partitions(&[PartitionSpec::new("p0", &[])], 2)?;
//! assert_eq!(out.start, ["p0"]); // start reading p0, then report `partition_started`
//! # Ok::<(), partkit::sync::SyncError>(())
//! ```
//!
//! # Features
//!
//! - `sim`: the deterministic fault-injecting simulation of the sync protocol
//!   (`partkit::sync::sim`), test support rather than API; `npm test` turns it on.
//!
#![doc = include_str!("../docs/wasm.md")]
#![deny(missing_docs)]
// The npm build compiles one wasm per domain (Cargo.toml, "features"): there the other domains'
// crate-internal helpers for the bindings go unused.
#![cfg_attr(
    all(
        target_arch = "wasm32",
        not(all(
            feature = "bucketing",
            feature = "objects",
            feature = "imports",
            feature = "lifecycle",
            feature = "sync"
        ))
    ),
    allow(dead_code)
)]

pub mod bucketing;
mod heapsort;
pub mod imports;
pub mod lifecycle;
pub mod objects;
pub mod packed;
mod quote;
pub mod sync;

// The TypeScript declarations of the serde shapes (types/generated/), checked by a unit test.
#[cfg(test)]
mod ts_types;

#[cfg(target_arch = "wasm32")]
mod wasm;
