//! The own partitions: found (`add_partitions`), started and finished by the caller, and brought
//! up to date with the view (shares picked up and cleared, readiness and scheduling, delayed
//! removal).

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::limits::{MAX_SAFE_INTEGER, PARTITION_SHARE};
use super::timer::{removal_due, RemovalBlockers};
use super::validate::invalid_partition;
use super::{chunk, SyncTask};
use crate::quote::cut;
use crate::sync::error::SyncError;
use crate::sync::types::{
    PartitionSpec, PartitionState, PartitionStatus, SharedPartition, SyncOutput,
};

impl SyncTask {
    pub(super) fn add_partitions_inner(
        &mut self,
        specs: &[PartitionSpec],
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        self.check_specs(specs)?;
        let (known, own_tokens) = self.known_of(specs)?;
        self.clock(now);
        self.place_new(specs, known, &own_tokens);
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        Ok(out)
    }

    /// Every spec is valid (see [`add_partitions`](Self::add_partitions)), and no partition
    /// would take more than its share of a record.
    fn check_specs(&self, specs: &[PartitionSpec]) -> Result<(), SyncError> {
        let mut batch = HashSet::default();
        for (i, s) in specs.iter().enumerate() {
            if s.token.is_empty() {
                return Err(invalid_partition(format!("partitions[{i}].token is empty")));
            }
            if let Some(j) = s.parents.iter().position(|p| p.is_empty()) {
                return Err(invalid_partition(format!(
                    "partitions[{i}].parents[{j}] is empty"
                )));
            }
            if let Some(j) = s.parents.iter().position(|p| *p == s.token) {
                return Err(invalid_partition(format!(
                    "partitions[{i}].parents[{j}] is the partition's own token, {}",
                    cut(&s.token)
                )));
            }
            if !batch.insert(s.token.as_str()) {
                return Err(invalid_partition(format!(
                    "partitions[{i}].token is given twice: {}",
                    cut(&s.token)
                )));
            }
            for (name, t) in [
                ("startTimestamp", s.start_timestamp),
                ("endTimestamp", s.end_timestamp),
            ] {
                if t.is_some_and(|t| t > MAX_SAFE_INTEGER) {
                    return Err(invalid_partition(format!(
                        "partitions[{i}].{name} is above 2^53-1"
                    )));
                }
            }
        }
        let most = self.opts.max_record_bytes / PARTITION_SHARE;
        for (i, s) in specs.iter().enumerate() {
            let mut p = PartitionState::created(s.token.clone(), s.parents.clone());
            p.start_timestamp = s.start_timestamp;
            p.end_timestamp = s.end_timestamp;
            p.finished_timestamp = Some(MAX_SAFE_INTEGER);
            let len = chunk::json_len(&p.shared_to(self.id.clone())) as u64;
            if len > most {
                return Err(invalid_partition(format!(
                    "partitions[{i}] takes {len} bytes of JSON ({}), more than maxRecordBytes / {} ({most})",
                    cut(&s.token),
                    PARTITION_SHARE
                )));
            }
        }
        Ok(())
    }

    /// The given tokens some state knows already, and the smallest parents of merge children
    /// this task owns (the view is walked once, and only matches are copied). A known token
    /// given again with the parents it is known with (in any order) is a repeat, ignored; with
    /// other parents the caller's tree and the task's disagree: refused.
    fn known_of(
        &self,
        specs: &[PartitionSpec],
    ) -> Result<(HashSet<String>, HashSet<String>), SyncError> {
        let batch: HashSet<&str> = specs.iter().map(|s| s.token.as_str()).collect();
        let smallest: HashSet<&str> = specs
            .iter()
            .filter(|s| s.parents.len() > 1)
            .filter_map(|s| s.parents.iter().min().map(String::as_str))
            .collect();
        let mut known_parents: HashMap<&str, &[String]> = HashMap::default();
        for s in self.all_states() {
            let data = s
                .data
                .partitions
                .iter()
                .map(|p| (p.token.as_str(), &p.parents[..]));
            let shares = s
                .share
                .partitions
                .iter()
                .map(|p| (p.token.as_str(), &p.parents[..]));
            for (t, parents) in data.chain(shares) {
                if batch.contains(t) {
                    known_parents.entry(t).or_insert(parents);
                }
            }
        }
        for s in specs {
            if let Some(parents) = known_parents.get(s.token.as_str()) {
                let mut was: Vec<&str> = parents.iter().map(String::as_str).collect();
                let mut given: Vec<&str> = s.parents.iter().map(String::as_str).collect();
                was.sort_unstable();
                was.dedup();
                given.sort_unstable();
                given.dedup();
                if was != given {
                    return Err(invalid_partition(format!(
                        "{} is known with parents [{}], given again with parents [{}]",
                        s.token,
                        was.join(", "),
                        given.join(", ")
                    )));
                }
            }
        }
        let known: HashSet<String> = known_parents.keys().map(|t| t.to_string()).collect();
        let own_tokens: HashSet<String> = if smallest.is_empty() {
            HashSet::default()
        } else {
            self.own
                .partitions()
                .iter()
                .map(|p| p.token.as_str())
                .filter(|t| smallest.contains(t))
                .map(str::to_string)
                .collect()
        };
        Ok((known, own_tokens))
    }

