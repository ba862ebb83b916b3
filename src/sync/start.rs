//! Where a new task starts reading the sync log: the one start rule (docs/sync-design.md, "Where a
//! new task starts reading", and the chunk section's "Where a new task starts"). `KafkaTaskSync`'s
//! `findEpochStart`, the simulation and the retention tests all call [`find_epoch_start`]; a
//! task that starts after a checkpoint applies [`checkpoint_message`] first.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{ErrorKind, SyncError};
use super::task::{join_chunk_states, join_chunk_states_owned, same_chunked_message, ChunkedState};
use super::types::{ChunkRef, MessageType, SyncMessage};

/// Most records [`find_epoch_start`] takes in one call (`MAX_BATCH_ITEMS` of the JS layer).
pub const MAX_START_RECORDS: usize = 1 << 24;

/// The header fields of one retained record that the start rule reads. A field a record does not
/// carry, or carries with the wrong type, is `None` (`resend`: `false`; `epoch_generation`: 0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordHeader<'a> {
    /// `type`: `None` for a type other than the three message kinds.
    pub kind: Option<MessageType>,
    /// `syncEpoch`.
    pub sync_epoch: Option<&'a str>,
    /// `baseEpoch`.
    pub base_epoch: Option<&'a str>,
    /// `resend`.
    pub resend: bool,
    /// `taskID`: the sender.
    pub task_id: Option<&'a str>,
    /// `messageSeq`: the sender's counter.
    pub message_seq: Option<u64>,
    /// `epochGeneration`.
    pub epoch_generation: u64,
    /// `checkpoint`: `(afterTaskID, afterSeq)`, the record its author had read last.
    pub checkpoint: Option<(&'a str, u64)>,
    /// `chunk`.
    pub chunk: Option<ChunkRef>,
}

impl<'a> RecordHeader<'a> {
    /// The header of a parsed message.
    pub fn of(m: &'a SyncMessage) -> Self {
        RecordHeader {
            kind: Some(m.kind),
            sync_epoch: Some(&m.sync_epoch),
            base_epoch: m.base_epoch.as_deref(),
            resend: m.resend,
            task_id: Some(&m.task_id),
            message_seq: m.message_seq,
            epoch_generation: m.epoch_generation,
            checkpoint: m
                .checkpoint
                .as_ref()
                .map(|c| (c.after_task_id.as_str(), c.after_seq)),
            chunk: m.chunk.clone(),
        }
    }

    fn is_epoch(&self) -> bool {
        self.kind == Some(MessageType::NewEpoch)
    }

    /// A record that is not a later chunk of a message (it starts one, or is whole).
    fn is_first(&self) -> bool {
        self.chunk.as_ref().is_none_or(|c| c.index == 0)
    }
}

/// One retained record: its offset and its header, `None` for a record that is not a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord<'a> {
    /// The record's offset in the sync topic.
    pub offset: u64,
    /// Its header, `None` when unreadable.
    pub header: Option<RecordHeader<'a>>,
}

/// Where a task that has applied no epoch starts reading (see [`find_epoch_start`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EpochStart {
    /// Replay from this offset: a clean checkpoint's, the base epoch's first NewEpoch's, or the
    /// earliest retained offset (`low`).
    At(u64),
    /// Apply the checkpoint whose records are at `checkpoint` (offsets in order: one, or its
    /// chunks; the first is where it stands) first, joined ([`checkpoint_message`]), then replay
    /// from `offset`: the record after the one it names, or the first chunk of a message in
    /// chunks that record falls in the middle of (its author had read a part of it).
    AfterCheckpoint {
        /// Where the replay starts.
        offset: u64,
        /// The offsets of the checkpoint's records, in order.
        checkpoint: Vec<u64>,
    },
    /// The records do not reach back far enough and more of the log exists before them.
    Extend,
}

fn invalid(message: impl Into<String>) -> SyncError {
    SyncError::new(ErrorKind::InvalidArgument, message)
}

