//! What a task keeps of the re-publications of the epoch in force it times (checkpoints, resends
//! to tasks that missed the epoch) and of its clean stop. The steps that decide them are
//! `republish`'s and `close`'s; the timer table (`deadline`) reads the two deadlines here.

use std::collections::BTreeSet;

use super::timer::backoff;
use crate::sync::types::{MessageType, SyncMessage};

/// The re-publications of the epoch in force this task times: checkpoints and resends.
#[derive(Debug, Clone, Default)]
pub(super) struct Refresh {
    /// When this task, the leader of the epoch in force, next publishes a checkpoint of it.
    refresh_at: Option<u64>,
    /// When this task re-publishes the epoch in force for a task that missed it, unless it reads
    /// a re-publication of it first (see `want_resend`).
    resend_at: Option<u64>,
    /// When the last clean checkpoint this task read (by any author) was published (its
    /// `messageTimestamp`, or when it was read if earlier): a new epoch's leader publishes the
    /// next one `stateRefreshInterval` after it, however often epochs change, and a task that
    /// started at an old checkpoint does not wait a whole interval more.
    checkpoint_seen: Option<u64>,
    /// When this task last read a clean checkpoint (its clock): an own checkpoint published
    /// before then that turns out not clean is not retried (see `retry_unclean`).
    clean_read_at: Option<u64>,
    /// The own checkpoints in a row that were not clean: each retry waits twice as long.
    unclean_retries: u32,
    /// A checkpoint fell due while own records were not read back yet: the newest own
    /// `messageSeq` when it did. It goes out once that record and every own epoch, answer and
    /// checkpoint are read back (see `checkpoint_waits`).
    checkpoint_waiting: Option<u64>,
    /// Whether the last checkpoint this task published went out while own `Regular` records
    /// were not read back yet: it cannot be clean (they land between the record it names and
    /// itself), and is not retried for that (see `checkpoint_in`).
    checkpoint_over_own: bool,
    /// The newest own `messageSeq` of a record that is neither `Regular` nor a plain NewEpoch
    /// (an answer, a checkpoint): a due checkpoint waits for it (see `checkpoint_waits`).
    last_other: u64,
    /// The newest run of own plain NewEpochs of one epoch (a leader's epoch, published again
    /// while not read back, or re-published for tasks that missed it): its id and the
    /// `messageSeq` of its first record. Copies of the epoch in force do not hold a due
    /// checkpoint back (see `checkpoint_waits`).
    epoch_copies: Option<(String, u64)>,
    /// Whether the task was told to stop cleanly, and whether its final checkpoint went out.
    closing: Closing,
    /// The answers from an older epoch this task showed the epoch in force for, once each
    /// (their rebalance generation and sender, in this order: the set shares its code with the
    /// other sets of (generation, id); see `want_resend`).
    resent_to: BTreeSet<(u64, String)>,
    /// The epochs built on an epoch older than the one in force (their leader missed it) this
    /// task showed the epoch in force for, once each.
    resent_for_forks: BTreeSet<String>,
}

/// Where a task is in stopping cleanly (see [`SyncTask::close`](super::SyncTask::close)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Closing {
    /// Running.
    #[default]
    Open,
    /// Closing: its final checkpoint waits for its own records to be read back (or for a
    /// message being read in chunks to complete).
    Wanted,
    /// Closed: the final checkpoint went out, or none could (no epoch, behind, fenced).
    Done,
}

impl Refresh {
    /// When this task's next checkpoint falls due, if one is scheduled.
    pub(super) fn refresh_at(&self) -> Option<u64> {
        self.refresh_at
    }

    /// When this task re-publishes the epoch in force for a task that missed it, if it will.
    pub(super) fn resend_at(&self) -> Option<u64> {
        self.resend_at
    }

    /// When the last clean checkpoint this task read was published (see `clean_read`).
    pub(super) fn checkpoint_seen(&self) -> Option<u64> {
        self.checkpoint_seen
    }

    /// The next checkpoint falls due at `due` (none when `None`); none waits any more for own
    /// records to be read back.
    pub(super) fn schedule(&mut self, due: Option<u64>) {
        self.checkpoint_waiting = None;
        self.refresh_at = due;
    }

    /// The scheduled checkpoint falls due at `at` if that is sooner (nothing if none is).
    pub(super) fn due_by(&mut self, at: u64) {
        if let Some(t) = &mut self.refresh_at {
            *t = (*t).min(at);
        }
    }

    /// A checkpoint fell due now; the next one falls due at `next`. Until it goes out it waits
    /// for the own records up to `newest_own` (or, if it already waited, up to what it waited
    /// for): the own `messageSeq` it waits for.
    pub(super) fn fall_due(&mut self, next: Option<u64>, newest_own: u64) -> u64 {
        self.refresh_at = next;
        *self.checkpoint_waiting.get_or_insert(newest_own)
    }