    /// The new partitions go to this task, or, when sharing is enabled, to the least-loaded
    /// member (through the share section if that is another task).
    fn place_new(
        &mut self,
        specs: &[PartitionSpec],
        mut known: HashSet<String>,
        own_tokens: &HashSet<String>,
    ) {
        let sharing = self.sharing_enabled();
        // (loads as u64: the map shares its code with the other maps of a task id to a u64)
        let mut loads: BTreeMap<String, u64> = BTreeMap::new();
        if sharing {
            for m in self.view.members() {
                loads.insert(m.clone(), self.load_of(m) as u64);
            }
        }
        for s in specs {
            if known.contains(&s.token) {
                continue;
            }
            if s.parents.len() > 1 {
                let smallest = s.parents.iter().min().expect("len > 1");
                if !own_tokens.contains(smallest) {
                    continue; // the owner of the smallest parent creates it
                }
            }
            let mut p = PartitionState::created(s.token.clone(), s.parents.clone());
            p.start_timestamp = s.start_timestamp;
            p.end_timestamp = s.end_timestamp;
            let target = if sharing {
                loads
                    .iter()
                    .min_by_key(|(m, l)| (**l, *m != &self.id, (*m).clone()))
                    .map(|(m, _)| m.clone())
                    .unwrap_or_else(|| self.id.clone())
            } else {
                self.id.clone()
            };
            if target == self.id {
                self.own.push(p);
            } else {
                self.own.push_share(p.shared_to(target.clone()));
            }
            if let Some(l) = loads.get_mut(&target) {
                *l += 1;
            }
            known.insert(s.token.clone());
            self.own.mark_dirty();
        }
    }

    pub(super) fn partition_started_inner(
        &mut self,
        token: &str,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        let idx = self.own_index(token)?;
        match self.own.partitions()[idx].state {
            PartitionStatus::Scheduled => {}
            PartitionStatus::Running => return Ok(SyncOutput::default()),
            s => return Err(self.bad_transition(token, s, "started")),
        }
        self.clock(now);
        // (the next lookup starts after it; a rejected input changes nothing, not even this)
        self.own.step(idx, |p| p.state = PartitionStatus::Running);
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        Ok(out)
    }

    pub(super) fn partition_finished_inner(
        &mut self,
        token: &str,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        let idx = self.own_index(token)?;
        match self.own.partitions()[idx].state {
            PartitionStatus::Scheduled | PartitionStatus::Running => {}
            PartitionStatus::Finished | PartitionStatus::Removed => {
                return Ok(SyncOutput::default())
            }
            s => return Err(self.bad_transition(token, s, "finished")),
        }
        self.clock(now);
        let now = self.now;
        self.own.step(idx, |p| {
            p.state = PartitionStatus::Finished;
            p.finished_timestamp = Some(now);
        });
        self.finishes.note(token, Some(self.now), self.now);
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        Ok(out)
    }

    /// Bring the own state up to date with the view: pick up shares, clear picked-up shares,
    /// re-address orphaned shares, readiness and scheduling; with `timers` (on `tick`) also the
    /// delayed removal of finished partitions and the purge of tombstones. Each step scans the
    /// whole view only when the own state gives it something to look for, and copies no token.
    pub(super) fn settle_with(&mut self, out: &mut SyncOutput, timers: bool) {
        self.take_shares();
        self.readdress_shares();
        self.schedule_ready(out);
        if timers {
            self.remove_finished();
        }
    }

    /// Shares addressed to this task that no state owns yet are picked up; the own shares some
    /// state owns now are cleared (and so are a departed task's shares, see
    /// `clear_taken_ghost_shares`).
    fn take_shares(&mut self) {
        let (picked, cleared) = self.shares_to_take();
        self.clear_taken_ghost_shares();
        if !picked.is_empty() {
            self.own.extend(picked);
            self.own.mark_dirty();
        }
        if !cleared.is_empty() {
            self.own.retain_shares(|s| !cleared.contains(&s.token));
            self.own.mark_dirty();
        }
    }

