//! Properties: no input panics or corrupts a task; the epoch computation neither loses nor
//! duplicates a partition and keeps every member's partitions.

use std::collections::BTreeSet;

use partkit::sync::{
    compute_epoch, MessageType, PartitionSpec, PartitionState, PartitionStatus, RebalanceEvent,
    SharedPartition, SyncMessage, SyncTask, TaskState,
};
use proptest::prelude::*;

fn status() -> impl Strategy<Value = PartitionStatus> {
    prop_oneof![
        Just(PartitionStatus::Created),
        Just(PartitionStatus::ReadyForStreaming),
        Just(PartitionStatus::Scheduled),
        Just(PartitionStatus::Running),
        Just(PartitionStatus::Finished),
        Just(PartitionStatus::Removed),
    ]
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-d]{1,2}"]
}

fn task_id() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), Just("t1".to_string()), "t[2-5]"]
}

fn state() -> impl Strategy<Value = TaskState> {
    (
        task_id(),
        0u64..5,
        prop::collection::vec(
            (token(), prop::collection::vec(token(), 0..3), status()),
            0..5,
        ),
        prop::collection::vec((token(), task_id()), 0..3),
    )
        .prop_map(|(id, v, data, share)| {
            let mut s = TaskState::empty(id);
            s.state_version = v;
            s.data.partitions = data
                .into_iter()
                .map(|(t, parents, st)| PartitionState {
                    state: st,
                    ..PartitionState::created(t, parents)
                })
                .collect();
            s.share.partitions = share
                .into_iter()
                .map(|(t, a)| SharedPartition {
                    assignee: a,
                    ..PartitionState::created(t, vec![]).shared_to("")
                })
                .collect();
            s
        })
}

fn message() -> impl Strategy<Value = SyncMessage> {
    (
        prop_oneof![
            Just(String::new()),
            Just("1-t2".to_string()),
            "[0-3]-t[1-3]"
        ],
        task_id(),
        prop_oneof![
            Just(MessageType::Regular),
            Just(MessageType::RebalanceAnswer),
            Just(MessageType::NewEpoch)
        ],
        prop::collection::vec(state(), 0..4),
        0u64..4,
        prop::option::of(prop_oneof![Just(String::new()), "[0-3]-t[1-3]"]),
        prop::option::of(0u64..4),
        any::<bool>(),
        prop::option::of(0u64..6),
    )
        .prop_map(
            |(e, id, kind, states, g, base, rg, resend, seq)| SyncMessage {
                epoch_generation: g,
                base_epoch: base,
                rebalance_generation: rg,
                resend,
                message_seq: seq,
                ..SyncMessage::new(kind, e, id, 1, states)
            },
        )
}