/// The rule over the records of a tail of the sync log, in offset order (docs/sync-design.md,
/// "Where a new task starts reading"): the latest usable checkpoint (clean: start at it; otherwise apply
/// it first and replay from the record after the one it names); without one, the first whole
/// NewEpoch of the latest NewEpoch's base epoch not written by a task still behind; failing
/// that, `Extend` when `at_low` is false (more log exists before the records), else the first
/// whole NewEpoch of the latest epoch itself, else `low`, the whole retained log.
///
/// Errors: `INVALID_ARGUMENT` when offsets do not increase, `INPUT_TOO_LARGE` over
/// [`MAX_START_RECORDS`] records.
///
/// # Examples
/// ```
/// use partkit::sync::{find_epoch_start, EpochStart, LogRecord};
/// // no message at all: the whole retained log
/// let records = [LogRecord { offset: 7, header: None }];
/// assert_eq!(find_epoch_start(&records, true, 7), Ok(EpochStart::At(7)));
/// assert_eq!(find_epoch_start(&records, false, 0), Ok(EpochStart::Extend));
/// ```
pub fn find_epoch_start(
    records: &[LogRecord<'_>],
    at_low: bool,
    low: u64,
) -> Result<EpochStart, SyncError> {
    if records.len() > MAX_START_RECORDS {
        return Err(SyncError::new(
            ErrorKind::InputTooLarge,
            format!(
                "findEpochStart: records has {} items, more than the bound of {MAX_START_RECORDS} items",
                records.len()
            ),
        ));
    }
    for (i, w) in records.windows(2).enumerate() {
        if w[1].offset <= w[0].offset {
            return Err(invalid(format!(
                "findEpochStart: records[{}].offset must be greater than the one before it (records in offset order)",
                i + 1
            )));
        }
    }
    Ok(Rule::new(records).start(at_low, low))
}

/// The records of one call, with what the rule computes once.
struct Rule<'r, 'a> {
    rs: &'r [LogRecord<'a>],
    /// `ahead[k]`: the highest epoch generation a task that had applied its epoch wrote with in
    /// `rs[..k]` (a fresh NewEpoch attempt is left out: it may be one that every task ignored).
    ahead: Vec<u64>,
    /// The indexes of the whole NewEpochs (or their first chunks), in order.
    epochs: Vec<usize>,
}

