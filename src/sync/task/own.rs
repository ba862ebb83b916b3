//! The own partitions and shares: the state this task publishes, and the bookkeeping that lets an
//! ordinary change cost what it changes.

use super::*;

/// The own state and what is known of where it changed since it was published.
#[derive(Debug, Clone)]
pub(super) struct Own {
    /// The own state as it would be published now.
    pub(super) state: TaskState,
    /// What changed in the own partitions, and where the waiting and done ones are (see
    /// `Marks`).
    pub(super) marks: settle::Marks,
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
    pub(super) sent: Option<delta::Sent>,
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
            marks: settle::Marks::default(),
            reshaped: false,
            last_index: 0,
            dirty: false,
            sent: None,
            shares_read: HashMap::default(),
            word_read: false,
        }
    }
}
