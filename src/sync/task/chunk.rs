//! A bound on every record: a message whose JSON is larger than `maxRecordBytes` goes out as
//! numbered chunks, and a reader applies it only once it has read every chunk, in order.

use std::borrow::Cow;

use super::limits::{MAX_CHUNKS, MAX_SAFE_INTEGER};
use super::SyncTask;
use crate::sync::error::SyncError;
use crate::sync::types::{CheckpointRef, ChunkRef, SyncMessage, TaskState};

/// Length of a value's JSON, as the transport publishes it (counted, not written out).
pub(super) fn json_len<T: serde::Serialize>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    serde_json::to_writer(&mut n, v).map_or(0, |()| n.0)
}

/// A message read chunk by chunk: what its chunks carried so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Partial {
    /// The first chunk, without its states.
    header: SyncMessage,
    /// The states read so far, pieces of a task's state joined.
    states: Vec<TaskState>,
    /// The next chunk index expected.
    next: u32,
    /// `messageSeq` of the first chunk (chunk `i` has `first_seq + i`).
    first_seq: Option<u64>,
    /// The record read before the first chunk (a checkpoint is clean if it names it).
    pub(super) before: Option<CheckpointRef>,
    /// Another record was read between its chunks.
    pub(super) interleaved: bool,
    /// When the first chunk was published (its `messageTimestamp`), or read if that is earlier.
    pub(super) since: u64,
}

/// A task's state as chunks carry it: the pieces of one task's state are consecutive, the first
/// with its ids and versions, each with some of its partitions and shares.
pub(crate) trait ChunkedState {
    /// Whether `next` (in the next chunk) is a piece of the same task's state.
    fn continues(&self, next: &Self) -> bool;
    /// Appends the partitions and shares of `next`, a piece of the same state.
    fn append(&mut self, next: Self);
}

impl ChunkedState for TaskState {
    fn continues(&self, next: &Self) -> bool {
        self.task_id == next.task_id
    }
    fn append(&mut self, next: Self) {
        self.data.partitions.extend(next.data.partitions);
        self.share.partitions.extend(next.share.partitions);
    }
}

/// Appends the states of a chunk: a state of the same task as the last one continues it.
pub(crate) fn join(states: &mut Vec<TaskState>, more: &[TaskState]) {
    join_owned(states, more.to_vec());
}

/// [`join`] of states given away: they are moved, not copied.
pub(crate) fn join_owned<S: ChunkedState>(states: &mut Vec<S>, more: Vec<S>) {
    for s in more {
        match states.last_mut() {
            Some(last) if last.continues(&s) => last.append(s),
            _ => states.push(s),
        }
    }
}

/// A chunk as its header (without states) and its states: moved out of it if it is given
/// away, else copied once.
fn split_states(msg: Cow<'_, SyncMessage>) -> (SyncMessage, Vec<TaskState>) {
    let mut header = msg.into_owned();
    let states = std::mem::take(&mut header.connector_state);
    (header, states)
}

/// Where [`join`] starts appending to `states`: undoing it truncates back to there.
struct JoinMark {
    states: usize,
    data: usize,
    share: usize,
}

impl JoinMark {
    fn of(states: &[TaskState]) -> Self {
        let last = states.last();
        JoinMark {
            states: states.len(),
            data: last.map_or(0, |s| s.data.partitions.len()),
            share: last.map_or(0, |s| s.share.partitions.len()),
        }
    }

    fn undo(&self, states: &mut Vec<TaskState>) {
        states.truncate(self.states);
        if let Some(last) = states.last_mut() {
            last.data.partitions.truncate(self.data);
            last.share.partitions.truncate(self.share);
        }
    }
}

/// Whether chunk `msg` carries the counter that follows the partial's chunks (when both have one).
fn follows(p: &Partial, msg: &SyncMessage) -> bool {
    match (p.first_seq, msg.message_seq, &msg.chunk) {
        (Some(first), Some(seq), Some(c)) => seq == first + u64::from(c.index),
        _ => true,
    }
}

pub(crate) fn same_message(a: &SyncMessage, b: &SyncMessage) -> bool {
    a.sync_epoch == b.sync_epoch
        && a.kind == b.kind
        && a.epoch_generation == b.epoch_generation
        && a.epoch_attempt == b.epoch_attempt
        && a.resend == b.resend
        && a.chunk.as_ref().map(|c| c.count) == b.chunk.as_ref().map(|c| c.count)
}