impl<'r, 'a> Rule<'r, 'a> {
    fn new(rs: &'r [LogRecord<'a>]) -> Self {
        let mut ahead = Vec::with_capacity(rs.len() + 1);
        ahead.push(0);
        let mut epochs = Vec::new();
        let mut top = 0;
        for (k, r) in rs.iter().enumerate() {
            if let Some(h) = &r.header {
                if !h.is_epoch() || h.resend {
                    top = top.max(h.epoch_generation);
                }
                if h.is_epoch() && h.is_first() {
                    epochs.push(k);
                }
            }
            ahead.push(top);
        }
        Rule { rs, ahead, epochs }
    }

    fn header(&self, k: usize) -> Option<&RecordHeader<'a>> {
        self.rs[k].header.as_ref()
    }

    /// The indexes of the records of the message whose first record is `rs[i]`: `[i]`, or its
    /// chunks (the records of its sender with the next counters, at the next indexes, in
    /// order); `None` if one is missing.
    fn chunks_of(&self, i: usize) -> Option<Vec<usize>> {
        let first = self.header(i)?;
        let Some(c) = &first.chunk else {
            return Some(vec![i]);
        };
        let (seq0, sender) = (first.message_seq?, first.task_id?);
        let mut out = vec![i];
        let mut at = i;
        for n in 1..c.count {
            let seq = seq0.checked_add(u64::from(n))?;
            let next = (at + 1..self.rs.len()).find(|&k| {
                self.header(k)
                    .is_some_and(|h| h.task_id == Some(sender) && h.message_seq == Some(seq))
            })?;
            if self.header(next)?.chunk.as_ref().map(|c| c.index) != Some(n) {
                return None;
            }
            out.push(next);
            at = next;
        }
        Some(out)
    }

    /// The earliest first chunk of the messages in chunks that `rs[j]` falls in the middle of:
    /// the last record of their sender at or before `j` is a chunk but not the last one, and
    /// their last chunk comes after `j`. A task that read the log up to `rs[j]` (a checkpoint's
    /// author, who names it) has read only a part of each of them and applies it when it reads
    /// its last chunk, after `rs[j]`: a task starting after `rs[j]` never could. (Its author
    /// published the checkpoint once the chunk wait was over, taking the message as abandoned by
    /// a sender that died half-way; a reader that lags behind the log has not read the chunks
    /// that landed meanwhile.) `Some(None)` when there is none; `None` when one's first chunk
    /// is not in the records (nothing can start after `rs[j]` without missing it).
    fn opened_before(&self, j: usize) -> Option<Option<usize>> {
        let mut senders = std::collections::BTreeSet::new();
        let mut earliest: Option<usize> = None;
        for k in (0..=j).rev() {
            let Some(h) = self.header(k) else { continue };
            let Some(sender) = h.task_id else { continue };
            if !senders.insert(sender) {
                continue; // not its sender's last record up to `j`
            }
            let (Some(c), Some(seq)) = (&h.chunk, h.message_seq) else {
                continue;
            };
            if c.index + 1 >= c.count {
                continue; // its last chunk: the message is complete at `j` (or dropped)
            }
            let Some(seq0) = seq.checked_sub(u64::from(c.index)) else {
                continue;
            };
            let first = (0..=k).find(|&f| {
                self.header(f).is_some_and(|r| {
                    r.task_id == Some(sender)
                        && r.message_seq == Some(seq0)
                        && r.chunk.as_ref().is_some_and(|c| c.index == 0)
                })
            });
            match first {
                Some(f) => {
                    if self
                        .chunks_of(f)
                        .is_some_and(|cs| cs.last().is_some_and(|&l| l > j))
                    {
                        earliest = Some(earliest.map_or(f, |e| e.min(f)));
                    }
                }
                None => {
                    // its first chunk is not in the records: if it goes on after `j`, a task
                    // starting here would miss it
                    let goes_on = (j + 1..self.rs.len()).any(|n| {
                        self.header(n).is_some_and(|r| {
                            r.task_id == Some(sender)
                                && r.message_seq == seq.checked_add(1)
                                && r.chunk.as_ref().map(|c| c.index) == Some(c.index + 1)
                        })
                    });
                    if goes_on {
                        return None;
                    }
                }
            }
        }
        Some(earliest)
    }

    /// Where the replay starts when the latest usable checkpoint is at `rs[i]`, if it is one.
    fn checkpoint_at(&self, i: usize) -> Option<EpochStart> {
        let h = self.header(i)?;
        if !h.is_epoch() || !h.resend || !h.is_first() {
            return None;
        }
        let (after_task, after_seq) = h.checkpoint?;
        // a chunked checkpoint stands at its first chunk, and counts only if every chunk is there
        let chunks = self.chunks_of(i)?;
        // the record it names, at its first place in the records
        let j = (0..i).find(|&k| {
            self.header(k)
                .is_some_and(|r| r.task_id == Some(after_task) && r.message_seq == Some(after_seq))
        })?;
        // the messages in chunks its author was in the middle of at the record it names (their
        // first chunk before it, their last after it): the replay starts at the earliest one's
        // first chunk, or a task starting after the named record would miss them
        let from = self.opened_before(j)?.unwrap_or(j + 1);
        // every offset from there (or from the named record) to the checkpoint is in the records
        let lo = from.min(j);
        if self.rs[i].offset - self.rs[lo].offset != (i - lo) as u64 {
            return None;
        }
        // written by a task still behind an epoch that some task had already written from
        if h.epoch_generation < self.ahead[j + 1] {
            return None;
        }
        // written by a task that missed a NewEpoch built on the checkpoint's epoch, read before
        // the record it names (a whole one applies wherever its base is in force)
        let missed = self.epochs.iter().take_while(|&&p| p <= j).any(|&p| {
            self.header(p).is_some_and(|e| {
                e.epoch_generation > h.epoch_generation
                    && e.base_epoch.is_some()
                    && e.base_epoch == h.sync_epoch
            }) && self.chunks_of(p).is_some()
        });
        if missed {
            return None;
        }
        let contiguous = chunks.iter().enumerate().all(|(n, &k)| k == i + n);
        if j + 1 == i && contiguous && from == j + 1 {
            return Some(EpochStart::At(self.rs[i].offset)); // clean
        }
        Some(EpochStart::AfterCheckpoint {
            offset: self.rs[from].offset,
            checkpoint: chunks.iter().map(|&k| self.rs[k].offset).collect(),
        })
    }

    fn start(&self, at_low: bool, low: u64) -> EpochStart {
        if let Some(found) = (1..self.rs.len()).rev().find_map(|i| self.checkpoint_at(i)) {
            return found;
        }
        let from_low = if at_low {
            EpochStart::At(low)
        } else {
            EpochStart::Extend
        };
        let Some(latest) = self
            .rs
            .iter()
            .rev()
            .find_map(|r| r.header.as_ref().filter(|h| h.is_epoch()))
        else {
            return from_low;
        };
        let Some(base) = latest.base_epoch.filter(|b| !b.is_empty()) else {
            return from_low;
        };
        // the first whole NewEpoch of the base (a re-publication of it written after some task
        // wrote from a later epoch is stale); a later chunk is no place to start
        let at = |k: usize| EpochStart::At(self.rs[k].offset);
        let first = self.epochs.iter().copied().find(|&k| {
            self.header(k)
                .is_some_and(|e| e.sync_epoch == Some(base) && e.epoch_generation >= self.ahead[k])
        });
        if let Some(k) = first {
            return at(k);
        }
        if !at_low {
            return EpochStart::Extend;
        }
        // the base epoch is no longer retained: start at the latest epoch itself, the best left
        self.epochs
            .iter()
            .copied()
            .find(|&k| {
                self.header(k)
                    .is_some_and(|e| e.sync_epoch == latest.sync_epoch)
            })
            .map_or(EpochStart::At(low), at)
    }
}