    /// The shares addressed to this task that no state owns (to pick up), and the own shares
    /// whose partition some state owns (to clear).
    fn shares_to_take(&self) -> (Vec<PartitionState>, HashSet<String>) {
        // (the own tokens are hashed only when shares give them something to be checked against)
        // (not while behind: the epoch it missed may have resolved the share otherwise, e.g. a
        // departed sharer's children to the member owning their parent)
        let shares_to_me = self.view.in_epoch()
            && !self.view.behind()
            && self
                .view
                .cache
                .values()
                .any(|s| s.share.partitions.iter().any(|sh| sh.assignee == self.id));
        let own_tokens: HashSet<&str> = if shares_to_me || !self.own.shares().is_empty() {
            self.own
                .partitions()
                .iter()
                .map(|p| p.token.as_str())
                .collect()
        } else {
            HashSet::default()
        };
        // pick up shares addressed to this task
        let picked = if shares_to_me {
            self.shares_to_me(&own_tokens)
        } else {
            Vec::new()
        };
        // the sharer clears a share once the partition is owned
        let cleared = self.own_shares_among(
            self.view
                .cache
                .values()
                .flat_map(|s| s.data.partitions.iter())
                .map(|p| p.token.as_str())
                .chain(own_tokens.iter().copied()),
        );
        (picked, cleared)
    }

    /// The shares addressed to this task, of partitions it does not own (`own_tokens`) and no
    /// state of the view owns.
    fn shares_to_me(&self, own_tokens: &HashSet<&str>) -> Vec<PartitionState> {
        let mut candidates: Vec<&SharedPartition> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::default();
        for s in self.view.cache.values() {
            for sh in &s.share.partitions {
                if sh.assignee == self.id
                    && !own_tokens.contains(sh.token.as_str())
                    && seen.insert(sh.token.as_str())
                {
                    candidates.push(sh);
                }
            }
        }
        if candidates.is_empty() {
            return Vec::new();
        }
        let wanted: HashSet<&str> = candidates.iter().map(|c| c.token.as_str()).collect();
        let taken: HashSet<&str> = self
            .view
            .cache
            .values()
            .flat_map(|s| s.data.partitions.iter())
            .map(|p| p.token.as_str())
            .filter(|t| wanted.contains(t))
            .collect();
        candidates
            .into_iter()
            .filter(|c| !taken.contains(c.token.as_str()))
            .map(|c| c.to_partition())
            .collect()
    }

    /// A share addressed to a task that left the epoch goes to the least-loaded member.
    fn readdress_shares(&mut self) {
        if self.sharing_enabled()
            && self
                .own
                .shares()
                .iter()
                .any(|s| !self.view.members().contains(&s.assignee))
        {
            // (inserted one by one, as in `place_new`: collecting sorts, one more sort in the wasm)
            let mut loads: BTreeMap<String, u64> = BTreeMap::new();
            for m in self.view.members() {
                loads.insert(m.clone(), self.load_of(m) as u64);
            }
            let (members, me) = (self.view.members(), &self.id);
            self.own.readdress_shares(|sh| {
                if members.contains(&sh.assignee) {
                    return;
                }
                // the sharer re-owns it only when it is the only member left
                let target = loads
                    .iter()
                    .filter(|(m, _)| *m != me || members.len() == 1)
                    .min_by_key(|(m, l)| (**l, (*m).clone()))
                    .map(|(m, _)| m.clone());
                if let Some(t) = target {
                    *loads.get_mut(&t).expect("present") += 1;
                    sh.assignee = t;
                }
            });
        }
    }