/// `msg` as records of at most `max` bytes of JSON each (once `messageSeq` is stamped): itself
/// if it fits, otherwise chunks `{index, count}` carrying the same header and, in order, the
/// states' partitions (a task's state split over several chunks is joined again by the reader).
/// Every chunk carries at least one state (the first piece of a task's state carries its ids and
/// versions). An item larger than a whole chunk (impossible for partitions `add_partitions`
/// accepted) goes alone in its chunk.
pub(super) fn split(mut msg: SyncMessage, max: u64) -> Vec<SyncMessage> {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let seq = msg.message_seq.replace(MAX_SAFE_INTEGER);
    let whole_len = json_len(&msg);
    msg.message_seq = seq;
    if whole_len <= max {
        return vec![msg];
    }
    let states = std::mem::take(&mut msg.connector_state);
    let mut header = chunk_header(msg, max);
    let budget = max.saturating_sub(json_len(&header)).max(1);
    let chunks = pack_states(states, budget);
    let count = chunks.len() as u32;
    header.message_seq = None;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, states)| SyncMessage {
            connector_state: states,
            chunk: Some(ChunkRef {
                index: i as u32,
                count,
            }),
            ..header.clone()
        })
        .collect()
}

/// The header every chunk of `msg` (its states taken out) carries, as long as its JSON can be
/// (`messageSeq` and the chunk's numbers at their largest).
fn chunk_header(msg: SyncMessage, max: usize) -> SyncMessage {
    let mut header = msg;
    header.message_seq = Some(MAX_SAFE_INTEGER);
    header.chunk = Some(ChunkRef {
        index: MAX_CHUNKS,
        count: MAX_CHUNKS,
    });
    // the departed list (newest first) is trimmed only if the header would take more than
    // half of the record (task ids of a kilobyte and more): the other half holds at least
    // one whole partition (see `PARTITION_SHARE`)
    while json_len(&header) > max / 2 && !header.departed.is_empty() {
        header.departed.pop();
    }
    header
}

/// `states` packed into chunks of at most `budget` bytes of JSON, in order, a state split over
/// several (each piece carries the state's ids and versions).
fn pack_states(states: Vec<TaskState>, budget: usize) -> Vec<Vec<TaskState>> {
    let mut chunks: Vec<Vec<TaskState>> = Vec::new();
    let mut cur: Vec<TaskState> = Vec::new();
    let mut size = 0usize;
    for mut env in states {
        let data = std::mem::take(&mut env.data.partitions);
        let share = std::mem::take(&mut env.share.partitions);
        let env_len = json_len(&env) + 1;
        if size + env_len > budget && !cur.is_empty() {
            chunks.push(std::mem::take(&mut cur));
            size = 0;
        }
        cur.push(env.clone());
        size += env_len;
        // (a new chunk opens when the next item would overflow this one, unless this one
        // holds nothing but the state's ids)
        let mut room = |cur: &mut Vec<TaskState>, size: &mut usize, l: usize| {
            if *size + l > budget && *size > env_len {
                chunks.push(std::mem::take(cur));
                cur.push(env.clone());
                *size = env_len;
            }
            *size += l;
        };
        for p in data {
            room(&mut cur, &mut size, json_len(&p) + 1);
            cur.last_mut().expect("pushed").data.partitions.push(p);
        }
        for p in share {
            room(&mut cur, &mut size, json_len(&p) + 1);
            cur.last_mut().expect("pushed").share.partitions.push(p);
        }
    }
    if !cur.is_empty() {
        chunks.push(cur);
    }
    chunks
}

impl SyncTask {
    /// Every record this task publishes fits `maxRecordBytes` (see [`split`]).
    pub(super) fn split_records(&self, publish: Vec<SyncMessage>) -> Vec<SyncMessage> {
        let max = self.opts.max_record_bytes;
        publish.into_iter().flat_map(|m| split(m, max)).collect()
    }