/// A chunked message joined from its chunks' parsed messages in order, as a `SyncTask` joins
/// them when it reads its last chunk: the first chunk's header without `chunk` (and the last
/// chunk's `messageSeq`), every chunk's `connectorState` appended (a task's state split over
/// consecutive chunks is one state again). A message that is not a chunk (or the only chunk of
/// one) comes back whole. `INVALID_ARGUMENT` when the chunks are not chunks `0..count` of one
/// message of one sender with consecutive counters.
pub fn join_chunks(parts: Vec<SyncMessage>) -> Result<SyncMessage, SyncError> {
    let n = parts.len();
    let mut parts = parts.into_iter();
    let Some(mut whole) = parts.next() else {
        return Err(invalid("joinChunks: no chunks to join"));
    };
    let Some(first) = whole.chunk.clone() else {
        if n > 1 {
            return Err(invalid(
                "joinChunks: a message that is not a chunk cannot be joined with others",
            ));
        }
        return Ok(whole);
    };
    if first.index != 0 || usize::try_from(first.count).ok() != Some(n) {
        return Err(invalid(format!(
            "joinChunks: chunk {} of {} given first, with {n} chunks",
            first.index, first.count
        )));
    }
    let header = whole.clone();
    for (i, part) in parts.enumerate() {
        let index = i as u64 + 1;
        let follows = match (header.message_seq, part.message_seq) {
            (Some(a), Some(b)) => a.checked_add(index) == Some(b),
            _ => true,
        };
        let in_order = part.chunk.as_ref().map(|c| u64::from(c.index)) == Some(index);
        if !in_order
            || part.task_id != header.task_id
            || !same_chunked_message(&header, &part)
            || !follows
        {
            return Err(invalid(format!(
                "joinChunks: the record given as chunk {index} is not chunk {index} of the first one's message"
            )));
        }
        join_chunk_states(&mut whole.connector_state, &part.connector_state);
        whole.message_seq = part.message_seq;
    }
    whole.chunk = None;
    Ok(whole)
}

