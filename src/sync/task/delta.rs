//! Changes cost what they change: a `Regular` message carries only the partitions and shares
//! its sender changed since its previous message, and readers apply it to what they hold for the
//! sender (see the module docs of `sync`).

use super::*;

/// What a task last published of its own state, to compute its next change from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Sent {
    /// The epoch in force when it was published: a change is relative to a message of the same
    /// epoch (the first message in an epoch is whole).
    epoch: String,
    data: HashMap<String, PartitionState>,
    share: HashMap<String, SharedPartition>,
}

/// A change of a task's state: the partitions and shares that differ from what it last
/// published (whole, as they are now) and the tokens it dropped.
pub(super) struct Change {
    pub(super) data: Vec<PartitionState>,
    pub(super) share: Vec<SharedPartition>,
    pub(super) delta: Delta,
}

impl Sent {
    /// What `st` publishes, whole, in `epoch`.
    pub(super) fn whole(epoch: &str, st: &TaskState) -> Self {
        Sent {
            epoch: epoch.to_string(),
            data: st
                .data
                .partitions
                .iter()
                .map(|p| (p.token.clone(), p.clone()))
                .collect(),
            share: st
                .share
                .partitions
                .iter()
                .map(|p| (p.token.clone(), p.clone()))
                .collect(),
        }
    }

    /// The change from what was published to `st`, if it was published in `epoch` (O(size of
    /// the state) to find, O(what changed) to build).
    pub(super) fn change(&self, epoch: &str, st: &TaskState) -> Option<Change> {
        if self.epoch != epoch {
            return None;
        }
        let data: Vec<PartitionState> = st
            .data
            .partitions
            .iter()
            .filter(|p| self.data.get(&p.token) != Some(*p))
            .cloned()
            .collect();
        let share: Vec<SharedPartition> = st
            .share
            .partitions
            .iter()
            .filter(|p| self.share.get(&p.token) != Some(*p))
            .cloned()
            .collect();
        let kept_data = st.data.partitions.len() - data.len();
        let kept_share = st.share.partitions.len() - share.len();
        let mut delta = Delta::default();
        if kept_data < self.data.len() {
            let now: HashSet<&str> = st
                .data
                .partitions
                .iter()
                .map(|p| p.token.as_str())
                .collect();
            delta.removed = dropped(self.data.keys(), &now);
        }
        if kept_share < self.share.len() {
            let now: HashSet<&str> = st
                .share
                .partitions
                .iter()
                .map(|p| p.token.as_str())
                .collect();
            delta.unshared = dropped(self.share.keys(), &now);
        }
        Some(Change { data, share, delta })
    }

    /// `change` went out: what was published is now the state it was computed from.
    pub(super) fn apply(&mut self, change: &Change) {
        for t in &change.delta.removed {
            self.data.remove(t);
        }
        for t in &change.delta.unshared {
            self.share.remove(t);
        }
        for p in &change.data {
            self.data.insert(p.token.clone(), p.clone());
        }
        for p in &change.share {
            self.share.insert(p.token.clone(), p.clone());
        }
    }
}

/// The tokens of `before` not in `now`, sorted (every task computes the same message).
fn dropped<'a>(before: impl Iterator<Item = &'a String>, now: &HashSet<&str>) -> Vec<String> {
    let mut v: Vec<String> = before
        .filter(|t| !now.contains(t.as_str()))
        .cloned()
        .collect();
    v.sort();
    v
}

impl Change {
    /// Whether the change is worth sending instead of the whole state: it names fewer items
    /// than the state has, and its dropped tokens take at most a quarter of a record (so that the
    /// header of every chunk leaves room for partitions).
    pub(super) fn worth(&self, st: &TaskState, max_record_bytes: u64) -> bool {
        let named = self.data.len()
            + self.share.len()
            + self.delta.removed.len()
            + self.delta.unshared.len();
        let whole = st.data.partitions.len() + st.share.partitions.len();
        let dropped_bytes: u64 = self
            .delta
            .removed
            .iter()
            .chain(&self.delta.unshared)
            .map(|t| t.len() as u64 + 3)
            .sum();
        named < whole && dropped_bytes <= max_record_bytes / chunk::PARTITION_SHARE
    }
}

/// Applies a change read from its sender (`change`: the partitions and shares it lists;
/// `delta`: the tokens it dropped) to `base`, what the reader holds for that sender: dropped
/// tokens go, listed items replace those of the same token or are appended, in order.
pub(super) fn patch(base: &mut TaskState, change: &TaskState, delta: &Delta) {
    if !delta.removed.is_empty() {
        let gone: HashSet<&str> = delta.removed.iter().map(String::as_str).collect();
        base.data
            .partitions
            .retain(|p| !gone.contains(p.token.as_str()));
    }
    if !delta.unshared.is_empty() {
        let gone: HashSet<&str> = delta.unshared.iter().map(String::as_str).collect();
        base.share
            .partitions
            .retain(|p| !gone.contains(p.token.as_str()));
    }
    if !change.data.partitions.is_empty() {
        let at: HashMap<String, usize> = base
            .data
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.token.clone(), i))
            .collect();
        for p in &change.data.partitions {
            match at.get(&p.token) {
                Some(&i) => base.data.partitions[i] = p.clone(),
                None => base.data.partitions.push(p.clone()),
            }
        }
    }
    if !change.share.partitions.is_empty() {
        let at: HashMap<String, usize> = base
            .share
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.token.clone(), i))
            .collect();
        for p in &change.share.partitions {
            match at.get(&p.token) {
                Some(&i) => base.share.partitions[i] = p.clone(),
                None => base.share.partitions.push(p.clone()),
            }
        }
    }
    base.task_id = change.task_id.clone();
    base.state_version = change.state_version;
    base.state_timestamp = change.state_timestamp;
}

impl SyncTask {
    /// The sender's whole state, as this reader holds it, with a change read from it applied
    /// (from `base` if given, else from the view's entry, else from nothing).
    pub(super) fn patched(&self, msg: &SyncMessage, base: Option<&TaskState>) -> TaskState {
        let st = Self::sender_state(msg);
        let Some(delta) = &msg.delta else {
            return st.clone();
        };
        let mut whole = base
            .or_else(|| self.cache.get(&msg.task_id))
            .cloned()
            .unwrap_or_else(|| TaskState::empty(msg.task_id.clone()));
        patch(&mut whole, st, delta);
        whole
    }
}
