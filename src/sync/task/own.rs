//! The own partitions and shares: the state this task publishes, and the bookkeeping that lets an
//! ordinary change cost what it changes.

use rustc_hash::FxHashMap as HashMap;

use super::delta::Sent;

use crate::sync::types::{Delta, PartitionState, PartitionStatus, SharedPartition, TaskState};

/// The own state and what is known of where it changed since it was published.
///
/// Only these methods change the own lists, so the bookkeeping they keep consistent stays
/// right: whatever drops or reorders own partitions or shares sets `reshaped` (as `delta`
/// requires) and forgets the marks; whatever changes an own partition in place notes it in the
/// marks.
#[derive(Debug, Clone)]
pub(super) struct Own {
    /// The own state as it would be published now.
    state: TaskState,
    /// What changed in the own partitions, and where the waiting and done ones are (see
    /// `Marks`).
    marks: Marks,
    /// Whether an own partition or share was dropped (or the lists rebuilt) since the last
    /// publication: otherwise the own lists are what was published, changed in place and
    /// extended, and a change is found without comparing tokens.
    reshaped: bool,
    /// The own partition last started or finished (callers start and finish partitions mostly in
    /// the order they were scheduled: `index` looks next to it first).
    last_index: usize,
    /// Whether the own state is to be published (it changed since it was last published).
    dirty: bool,
    /// What this task last published of its own state (its next Regular message carries the
    /// change from it).
    sent: Option<Sent>,
    /// This task's shares (token, assignee) as every other reader holds them: those of its
    /// entry in the epoch in force, then as its own records of that epoch read back left them;
    /// `word_read` once one was read (only then are they its own word to the others, see
    /// `own_words`). A share it made and has not read back is not in a view the others had
    /// before an epoch it reads now, so it claims nothing there (see `keep_claims`).
    shares_read: HashMap<String, String>,
    word_read: bool,
}

impl Own {
    pub(super) fn new(task_id: &str) -> Self {
        Own {
            state: TaskState::empty(task_id),
            marks: Marks::default(),
            reshaped: false,
            last_index: 0,
            dirty: false,
            sent: None,
            shares_read: HashMap::default(),
            word_read: false,
        }
    }

    /// The own state as it would be published now.
    pub(super) fn state(&self) -> &TaskState {
        &self.state
    }

    /// The own partitions (`data.partitions`).
    pub(super) fn partitions(&self) -> &[PartitionState] {
        &self.state.data.partitions
    }

    /// The own shares (`share.partitions`).
    pub(super) fn shares(&self) -> &[SharedPartition] {
        &self.state.share.partitions
    }

    /// This task's shares as every other reader holds them, once an own record of the epoch in
    /// force was read back (only then are they its own word to the others).
    pub(super) fn shares_read(&self) -> Option<&HashMap<String, String>> {
        self.word_read.then_some(&self.shares_read)
    }

    /// An epoch was applied: the own shares every reader holds are those of its entry for this
    /// task, `shares` (token, assignee), and no own record of it was read back yet.
    pub(super) fn shares_of_epoch(&mut self, shares: HashMap<String, String>) {
        self.shares_read = shares;
        self.word_read = false;
    }

    /// An own record of the epoch in force was read back (its change `delta`, or whole without
    /// one, with the own `shares` it lists): what every reader holds of the own shares now.
    pub(super) fn own_record_read(&mut self, delta: Option<&Delta>, shares: &[SharedPartition]) {
        let read = &mut self.shares_read;
        match delta {
            None => read.clear(),
            Some(d) => {
                for token in &d.unshared {
                    read.remove(token);
                }
            }
        }
        for sh in shares {
            read.insert(sh.token.clone(), sh.assignee.clone());
        }
        self.word_read = true;
    }

    /// Whether the own state is to be published.
    pub(super) fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// The own state is to be published (again).
    pub(super) fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Nothing is to be published any more (a fenced task falls silent).
    pub(super) fn mark_clean(&mut self) {
        self.dirty = false;
    }

