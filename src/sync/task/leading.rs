//! What a task knows of rebalances and leads: the latest rebalance it was told about, the
//! latest answer read from each task, the rebalance it leads and the epoch it leads (the
//! leader's steps are in `leader`).

use std::collections::{BTreeMap, BTreeSet};

use super::limits::MAX_DEPARTED;
use super::timer::backoff;
use crate::sync::types::SyncMessage;

/// The latest `RebalanceAnswer` read from a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Answer {
    generation: u64,
    base: String,
}

/// The latest rebalance a task was told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RebalanceInfo {
    pub(super) generation: u64,
    pub(super) leader: bool,
}

/// A leader's rebalance that has no epoch in force yet: its generation and members, and where
/// the leader is in publishing its epoch (kept by `Leading`'s methods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pending {
    pub(super) generation: u64,
    pub(super) members: Vec<String>,
    /// Since when the leader waits for answers (the timeout counts from it).
    since: u64,
    /// Id of the NewEpoch published and not yet read back.
    awaiting: Option<String>,
    /// That NewEpoch, re-published as is if it is not read back in time, and when it last went
    /// out.
    published: Option<(SyncMessage, u64)>,
    republished: u32,
    attempt: u32,
}

impl Pending {
    /// Attempt `attempt` at computing the epoch of `generation`, with `members`, from `now`:
    /// nothing awaited or published yet.
    fn new(generation: u64, members: Vec<String>, now: u64, attempt: u32) -> Self {
        Pending {
            generation,
            members,
            since: now,
            awaiting: None,
            published: None,
            republished: 0,
            attempt,
        }
    }

    /// Since when the leader waits for answers.
    pub(super) fn since(&self) -> u64 {
        self.since
    }

    /// The attempt the next epoch computed for it is.
    pub(super) fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Whether the leader published its epoch and waits to read it back.
    pub(super) fn is_awaiting(&self) -> bool {
        self.awaiting.is_some()
    }

    /// Members re-answer (from a new base, or after a stale epoch): a fresh timeout, and the
    /// epoch is computed again.
    fn answers_again(&mut self, now: u64) {
        self.since = now;
        self.awaiting = None;
        self.published = None;
    }
}

/// The leader's bookkeeping for the epoch it published and applied: its members, and those
/// known to have acknowledged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Lead {
    pub(super) members: Vec<String>,
    pub(super) acked: BTreeSet<String>,
    last_publish: u64,
    resends: u32,
}

/// Rebalances this task was told of, the answers it read, and the epochs it leads: changed
/// only by these methods (the generations it joined follow the rebalances it was told of; a
/// pending rebalance's publication state follows the epochs read).
#[derive(Debug, Clone, Default)]
pub(super) struct Leading {
    /// The latest rebalance this task was told about.
    rebalance: Option<RebalanceInfo>,
    /// The latest answer read from each task.
    answers: BTreeMap<String, Answer>,
    /// The rebalance this task leads that has no epoch in force yet.
    pending: Option<Pending>,
    /// This task's bookkeeping as the leader of the epoch in force.
    lead: Option<Lead>,
    /// Generations above the epoch in force this task was told of as a member, not the leader
    /// (newest `MAX_DEPARTED` kept): a lone leader that read no NewEpoch of one of them may
    /// have missed it.
    joined: Generations,
}

impl Leading {
    /// The latest rebalance this task was told about.
    pub(super) fn rebalance(&self) -> Option<RebalanceInfo> {
        self.rebalance
    }

    /// The rebalance this task leads that has no epoch in force yet.
    pub(super) fn pending(&self) -> Option<&Pending> {
        self.pending.as_ref()
    }

    /// This task's bookkeeping as the leader of the epoch in force.
    pub(super) fn lead(&self) -> Option<&Lead> {
        self.lead.as_ref()
    }

    /// Whether this task was told of rebalance `generation` or a newer one.
    pub(super) fn told_of(&self, generation: u64) -> bool {
        self.rebalance.is_some_and(|r| r.generation >= generation)
    }