    /// Readiness: Created -> ReadyForStreaming -> Scheduled when every parent is done (or
    /// unknown everywhere); the owner starts what is ready.
    fn schedule_ready(&mut self, out: &mut SyncOutput) {
        // readiness: Created -> ReadyForStreaming -> Scheduled when every parent is done (or
        // unknown everywhere); the owner starts what is ready
        // (only the own partitions that may be waiting are looked at, see `Marks`)
        let waiting = self.own.waiting_positions();
        // a task starts nothing new until every member has applied the epoch in force: one
        // that missed a NewEpoch and applied a later one built on the same base (a fork every
        // other member rejects) learns it from their messages, and its leader rolls back,
        // before it runs what the fork gave it and the epoch it missed gave another member
        // (`is_subset` walks both sorted sets once: with a thousand members, a lookup each on
        // every input was most of a simulated task's time)
        if self.view.in_epoch() && !self.view.members().is_subset(self.view.acked()) {
            self.own.refresh_marks(waiting);
            return;
        }
        let open = self.open_parents(&waiting);
        let mut still = Vec::new();
        let closing = self.is_closing();
        let (finishes, now) = (&self.finishes, self.now);
        for i in waiting {
            let changed = self.own.update(i, |p| {
                // a partition whose finish this task read is finished, however it came back as
                // new work (a share re-addressed from a departed task, a stale answer, an epoch
                // computed before the finish landed): it is never started again (see `finishes`)
                if let Some(at) = finishes.get(&p.token) {
                    p.state = PartitionStatus::Finished;
                    p.finished_timestamp = at.or(Some(now));
                    return true;
                }
                // (a closing task starts nothing: what it leaves goes to the others)
                let ready = !closing
                    && match p.state {
                        PartitionStatus::Created => p.parents.iter().all(|x| !open.contains(x)),
                        PartitionStatus::ReadyForStreaming => true,
                        _ => false,
                    };
                if ready {
                    p.state = PartitionStatus::Scheduled;
                    out.start.push(p.token.clone());
                }
                ready
            });
            if !changed {
                still.push(i);
            }
        }
        self.own.refresh_marks(still);
    }

    /// The parents of the own Created partitions among `waiting` that are not done: owned by a
    /// state of the view and not done, or shared.
    fn open_parents(&self, waiting: &[usize]) -> HashSet<String> {
        let parts = self.own.partitions();
        let parents: HashSet<&str> = waiting
            .iter()
            .map(|&i| &parts[i])
            .filter(|p| p.state == PartitionStatus::Created)
            .flat_map(|p| p.parents.iter().map(|x| x.as_str()))
            .collect();
        let mut open: HashSet<String> = HashSet::default();
        if parents.is_empty() {
            return open;
        }
        for s in self.all_states() {
            for p in &s.data.partitions {
                if !p.state.is_done() && parents.contains(p.token.as_str()) {
                    open.insert(p.token.clone());
                }
            }
            for p in &s.share.partitions {
                if parents.contains(p.token.as_str()) {
                    open.insert(p.token.clone());
                }
            }
        }
        open
    }

    pub(super) fn settle(&mut self, out: &mut SyncOutput) {
        self.settle_with(out, false);
    }

    /// Of the own `candidates` tokens (Finished or Removed), those that an unfinished partition
    /// names as a parent, and those that another task's state or a share still references.
    pub(super) fn removal_blockers(&self, candidates: &HashSet<&str>) -> RemovalBlockers {
        let mut b = RemovalBlockers {
            open_children: HashSet::default(),
            referenced: HashSet::default(),
            rebalancing: self.rebalancing(),
        };
        for s in self.all_states() {
            let other = s.task_id != self.id;
            for p in &s.data.partitions {
                if other && candidates.contains(p.token.as_str()) {
                    b.referenced.insert(p.token.clone());
                }
                if !p.state.is_done() {
                    for x in &p.parents {
                        if candidates.contains(x.as_str()) {
                            b.open_children.insert(x.clone());
                        }
                    }
                }
            }
            for p in &s.share.partitions {
                if candidates.contains(p.token.as_str()) {
                    b.referenced.insert(p.token.clone());
                }
                for x in &p.parents {
                    if candidates.contains(x.as_str()) {
                        b.open_children.insert(x.clone());
                    }
                }
            }
        }
        b
    }

    /// Finished -> Removed after `removal_delay` once no unfinished partition names it as a
    /// parent; Removed -> dropped after `tombstone_ttl` more, once nothing references it (a
    /// departed sharer's stale share, another task's state) and no rebalance is in progress.
    pub(super) fn remove_finished(&mut self) {
        let now = self.now;
        let (delay, ttl) = (self.opts.removal_delay, self.opts.tombstone_ttl);
        let due = |p: &PartitionState| removal_due(p, delay, ttl).is_some_and(|t| t <= now);
        let parts = self.own.partitions();
        let candidates: HashSet<&str> = self
            .own
            .done_positions()
            .into_iter()
            .map(|i| &parts[i])
            .filter(|p| due(p))
            .map(|p| p.token.as_str())
            .collect();
        if candidates.is_empty() {
            return;
        }
        let blockers = self.removal_blockers(&candidates);
        drop(candidates);
        self.own.remove_done(now, |p| due(p) && blockers.allow(p));
    }
}
