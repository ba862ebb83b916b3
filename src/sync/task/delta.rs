//! Changes cost what they change: a `Regular` message carries only the partitions and shares
//! its sender changed since its previous message, and readers apply it to what they hold for the
//! sender (see the module docs of `sync`).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::limits::PARTITION_SHARE;
use crate::sync::types::{Delta, PartitionState, SharedPartition, TaskData, TaskShare, TaskState};

/// A change of a task's state: the partitions and shares that differ from what it last
/// published (whole, as they are now) and the tokens it dropped.
pub(super) struct Change {
    data: Vec<PartitionState>,
    share: Vec<SharedPartition>,
    delta: Delta,
}

/// Items with a token, compared as published.
trait Item: Clone + PartialEq {
    fn token(&self) -> &str;
    /// Whether the item differs from `other`, which has the same token (the fields that change
    /// in place first).
    fn differs(&self, other: &Self) -> bool;
    /// Whether a reader keeps this item over `newer`, its sender's later word of the same token:
    /// a partition the reader knows done stays done (see `settled_over`).
    fn kept_over(&self, newer: &Self) -> bool;
}

/// Whether a reader keeps `held`, a partition of its entry for a task, over `newer`, that task's
/// later word of it: a partition known done (another task's word that it finished, read before:
/// a departed task's late record, or the finish of a partition an epoch moved since) stays done.
/// A partition's life only goes forward, and its owner learns of the finish from the same record
/// and says so in its next message; until then, a reader that let the owner's older word undo
/// the finish could hand the partition on as new work in an epoch it computes.
pub(super) fn settled_over(held: &PartitionState, newer: &PartitionState) -> bool {
    held.state.is_done() && !newer.state.is_done()
}

impl Item for PartitionState {
    fn token(&self) -> &str {
        &self.token
    }

    fn differs(&self, o: &Self) -> bool {
        self.state != o.state
            || self.finished_timestamp != o.finished_timestamp
            || self.start_timestamp != o.start_timestamp
            || self.end_timestamp != o.end_timestamp
            || self.parents != o.parents
    }

    fn kept_over(&self, newer: &Self) -> bool {
        settled_over(self, newer)
    }
}

impl Item for SharedPartition {
    fn token(&self) -> &str {
        &self.token
    }

    fn differs(&self, o: &Self) -> bool {
        self.assignee != o.assignee
            || self.state != o.state
            || self.finished_timestamp != o.finished_timestamp
            || self.start_timestamp != o.start_timestamp
            || self.end_timestamp != o.end_timestamp
            || self.parents != o.parents
    }

    fn kept_over(&self, _newer: &Self) -> bool {
        false
    }
}

/// String equality by 8-byte words: wasm's `memcmp` compares byte by byte, and tokens are
/// compared once per owned partition on every change.
pub(super) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let (wa, wb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (wa.remainder(), wb.remainder());
    wa.zip(wb).all(|(x, y)| {
        u64::from_ne_bytes(x.try_into().expect("8 bytes"))
            == u64::from_ne_bytes(y.try_into().expect("8 bytes"))
    }) && ra == rb
}

/// Positions (in `now`) of the items that differ from `before`, if `now` is `before` changed in
/// place and maybe extended (same tokens at the same positions); `None` otherwise. With
/// `known_in_place` (nothing was dropped from `now` since it was `before`) tokens are not compared
/// (debug builds check that they match).
fn in_place<T: Item>(before: &[T], now: &[T], known_in_place: bool) -> Option<Vec<usize>> {
    if now.len() < before.len() {
        return None;
    }
    let mut changed = Vec::new();
    for (i, (a, b)) in before.iter().zip(now).enumerate() {
        if known_in_place {
            debug_assert_eq!(a.token(), b.token());
        } else if !same_text(a.token(), b.token()) {
            return None;
        }
        if a.differs(b) {
            changed.push(i);
        }
    }
    Some(changed)
}

