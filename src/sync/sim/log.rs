//! The sync log: records landing (late ones too), checkpoints clean and usable, retention, and
//! where a new task starts reading.

use std::rc::Rc;

use crate::sync::{self, SyncMessage};

use super::{Check, Sim};

impl Sim {
    /// A record lands in the log (what it names exists from now on).
    pub(super) fn append(&mut self, m: SyncMessage) {
        let at = self.log.len();
        // a message in chunks names its partitions once its last chunk lands (a task that died
        // half-way through publishing it made nothing known)
        let (pending, done) = self.chunk_tokens.entry(m.task_id.clone()).or_default();
        if m.chunk.as_ref().is_none_or(|c| c.index == 0) {
            pending.clear();
            done.clear();
        }
        for s in &m.connector_state {
            let tokens = s.data.partitions.iter().map(|p| &p.token);
            pending.extend(
                tokens
                    .chain(s.share.partitions.iter().map(|p| &p.token))
                    .cloned(),
            );
            if self.cfg.per_task == 0 {
                let finished = s.data.partitions.iter().filter(|p| p.state.is_done());
                done.extend(finished.map(|p| p.token.clone()));
            }
        }
        if m.chunk.as_ref().is_none_or(|c| c.index + 1 == c.count) {
            for t in std::mem::take(pending) {
                if !self.created.contains_key(&t) {
                    if !self.finished.contains(&t) {
                        self.open.insert(t.clone(), at);
                    }
                    self.created.insert(t, at);
                }
            }
            for t in std::mem::take(done) {
                self.finished_at.entry(t).or_insert(at);
            }
        }
        let (complete, checkpoint) = (
            m.chunk.as_ref().is_none_or(|c| c.index + 1 == c.count),
            m.checkpoint.is_some(),
        );
        self.log.push(Rc::new(m));
        self.log_time.push(self.now);
        if complete && checkpoint {
            self.note_checkpoint(at);
        }
    }

    /// A checkpoint completes at `log[at]`: if it is usable (the record it names is retained
    /// before it) the clock of the longest stretch without a usable checkpoint starts again from
    /// that record; if it is clean (the record before its first chunk is the one it names, its
    /// chunks one after the other) the clock of the longest stretch without a clean one starts
    /// again. Both start at the first such checkpoint: before it, a new task replays the log from
    /// its start (the first interval of a connector).
    pub(super) fn note_checkpoint(&mut self, at: usize) {
        // (its chunks one after the other; a copy of one of them landing twice in between, a
        // producer retry, is passed over by every reader)
        let last = &self.log[at];
        let count = last.chunk.as_ref().map_or(1, |c| c.count as u64);
        let Some(seq0) = last.message_seq.and_then(|s| s.checked_sub(count - 1)) else {
            return;
        };
        let mut first = at;
        let mut contiguous = true;
        while first > 0 && self.log[first].message_seq != Some(seq0) {
            first -= 1;
            let r = &self.log[first];
            let ours = r.task_id == last.task_id
                && r.message_seq
                    .is_some_and(|s| s >= seq0 && s <= seq0 + count - 1);
            contiguous &= ours;
            if !ours {
                break;
            }
        }
        let first_is_ours =
            self.log[first].task_id == last.task_id && self.log[first].message_seq == Some(seq0);
        contiguous &= first_is_ours;
        // (the first of the copies of the first chunk)
        while contiguous
            && first > 0
            && self.log[first - 1].task_id == last.task_id
            && self.log[first - 1].message_seq == Some(seq0)
        {
            first -= 1;
        }
        let clean = contiguous
            && first > 0
            && self.log[first].checkpoint.as_ref().is_some_and(|c| {
                // (the record it names, or a copy of it landing twice)
                let prev = &self.log[first - 1];
                prev.task_id == c.after_task_id && prev.message_seq == Some(c.after_seq)
            });
        // usable: the record it names retained before its first chunk (wherever that is: other
        // senders' records between its chunks are read normally; every chunk has the header)
        let first_chunk = (self.retained_from..=at).rev().find(|&k| {
            self.log[k].task_id == last.task_id && self.log[k].message_seq == Some(seq0)
        });
        let named = last
            .checkpoint
            .as_ref()
            .zip(first_chunk)
            .and_then(|(c, c0)| {
                (self.retained_from..c0).rev().find(|&j| {
                    self.log[j].task_id == c.after_task_id
                        && self.log[j].message_seq == Some(c.after_seq)
                })
            });
        if let Some(j) = named {
            let t = self.log_time[j];
            if self.calm.is_some_and(|c| t >= c) {
                self.calm = None;
            }
            if self.last_usable.is_none_or(|u| t > u) {
                let gap = t.saturating_sub(self.last_usable.unwrap_or(t));
                let r = &mut self.report.longest_without_usable;
                *r = (*r).max(gap);
                self.last_usable = Some(t);
            }
        }
        if clean {
            let since = self.last_clean.map_or(0, |t| self.now.saturating_sub(t));
            self.note(format!(
                "#{first} a clean checkpoint lands, {since} after the last one"
            ));
            self.gap_until_now();
            self.last_clean = Some(self.now);
        }
    }

