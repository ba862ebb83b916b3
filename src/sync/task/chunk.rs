//! A bound on every record: a message whose JSON is larger than `maxRecordBytes` goes out as
//! numbered chunks, and a reader applies it only once it has read every chunk, in order.

use std::borrow::Cow;

use super::limits::{MAX_CHUNKS, MAX_SAFE_INTEGER};
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

/// A message read chunk by chunk: what its chunks carried so far. It takes only the chunk that
/// follows in order ([`accepts`](Self::accepts)).
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
    before: Option<CheckpointRef>,
    /// When the wait it holds checkpoints back for starts: when its first chunk was read, or
    /// published (its `messageTimestamp`) if that is longer than the wait before.
    since: u64,
}

impl Partial {
    /// A message whose first chunk (`header`, with `states`) was read after the record
    /// `before`; the wait it holds checkpoints back for starts at `since`.
    pub(super) fn open(
        header: SyncMessage,
        states: Vec<TaskState>,
        before: Option<CheckpointRef>,
        since: u64,
    ) -> Self {
        Partial {
            first_seq: header.message_seq,
            header,
            states,
            next: 1,
            before,
            since,
        }
    }

    /// When the wait it holds checkpoints back for starts.
    pub(super) fn since(&self) -> u64 {
        self.since
    }

    /// The record read before its first chunk.
    pub(super) fn before(self) -> Option<CheckpointRef> {
        self.before
    }

    /// Whether chunk `msg` is the next one of this message: the next index, the same message,
    /// the counter that follows (when both have one).
    pub(super) fn accepts(&self, msg: &SyncMessage) -> bool {
        msg.chunk.as_ref().is_some_and(|c| c.index == self.next)
            && same_message(&self.header, msg)
            && self.follows(msg)
    }

    /// Whether chunk `msg` carries the counter that follows the chunks read (when both have one).
    fn follows(&self, msg: &SyncMessage) -> bool {
        match (self.first_seq, msg.message_seq, &msg.chunk) {
            (Some(first), Some(seq), Some(c)) => seq == first + u64::from(c.index),
            _ => true,
        }
    }

    /// Appends the states of the next chunk (one it [`accepts`](Self::accepts)).
    pub(super) fn extend(&mut self, states: Vec<TaskState>) {
        join_owned(&mut self.states, states);
        self.next += 1;
    }

    /// The whole message that last chunk `msg` (one it [`accepts`](Self::accepts)) completes: the
    /// states are moved out of it (not copied), and [`put_back`](Self::put_back) with the mark
    /// returned restores them if the whole message is refused.
    pub(super) fn complete(&mut self, msg: &SyncMessage) -> (SyncMessage, JoinMark) {
        let mut states = std::mem::take(&mut self.states);
        let mark = JoinMark::of(&states);
        join(&mut states, &msg.connector_state);
        let whole = SyncMessage {
            connector_state: states,
            chunk: None,
            message_seq: msg.message_seq,
            ..self.header.clone()
        };
        (whole, mark)
    }

    /// The states of `whole` (from [`complete`](Self::complete), refused) are put back as they
    /// were before its last chunk.
    pub(super) fn put_back(&mut self, whole: SyncMessage, mark: &JoinMark) {
        let mut states = whole.connector_state;
        mark.undo(&mut states);
        self.states = states;
    }
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
pub(super) fn split_states(msg: Cow<'_, SyncMessage>) -> (SyncMessage, Vec<TaskState>) {
    let mut header = msg.into_owned();
    let states = std::mem::take(&mut header.connector_state);
    (header, states)
}

/// Where [`join`] starts appending to `states`: undoing it truncates back to there.
pub(super) struct JoinMark {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::types::{MessageType, PartitionState};

    fn state(task: &str, tokens: &[&str]) -> TaskState {
        let mut s = TaskState::empty(task);
        s.data.partitions = tokens
            .iter()
            .map(|t| PartitionState::created(*t, vec![]))
            .collect();
        s
    }

    fn chunk(index: u32, count: u32, seq: u64, states: Vec<TaskState>) -> SyncMessage {
        let mut m = SyncMessage::new(
            MessageType::NewEpoch,
            "2-t1".to_string(),
            "t1".to_string(),
            5,
            states,
        );
        m.chunk = Some(ChunkRef { index, count });
        m.message_seq = Some(seq);
        m
    }

    fn tokens(m: &SyncMessage) -> Vec<Vec<&str>> {
        m.connector_state
            .iter()
            .map(|s| s.data.partitions.iter().map(|p| p.token.as_str()).collect())
            .collect()
    }

    fn opened() -> Partial {
        let (header, states) = split_states(Cow::Owned(chunk(0, 3, 10, vec![state("a", &["p1"])])));
        Partial::open(header, states, None, 5)
    }

    #[test]
    fn a_partial_takes_only_the_chunk_that_follows() {
        let p = opened();
        assert!(p.accepts(&chunk(1, 3, 11, vec![])));
        assert!(!p.accepts(&chunk(2, 3, 12, vec![])), "out of order");
        assert!(
            !p.accepts(&chunk(1, 3, 12, vec![])),
            "a counter that does not follow"
        );
        assert!(!p.accepts(&chunk(1, 4, 11, vec![])), "another message");
        let mut other = chunk(1, 3, 11, vec![]);
        other.sync_epoch = "3-t1".into();
        assert!(!p.accepts(&other), "another epoch");
        let mut unnumbered = chunk(1, 3, 0, vec![]);
        unnumbered.message_seq = None;
        assert!(p.accepts(&unnumbered), "no counter to check");
    }

    #[test]
    fn chunks_join_a_state_split_over_them_and_a_refused_whole_is_put_back() {
        let mut p = opened();
        p.extend(vec![state("a", &["p2"]), state("b", &["q1"])]);
        let last = chunk(2, 3, 12, vec![state("b", &["q2"]), state("c", &["r1"])]);
        assert!(p.accepts(&last));
        let (whole, mark) = p.complete(&last);
        assert_eq!(
            tokens(&whole),
            [vec!["p1", "p2"], vec!["q1", "q2"], vec!["r1"]]
        );
        assert_eq!((whole.chunk.as_ref(), whole.message_seq), (None, Some(12)));
        p.put_back(whole, &mark);
        // as before the last chunk: it completes the same message again
        let (again, _) = p.complete(&last);
        assert_eq!(
            tokens(&again),
            [vec!["p1", "p2"], vec!["q1", "q2"], vec!["r1"]]
        );
        assert_eq!((p.since(), p.before()), (5, None));
    }

    #[test]
    fn a_chunk_without_its_states_is_its_header() {
        let (header, states) = split_states(Cow::Owned(chunk(0, 2, 1, vec![state("a", &["x"])])));
        assert!(header.connector_state.is_empty());
        assert_eq!(states.len(), 1);
        let mut joined = vec![state("a", &["x"])];
        join(&mut joined, &[state("a", &["y"]), state("b", &[])]);
        assert_eq!(joined.len(), 2);
        assert_eq!(joined[0].data.partitions.len(), 2);
    }
}