/// The items of `now` that differ from `before` (or are new) and the tokens of `before` not in
/// `now` (sorted, so that every task computes the same message); then `before` is brought to
/// `now`. In the common case (`now` is `before` changed in place, maybe with items appended) one
/// walk without hashing, and only what changed is copied.
///
/// `touched`: when known, the positions (ascending, below `before.len()`) of every item changed
/// in place since `before` (nothing dropped since): only those are compared, so the change costs
/// what changed, not the size of the lists (debug builds check it against the whole walk).
fn diff<T: Item>(
    before: &mut Vec<T>,
    now: &[T],
    reshaped: bool,
    touched: Option<&[usize]>,
) -> (Vec<T>, Vec<String>) {
    let at = match touched {
        Some(t) if !reshaped && now.len() >= before.len() => {
            let at: Vec<usize> = t
                .iter()
                .copied()
                .filter(|&i| before[i].differs(&now[i]))
                .collect();
            debug_assert_eq!(Some(&at), in_place(before, now, true).as_ref());
            Some(at)
        }
        _ => in_place(before, now, !reshaped),
    };
    if let Some(at) = at {
        for &i in &at {
            before[i] = now[i].clone();
        }
        let n = before.len();
        before.extend(now[n..].iter().cloned());
        let changed = at
            .into_iter()
            .map(|i| now[i].clone())
            .chain(now[n..].iter().cloned())
            .collect();
        return (changed, Vec::new());
    }
    let old: HashMap<&str, &T> = before.iter().map(|p| (p.token(), p)).collect();
    let changed = now
        .iter()
        .filter(|p| old.get(p.token()).is_none_or(|q| q.differs(p)))
        .cloned()
        .collect();
    let kept: HashSet<&str> = now.iter().map(|p| p.token()).collect();
    let dropped: Vec<String> = before
        .iter()
        .map(|p| p.token())
        .filter(|t| !kept.contains(t))
        .map(str::to_string)
        .collect();
    let dropped = crate::sync::types::sort_by_text(dropped, |s| s.as_str());
    *before = now.to_vec();
    (changed, dropped)
}

/// What a task last published of its own state, to compute its next change from: its items in
/// the order it holds them (a task changes items in place and appends new ones, so the next
/// change is found by one walk over both lists, without hashing: see `delta`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Sent {
    /// The epoch in force when it was published: a change is relative to a message of the same
    /// epoch (the first message in an epoch is whole).
    epoch: String,
    data: Vec<PartitionState>,
    share: Vec<SharedPartition>,
}

impl Sent {
    /// What `st` publishes, whole, in `epoch`.
    pub(super) fn whole(epoch: &str, st: &TaskState) -> Self {
        Sent {
            epoch: epoch.to_string(),
            data: st.data.partitions.clone(),
            share: st.share.partitions.clone(),
        }
    }

    /// Whether this was published in `epoch`.
    pub(super) fn is_of(&self, epoch: &str) -> bool {
        self.epoch == epoch
    }

    /// The change from what was published to `st` (O(size of the state) comparisons to find,
    /// O(what changed) copies to build); what was published is `st` from now on (the caller
    /// publishes the change, or `st` whole).
    /// `reshaped`: whether an item was dropped from `st` (or its lists rebuilt) since;
    /// `touched`: given how many own partitions were published, which of them changed in place
    /// since, when known (then only those are
    /// compared; shares, few and short-lived, are compared all).
    pub(super) fn change(
        &mut self,
        st: &TaskState,
        reshaped: bool,
        touched: impl FnOnce(usize) -> Option<Vec<usize>>,
    ) -> Change {
        let touched = touched(self.data.len());
        let (data, removed) = diff(
            &mut self.data,
            &st.data.partitions,
            reshaped,
            touched.as_deref(),
        );
        let (share, unshared) = diff(&mut self.share, &st.share.partitions, reshaped, None);
        Change {
            data,
            share,
            delta: Delta { removed, unshared },
        }
    }
}

impl Change {
    /// The change as it is published: a state with the ids and versions of `st` (the state it is
    /// the change to) and only the items that changed, and the tokens it dropped.
    pub(super) fn into_state(self, st: &TaskState) -> (TaskState, Delta) {
        let state = TaskState {
            task_id: st.task_id.clone(),
            state_timestamp: st.state_timestamp,
            state_version: st.state_version,
            data: TaskData {
                partitions: self.data,
            },
            share: TaskShare {
                partitions: self.share,
            },
        };
        (state, self.delta)
    }

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
        named < whole && dropped_bytes <= max_record_bytes / PARTITION_SHARE
    }
}

