//! What the members claimed before an epoch: the partitions their own words and the shares
//! addressed to them hold, which an epoch applied on top of them does not take away (see
//! `SyncTask::keep_claims`).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use super::own::Own;
use crate::sync::types::{PartitionState, TaskState};

/// Token -> (its claimant, or `None` when two claim it: left to the epoch; whether an own word
/// claims it, which a share does not override).
type Claims<'a> = HashMap<&'a str, (Option<&'a str>, bool)>;

fn claim<'a>(claims: &mut Claims<'a>, token: &'a str, who: &'a str, owned: bool) {
    let e = claims.entry(token).or_insert((Some(who), owned));
    if e.0 != Some(who) {
        e.0 = None; // ambiguous: leave it to the epoch
    }
}

/// What the members claimed before an epoch (see `SyncTask::keep_claims`): their own words in
/// `prev` and this task's (`own`, `me`), then the shares addressed to members.
pub(super) fn claims_before<'a>(
    prev: &'a BTreeMap<String, TaskState>,
    own: &'a Own,
    members: &'a BTreeSet<String>,
    own_words: &'a BTreeSet<String>,
    me: &'a str,
) -> Claims<'a> {
    // only the tasks' own words count: a snapshot entry is a leader's belief, which a
    // task that applied a divergent epoch could hold wrongly
    let prev_states = prev
        .values()
        .filter(|st| own_words.contains(&st.task_id))
        .chain(std::iter::once(own.state()))
        .filter(|st| members.contains(&st.task_id));
    let mut claims: Claims = HashMap::default();
    claims.reserve(prev_states.clone().map(|st| st.data.partitions.len()).sum());
    for st in prev_states.clone() {
        for p in &st.data.partitions {
            claim(&mut claims, &p.token, &st.task_id, true);
        }
    }
    // a share claims for its assignee only while its sharer is a member: the shares of a
    // departed task are the epoch's to resolve (its leader may have read them as a late
    // record and placed them by the rule for those), as every reader does
    let own_shares = own
        .shares_read()
        .filter(|_| members.contains(me))
        .into_iter()
        .flatten()
        .map(|(token, assignee)| (token.as_str(), assignee.as_str()));
    let shares = prev_states
        .filter(|st| st.task_id != me)
        .flat_map(|st| &st.share.partitions)
        .map(|sh| (sh.token.as_str(), sh.assignee.as_str()))
        .chain(own_shares);
    for (token, assignee) in shares {
        let owned = claims.get(token).is_some_and(|c| c.1);
        if members.contains(assignee) && !owned {
            claim(&mut claims, token, assignee, false);
        }
    }
    claims
}

/// Takes out of `entries` the partitions another member claims; returns them with their
/// claimant.
pub(super) fn claimed_elsewhere<'e>(
    claims: &Claims<'_>,
    entries: impl Iterator<Item = &'e mut TaskState>,
) -> Vec<(String, PartitionState)> {
    let mut moved: Vec<(String, PartitionState)> = Vec::new();
    for st in entries {
        let task = st.task_id.as_str();
        st.data
            .partitions
            .retain(|p| match claims.get(p.token.as_str()) {
                Some((Some(m), _)) if *m != task => {
                    moved.push((m.to_string(), p.clone()));
                    false
                }
                _ => true,
            });
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: &str, owned: &[&str], shares: &[(&str, &str)]) -> TaskState {
        let mut s = TaskState::empty(id);
        s.data.partitions = owned
            .iter()
            .map(|t| PartitionState::created(*t, vec![]))
            .collect();
        s.share.partitions = shares
            .iter()
            .map(|(t, to)| PartitionState::created(*t, vec![]).shared_to(*to))
            .collect();
        s
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    fn prev(states: Vec<TaskState>) -> BTreeMap<String, TaskState> {
        states.into_iter().map(|s| (s.task_id.clone(), s)).collect()
    }

    #[test]
    fn own_words_of_members_claim_and_a_share_claims_only_what_no_word_owns() {
        let prev = prev(vec![
            state("t2", &["a"], &[("b", "t3"), ("a", "t3")]),
            state("t3", &["c"], &[]),
            // a leader's snapshot entry, not the task's own word: no claim
            state("t4", &["d"], &[]),
        ]);
        let own = Own::new("t1");
        let (members, words) = (set(&["t1", "t2", "t3", "t4"]), set(&["t2", "t3"]));
        let claims = claims_before(&prev, &own, &members, &words, "t1");
        assert_eq!(
            claims.get("a"),
            Some(&(Some("t2"), true)),
            "a word beats a share"
        );
        assert_eq!(claims.get("b"), Some(&(Some("t3"), false)));
        assert_eq!(claims.get("c"), Some(&(Some("t3"), true)));
        assert_eq!(claims.get("d"), None);
    }

    #[test]
    fn two_claimants_leave_it_to_the_epoch_and_a_departed_sharer_claims_nothing() {
        let prev = prev(vec![
            state("t2", &["x"], &[]),
            state("t3", &["x"], &[]),
            state("gone", &[], &[("y", "t2")]),
        ]);
        let own = Own::new("t1");
        let (members, words) = (set(&["t1", "t2", "t3"]), set(&["t2", "t3", "gone"]));
        let claims = claims_before(&prev, &own, &members, &words, "t1");
        assert_eq!(claims.get("x"), Some(&(None, true)));
        assert_eq!(claims.get("y"), None);
    }

    #[test]
    fn what_another_member_claims_is_taken_out_of_the_entries() {
        let prev = prev(vec![state("t2", &["a"], &[])]);
        let own = Own::new("t1");
        let (members, words) = (set(&["t1", "t2", "t3"]), set(&["t2"]));
        let claims = claims_before(&prev, &own, &members, &words, "t1");
        let mut entries = [state("t3", &["a", "b"], &[]), state("t2", &["a"], &[])];
        let moved = claimed_elsewhere(&claims, entries.iter_mut());
        assert_eq!(moved.len(), 1);
        assert_eq!(
            (moved[0].0.as_str(), moved[0].1.token.as_str()),
            ("t2", "a")
        );
        assert_eq!(entries[0].data.partitions.len(), 1, "t3 keeps b");
        assert_eq!(entries[1].data.partitions.len(), 1, "t2 keeps its own");
    }
}