/// What a task that starts after a checkpoint ([`EpochStart::AfterCheckpoint`]) applies first:
/// the checkpoint joined from its records ([`join_chunks`]), without its `messageSeq`, which
/// belongs to its place in the log (it is read again there).
pub fn checkpoint_message(parts: Vec<SyncMessage>) -> Result<SyncMessage, SyncError> {
    let mut whole = join_chunks(parts)?;
    whole.message_seq = None;
    Ok(whole)
}

/// A message as a transport read it, whatever its fields: its `connectorState` as states to
/// join, every other field kept as it is (a `SyncTask` checks the joined message when it reads
/// it). What [`checkpoint_message_value`] joins. It reads any JSON object; the shape of
/// `connectorState` (an array of objects whose `data` and `share`, when not null, are objects
/// with an array `partitions`) is checked by [`checkpoint_message_value`], whose message writes
/// its `connectorState` first, and each state's `taskID`, `data` and `share` first.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageValue {
    /// The states, once read out of `rest` by [`checkpoint_message_value`].
    states: Option<Vec<StateValue>>,
    rest: Map<String, Value>,
}

impl<'de> Deserialize<'de> for MessageValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(MessageValue {
            states: None,
            rest: Map::deserialize(d)?,
        })
    }
}

/// A task's state in a [`MessageValue`]: its id, its partitions and shares, the rest as read.
#[derive(Debug, Clone, PartialEq)]
struct StateValue {
    task_id: Value,
    data: Option<ListValue>,
    share: Option<ListValue>,
    rest: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct ListValue {
    partitions: Vec<Value>,
    rest: Map<String, Value>,
}

/// What a JSON value is, in JS words.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn must_be(path: &str, what: &str, v: &Value) -> SyncError {
    invalid(format!(
        "checkpointMessage: {path} must be {what}, got {}",
        kind_of(v)
    ))
}

impl ListValue {
    fn read(value: Value, path: &str) -> Result<Option<ListValue>, SyncError> {
        let mut rest = match value {
            Value::Null => return Ok(None),
            Value::Object(m) => m,
            v => return Err(must_be(path, "an object", &v)),
        };
        let partitions = match rest.remove("partitions") {
            None => Vec::new(),
            Some(Value::Array(a)) => a,
            Some(v) => return Err(must_be(&format!("{path}.partitions"), "an array", &v)),
        };
        Ok(Some(ListValue { partitions, rest }))
    }
}

impl StateValue {
    fn read(value: Value, path: &str) -> Result<StateValue, SyncError> {
        let mut rest = match value {
            Value::Object(m) => m,
            v => return Err(must_be(path, "an object", &v)),
        };
        let task_id = rest.remove("taskID").unwrap_or(Value::Null);
        let mut list = |key: &str| match rest.remove(key) {
            None => Ok(None),
            Some(v) => ListValue::read(v, &format!("{path}.{key}")),
        };
        let (data, share) = (list("data")?, list("share")?);
        Ok(StateValue {
            task_id,
            data,
            share,
            rest,
        })
    }
}

impl ChunkedState for StateValue {
    fn continues(&self, next: &Self) -> bool {
        self.task_id == next.task_id
    }
    fn append(&mut self, next: Self) {
        for (mine, more) in [(&mut self.data, next.data), (&mut self.share, next.share)] {
            let list = mine.get_or_insert_with(ListValue::default);
            list.partitions.extend(more.unwrap_or_default().partitions);
        }
    }
}

