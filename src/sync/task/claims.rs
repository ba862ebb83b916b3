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