    /// Position of own partition `token`, looked for next to the one last started or finished
    /// first (callers mostly go in order), else by the index of the own tokens (see `Marks`).
    /// A token not owned is an error for the caller, found without changing anything (a
    /// rejected input leaves the task as it was, its marks included).
    pub(super) fn index(&mut self, token: &str) -> Option<usize> {
        let parts = &self.state.data.partitions;
        let at = |i: usize| parts.get(i).is_some_and(|p| p.token == token);
        let hinted = [self.last_index + 1, self.last_index]
            .into_iter()
            .find(|&i| at(i));
        if hinted.is_some() {
            return hinted;
        }
        if !self.marks.holds(parts, token) {
            return None;
        }
        // (out of order: by the index of the own tokens; after a change that dropped or
        // reordered own partitions, positions are unknown until it is published: look, and
        // leave the marks as they are, which a refused input must not change)
        if self.reshaped {
            return parts.iter().position(|p| p.token == token);
        }
        self.marks.position(parts, token)
    }

    /// Positions (ascending) of the own partitions whose tokens `tokens` names, found by the
    /// index of the own tokens (for a few tokens of many partitions).
    pub(super) fn positions_of<'a>(&mut self, tokens: impl Iterator<Item = &'a str>) -> Vec<usize> {
        if self.reshaped {
            self.marks.forget();
        }
        let parts = &self.state.data.partitions;
        let mut at: Vec<usize> = tokens
            .filter_map(|t| self.marks.indexed_position(parts, t))
            .collect();
        at.sort_unstable();
        at
    }

    /// Changes own partition `i` in place by `change`, which says whether it changed anything
    /// (its state or timestamps; never its token): then the marks note it and the own state is
    /// to be published. Returns what `change` returned.
    pub(super) fn update(
        &mut self,
        i: usize,
        change: impl FnOnce(&mut PartitionState) -> bool,
    ) -> bool {
        let p = &mut self.state.data.partitions[i];
        #[cfg(debug_assertions)]
        let token = p.token.clone();
        let changed = change(p);
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            p.token, token,
            "an own partition changed its token in place"
        );
        if changed {
            let st = p.state;
            self.marks.touch(i, st);
            self.dirty = true;
        }
        changed
    }

    /// The caller's step on own partition `i` (started, finished): [`update`](Self::update), and
    /// the next lookup looks next to it.
    pub(super) fn step(&mut self, i: usize, change: impl FnOnce(&mut PartitionState)) {
        self.last_index = i;
        self.update(i, |p| {
            change(p);
            true
        });
    }

    /// Appends an own partition (positions stay as they are).
    pub(super) fn push(&mut self, p: PartitionState) {
        self.state.data.partitions.push(p);
    }

    /// Appends own partitions.
    pub(super) fn extend(&mut self, parts: impl IntoIterator<Item = PartitionState>) {
        self.state.data.partitions.extend(parts);
    }

    /// Appends an own share.
    pub(super) fn push_share(&mut self, sh: SharedPartition) {
        self.state.share.partitions.push(sh);
    }

    /// Drops the own partitions `keep` does not keep; returns whether it dropped any.
    pub(super) fn retain(&mut self, keep: impl FnMut(&PartitionState) -> bool) -> bool {
        let before = self.state.data.partitions.len();
        self.state.data.partitions.retain(keep);
        let dropped = self.state.data.partitions.len() != before;
        if dropped {
            self.reshape();
        }
        dropped
    }

    /// Drops the own shares `keep` does not keep; returns whether it dropped any.
    pub(super) fn retain_shares(&mut self, keep: impl FnMut(&SharedPartition) -> bool) -> bool {
        let before = self.state.share.partitions.len();
        self.state.share.partitions.retain(keep);
        let dropped = self.state.share.partitions.len() != before;
        if dropped {
            self.reshape();
        }
        dropped
    }

    /// Drops every own partition and share.
    pub(super) fn clear(&mut self) {
        self.state.data.partitions.clear();
        self.state.share.partitions.clear();
        self.reshape();
    }

    /// Re-addresses the own shares by `readdress` (which may change their assignee); those it
    /// addresses to this task become own partitions (appended). The share list is rebuilt.
    pub(super) fn readdress_shares(&mut self, readdress: impl FnMut(&mut SharedPartition)) {
        self.reshape();
        let mut shares = std::mem::take(&mut self.state.share.partitions);
        shares.iter_mut().for_each(readdress);
        let me = &self.state.task_id;
        let (mine, others): (Vec<_>, Vec<_>) = shares.into_iter().partition(|s| &s.assignee == me);
        self.state.share.partitions = others;
        self.state
            .data
            .partitions
            .extend(mine.iter().map(|s| s.to_partition()));
        self.dirty = true;
    }

    /// The removal of done partitions: of the own partitions `may` allows (due, and nothing
    /// blocks it), a Finished one becomes Removed (finished `now` if it has no time), and one
    /// `may` then still allows is dropped. The own state is to be published if anything changed.
    pub(super) fn remove_done(&mut self, now: u64, may: impl Fn(&PartitionState) -> bool) {
        let before = self.state.data.partitions.len();
        let mut changed = false;
        let marks = &mut self.marks;
        let mut i = 0;
        self.state.data.partitions.retain_mut(|p| {
            i += 1;
            if !may(p) {
                return true;
            }
            if p.state == PartitionStatus::Finished {
                p.state = PartitionStatus::Removed;
                if p.finished_timestamp.is_none() {
                    p.finished_timestamp = Some(now);
                }
                marks.touch(i - 1, PartitionStatus::Removed);
                changed = true;
            }
            // a tombstone outlives every stale reference to it: dropping it earlier could
            // resurrect the partition (a removal that is due at once with no delay or ttl drops
            // it in the same pass, so that no deadline is left in the past)
            !may(p)
        });
        let dropped = self.state.data.partitions.len() != before;
        if dropped {
            self.reshape();
        }
        if changed || dropped {
            self.dirty = true;
        }
    }

    /// The own state's version is at least `version` (an epoch's entry for it may be newer).
    pub(super) fn version_at_least(&mut self, version: u64) {
        self.state.state_version = self.state.state_version.max(version);
    }

    /// The own state goes out (a new version, stamped `now`, published in `epoch`): as the change
    /// from what was published before when `change` allows it (a Regular message in the epoch of
    /// the previous one, see `delta`) and it is worth it under `max_record_bytes`, else whole.
    /// Returns the state to publish and, for a change, what it dropped. Nothing is to be
    /// published after it.
    pub(super) fn publish(
        &mut self,
        now: u64,
        epoch: &str,
        change: bool,
        max_record_bytes: u64,
    ) -> (TaskState, Option<Delta>) {
        self.state.state_version += 1;
        self.state.state_timestamp = now;
        // (`change` brings `sent` to the own state: whichever goes out, the change or the whole)
        let change = match &mut self.sent {
            Some(sent) if change && sent.is_of(epoch) => {
                Some(sent.change(&self.state, self.reshaped, |n| {
                    self.marks.changed_since_published(n)
                }))
                .filter(|c| c.worth(&self.state, max_record_bytes))
            }
            _ => None,
        };
        let published = match change {
            Some(c) => {
                let (st, delta) = c.into_state(&self.state);
                (st, Some(delta))
            }
            None => {
                self.sent = Some(Sent::whole(epoch, &self.state));
                (self.state.clone(), None)
            }
        };
        self.published();
        self.dirty = false;
        published
    }

    /// What was published is the own state from now on (see `Marks`).
    fn published(&mut self) {
        if self.reshaped {
            self.marks.forget();
        }
        self.reshaped = false;
        self.marks.published();
    }

    /// Own partitions that may be waiting (Created or ReadyForStreaming), ascending.
    pub(super) fn waiting_positions(&self) -> Vec<usize> {
        self.positions(|m| &m.waiting, is_waiting)
    }

    /// Own partitions that are done (Finished or Removed), ascending.
    pub(super) fn done_positions(&self) -> Vec<usize> {
        self.positions(|m| &m.done, is_done)
    }

    /// The own partitions `keep` holds, of those `list` of the marks names (all of them when
    /// the marks were forgotten), ascending.
    fn positions(
        &self,
        list: impl Fn(&Marks) -> &Vec<usize>,
        keep: fn(&PartitionState) -> bool,
    ) -> Vec<usize> {
        let m = if self.reshaped {
            &Marks::default()
        } else {
            &self.marks
        };
        let v = m.select(list(m), &self.state.data.partitions, keep);
        debug_assert_eq!(
            v,
            (0..self.state.data.partitions.len())
                .filter(|&i| keep(&self.state.data.partitions[i]))
                .collect::<Vec<_>>()
        );
        v
    }

    /// The own lists were rebuilt or items dropped (see `delta` and `Marks`): every method that
    /// drops or reorders own partitions or shares calls this.
    fn reshape(&mut self) {
        self.reshaped = true;
        self.marks.forget();
    }

    /// Rebuilds `waiting` and `done` to cover every own partition (after readiness ran, with
    /// the waiting positions it left).
    pub(super) fn refresh_marks(&mut self, waiting: Vec<usize>) {
        let done = self.done_positions();
        let m = &mut self.marks;
        m.waiting = waiting;
        m.done = done;
        m.len = self.state.data.partitions.len();
        m.valid = !self.reshaped;
    }
}