    /// What reading chunk `msg` completes: the whole message (validated) when `msg` is the last
    /// chunk of a message read in order so far. Its states are moved out of the partial message
    /// (not copied: at scale they are the whole view), which [`take_chunk`](Self::take_chunk)
    /// then drops; if the whole message is refused, they are put back as they were.
    pub(super) fn peek_chunk(
        &mut self,
        msg: &SyncMessage,
    ) -> Result<Option<SyncMessage>, SyncError> {
        let c = msg.chunk.as_ref().expect("a chunk");
        if c.index + 1 != c.count {
            return Ok(None);
        }
        if c.count == 1 {
            let mut whole = msg.clone();
            whole.chunk = None;
            self.validate_message(&whole)?;
            return Ok(Some(whole));
        }
        let Some(p) = self.cursor.partials.get_mut(&msg.task_id) else {
            return Ok(None);
        };
        if p.next != c.index || !same_message(&p.header, msg) || !follows(p, msg) {
            return Ok(None);
        }
        let mut states = std::mem::take(&mut p.states);
        let mark = JoinMark::of(&states);
        join(&mut states, &msg.connector_state);
        let whole = SyncMessage {
            connector_state: states,
            chunk: None,
            message_seq: msg.message_seq,
            ..p.header.clone()
        };
        if let Err(e) = self.validate_message(&whole) {
            let mut states = whole.connector_state;
            mark.undo(&mut states);
            if let Some(p) = self.cursor.partials.get_mut(&msg.task_id) {
                p.states = states;
            }
            return Err(e);
        }
        Ok(Some(whole))
    }

    /// Reads chunk `msg` (validated, its sender's counter checked, not a re-delivery): the first
    /// chunk opens its sender's partial message (dropping one left open), the next one in order
    /// extends it, anything else drops it. Returns the
    /// whole message with the partial's `before` and `interleaved` when `whole` (from
    /// [`peek_chunk`](Self::peek_chunk)) completes it.
    pub(super) fn take_chunk(
        &mut self,
        msg: Cow<'_, SyncMessage>,
        whole: Option<SyncMessage>,
        again: bool,
    ) -> Option<(SyncMessage, Option<CheckpointRef>, bool)> {
        let c = msg.chunk.clone().expect("a chunk");
        let before = self.cursor.last_read.clone();
        if again && c.count > 1 {
            return None; // a re-delivered chunk: read before
        }
        if let Some(whole) = whole {
            let p = self.cursor.partials.remove(&msg.task_id);
            return Some(match p {
                Some(p) if c.count > 1 => (whole, p.before, p.interleaved),
                _ => (whole, before, false),
            });
        }
        if c.index == 0 {
            let (header, states) = split_states(msg);
            let header_ts = header.message_timestamp;
            self.cursor.partials.insert(
                header.task_id.clone(),
                Partial {
                    first_seq: header.message_seq,
                    header,
                    states,
                    next: 1,
                    before,
                    interleaved: false,
                    since: self.now.min(header_ts),
                },
            );
            return None;
        }
        let Some(p) = self.cursor.partials.get_mut(&msg.task_id) else {
            return None; // its first chunk was never read here: passed over
        };
        if p.next == c.index && same_message(&p.header, &msg) && follows(p, &msg) {
            join_owned(&mut p.states, split_states(msg).1);
            p.next += 1;
        } else {
            // missing or out of order: the message is not applied here (nor anywhere: every
            // reader reads the same records in the same order)
            self.cursor.partials.remove(&msg.task_id);
        }
        None
    }

    /// Every record read: one that is not a chunk means its sender's partial message, if any,
    /// will never complete (its sender publishes its chunks in one go); any other sender's
    /// partial message has a record between its chunks.
    pub(super) fn note_record(&mut self, msg: &SyncMessage) {
        if msg.chunk.is_none() {
            self.cursor.partials.remove(&msg.task_id);
        }
        for (sender, p) in self.cursor.partials.iter_mut() {
            if *sender != msg.task_id {
                p.interleaved = true;
            }
        }
    }

    /// Until when a message being read in chunks holds back the checkpoints of this task, if one
    /// does (a checkpoint published now could name a record in the middle of it, and a reader
    /// starting after that record would miss the message): [`chunk_wait`](Self::chunk_wait)
    /// after its first chunk was published. A sender
    /// publishes its chunks in one go, so a message that has not completed by then never will
    /// (its sender died half-way); counting from the publication, not from the reading, a task
    /// that reads an old partial message (it started at a checkpoint before it) is not held back
    /// again.
    pub(super) fn chunks_wait_until(&self) -> Option<u64> {
        let wait = self.chunk_wait();
        self.cursor
            .partials
            .values()
            .map(|p| p.since.saturating_add(wait))
            .filter(|until| self.now < *until)
            .max()
    }

    /// How long a partial message holds back checkpoints: `epochAckTimeout` (the time a reader
    /// is expected to take to read what was published), but never more than a quarter of
    /// `stateRefreshInterval`, so that a sender dying half-way delays the next clean checkpoint
    /// by at most that (see "Checkpoints" in the module docs).
    pub(super) fn chunk_wait(&self) -> u64 {
        self.opts
            .epoch_ack_timeout
            .min(self.opts.state_refresh_interval / 4)
            .max(1)
    }
}