    /// A newer rebalance is the latest: the generations this task joined as a member since the
    /// epoch in force (`applied`) are remembered (the latest `MAX_DEPARTED`).
    pub(super) fn note_rebalance(&mut self, generation: u64, leader: bool, applied: u64) {
        if let Some(prev) = self.rebalance.filter(|r| !r.leader) {
            self.joined.insert(prev.generation);
        }
        self.joined.retain(|g| *g > applied);
        while self.joined.len() > MAX_DEPARTED {
            self.joined.pop_first();
        }
        self.rebalance = Some(RebalanceInfo { generation, leader });
    }

    /// The rebalance noted last, with no epoch of its generation in force: its leader collects
    /// answers from `members` from `now`; a member leads nothing.
    pub(super) fn collect(
        &mut self,
        leader: bool,
        generation: u64,
        members: Vec<String>,
        now: u64,
    ) {
        self.pending = leader.then(|| Pending::new(generation, members, now, 0));
    }

    /// The leader rolled its epoch of `generation` back: it computes the generation again
    /// (attempt `attempt`), unless it leads a newer one already.
    pub(super) fn lead_again(
        &mut self,
        generation: u64,
        attempt: u32,
        members: Vec<String>,
        now: u64,
    ) {
        if self
            .pending
            .as_ref()
            .is_none_or(|p| p.generation <= generation)
        {
            self.pending = Some(Pending::new(generation, members, now, attempt));
        }
    }

    /// No rebalance to lead any more (an epoch of its generation is in force).
    pub(super) fn drop_pending(&mut self) {
        self.pending = None;
    }

    /// Its own NewEpoch `epoch`, read back, was rejected (computed from a stale base): the
    /// leader computes it again once members re-answer.
    pub(super) fn own_epoch_rejected(&mut self, epoch: &str, now: u64) {
        if let Some(p) = &mut self.pending {
            if p.awaiting.as_deref() == Some(epoch) {
                p.answers_again(now);
            }
        }
    }

    /// An epoch of `generation` was applied: a rebalance it closes is not led any more; for a
    /// newer one members re-answer from the new base. Answers of the generations it closed go.
    pub(super) fn epoch_applied(&mut self, generation: u64, now: u64) {
        self.answers.retain(|_, a| a.generation > generation);
        if let Some(p) = &mut self.pending {
            if p.generation <= generation {
                self.pending = None;
            } else {
                p.answers_again(now);
            }
        }
    }

    /// The leader published NewEpoch `msg` (id `epoch`) `now`: it waits to read it back.
    pub(super) fn epoch_published(&mut self, epoch: String, msg: SyncMessage, now: u64) {
        if let Some(p) = &mut self.pending {
            p.awaiting = Some(epoch);
            p.published = Some((msg, now));
            p.republished = 0;
            p.attempt += 1;
        }
    }

    /// When the NewEpoch published and not read back goes out again (the wait doubles each
    /// time, from `timeout`).
    pub(super) fn republish_at(&self, timeout: u64) -> Option<u64> {
        let p = self.pending.as_ref()?;
        let (_, at) = p.published.as_ref()?;
        Some(at.saturating_add(backoff(timeout, p.republished)))
    }

    /// The NewEpoch published and not read back, if it is due again `now`.
    pub(super) fn republish_due(&mut self, now: u64, timeout: u64) -> Option<SyncMessage> {
        let p = self.pending.as_mut()?;
        let (m, at) = p.published.as_mut()?;
        if now < at.saturating_add(backoff(timeout, p.republished)) {
            return None;
        }
        *at = now;
        p.republished += 1;
        Some(m.clone())
    }

    /// The latest answer of `task` is of `generation` or newer, from the epoch `base`.
    pub(super) fn answered(&self, task: &str, generation: u64, base: &str) -> bool {
        self.answers
            .get(task)
            .is_some_and(|a| a.generation >= generation && a.base == base)
    }