/// Incremental bookkeeping of the own partitions, so that an ordinary change (a partition
/// started or finished, an own record read back) costs what it changes, not what the task owns.
/// Positions index `own.data.partitions`; they stay valid while the list is only changed in place
/// and extended. Anything that drops or reorders own items sets `reshaped` (as `delta` requires),
/// which makes these positions unknown: the next settle walks the own partitions once and
/// rebuilds them. The lists are supersets (filtered by state where used).
#[derive(Clone, Default)]
struct Marks {
    /// Whether `waiting` and `done` cover the own partitions before `len` (those from `len` on
    /// were appended since, and are looked at too).
    valid: bool,
    len: usize,
    /// Positions that may be Created or ReadyForStreaming (what readiness looks at).
    waiting: Vec<usize>,
    /// Positions that may be Finished or Removed (what removal looks at).
    done: Vec<usize>,
    /// Positions changed in place since the last publication, or `None` if unknown (then the
    /// change is found by comparing every own partition).
    touched: Option<Vec<usize>>,
    /// Position of each own partition by token, for the first `indexed` ones (built when a
    /// token is looked up out of order; cleared with the rest).
    index: HashMap<String, usize>,
    indexed: usize,
}

/// Every field but the token index, a lookup cache that any lookup may extend (also one whose
/// input is then refused): what the marks say, not how fast they are found.
impl std::fmt::Debug for Marks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Marks")
            .field("valid", &self.valid)
            .field("len", &self.len)
            .field("waiting", &self.waiting)
            .field("done", &self.done)
            .field("touched", &self.touched)
            .finish_non_exhaustive()
    }
}

