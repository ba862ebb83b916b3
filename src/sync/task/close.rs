//! A task that stops cleanly: its final checkpoint (see [`SyncTask::close`]).

use super::*;

/// Where a task is in stopping cleanly (see [`SyncTask::close`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Closing {
    /// Running.
    #[default]
    Open,
    /// Closing: its final checkpoint waits for its own records to be read back (or for a
    /// message being read in chunks to complete).
    Wanted,
    /// Closed: the final checkpoint went out, or none was needed (no epoch, fenced).
    Done,
}

impl SyncTask {
    /// The task stops cleanly: its caller stopped every partition it ran and is about to leave
    /// the group. From now on it starts nothing, and it publishes a final checkpoint of the epoch
    /// in force as soon as everything it published has been read back (at once when it has), so
    /// that the newest usable checkpoint of the log is as new as the stop: a connector whose
    /// tasks all closed can stay stopped for up to the retention and lose nothing (a crash
    /// leaves one at most about two intervals old, see the module docs). Keep feeding it what
    /// it reads (and ticks at [`poll_timeout`](Self::poll_timeout)) until
    /// [`closed`](Self::closed) is true, then leave the group. Calling it again does nothing.
    ///
    /// # Examples
    /// ```
    /// use partkit::sync::{RebalanceEvent, SyncTask};
    /// let mut t = SyncTask::new("t1").unwrap();
    /// // a task with no epoch has nothing to leave behind
    /// assert!(t.close(1_000).is_empty());
    /// assert!(t.closed());
    /// ```
    pub fn close(&mut self, now: u64) -> SyncOutput {
        if self.fenced.is_some() || self.closing != Closing::Open {
            return SyncOutput::default();
        }
        self.clock(now);
        self.closing = Closing::Wanted;
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        self.seal(out)
    }

    /// Whether a task that was told to [`close`](Self::close) is done: its final checkpoint went
    /// out (or it needed none). `false` for a task that was not told to close.
    pub fn closed(&self) -> bool {
        match self.closing {
            Closing::Open => false,
            Closing::Wanted => self.fenced.is_some(),
            Closing::Done => true,
        }
    }

    /// Whether the task stopped cleanly or is stopping: it starts nothing any more.
    pub(super) fn is_closing(&self) -> bool {
        self.closing != Closing::Open
    }

    /// Until when a closing task's final checkpoint waits for a message being read in chunks
    /// (a timer, so that it goes out once the message is complete or abandoned).
    pub(super) fn close_deadline(&self) -> Option<u64> {
        if self.closing != Closing::Wanted || self.own_read < self.seq {
            return None;
        }
        self.chunks_wait_until()
    }

    /// The final checkpoint of a closing task (the common tail of every input, after what it
    /// publishes of its own state: it goes out first, see `seal`), once its own records are
    /// read back and no message being read in chunks holds it back.
    pub(super) fn final_checkpoint(&mut self, out: &mut SyncOutput) {
        if self.closing != Closing::Wanted {
            return;
        }
        if self.epoch.is_none() {
            self.closing = Closing::Done;
            return;
        }
        if self.own_read < self.seq || self.chunks_wait_until().is_some() {
            return;
        }
        if out.publish.iter().any(|m| m.checkpoint.is_some()) || self.publish_checkpoint(out) {
            self.closing = Closing::Done;
        }
    }
}