/// A message's states and the rest of its fields.
fn split_message(
    m: MessageValue,
    i: usize,
) -> Result<(Vec<StateValue>, Map<String, Value>), SyncError> {
    let mut rest = m.rest;
    if let Some(states) = m.states {
        return Ok((states, rest));
    }
    let states = match rest.remove("connectorState") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .into_iter()
            .enumerate()
            .map(|(j, s)| StateValue::read(s, &format!("messages[{i}].connectorState[{j}]")))
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(must_be(
                &format!("messages[{i}].connectorState"),
                "an array",
                &v,
            ))
        }
    };
    Ok((states, rest))
}

impl Serialize for ListValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("partitions", &self.partitions)?;
        for (k, v) in &self.rest {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for StateValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("taskID", &self.task_id)?;
        if let Some(data) = &self.data {
            m.serialize_entry("data", data)?;
        }
        if let Some(share) = &self.share {
            m.serialize_entry("share", share)?;
        }
        for (k, v) in &self.rest {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for MessageValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(states) = &self.states else {
            return self.rest.serialize(s);
        };
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("connectorState", states)?;
        for (k, v) in &self.rest {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// `chunk` of a message as the start rule reads it: `(index, count)` when both are integers
/// with `index < count`, else none (a field of the wrong type counts as absent).
fn chunk_value(m: &Map<String, Value>) -> Option<(u64, u64)> {
    let c = m.get("chunk")?.as_object()?;
    let (index, count) = (c.get("index")?.as_u64()?, c.get("count")?.as_u64()?);
    (index < count).then_some((index, count))
}

/// [`checkpoint_message`] over messages as a transport read them ([`MessageValue`]): the
/// checkpoint at the offsets [`find_epoch_start`] named, joined with the same join as a
/// `SyncTask`'s, without `chunk` and `messageSeq`: it writes `connectorState` first (`[]` when
/// there was none), each state with its `taskID` (`null` when it had none), `data` and `share`
/// (left out when null; each with its `partitions`, `[]` when it had none) first.
/// `INVALID_ARGUMENT` when the records are not chunks `0..count` of one sender with consecutive
/// counters, or several records not chunks, or a `connectorState` not of that shape.
pub fn checkpoint_message_value(parts: Vec<MessageValue>) -> Result<MessageValue, SyncError> {
    let n = parts.len() as u64;
    let mut parts = parts.into_iter().enumerate();
    let Some((_, first)) = parts.next() else {
        return Err(invalid(
            "checkpointMessage: messages must hold the records of one message, got none",
        ));
    };
    let (mut states, mut rest) = split_message(first, 0)?;
    match chunk_value(&rest) {
        None if n > 1 => {
            return Err(invalid(
                "checkpointMessage: messages[0] is not a chunk, so messages must hold it alone",
            ))
        }
        None => {}
        Some((index, count)) if index != 0 || count != n => {
            return Err(invalid(format!(
                "checkpointMessage: messages[0] must be chunk 0 of its message, got chunk {index} of {count} (with {n} records)"
            )))
        }
        Some((_, count)) => {
            let sender = rest.get("taskID").cloned();
            let seq0 = rest.get("messageSeq").and_then(Value::as_u64);
            for (i, part) in parts {
                let index = i as u64;
                let seq = part.rest.get("messageSeq").and_then(Value::as_u64);
                let follows = match (seq0, seq) {
                    (Some(a), Some(b)) => a.checked_add(index) == Some(b),
                    _ => true,
                };
                if chunk_value(&part.rest) != Some((index, count))
                    || part.rest.get("taskID").cloned() != sender
                    || !follows
                {
                    return Err(invalid(format!(
                        "checkpointMessage: messages[{index}] is not chunk {index} of the message of messages[0]"
                    )));
                }
                join_chunk_states_owned(&mut states, split_message(part, i)?.0);
            }
        }
    }
    rest.remove("chunk");
    rest.remove("messageSeq");
    Ok(MessageValue {
        states: Some(states),
        rest,
    })
}

#[cfg(test)]
mod tests;