impl Marks {
    /// Whether `token` is one of `parts`, by the index where it has it, else by looking (the
    /// partitions appended since it was built first): nothing changes, so that looking for a
    /// token not owned (an error for the caller) leaves the marks as they were.
    fn holds(&self, parts: &[PartitionState], token: &str) -> bool {
        let indexed = self.index.get(token).copied();
        indexed.is_some_and(|i| parts.get(i).is_some_and(|p| p.token == token))
            || parts.iter().rev().any(|p| p.token == token)
    }

    /// Every position unknown (the own lists were rebuilt, or changed by code that does not
    /// note what it changes).
    fn forget(&mut self) {
        self.valid = false;
        self.waiting.clear();
        self.done.clear();
        self.touched = None;
        self.index.clear();
        self.indexed = 0;
    }

    /// Position of own partition `token` in `parts` by the index alone (extended to the
    /// partitions appended since it was built; tokens do not change in place, and what drops or
    /// reorders partitions forgets it).
    fn indexed_position(&mut self, parts: &[PartitionState], token: &str) -> Option<usize> {
        if self.indexed > parts.len() {
            self.index.clear();
            self.indexed = 0;
        }
        for (i, p) in parts.iter().enumerate().skip(self.indexed) {
            self.index.entry(p.token.clone()).or_insert(i);
        }
        self.indexed = parts.len();
        self.index
            .get(token)
            .copied()
            .filter(|&i| parts[i].token == token)
    }

    /// Position of own partition `token` in `parts` (the first one), by the index, extended to
    /// the partitions appended since it was built; looked for in the list when the index does
    /// not have it (an unknown token, an error for the caller).
    fn position(&mut self, parts: &[PartitionState], token: &str) -> Option<usize> {
        let found = self.indexed_position(parts, token);
        if found.is_some() {
            debug_assert_eq!(found, parts.iter().position(|p| p.token == token));
            return found;
        }
        // not owned (an error for the caller), or the index is stale: look, and rebuild it next
        let found = parts.iter().position(|p| p.token == token);
        if found.is_some() {
            self.index.clear();
            self.indexed = 0;
        }
        found
    }

    /// Own partition `i` changed in place (its state or timestamps).
    fn touch(&mut self, i: usize, st: PartitionStatus) {
        if let Some(t) = &mut self.touched {
            t.push(i);
        }
        if self.valid {
            match st {
                PartitionStatus::Created | PartitionStatus::ReadyForStreaming => {
                    self.waiting.push(i)
                }
                PartitionStatus::Finished | PartitionStatus::Removed => self.done.push(i),
                _ => {}
            }
        }
    }

    /// What was published is the own state from now on.
    fn published(&mut self) {
        self.touched = Some(Vec::new());
    }

