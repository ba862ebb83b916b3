//! The own partitions and shares: the state this task publishes, and the bookkeeping that lets an
//! ordinary change cost what it changes.

use rustc_hash::FxHashMap as HashMap;

use crate::sync::types::{PartitionState, PartitionStatus, SharedPartition, TaskState};

/// The own state and what is known of where it changed since it was published.
#[derive(Debug, Clone)]
pub(super) struct Own {
    /// The own state as it would be published now.
    pub(super) state: TaskState,
    /// What changed in the own partitions, and where the waiting and done ones are (see
    /// `Marks`).
    pub(super) marks: Marks,
    /// Whether an own partition or share was dropped (or the lists rebuilt) since the last
    /// publication: otherwise the own lists are what was published, changed in place and
    /// extended, and a change is found without comparing tokens.
    pub(super) reshaped: bool,
    /// The own partition last started or finished (callers start and finish partitions mostly in
    /// the order they were scheduled: `own_index` looks next to it first).
    pub(super) last_index: usize,
    /// Whether the own state changed since it was last published.
    pub(super) dirty: bool,
    /// What this task last published of its own state (its next Regular message carries the
    /// change from it).
    pub(super) sent: Option<Sent>,
    /// This task's shares (token, assignee) as every other reader holds them: those of its
    /// entry in the epoch in force, then as its own records of that epoch read back left them;
    /// `word_read` once one was read (only then are they its own word to the others, see
    /// `own_words`). A share it made and has not read back is not in a view the others had
    /// before an epoch it reads now, so it claims nothing there (see `keep_claims`).
    pub(super) shares_read: HashMap<String, String>,
    pub(super) word_read: bool,
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

    /// What was published is the own state from now on (see `Marks`).
    pub(super) fn published(&mut self) {
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

    /// The own lists were rebuilt or items dropped (see `delta` and `Marks`): whatever drops or
    /// reorders own partitions or shares calls this.
    pub(super) fn reshape(&mut self) {
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

/// What a task last published of its own state, to compute its next change from: its items in
/// the order it holds them (a task changes items in place and appends new ones, so the next
/// change is found by one walk over both lists, without hashing: see `delta`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Sent {
    /// The epoch in force when it was published: a change is relative to a message of the same
    /// epoch (the first message in an epoch is whole).
    pub(super) epoch: String,
    pub(super) data: Vec<PartitionState>,
    pub(super) share: Vec<SharedPartition>,
}

/// Incremental bookkeeping of the own partitions, so that an ordinary change (a partition
/// started or finished, an own record read back) costs what it changes, not what the task owns.
/// Positions index `own.data.partitions`; they stay valid while the list is only changed in place
/// and extended. Anything that drops or reorders own items sets `reshaped` (as `delta` requires),
/// which makes these positions unknown: the next settle walks the own partitions once and
/// rebuilds them. The lists are supersets (filtered by state where used).
#[derive(Clone, Default)]
pub(super) struct Marks {
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
    pub(super) fn forget(&mut self) {
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
    pub(super) fn indexed_position(
        &mut self,
        parts: &[PartitionState],
        token: &str,
    ) -> Option<usize> {
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
    pub(super) fn position(&mut self, parts: &[PartitionState], token: &str) -> Option<usize> {
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
    pub(super) fn touch(&mut self, i: usize, st: PartitionStatus) {
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
    pub(super) fn published(&mut self) {
        self.touched = Some(Vec::new());
    }

    /// Positions (ascending, once each) of the own partitions changed in place since the last
    /// publication, if known and `n` own partitions were published.
    pub(super) fn changed_since_published(&self, published: usize) -> Option<Vec<usize>> {
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
