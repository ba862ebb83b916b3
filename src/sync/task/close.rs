//! A task that stops cleanly: its final checkpoint (see [`SyncTask::close`]).

use super::refresh::Closing;
use super::SyncTask;
use crate::sync::error::SyncError;
use crate::sync::types::SyncOutput;

impl SyncTask {
    /// The task stops cleanly: its caller stopped every partition it ran and is about to leave
    /// the group. From now on it starts nothing, and it publishes a final checkpoint of the epoch
    /// in force as soon as everything it published has been read back (at once when it has), so
    /// that the newest usable checkpoint of the log is as new as the stop: a connector whose
    /// tasks all closed finds its state after a stop shorter than the retention (a crash
    /// leaves one at most about two intervals old, see the module docs). Keep feeding it what
    /// it reads (and ticks at [`poll_timeout`](Self::poll_timeout)) until
    /// [`closed`](Self::closed) is true, then leave the group. Calling it again does nothing.
    /// A closed task ignores rebalances and time (`on_rebalance` and `tick` return an empty
    /// output, and `poll_timeout` is `None`): told of a new generation before it has left (it
    /// would lead it alone if it is the last task), it publishes nothing after its final
    /// checkpoint, which stays as new as the stop. What it still reads, and a partition the
    /// caller still adds or finishes, counts: if the task publishes anything for it, it is
    /// closing again, until a final checkpoint after that is out.
    ///
    /// # Examples
    /// ```
    /// use partkit::sync::{PartitionSpec, RebalanceEvent, SyncTask};
    /// let mut t = SyncTask::new("t1").unwrap();
    /// let ev = RebalanceEvent { generation: 1, leader: true, members: Some(vec!["t1".into()]) };
    /// let mut log = t.on_rebalance(&ev, 0).unwrap().publish;
    /// let mut k = 0;
    /// while k < log.len() {
    ///     let msg = log[k].clone();
    ///     log.extend(t.on_message(&msg, 1).unwrap().publish);
    ///     k += 1;
    /// }
    /// let out = t.close(2);
    /// assert!(!t.closed()); // its last record is not read back yet
    /// // a partition found now is not started by a closing task
    /// let mut log = out.publish;
    /// let added = t.add_partitions(&[PartitionSpec::new("p", &[])], 3).unwrap();
    /// assert!(added.start.is_empty());
    /// log.extend(added.publish);
    /// let mut final_checkpoints = 0;
    /// let mut k = 0;
    /// while k < log.len() {
    ///     let msg = log[k].clone();
    ///     let out = t.on_message(&msg, 4).unwrap();
    ///     final_checkpoints += out.publish.iter().filter(|m| m.checkpoint.is_some()).count();
    ///     log.extend(out.publish);
    ///     k += 1;
    /// }
    /// assert_eq!(final_checkpoints, 1);
    /// assert!(t.closed());
    /// ```
    pub fn close(&mut self, now: u64) -> SyncOutput {
        if self.fenced.is_some() || self.refresh.closing() != Closing::Open {
            return SyncOutput::default();
        }
        self.clock(now);
        self.refresh.begin_close();
        // the own state goes out once more: read back, it is the record the final checkpoint
        // names (in a quiet log the last record read can be an interval old, and a checkpoint
        // whose named record retention deleted is no place to start)
        if self.view.epoch().is_some() {
            self.own.mark_dirty();
        }
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        self.seal(out)
    }

    /// Whether a task that was told to [`close`](Self::close) is done: its final checkpoint went
    /// out (or it needed none). `false` for a task that was not told to close.
    pub fn closed(&self) -> bool {
        match self.refresh.closing() {
            Closing::Open => false,
            Closing::Wanted => self.fenced.is_some(),
            Closing::Done => true,
        }
    }

    /// An input that still counts on a closed task (`on_message`, `add_partitions`,
    /// `partition_started`, `partition_finished`: what it reads, a partition found or finished,
    /// is not lost): what it publishes is followed by a final checkpoint again, once read back
    /// (the task is closing again until then). `on_rebalance` and `tick` do nothing on a closed
    /// task.
    pub(super) fn reopening_input(
        &mut self,
        run: impl FnOnce(&mut Self) -> Result<SyncOutput, SyncError>,
    ) -> Result<SyncOutput, SyncError> {
        let closed = self.closed() && self.fenced.is_none();
        let out = self.input(run);
        // (run closed, it publishes no final checkpoint, so reading its own back changes nothing)
        if closed && out.as_ref().is_ok_and(|o| !o.publish.is_empty()) {
            self.refresh.reopen();
        }
        out
    }

    /// Whether the task stopped cleanly or is stopping: it starts nothing any more.
    pub(super) fn is_closing(&self) -> bool {
        self.refresh.closing() != Closing::Open
    }

    /// Until when a closing task's final checkpoint waits for a message being read in chunks
    /// (a timer, so that it goes out once the message is complete or abandoned).
    pub(super) fn close_deadline(&self) -> Option<u64> {
        if self.refresh.closing() != Closing::Wanted || self.cursor.own_unread() {
            return None;
        }
        self.chunks_wait_until()
    }

    /// The final checkpoint of a closing task (the common tail of every input), once its own
    /// records are all read back (those of this input too) and no message being read in chunks
    /// holds it back: it names the newest record, its own last one when the log is quiet.
    pub(super) fn final_checkpoint(&mut self, out: &mut SyncOutput) {
        if self.refresh.closing() != Closing::Wanted {
            return;
        }
        if self.view.epoch().is_none() || self.view.behind() {
            // (a task that missed an epoch holds no view to start from: it leaves none)
            self.refresh.close_done();
            return;
        }
        // (what this input publishes is read back first too: the checkpoint names the newest)
        if self.cursor.own_unread() || !out.publish.is_empty() || self.chunks_wait_until().is_some()
        {
            return;
        }
        if self.publish_checkpoint(out) {
            self.refresh.close_done();
        }
    }
}