    /// The own `messageSeq` a due checkpoint waits to read back, if one waits.
    pub(super) fn waiting(&self) -> Option<u64> {
        self.checkpoint_waiting
    }

    /// The due checkpoint waits no more (it goes out, or waits for something else).
    pub(super) fn stop_waiting(&mut self) {
        self.checkpoint_waiting = None;
    }

    /// A checkpoint went out; `over_own` when own `Regular` records were not read back yet (it
    /// cannot be clean).
    pub(super) fn published_checkpoint(&mut self, over_own: bool) {
        self.checkpoint_over_own = over_own;
    }

    /// Whether the last own checkpoint went out over own records not read back yet.
    pub(super) fn checkpoint_over_own(&self) -> bool {
        self.checkpoint_over_own
    }

    /// A clean checkpoint was read at `now`, counted as published at `published`: the unclean
    /// ones in a row are over. (The caller schedules the next one from it.)
    pub(super) fn clean_read(&mut self, published: u64, now: u64) {
        self.checkpoint_seen = Some(published);
        self.clean_read_at = Some(now);
        self.unclean_retries = 0;
    }

    /// An own checkpoint published at `published` turned out not clean: unless a clean one was
    /// read since it was published, another falls due `base` after `now`, doubled for each
    /// unclean one in a row before it, at most `interval`.
    pub(super) fn retry_unclean(&mut self, published: u64, now: u64, base: u64, interval: u64) {
        if self.clean_read_at.is_some_and(|at| at >= published) {
            return;
        }
        let wait = backoff(base, self.unclean_retries).min(interval);
        self.unclean_retries = self.unclean_retries.saturating_add(1);
        self.due_by(now.saturating_add(wait));
    }

    /// A resend of the epoch in force falls due at `at`, or sooner if one already does.
    pub(super) fn resend_by(&mut self, at: u64) {
        self.resend_at = Some(self.resend_at.map_or(at, |t| t.min(at)));
    }

    /// No resend is needed any more (one went out, or was read, or the epoch changed).
    pub(super) fn resend_done(&mut self) {
        self.resend_at = None;
    }

    /// Whether the answer of generation `generation` from `task` (from an older epoch) is the
    /// first this task shows the epoch in force for.
    pub(super) fn first_resend_to(&mut self, generation: u64, task: &str) -> bool {
        self.resent_to.insert((generation, task.to_string()))
    }

    /// Whether the epoch `fork` (built on an epoch older than the one in force) is the first of
    /// its id this task shows the epoch in force for.
    pub(super) fn first_resend_for_fork(&mut self, fork: &str) -> bool {
        self.resent_for_forks.insert(fork.to_string())
    }

    /// An epoch of generation `closed` was applied: the answers of generations up to it and
    /// the forks shown before it need no resend any more (bounded memory).
    pub(super) fn forget_resends_upto(&mut self, closed: u64) {
        self.resent_to.retain(|(g, _)| *g > closed);
        self.resent_for_forks.clear();
    }

    /// The task fenced itself: it re-publishes nothing any more.
    pub(super) fn silence(&mut self) {
        self.refresh_at = None;
        self.resend_at = None;
    }

    /// Where the task is in stopping cleanly.
    pub(super) fn closing(&self) -> Closing {
        self.closing
    }

    /// Told to stop cleanly: closing, if it was running (whether it was).
    pub(super) fn begin_close(&mut self) -> bool {
        let open = self.closing == Closing::Open;
        if open {
            self.closing = Closing::Wanted;
        }
        open
    }

    /// A closed task published again: it is closing until a final checkpoint follows that.
    pub(super) fn reopen(&mut self) {
        if self.closing == Closing::Done {
            self.closing = Closing::Wanted;
        }
    }

    /// A closing task's final checkpoint went out, or none can: it is closed.
    pub(super) fn close_done(&mut self) {
        if self.closing == Closing::Wanted {
            self.closing = Closing::Done;
        }
    }

    /// An own record that is not `Regular` goes out as `seq` (see `last_other` and
    /// `epoch_copies`).
    pub(super) fn note_published(&mut self, m: &SyncMessage, seq: u64) {
        if m.kind == MessageType::NewEpoch && m.checkpoint.is_none() {
            if self
                .epoch_copies
                .as_ref()
                .is_none_or(|(id, _)| *id != m.sync_epoch)
            {
                self.epoch_copies = Some((m.sync_epoch.clone(), seq));
            }
        } else if m.kind != MessageType::Regular {
            self.last_other = seq;
        }
    }