/// An entry's partitions from this many on are found by `Positions` (fewer are walked).
const INDEXED_FROM: usize = 64;

/// Where each partition of a view entry is, by the hash of its token, so that a change naming a
/// few partitions of a sender's entry of thousands is applied without a pass over the entry.
/// It describes the entry of the `state_version` and length it was built or kept for: the
/// entry's version only grows outside an epoch's application (a whole state or a change read is
/// newer), and only grows the entry (partitions appended) while it stays, so an entry of another
/// version or length is one it no longer describes (rebuilt when next needed). An epoch applied
/// rebuilds the view: every entry's positions are forgotten (`View::forget_positions`).
#[derive(Clone, Default)]
pub(super) struct Positions {
    /// The entry's version and length these positions describe (`None`: none).
    of: Option<(u64, usize)>,
    /// Token hash -> position (`SHARED`: the hash of more than one token of the entry, found
    /// by a walk).
    at: HashMap<u64, usize>,
}

/// A hash that more than one token of an entry has (see `Positions::at`).
const SHARED: usize = usize::MAX;

impl std::fmt::Debug for Positions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions")
            .field("of", &self.of)
            .field("tokens", &self.at.len())
            .finish()
    }
}

fn token_hash(token: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(token)
}

impl Positions {
    /// These positions, brought to `items` (the partitions of an entry of `version`) if they do
    /// not describe it, when it is worth it (an entry of at least `INDEXED_FROM` partitions).
    fn of_entry<T: Item>(&mut self, items: &[T], version: u64) -> Option<&mut Self> {
        if items.len() < INDEXED_FROM {
            self.of = None;
            return None;
        }
        if self.of != Some((version, items.len())) {
            self.at.clear();
            self.at.reserve(items.len());
            for (i, p) in items.iter().enumerate() {
                self.appended(p.token(), i);
            }
        }
        self.of = Some((version, items.len()));
        Some(self)
    }

    /// Where `token` is in `items`, the entry these positions describe (the last of a token, as
    /// a walk from the end finds it; an entry holds a token once).
    fn find<T: Item>(&self, items: &[T], token: &str) -> Option<usize> {
        let h = token_hash(token);
        let at = match self.at.get(&h) {
            Some(&SHARED) => items.iter().rposition(|q| q.token() == token),
            Some(&i) => Some(i).filter(|&i| items[i].token() == token),
            None => None,
        };
        debug_assert_eq!(at, items.iter().rposition(|q| q.token() == token));
        at
    }

    fn appended(&mut self, token: &str, i: usize) {
        let h = token_hash(token);
        self.at.entry(h).and_modify(|at| *at = SHARED).or_insert(i);
    }
}

/// Applies a change read from its sender (`change`: the partitions and shares it lists;
/// `delta`: the tokens it dropped) to `base`, what the reader holds for that sender: dropped
/// tokens go, listed items replace those of the same token or are appended, in order.
/// `positions`: those of `base`'s partitions, when the reader keeps them (a view entry).
pub(super) fn patch(
    base: &mut TaskState,
    change: &TaskState,
    delta: &Delta,
    positions: Option<&mut Positions>,
) {
    // (a partition dropped moves those after it: the positions are rebuilt when next needed)
    let mut index = positions.and_then(|p| match delta.removed.is_empty() {
        true => p.of_entry(&base.data.partitions, base.state_version),
        false => {
            p.of = None;
            None
        }
    });
    patch_items(
        &mut base.data.partitions,
        &change.data.partitions,
        &delta.removed,
        index.as_deref_mut(),
    );
    if let Some(p) = index {
        p.of = Some((change.state_version, base.data.partitions.len()));
    }
    patch_items(
        &mut base.share.partitions,
        &change.share.partitions,
        &delta.unshared,
        None,
    );
    base.task_id = change.task_id.clone();
    base.state_version = change.state_version;
    base.state_timestamp = change.state_timestamp;
}

