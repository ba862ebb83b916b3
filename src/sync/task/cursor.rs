//! Where a task is in the sync log: the counter it stamps on what it publishes, the counters it
//! read of every sender, the last record read, and the messages it is reading chunk by chunk.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeInclusive;

use super::chunk;
use crate::sync::types::{CheckpointRef, MessageType, SyncMessage};

/// The task's place in the sync log: the counters change only as records are stamped
/// ([`stamp`](Self::stamp)) and read ([`count`](Self::count), [`read_to`](Self::read_to)).
#[derive(Debug, Clone, Default)]
pub(super) struct Cursor {
    /// Messages this task has published (the last `messageSeq` it stamped).
    seq: u64,
    /// The highest `messageSeq` read from each sender (members of the epoch in force and
    /// senders read since).
    heard: BTreeMap<String, u64>,
    /// Own messages read back (the highest own `messageSeq` read, or a count where the
    /// transport dropped it).
    own_read: u64,
    /// The `messageSeq` of the newest own record other than a `Regular` one (an epoch, an
    /// answer, a checkpoint: see `checkpoint_waits`).
    last_not_regular: u64,
    /// The last record read (its sender and `messageSeq`): what a checkpoint published now is
    /// computed after.
    last_read: Option<CheckpointRef>,
    /// Messages read chunk by chunk, per sender, not complete yet.
    pub(super) partials: Partials,
}

impl Cursor {
    /// The last `messageSeq` this task stamped.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether some own record published is not read back yet.
    pub(super) fn own_unread(&self) -> bool {
        self.own_read < self.seq
    }

    /// The newest own record read back (its `messageSeq`).
    pub(super) fn own_read(&self) -> u64 {
        self.own_read
    }

    /// Whether own records up to `upto`, or the newest own record other than a `Regular` one
    /// if that is later, are not all read back yet.
    pub(super) fn own_unread_upto(&self, upto: u64) -> bool {
        self.own_read < upto.max(self.last_not_regular)
    }

    /// The last record read.
    pub(super) fn last_read(&self) -> Option<&CheckpointRef> {
        self.last_read.as_ref()
    }

    /// The next own record (of `kind`) is stamped: its `messageSeq`.
    pub(super) fn stamp(&mut self, kind: MessageType) -> u64 {
        self.seq += 1;
        if kind != MessageType::Regular {
            self.last_not_regular = self.seq;
        }
        self.seq
    }

    /// A record of `msg`'s sender is read (`me` is this task): whether it was read before (its
    /// counter is not new), or the records missing before it (a hole in the log: nothing more is
    /// counted).
    pub(super) fn count(
        &mut self,
        msg: &SyncMessage,
        me: &str,
    ) -> Result<bool, RangeInclusive<u64>> {
        let again = msg
            .message_seq
            .zip(self.heard.get(&msg.task_id))
            .is_some_and(|(seq, last)| seq <= *last);
        if let Some(seq) = msg.message_seq {
            let last = self.heard.entry(msg.task_id.clone()).or_insert(seq);
            if seq > last.saturating_add(1) {
                return Err(*last + 1..=seq - 1);
            }
            *last = (*last).max(seq);
        }
        if msg.task_id == me {
            self.own_read = msg
                .message_seq
                .map_or(self.own_read + 1, |s| self.own_read.max(s));
        }
        Ok(again)
    }

    /// Where a record read stands in the log: the record itself, or, read `again`, where the
    /// reader already was (a checkpoint names the newest record it read).
    pub(super) fn place_of(&self, msg: &SyncMessage, again: bool) -> Option<CheckpointRef> {
        match msg.message_seq {
            _ if again => self.last_read.clone(),
            Some(seq) => Some(CheckpointRef {
                after_task_id: msg.task_id.clone(),
                after_seq: seq,
                after_timestamp: Some(msg.message_timestamp),
            }),
            None => None,
        }
    }

    /// The counters of the senders `keep` does not keep are forgotten (a record of one read
    /// later is counted from there).
    pub(super) fn forget_senders(&mut self, keep: impl Fn(&String) -> bool) {
        self.heard.retain(|t, _| keep(t));
    }

    /// The task read up to `here` (see [`place_of`](Self::place_of)).
    pub(super) fn read_to(&mut self, here: Option<CheckpointRef>) {
        self.last_read = here;
    }

    /// The first message a task reads (it has read no record with a `messageSeq` and applied no
    /// epoch), if it is a checkpoint, is where the task starts: its view is the checkpoint's
    /// author's *as of the record it names*, so the task stands there, not at the checkpoint's
    /// own place in the log (docs/sync.md, "Where a new task starts reading"). The rule feeds it
    /// joined without its `messageSeq`; a transport that feeds it as its records gets the same
    /// task: it has read no record yet (a checkpoint it publishes before reading one names
    /// none), and the author's counter is not taken from it, so that the author's records
    /// between the named one and the checkpoint, replayed next, are read, not passed over as
    /// read already.
    pub(super) fn start_at(&mut self, first: &SyncMessage) {
        if first.kind != MessageType::NewEpoch || first.checkpoint.is_none() {
            return;
        }
        self.last_read = None;
        if first.message_seq.is_some() {
            self.heard.remove(&first.task_id);
        }
    }
}