    /// Whether every own record after `own_read` that is not `Regular` is a copy of the epoch
    /// `in_force` (see `checkpoint_waits`).
    pub(super) fn only_copies_after(&self, own_read: u64, in_force: &str) -> bool {
        own_read >= self.last_other
            && self
                .epoch_copies
                .as_ref()
                .is_some_and(|(id, first)| id == in_force && own_read.saturating_add(1) >= *first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_scheduled_waits_no_more_and_only_a_sooner_time_moves_it() {
        let mut r = Refresh::default();
        r.due_by(5);
        assert_eq!(r.refresh_at(), None, "nothing scheduled: nothing moves");
        assert_eq!(r.fall_due(Some(100), 7), 7);
        assert_eq!(
            r.fall_due(Some(110), 9),
            7,
            "it keeps waiting for what it waited for"
        );
        assert_eq!(r.waiting(), Some(7));
        r.schedule(Some(50));
        assert_eq!((r.refresh_at(), r.waiting()), (Some(50), None));
        r.due_by(60);
        assert_eq!(r.refresh_at(), Some(50));
        r.due_by(40);
        assert_eq!(r.refresh_at(), Some(40));
    }

    #[test]
    fn unclean_retries_back_off_until_a_clean_checkpoint_is_read() {
        let mut r = Refresh::default();
        r.schedule(Some(1_000));
        // base 10, doubled per unclean one in a row, at most the interval (100)
        r.retry_unclean(0, 0, 10, 100);
        assert_eq!(r.refresh_at(), Some(10));
        r.schedule(Some(1_000));
        r.retry_unclean(0, 0, 10, 100);
        assert_eq!(r.refresh_at(), Some(20));
        for _ in 0..5 {
            r.retry_unclean(0, 0, 10, 100);
        }
        r.schedule(Some(1_000));
        r.retry_unclean(0, 0, 10, 100);
        assert_eq!(r.refresh_at(), Some(100), "at most an interval");
        // a clean one read at 30: an own checkpoint published before is not retried, and the
        // next unclean one starts from the base again
        r.clean_read(25, 30);
        assert_eq!(r.checkpoint_seen(), Some(25));
        r.schedule(Some(1_000));
        r.retry_unclean(30, 40, 10, 100);
        assert_eq!(r.refresh_at(), Some(1_000));
        r.retry_unclean(31, 40, 10, 100);
        assert_eq!(r.refresh_at(), Some(50));
    }

    #[test]
    fn closing_goes_open_wanted_done_and_back_to_wanted_only_when_reopened() {
        let mut r = Refresh::default();
        assert_eq!(r.closing(), Closing::Open);
        r.reopen();
        r.close_done();
        assert_eq!(
            r.closing(),
            Closing::Open,
            "a running task neither reopens nor closes"
        );
        assert!(r.begin_close());
        assert!(!r.begin_close(), "told twice, it began once");
        assert_eq!(r.closing(), Closing::Wanted);
        r.close_done();
        assert_eq!(r.closing(), Closing::Done);
        r.reopen();
        assert_eq!(r.closing(), Closing::Wanted);
    }

    #[test]
    fn a_miss_is_shown_once_until_its_generation_is_closed() {
        let mut r = Refresh::default();
        assert!(r.first_resend_to(3, "t2"));
        assert!(!r.first_resend_to(3, "t2"));
        assert!(r.first_resend_to(4, "t2"));
        assert!(r.first_resend_for_fork("e5"));
        assert!(!r.first_resend_for_fork("e5"));
        r.forget_resends_upto(3);
        assert!(r.first_resend_to(3, "t2"), "generation 3 forgotten");
        assert!(!r.first_resend_to(4, "t2"), "generation 4 kept");
        assert!(r.first_resend_for_fork("e5"));
        r.resend_by(20);
        r.resend_by(30);
        assert_eq!(r.resend_at(), Some(20));
        r.silence();
        assert_eq!((r.resend_at(), r.refresh_at()), (None, None));
    }

    #[test]
    fn only_copies_of_the_epoch_in_force_after_the_read_point_let_a_checkpoint_go() {
        let epoch = |id: &str| SyncMessage::new(MessageType::NewEpoch, id, "t1", 0, vec![]);
        let answer = SyncMessage::new(MessageType::RebalanceAnswer, "e1", "t1", 0, vec![]);
        let mut r = Refresh::default();
        r.note_published(&answer, 3);
        r.note_published(&epoch("e1"), 4);
        r.note_published(&epoch("e1"), 6);
        assert_eq!(
            r.epoch_copies,
            Some(("e1".to_string(), 4)),
            "a run keeps its first"
        );
        assert!(
            !r.only_copies_after(2, "e1"),
            "the answer (3) is not read back"
        );
        assert!(r.only_copies_after(3, "e1"));
        assert!(!r.only_copies_after(3, "e0"), "copies of another epoch");
        r.note_published(&epoch("e2"), 8);
        assert!(!r.only_copies_after(6, "e1"), "a new run: e2 from 8 on");
        assert!(r.only_copies_after(7, "e2"));
    }
}