    /// Positions (ascending, once each) of the own partitions changed in place since the last
    /// publication, if known and `n` own partitions were published.
    fn changed_since_published(&self, published: usize) -> Option<Vec<usize>> {
        let mut v: Vec<usize> = self
            .touched
            .as_ref()?
            .iter()
            .copied()
            .filter(|&i| i < published)
            .collect();
        v.sort_unstable();
        v.dedup();
        Some(v)
    }

    /// Positions (ascending, once each) from `list` and the ones appended since the lists were
    /// built, of the partitions `keep` selects; all of them when the lists are not valid.
    fn select(
        &self,
        list: &[usize],
        parts: &[PartitionState],
        keep: impl Fn(&PartitionState) -> bool,
    ) -> Vec<usize> {
        if !self.valid || self.len > parts.len() {
            return (0..parts.len()).filter(|&i| keep(&parts[i])).collect();
        }
        let mut v: Vec<usize> = list
            .iter()
            .copied()
            .chain(self.len..parts.len())
            .filter(|&i| parts.get(i).is_some_and(&keep))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

fn is_waiting(p: &PartitionState) -> bool {
    matches!(
        p.state,
        PartitionStatus::Created | PartitionStatus::ReadyForStreaming
    )
}

fn is_done(p: &PartitionState) -> bool {
    p.state.is_done()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 1 << 20;

    fn own_with(tokens: &[&str]) -> Own {
        let mut own = Own::new("t1");
        own.extend(tokens.iter().map(|t| PartitionState::created(*t, vec![])));
        own
    }

    fn tokens(own: &Own) -> Vec<&str> {
        own.partitions().iter().map(|p| p.token.as_str()).collect()
    }

    fn finish(p: &mut PartitionState) -> bool {
        p.state = PartitionStatus::Finished;
        p.finished_timestamp = Some(5);
        true
    }

    #[test]
    fn publishing_whole_then_a_change_names_only_what_changed() {
        let mut own = own_with(&["a", "b", "c"]);
        let (whole, delta) = own.publish(1, "e1", true, MAX);
        assert_eq!((whole.data.partitions.len(), delta), (3, None));
        assert!(!own.is_dirty());
        assert!(own.update(1, finish));
        assert!(own.is_dirty());
        own.push(PartitionState::created("d", vec![]));
        let (change, delta) = own.publish(2, "e1", true, MAX);
        let named: Vec<&str> = change
            .data
            .partitions
            .iter()
            .map(|p| p.token.as_str())
            .collect();
        assert_eq!(named, ["b", "d"]);
        assert_eq!(change.state_version, 2);
        assert_eq!(delta, Some(Delta::default()));
    }

    #[test]
    fn a_change_in_another_epoch_or_not_allowed_goes_out_whole() {
        let mut own = own_with(&["a", "b", "c"]);
        own.publish(1, "e1", true, MAX);
        own.update(0, finish);
        assert_eq!(own.publish(2, "e2", true, MAX).1, None);
        own.update(1, finish);
        assert_eq!(own.publish(3, "e2", false, MAX).1, None);
    }

    #[test]
    fn an_update_that_changes_nothing_leaves_the_state_clean() {
        let mut own = own_with(&["a"]);
        own.publish(1, "e1", true, MAX);
        assert!(!own.update(0, |_| false));
        assert!(!own.is_dirty());
    }

    #[test]
    fn dropping_partitions_reshapes_and_the_change_names_them_dropped() {
        let mut own = own_with(&["a", "b", "c", "d"]);
        own.publish(1, "e1", true, MAX);
        assert!(!own.retain(|_| true));
        assert!(
            !own.reshaped,
            "a retain that drops nothing keeps the positions"
        );
        assert!(own.retain(|p| p.token != "b"));
        assert!(own.reshaped);
        // positions after the drop are found by looking, not by the forgotten index
        assert_eq!(own.index("c"), Some(1));
        assert_eq!(own.index("b"), None);
        assert_eq!(own.positions_of(["d", "a"].into_iter()), vec![0, 2]);
        own.update(2, finish);
        let (change, delta) = own.publish(2, "e1", true, MAX);
        let named: Vec<&str> = change
            .data
            .partitions
            .iter()
            .map(|p| p.token.as_str())
            .collect();
        assert_eq!(named, ["d"]);
        assert_eq!(delta.unwrap().removed, ["b"]);
        assert!(
            !own.reshaped,
            "what was published is the own state from now on"
        );
    }

    #[test]
    fn dropping_shares_reshapes_and_the_change_names_them_unshared() {
        let mut own = own_with(&["a"]);
        own.push_share(PartitionState::created("s1", vec![]).shared_to("t2"));
        own.push_share(PartitionState::created("s2", vec![]).shared_to("t3"));
        own.publish(1, "e1", true, MAX);
        assert!(own.retain_shares(|s| s.token != "s1"));
        assert!(own.reshaped);
        own.mark_dirty();
        let (_, delta) = own.publish(2, "e1", true, MAX);
        assert_eq!(delta.unwrap().unshared, ["s1"]);
    }

    #[test]
    fn readdressed_shares_to_this_task_become_own_partitions() {
        let mut own = own_with(&["a"]);
        own.push_share(PartitionState::created("s1", vec![]).shared_to("gone"));
        own.push_share(PartitionState::created("s2", vec![]).shared_to("t2"));
        own.publish(1, "e1", true, MAX);
        own.readdress_shares(|s| {
            if s.assignee == "gone" {
                s.assignee = "t1".into();
            }
        });
        assert!(own.reshaped && own.is_dirty());
        assert_eq!(tokens(&own), ["a", "s1"]);
        let shares: Vec<&str> = own.shares().iter().map(|s| s.token.as_str()).collect();
        assert_eq!(shares, ["s2"]);
        let (_, delta) = own.publish(2, "e1", true, MAX);
        assert_eq!(delta.unwrap().unshared, ["s1"]);
    }

    #[test]
    fn removal_marks_finished_removed_and_drops_what_is_still_allowed() {
        let mut own = own_with(&["a", "b", "c", "d"]);
        own.update(0, finish);
        own.update(1, finish);
        own.publish(1, "e1", true, MAX);
        // a Finished partition becomes Removed; one still allowed as Removed is dropped
        own.remove_done(9, |p| {
            p.token == "a" || (p.token == "b" && p.state == PartitionStatus::Finished)
        });
        assert_eq!(tokens(&own), ["b", "c", "d"]);
        assert_eq!(own.partitions()[0].state, PartitionStatus::Removed);
        assert!(own.reshaped && own.is_dirty());
        assert_eq!(own.done_positions(), vec![0]);
        let (_, delta) = own.publish(2, "e1", true, MAX);
        assert_eq!(delta.unwrap().removed, ["a"]);
        // nothing allowed: nothing changes
        own.remove_done(10, |_| false);
        assert!(!own.is_dirty() && !own.reshaped);
    }

    #[test]
    fn clearing_reshapes() {
        let mut own = own_with(&["a", "b"]);
        own.publish(1, "e1", true, MAX);
        own.clear();
        assert!(own.reshaped);
        assert!(own.partitions().is_empty() && own.shares().is_empty());
    }

    #[test]
    fn lookups_and_marks_follow_in_place_changes_and_appends() {
        let mut own = own_with(&["a", "b", "c"]);
        own.refresh_marks(own.waiting_positions());
        assert_eq!(own.waiting_positions(), vec![0, 1, 2]);
        own.step(1, |p| p.state = PartitionStatus::Running);
        assert_eq!(own.index("c"), Some(2), "looked for next to the last step");
        own.update(2, finish);
        own.push(PartitionState::created("d", vec![]));
        assert_eq!(own.waiting_positions(), vec![0, 3]);
        assert_eq!(own.done_positions(), vec![2]);
        assert_eq!(own.index("a"), Some(0));
        assert_eq!(own.index("d"), Some(3));
        assert_eq!(own.index("x"), None);
    }

    #[test]
    fn the_version_only_grows() {
        let mut own = own_with(&[]);
        own.version_at_least(7);
        own.version_at_least(3);
        assert_eq!(own.state().state_version, 7);
        assert_eq!(own.publish(1, "e1", true, MAX).0.state_version, 8);
    }

    #[test]
    fn the_own_shares_the_others_hold_are_its_word_once_a_record_is_read_back() {
        let mut own = own_with(&[]);
        let epoch: HashMap<String, String> =
            [("s1".to_string(), "t2".to_string())].into_iter().collect();
        own.shares_of_epoch(epoch);
        assert_eq!(own.shares_read(), None);
        let s2 = PartitionState::created("s2", vec![]).shared_to("t3");
        let dropped = Delta {
            unshared: vec!["s1".into()],
            ..Delta::default()
        };
        own.own_record_read(Some(&dropped), std::slice::from_ref(&s2));
        let read = own.shares_read().unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read["s2"], "t3");
        // a whole record lists every own share
        own.own_record_read(None, &[]);
        assert!(own.shares_read().unwrap().is_empty());
    }
}