    /// The stretch without a clean checkpoint up to now counts toward the longest.
    pub(super) fn gap_until_now(&mut self) {
        if let Some(t) = self.last_clean {
            let gap = self.now.saturating_sub(t);
            let r = &mut self.report.longest_without_checkpoint;
            *r = (*r).max(gap);
        }
    }

    /// The stretch without a usable checkpoint up to now counts toward the longest.
    pub(super) fn usable_gap_until_now(&mut self) {
        if let Some(t) = self.last_usable {
            let gap = self.now.saturating_sub(t);
            let r = &mut self.report.longest_without_usable;
            *r = (*r).max(gap);
        }
    }

    /// The delayed records that are due land in the log.
    pub(super) fn land_delayed(&mut self) {
        let step = self.step;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.delayed)
            .into_iter()
            .partition(|(at, _)| *at <= step);
        self.delayed = later;
        for (_, m) in due {
            self.note(format!("delayed record of {} lands", m.task_id));
            self.append(m);
        }
        let now = self.now;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.in_flight)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.in_flight = later;
        if !due.is_empty() {
            self.note(format!("{} records in flight land", due.len()));
        }
        for (_, m) in due {
            self.append(m);
        }
    }

    /// Retention deletes the records older than `retention`; a live task that had not read
    /// them sees its offsets jump (as `KafkaTaskSync` does) and fences itself.
    pub(super) fn expire(&mut self) -> Check {
        if self.cfg.retention == 0 {
            return Ok(());
        }
        while self.retained_from < self.log.len()
            && self.log_time[self.retained_from].saturating_add(self.cfg.retention) < self.now
        {
            self.retained_from += 1;
        }
        for i in self.alive() {
            let from = self.nodes[i].cursor;
            if from >= self.retained_from || !self.nodes[i].alive {
                continue;
            }
            self.nodes[i].cursor = self.retained_from;
            let now = self.clock(i);
            let why = format!("records #{from}.. were deleted by retention before it read them");
            let out = self.nodes[i].task.fence(&why, now);
            self.apply(i, out)?;
        }
        Ok(())
    }

    /// Where a new task starts reading: the core's start rule (`find_epoch_start`, which the
    /// Kafka transport's `findEpochStart` calls) over the retained log, offsets being log
    /// indexes; with the checkpoint to apply first (`checkpoint_message`) when it is not clean.
    pub(super) fn start_offset(&self) -> (usize, Option<SyncMessage>) {
        let lo = self.retained_from;
        let records: Vec<sync::LogRecord<'_>> = (lo..self.log.len())
            .map(|k| sync::LogRecord {
                offset: k as u64,
                header: Some(sync::RecordHeader::of(&self.log[k])),
            })
            .collect();
        match sync::find_epoch_start(&records, true, lo as u64) {
            Ok(sync::EpochStart::At(k)) => (k as usize, None),
            Ok(sync::EpochStart::AfterCheckpoint { offset, checkpoint }) => {
                let parts = checkpoint
                    .iter()
                    .map(|&k| SyncMessage::clone(&self.log[k as usize]))
                    .collect();
                let first = sync::checkpoint_message(parts).expect("the rule's chunks join");
                (offset as usize, Some(first))
            }
            // (the whole retained log is there: at_low)
            Ok(sync::EpochStart::Extend) | Err(_) => unreachable!("records in order, at low"),
        }
    }
}