/// One list of `patch`: `dropped` tokens go, then `listed` items replace or are appended
/// (`index`: the positions of `base`, kept up to date).
fn patch_items<T: Item>(
    base: &mut Vec<T>,
    listed: &[T],
    dropped: &[String],
    index: Option<&mut Positions>,
) {
    if !dropped.is_empty() {
        let gone: HashSet<&str> = dropped.iter().map(String::as_str).collect();
        base.retain(|p| !gone.contains(p.token()));
    }
    if listed.is_empty() {
        return;
    }
    if let Some(index) = index {
        for p in listed {
            match index.find(base, p.token()) {
                Some(i) if base[i].kept_over(p) => {}
                Some(i) => base[i] = p.clone(),
                None => {
                    index.appended(p.token(), base.len());
                    base.push(p.clone());
                }
            }
        }
        return;
    }
    for (p, at) in listed.iter().zip(walk_positions(base, listed)) {
        match at {
            Some(i) if base[i].kept_over(p) => {}
            Some(i) => base[i] = p.clone(),
            None => base.push(p.clone()),
        }
    }
}

/// Where each listed item is in `base`, the last of a token as an index built by `collect` finds
/// it, without kept positions (tokens borrowed: a change of a few items to a state of thousands
/// costs one pass over it, not a copy of its tokens).
fn walk_positions<T: Item>(base: &[T], listed: &[T]) -> Vec<Option<usize>> {
    if listed.len() <= 8 {
        listed
            .iter()
            .map(|p| {
                let t = p.token();
                // (the last byte first: tokens of one source tend to share a prefix)
                let last = t.as_bytes().last();
                base.iter().rposition(|q| {
                    let u = q.token();
                    u.len() == t.len() && u.as_bytes().last() == last && u == t
                })
            })
            .collect()
    } else {
        let index: HashMap<&str, usize> = base
            .iter()
            .enumerate()
            .map(|(i, p)| (p.token(), i))
            .collect();
        listed
            .iter()
            .map(|p| index.get(p.token()).copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::types::PartitionStatus;

    /// Changes applied to an entry with its positions kept give what they give by a walk: a
    /// random run of changes (partitions changed, appended, dropped), with partitions appended
    /// beside them as a view does (not by a change: the positions no longer describe the entry).
    #[test]
    fn positions_find_what_a_walk_finds() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let token = |i: u64| format!("{i:08x}");
        let statuses = [
            PartitionStatus::Created,
            PartitionStatus::Running,
            PartitionStatus::Finished,
        ];
        let mut walked = TaskState::empty("t");
        let mut fresh = 0u64;
        for _ in 0..300 {
            walked
                .data
                .partitions
                .push(PartitionState::created(token(fresh), vec![]));
            fresh += 1;
        }
        let mut indexed = walked.clone();
        let mut positions = Positions::default();
        for step in 0..2_000u64 {
            let mut change = TaskState::empty("t");
            change.state_version = step + 1;
            let mut delta = Delta::default();
            let len = walked.data.partitions.len() as u64;
            for _ in 0..1 + next(12) {
                let mut p = if next(4) == 0 || len == 0 {
                    fresh += 1;
                    PartitionState::created(token(fresh), vec![])
                } else {
                    walked.data.partitions[next(len) as usize].clone()
                };
                p.state = statuses[next(3) as usize];
                if !change.data.partitions.iter().any(|q| q.token == p.token) {
                    change.data.partitions.push(p);
                }
            }
            if next(10) == 0 && len > 0 {
                let gone = walked.data.partitions[next(len) as usize].token.clone();
                if !change.data.partitions.iter().any(|q| q.token == gone) {
                    delta.removed.push(gone);
                }
            }
            patch(&mut walked, &change, &delta, None);
            patch(&mut indexed, &change, &delta, Some(&mut positions));
            if next(20) == 0 {
                fresh += 1;
                for st in [&mut walked, &mut indexed] {
                    st.data
                        .partitions
                        .push(PartitionState::created(token(fresh), vec![]));
                }
            }
            assert_eq!(walked, indexed, "step {step}");
        }
        assert!(walked.data.partitions.len() >= INDEXED_FROM);
    }
}
