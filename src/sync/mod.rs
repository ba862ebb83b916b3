#![doc = include_str!("../../docs/sync.md")]
#![doc = include_str!("../../docs/sync-design.md")]

mod assign;
mod error;
#[cfg(feature = "sim")]
pub mod sim;
mod start;
mod task;
mod types;

pub use assign::compute_epoch;

pub use error::SyncError;
pub use start::{
    checkpoint_message, checkpoint_message_value, find_epoch_start, join_chunks, EpochStart,
    LogRecord, MessageValue, RecordHeader, MAX_START_RECORDS,
};
pub use task::{SyncTask, MAX_CHUNKS, MAX_SAFE_INTEGER, MIN_RECORD_BYTES};
pub use types::{
    CheckpointRef, ChunkRef, Delta, MessageType, PartitionSpec, PartitionState, PartitionStatus,
    RebalanceEvent, SharedPartition, SyncMessage, SyncOptions, SyncOutput, TaskData, TaskShare,
    TaskState, MIN_RETENTION_REFRESHES,
};