#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // test inputs, built once per case
enum Input {
    Msg(SyncMessage),
    Rebalance(u64, bool, Option<Vec<String>>),
    Add(Vec<(String, Vec<String>)>),
    Started(String),
    Finished(String),
    Tick(u64),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => message().prop_map(Input::Msg),
        1 => (0u64..4, any::<bool>(), prop::option::of(prop::collection::vec(task_id(), 0..4)))
            .prop_map(|(g, l, m)| Input::Rebalance(g, l, m)),
        2 => prop::collection::vec((token(), prop::collection::vec(token(), 0..3)), 0..4).prop_map(Input::Add),
        1 => token().prop_map(Input::Started),
        1 => token().prop_map(Input::Finished),
        1 => (0u64..5_000).prop_map(Input::Tick),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Arbitrary input sequences never panic; a rejected input leaves the task unchanged; a
    /// fenced task changes no more; the task's own state stays well-formed (no token owned twice).
    #[test]
    fn arbitrary_inputs_never_panic_nor_corrupt(inputs in prop::collection::vec(input(), 1..40)) {
        let mut t = SyncTask::new("t1").unwrap();
        let mut now = 0;
        for i in inputs {
            now += 7;
            let before = format!("{t:?}");
            let r = match i {
                Input::Msg(m) => t.on_message(&m, now).map(|_| ()),
                Input::Rebalance(g, leader, members) => t.on_rebalance(&RebalanceEvent { generation: g, leader, members }, now).map(|_| ()),
                Input::Add(v) => {
                    let specs: Vec<PartitionSpec> = v.into_iter().map(|(tok, parents)| PartitionSpec { token: tok, parents, start_timestamp: None, end_timestamp: None }).collect();
                    t.add_partitions(&specs, now).map(|_| ())
                }
                Input::Started(tok) => t.partition_started(&tok, now).map(|_| ()),
                Input::Finished(tok) => t.partition_finished(&tok, now).map(|_| ()),
                Input::Tick(dt) => { now += dt; t.tick(now); Ok(()) }
            };
            if let Err(e) = r {
                prop_assert_eq!(format!("{t:?}"), before, "{} changed the task", e.code());
                prop_assert!(e.code().starts_with("SYNC_"));
            } else if before.contains("fenced: Some(") {
                prop_assert_eq!(format!("{t:?}"), before, "a fenced task changed");
            }
            let tokens: Vec<&str> = t.owned_partitions().iter().map(|p| p.token.as_str()).collect();
            let unique: BTreeSet<&str> = tokens.iter().copied().collect();
            prop_assert_eq!(unique.len(), tokens.len());
        }
    }

    /// The new epoch keeps every member's partitions, gives every unfinished partition of the
    /// view to exactly one member (or leaves it in its live sharer's share section), and invents
    /// nothing.
    #[test]
    fn epoch_computation_keeps_loses_and_duplicates_nothing(states in prop::collection::vec(state(), 0..6), members in prop::collection::btree_set("t[1-5]", 1..4)) {
        let mut seen = BTreeSet::new();
        let states: Vec<TaskState> = states.into_iter().filter(|s| !s.task_id.is_empty() && seen.insert(s.task_id.clone())).map(|mut s| {
            let mut toks = BTreeSet::new();
            s.data.partitions.retain(|p| !p.token.is_empty() && toks.insert(p.token.clone()));
            let mut toks = BTreeSet::new();
            s.share.partitions.retain(|p| !p.token.is_empty() && !p.assignee.is_empty() && toks.insert(p.token.clone()));
            s
        }).collect();
        let members: Vec<String> = members.into_iter().collect();
        let view: Vec<&TaskState> = states.iter().collect();
        let out = compute_epoch(&view, &members);
        prop_assert_eq!(out.iter().map(|s| s.task_id.clone()).collect::<Vec<_>>(), members.clone());
        let mut owners = std::collections::BTreeMap::new();
        for s in &out {
            for p in &s.data.partitions {
                prop_assert!(owners.insert(p.token.clone(), s.task_id.clone()).is_none(), "{} twice", p.token);
            }
        }
        let shared: BTreeSet<String> = out.iter().flat_map(|s| s.share.partitions.iter().map(|p| p.token.clone())).collect();
        for s in &states {
            let member = members.contains(&s.task_id);
            for p in &s.data.partitions {
                if member {
                    prop_assert!(owners.contains_key(&p.token), "member's {} lost", p.token);
                } else if !p.state.is_done() {
                    prop_assert!(owners.contains_key(&p.token), "departed's {} lost", p.token);
                }
            }
            for sh in &s.share.partitions {
                // a share of a token some departed task finished is done, not lost
                let done = states.iter().any(|o| !members.contains(&o.task_id) && o.data.partitions.iter().any(|p| p.token == sh.token && p.state.is_done()));
                prop_assert!(done || owners.contains_key(&sh.token) || shared.contains(&sh.token), "share {} lost", sh.token);
            }
        }
        let known: BTreeSet<String> = states.iter().flat_map(|s| s.data.partitions.iter().map(|p| p.token.clone()).chain(s.share.partitions.iter().map(|p| p.token.clone()))).collect();
        prop_assert!(owners.keys().all(|k| known.contains(k)));
    }
}