    /// An answer of `task` for rebalance `generation`, from the epoch `base`, was read (the
    /// latest one counts).
    pub(super) fn answer_read(&mut self, task: &str, generation: u64, base: &str) {
        let newer = self
            .answers
            .get(task)
            .is_none_or(|a| generation >= a.generation);
        if newer {
            self.answers.insert(
                task.to_string(),
                Answer {
                    generation,
                    base: base.to_string(),
                },
            );
        }
    }

    /// The latest generation this task joined as a member, above `applied` and below
    /// `generation`, that `read` says it read no NewEpoch of.
    pub(super) fn joined_unread(
        &self,
        applied: u64,
        generation: u64,
        read: impl Fn(u64) -> bool,
    ) -> Option<u64> {
        self.joined
            .iter()
            .rev()
            .find(|&&g| g > applied && g < generation && !read(g))
            .copied()
    }

    /// The epoch applied `now` was this task's own (`leads`, with `members`, `me` having
    /// acknowledged it): it collects acknowledgements; otherwise it leads none.
    pub(super) fn epoch_in_force(&mut self, leads: bool, members: Vec<String>, me: &str, now: u64) {
        self.lead = leads.then(|| {
            let mut acked = BTreeSet::new();
            acked.insert(me.to_string());
            Lead {
                members,
                acked,
                last_publish: now,
                resends: 0,
            }
        });
    }

    /// `task` acknowledged the epoch in force.
    pub(super) fn acked(&mut self, task: &str) {
        if let Some(l) = &mut self.lead {
            l.acked.insert(task.to_string());
        }
    }

    /// The leader re-published the epoch in force for members that did not acknowledge it.
    pub(super) fn resent(&mut self, now: u64) {
        if let Some(l) = &mut self.lead {
            l.last_publish = now;
            l.resends += 1;
        }
    }

    /// When the leader re-publishes the epoch in force for members that have not acknowledged
    /// it (the wait doubles each time, from `timeout`).
    pub(super) fn ack_deadline(&self, timeout: u64) -> Option<u64> {
        let l = self.lead.as_ref()?;
        l.members
            .iter()
            .any(|m| !l.acked.contains(m))
            .then(|| l.last_publish.saturating_add(backoff(timeout, l.resends)))
    }

    /// A fenced task leads nothing.
    pub(super) fn fence(&mut self) {
        self.pending = None;
        self.lead = None;
    }
}

/// A few generations, ascending, once each (`Leading::joined`, at most `MAX_DEPARTED`): a sorted
/// vector, not a B-tree of u64 of its own in the wasm.
#[derive(Clone, Default)]
pub(super) struct Generations(Vec<u64>);

impl Generations {
    pub(super) fn insert(&mut self, g: u64) {
        if let Err(i) = self.0.binary_search(&g) {
            self.0.insert(i, g);
        }
    }

    pub(super) fn retain(&mut self, keep: impl FnMut(&u64) -> bool) {
        self.0.retain(keep);
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn pop_first(&mut self) -> Option<u64> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, u64> {
        self.0.iter()
    }
}

impl std::fmt::Debug for Generations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::types::MessageType;