/// The messages being read in chunks, by sender, in sender order: a handful at most (a sender
/// publishes its chunks in one go), so a sorted vector, not a B-tree of its own in the wasm.
#[derive(Clone, Default)]
pub(super) struct Partials(Vec<(String, chunk::Partial)>);

impl Partials {
    fn at(&self, sender: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(s, _)| s.as_str().cmp(sender))
    }

    pub(super) fn get_mut(&mut self, sender: &str) -> Option<&mut chunk::Partial> {
        let i = self.at(sender).ok()?;
        Some(&mut self.0[i].1)
    }

    pub(super) fn remove(&mut self, sender: &str) -> Option<chunk::Partial> {
        let i = self.at(sender).ok()?;
        Some(self.0.remove(i).1)
    }

    pub(super) fn insert(&mut self, sender: String, p: chunk::Partial) {
        match self.at(&sender) {
            Ok(i) => self.0[i].1 = p,
            Err(i) => self.0.insert(i, (sender, p)),
        }
    }

    /// The partial messages of senders other than `me`.
    pub(super) fn of_others<'a>(
        &'a self,
        me: &'a str,
    ) -> impl Iterator<Item = &'a chunk::Partial> + 'a {
        self.0.iter().filter(move |(s, _)| s != me).map(|(_, p)| p)
    }
}

impl fmt::Debug for Partials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(s, p)| (s, p)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(from: &str, seq: Option<u64>, kind: MessageType) -> SyncMessage {
        let mut m = SyncMessage::new(kind, "1-t1".to_string(), from.to_string(), 7, vec![]);
        m.message_seq = seq;
        m
    }

    #[test]
    fn stamping_counts_own_records_and_the_newest_not_regular_one() {
        let mut c = Cursor::default();
        assert_eq!(c.stamp(MessageType::NewEpoch), 1);
        assert_eq!(c.stamp(MessageType::Regular), 2);
        assert_eq!(c.seq(), 2);
        assert!(c.own_unread());
        assert!(c.own_unread_upto(0), "the NewEpoch is not read back");
        assert_eq!(
            c.count(&record("t1", Some(1), MessageType::NewEpoch), "t1"),
            Ok(false)
        );
        assert!(!c.own_unread_upto(1) && c.own_unread_upto(2) && c.own_unread());
        assert_eq!(
            c.count(&record("t1", Some(2), MessageType::Regular), "t1"),
            Ok(false)
        );
        assert!(!c.own_unread());
    }

    #[test]
    fn a_record_read_again_or_after_a_hole() {
        let mut c = Cursor::default();
        assert_eq!(
            c.count(&record("t2", Some(4), MessageType::Regular), "t1"),
            Ok(false)
        );
        assert_eq!(
            c.count(&record("t2", Some(5), MessageType::Regular), "t1"),
            Ok(false)
        );
        assert_eq!(
            c.count(&record("t2", Some(5), MessageType::Regular), "t1"),
            Ok(true)
        );
        assert_eq!(
            c.count(&record("t2", Some(3), MessageType::Regular), "t1"),
            Ok(true)
        );
        assert_eq!(
            c.count(&record("t2", Some(8), MessageType::Regular), "t1"),
            Err(6..=7)
        );
        // a sender forgotten is counted afresh
        c.forget_senders(|t| t != "t2");
        assert_eq!(
            c.count(&record("t2", Some(8), MessageType::Regular), "t1"),
            Ok(false)
        );
        // a record without a counter is never read again; an own one counts as read back
        assert_eq!(
            c.count(&record("t1", None, MessageType::Regular), "t1"),
            Ok(false)
        );
        c.stamp(MessageType::Regular);
        assert!(!c.own_unread());
    }

    #[test]
    fn the_place_of_a_record_and_where_the_reader_is() {
        let mut c = Cursor::default();
        let m = record("t2", Some(4), MessageType::Regular);
        let here = c.place_of(&m, false);
        assert_eq!(
            here,
            Some(CheckpointRef {
                after_task_id: "t2".into(),
                after_seq: 4,
                after_timestamp: Some(7),
            })
        );
        c.read_to(here.clone());
        // read again: the reader stays where it was
        assert_eq!(
            c.place_of(&record("t3", Some(1), MessageType::Regular), true),
            here
        );
        assert_eq!(
            c.place_of(&record("t3", None, MessageType::Regular), false),
            None
        );
        assert_eq!(c.last_read(), here.as_ref());
    }

    #[test]
    fn a_first_checkpoint_read_is_where_the_task_starts() {
        let mut c = Cursor::default();
        c.count(&record("t2", Some(4), MessageType::Regular), "t1")
            .unwrap();
        c.read_to(c.place_of(&record("t2", Some(4), MessageType::Regular), false));
        let mut cp = record("t2", Some(9), MessageType::NewEpoch);
        cp.checkpoint = Some(CheckpointRef {
            after_task_id: "t2".into(),
            after_seq: 4,
            after_timestamp: None,
        });
        c.start_at(&cp);
        assert_eq!(c.last_read(), None);
        // the author's counter is not taken from it: its records after the named one are read
        assert_eq!(
            c.count(&record("t2", Some(2), MessageType::Regular), "t1"),
            Ok(false)
        );
        // anything but a checkpoint changes nothing
        c.read_to(c.place_of(&record("t2", Some(2), MessageType::Regular), false));
        c.start_at(&record("t2", Some(3), MessageType::NewEpoch));
        assert!(c.last_read().is_some());
    }
}