    fn members(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    fn epoch_msg(id: &str) -> SyncMessage {
        SyncMessage::new(
            MessageType::NewEpoch,
            id.to_string(),
            "t1".to_string(),
            0,
            vec![],
        )
    }

    #[test]
    fn the_generations_joined_as_a_member_follow_the_rebalances() {
        let mut l = Leading::default();
        l.note_rebalance(2, false, 0);
        l.note_rebalance(3, false, 0);
        l.note_rebalance(4, true, 0);
        // joined: 2 and 3 (as a member), not 4 (led)
        assert_eq!(l.joined_unread(0, 5, |_| false), Some(3));
        assert_eq!(l.joined_unread(0, 5, |g| g == 3), Some(2));
        assert_eq!(l.joined_unread(0, 3, |_| false), Some(2));
        // an epoch of generation 2 applied: only newer ones are kept
        l.note_rebalance(5, false, 2);
        assert_eq!(l.joined_unread(0, 9, |g| g == 3), None);
        assert!(l.told_of(5) && !l.told_of(6));
        assert_eq!(
            l.rebalance(),
            Some(RebalanceInfo {
                generation: 5,
                leader: false
            })
        );
    }

    #[test]
    fn a_leader_publishes_waits_republishes_and_recomputes() {
        let mut l = Leading::default();
        l.collect(false, 2, vec![], 10);
        assert!(l.pending().is_none(), "a member leads nothing");
        l.collect(true, 2, members(&["t1", "t2"]), 10);
        let p = l.pending().unwrap();
        assert_eq!((p.since(), p.attempt(), p.is_awaiting()), (10, 0, false));
        l.epoch_published("2-t1".into(), epoch_msg("2-t1"), 20);
        assert!(l.pending().unwrap().is_awaiting());
        assert_eq!(l.pending().unwrap().attempt(), 1);
        assert_eq!(l.republish_at(100), Some(120));
        assert_eq!(l.republish_due(119, 100), None);
        assert_eq!(l.republish_due(120, 100).unwrap().sync_epoch, "2-t1");
        // the wait doubles
        assert_eq!(l.republish_at(100), Some(320));
        // read back and rejected: computed again once members re-answer
        l.own_epoch_rejected("other", 30);
        assert!(l.pending().unwrap().is_awaiting());
        l.own_epoch_rejected("2-t1", 30);
        let p = l.pending().unwrap();
        assert_eq!((p.since(), p.is_awaiting()), (30, false));
        assert_eq!(l.republish_at(100), None);
    }

    #[test]
    fn an_epoch_applied_closes_what_it_covers() {
        let mut l = Leading::default();
        l.collect(true, 3, members(&["t1"]), 0);
        l.epoch_published("3-t1".into(), epoch_msg("3-t1"), 1);
        l.answer_read("t2", 2, "1-t1");
        l.answer_read("t3", 3, "1-t1");
        // an older generation: the newer rebalance stays, members re-answer
        l.epoch_applied(2, 5);
        let p = l.pending().unwrap();
        assert_eq!((p.generation, p.since(), p.is_awaiting()), (3, 5, false));
        assert!(
            !l.answered("t2", 2, "1-t1"),
            "answers of closed generations go"
        );
        assert!(l.answered("t3", 3, "1-t1"));
        l.epoch_applied(3, 6);
        assert!(l.pending().is_none());
    }

    #[test]
    fn the_latest_answer_counts() {
        let mut l = Leading::default();
        l.answer_read("t2", 3, "b");
        l.answer_read("t2", 2, "a");
        assert!(l.answered("t2", 3, "b"));
        assert!(!l.answered("t2", 4, "b"));
        assert!(!l.answered("t2", 3, "a"));
        l.answer_read("t2", 3, "c");
        assert!(l.answered("t2", 3, "c"));
    }

    #[test]
    fn a_rollback_leads_again_unless_a_newer_generation_is_led() {
        let mut l = Leading::default();
        l.lead_again(2, 1, members(&["t1"]), 7);
        assert_eq!(l.pending().unwrap().attempt(), 1);
        l.collect(true, 4, members(&["t1"]), 8);
        l.lead_again(3, 2, members(&["t1"]), 9);
        assert_eq!(l.pending().unwrap().generation, 4);
        l.drop_pending();
        assert!(l.pending().is_none());
    }

    #[test]
    fn the_lead_collects_acknowledgements_and_backs_off() {
        let mut l = Leading::default();
        l.epoch_in_force(true, members(&["t1", "t2"]), "t1", 100);
        assert_eq!(l.ack_deadline(10), Some(110));
        l.resent(110);
        assert_eq!(l.ack_deadline(10), Some(130));
        l.acked("t2");
        assert_eq!(l.ack_deadline(10), None, "every member acknowledged");
        l.fence();
        assert!(l.lead().is_none() && l.pending().is_none());
        l.epoch_in_force(false, vec![], "t1", 0);
        assert!(l.lead().is_none());
    }
}
