//! A bound on every record (`maxRecordBytes`): no published value is larger once serialized as
//! the transport publishes it (serde_json), a message larger than the bound goes out in chunks
//! that every reader joins into the same view as the whole message, and a message whose chunks
//! did not all land (its author died half-way) is applied by nobody.

use partkit::sync::{PartitionSpec, SyncMessage, SyncOptions, SyncTask, MIN_RECORD_BYTES};

#[path = "support/sync_world.rs"]
mod world;
use world::{timeouts, World};

fn opts(max: u64) -> SyncOptions {
    SyncOptions {
        max_record_bytes: max,
        ..timeouts(5_000, 1_000)
    }
}

/// Tasks `ids` reading one log in order; every record appended is checked against the bound.
fn group(max: u64, ids: &[&str]) -> World {
    let mut g = World::new(ids, opts(max));
    g.now = 1_000;
    g.max_record = Some(max);
    g
}

/// A rebalance of every task, `leader` leading; then the leader publishes when every answer is
/// in (or at its timeout).
fn rebalance(g: &mut World, generation: u64, leader: &str) {
    let members: Vec<String> = g.tasks.keys().cloned().collect();
    let members: Vec<&str> = members.iter().map(String::as_str).collect();
    g.rebalance(generation, leader, &members);
    g.ticks(1, 10_000);
}

/// `id` finds `specs`, and everyone reads.
fn add(g: &mut World, id: &str, specs: &[PartitionSpec]) {
    // (left Scheduled: while every change publishes the whole own state, starting each
    // partition would cost the square of the partitions in this debug-build test)
    g.add_partitions(id, specs);
    g.settle();
}

fn specs(prefix: &str, n: usize) -> Vec<PartitionSpec> {
    (0..n)
        .map(|i| PartitionSpec {
            token: format!("{prefix}-partition-token-{i:06}"),
            parents: vec![],
            start_timestamp: Some(1_700_000_000_000),
            end_timestamp: None,
        })
        .collect()
}

/// Builds a group of `tasks` tasks owning `per` partitions each, then a rebalance that moves a
/// departed task's partitions; returns the group.
fn scenario(max: u64, tasks: usize, per: usize) -> World {
    let ids: Vec<String> = (0..tasks).map(|i| format!("task-{i:03}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut g = group(max, &refs);
    rebalance(&mut g, 1, refs[0]);
    for id in &ids {
        assert_eq!(
            g.tasks[id].0.epoch(),
            Some(format!("1-{}", refs[0]).as_str())
        );
    }
    // each task finds its own partitions before sharing (a single batch shares round-robin)
    for id in &ids {
        add(&mut g, id, &specs(id, per));
    }
    // checkpoints
    g.ticks(1, SyncOptions::default().state_refresh_interval + 1);
    // the last task dies: the next epoch hands its partitions on
    let gone = ids.last().unwrap().clone();
    g.tasks.remove(&gone);
    rebalance(&mut g, 2, refs[0]);
    g
}

#[test]
fn every_record_fits_and_chunking_changes_no_view() {
    // large enough for nothing to be split, and small enough that epochs, checkpoints and own
    // states all go out in many chunks
    let whole = scenario(64 << 20, 6, 150);
    let split = scenario(MIN_RECORD_BYTES * 4, 6, 150);
    assert!(
        whole.largest as u64 > MIN_RECORD_BYTES * 4,
        "the scenario needs chunks"
    );
    assert!(split.log.iter().any(|m| m.chunk.is_some()));
    assert!(split.largest as u64 <= MIN_RECORD_BYTES * 4);
    for id in whole.tasks.keys() {
        assert_eq!(whole.view(id), split.view(id), "view of {id}");
        assert_eq!(whole.tasks[id].0.epoch(), split.tasks[id].0.epoch());
    }
    // every task agrees, and the dead task's partitions were handed on
    let first = whole.tasks.keys().next().unwrap().clone();
    for id in split.tasks.keys() {
        assert_eq!(split.view(id), split.view(&first));
    }
    let owned: usize = split
        .view(&first)
        .iter()
        .map(|s| s.data.partitions.len())
        .sum();
    assert_eq!(owned, 6 * 150);
}

#[test]
fn the_default_bound_holds_at_scale() {
    // 4 tasks x 2,600 partitions: an unsplit NewEpoch would be about 1.1 MB (the simulation's
    // scale mode goes further, in a release build)
    let g = scenario(SyncOptions::default().max_record_bytes, 4, 2_600);
    assert!(g.largest as u64 <= 900_000, "largest record {}", g.largest);
    assert!(g.log.iter().any(|m| m.chunk.is_some()));
    let first = g.tasks.keys().next().unwrap().clone();
    for id in g.tasks.keys() {
        assert_eq!(g.tasks[id].0.epoch(), g.tasks[&first].0.epoch());
        assert_eq!(g.view(id), g.view(&first));
    }
}

#[test]
fn an_epoch_whose_chunks_did_not_all_land_is_applied_by_nobody() {
    let max = MIN_RECORD_BYTES * 2;
    let mut g = group(max, &["a", "b"]);
    rebalance(&mut g, 1, "a");
    add(&mut g, "a", &specs("a", 60));
    add(&mut g, "b", &specs("b", 60));
    // generation 2: b leads; its NewEpoch goes out in chunks, and b dies after the first ones
    let now = g.now;
    g.announce(2, "b", &["a", "b"]);
    // b reads the answers (its own included) and publishes the epoch
    let (b, cursor) = g.tasks.get_mut("b").unwrap();
    let mut published = vec![];
    while *cursor < g.log.len() {
        let m = g.log[*cursor].clone();
        *cursor += 1;
        published.extend(b.on_message(&m, now).unwrap().publish);
    }
    let chunks: Vec<SyncMessage> = published
        .into_iter()
        .filter(|m| m.chunk.is_some() && m.sync_epoch == "2-b")
        .collect();
    assert!(chunks.len() >= 2, "the epoch needs chunks");
    g.tasks.remove("b");
    g.append(chunks[..chunks.len() - 1].to_vec());
    g.settle();
    assert_eq!(g.tasks["a"].0.epoch(), Some("1-a"));
    // chunks read out of order are not applied either
    let mut late = group(max, &["c"]);
    let mut tail = chunks.clone();
    tail.swap(0, 1);
    for m in &tail {
        let _ = late.task_mut("c").on_message(m, now).unwrap();
    }
    assert_eq!(late.tasks["c"].0.epoch(), None);
    // all of them, in order: applied
    let mut fresh = group(max, &["c"]);
    for m in &chunks {
        let _ = fresh.task_mut("c").on_message(m, now).unwrap();
    }
    assert_eq!(fresh.tasks["c"].0.epoch(), Some("2-b"));
    // a last chunk that makes the whole message malformed (a token of the first chunk again) is
    // refused and changes nothing: the right last chunk then completes the message as read
    let mut bad = chunks.last().unwrap().clone();
    let continued = &bad.connector_state[0].task_id;
    let dup = chunks[..chunks.len() - 1]
        .iter()
        .flat_map(|m| &m.connector_state)
        .find(|st| st.task_id == *continued && !st.data.partitions.is_empty())
        .expect("the last chunk goes on with a state begun in an earlier one")
        .data
        .partitions[0]
        .clone();
    bad.connector_state[0].data.partitions.push(dup);
    let mut again = group(max, &["c"]);
    let c = &mut again.tasks.get_mut("c").unwrap().0;
    for m in &chunks[..chunks.len() - 1] {
        c.on_message(m, now).unwrap();
    }
    let refused = c.on_message(&bad, now).unwrap_err();
    assert_eq!(refused.code(), "SYNC_MALFORMED_MESSAGE");
    assert_eq!(c.epoch(), None);
    c.on_message(chunks.last().unwrap(), now).unwrap();
    assert_eq!(c.epoch(), Some("2-b"));
    assert_eq!(c.known_tasks(), fresh.tasks["c"].0.known_tasks());
}

#[test]
fn the_bound_is_checked() {
    let small = SyncOptions {
        max_record_bytes: MIN_RECORD_BYTES - 1,
        ..SyncOptions::default()
    };
    assert_eq!(
        SyncTask::with_options("t", small).unwrap_err().code(),
        "SYNC_INVALID_OPTIONS"
    );
    let mut t = SyncTask::with_options("t", opts(MIN_RECORD_BYTES)).unwrap();
    let big = PartitionSpec::new("x".repeat(MIN_RECORD_BYTES as usize / 2), &[]);
    assert_eq!(
        t.add_partitions(&[big], 0).unwrap_err().code(),
        "SYNC_INVALID_PARTITION"
    );
    // a chunk index beyond its count is malformed
    let mut g = group(MIN_RECORD_BYTES, &["a"]);
    rebalance(&mut g, 1, "a");
    let mut m = g.log.last().unwrap().clone();
    m.chunk = Some(partkit::sync::ChunkRef { index: 3, count: 2 });
    assert_eq!(
        g.task_mut("a").on_message(&m, 0).unwrap_err().code(),
        "SYNC_MALFORMED_MESSAGE"
    );
}

/// Every owner starts each of its partitions, and finishes every `finish`-th one (0: none), one
/// call at a time (the driver of a connector that reports each partition as it goes); returns
/// the bytes published meanwhile and the largest record.
fn start_and_finish_each(g: &mut World, finish: usize) -> (usize, usize) {
    let (bytes, largest) = (g.bytes, g.largest);
    g.largest = 0;
    let ids: Vec<String> = g.tasks.keys().cloned().collect();
    let now = g.now;
    for id in &ids {
        let tokens: Vec<String> = g.tasks[id]
            .0
            .owned_partitions()
            .iter()
            .map(|p| p.token.clone())
            .collect();
        for (i, t) in tokens.iter().enumerate() {
            let out = g.task_mut(id).partition_started(t, now).unwrap();
            g.append(out.publish);
            if finish > 0 && i % finish == 0 {
                let out = g.task_mut(id).partition_finished(t, now).unwrap();
                g.append(out.publish);
            }
        }
        g.settle();
    }
    let spent = (g.bytes - bytes, g.largest);
    g.largest = g.largest.max(largest);
    spent
}

#[test]
fn a_change_costs_what_it_changes() {
    // one task, as in the measurement that found the quadratic cost: starting 1,000 partitions
    // one by one took 73 MB when every change published the whole own state
    let mut cost = vec![];
    for n in [1_000usize, 2_000] {
        let mut g = group(900_000, &["a"]);
        rebalance(&mut g, 1, "a");
        add(&mut g, "a", &specs("p", n));
        let (bytes, largest) = start_and_finish_each(&mut g, 0);
        assert!(
            bytes < n * 400,
            "starting {n} partitions published {bytes} bytes"
        );
        assert!(largest < 1_000, "largest change record {largest} bytes");
        cost.push(bytes);
    }
    eprintln!("bytes published starting 1,000 and 2,000 partitions: {cost:?}");
    assert!(
        cost[0] < 1_000_000,
        "1,000 starts published {} bytes",
        cost[0]
    );
    // linear: twice the partitions, about twice the bytes
    assert!(cost[1] * 10 < cost[0] * 23, "{cost:?}");
}

#[test]
fn readers_rebuild_the_sender_state_from_its_changes() {
    // three tasks sharing partitions: every change goes out as a delta, every reader applies it
    // to its view, and all views stay identical to the senders' own states
    let mut g = group(900_000, &["a", "b", "c"]);
    rebalance(&mut g, 1, "a");
    add(&mut g, "a", &specs("p", 300));
    let deltas = |g: &World| g.log.iter().filter(|m| m.delta.is_some()).count();
    let before = deltas(&g);
    start_and_finish_each(&mut g, 10);
    assert!(deltas(&g) > before + 300, "changes went out as deltas");
    // children, then the removal and purge of the finished partitions no child needs (deltas
    // that drop tokens)
    let children: Vec<PartitionSpec> = (0..100)
        .map(|i| PartitionSpec::new(format!("c{i}"), &[&format!("p-partition-token-{i:06}")]))
        .collect();
    let mut published = vec![];
    for (id, (task, _)) in g.tasks.iter_mut() {
        let mine: Vec<PartitionSpec> = children
            .iter()
            .filter(|c| {
                task.owned_partitions()
                    .iter()
                    .any(|p| p.token == c.parents[0])
            })
            .cloned()
            .collect();
        let out = task.add_partitions(&mine, g.now).unwrap();
        assert!(out.publish.len() <= 1, "{id}");
        published.extend(out.publish);
    }
    g.append(published);
    g.settle();
    let found = |g: &World| {
        g.tasks
            .values()
            .map(|(t, _)| {
                t.owned_partitions()
                    .iter()
                    .filter(|p| p.token.starts_with('c'))
                    .count()
            })
            .sum::<usize>()
    };
    assert_eq!(found(&g), 100);
    let removal = g.tasks["a"].0.options().removal_delay + g.tasks["a"].0.options().tombstone_ttl;
    g.ticks(1, removal + 1);
    g.ticks(1, removal + 1);
    assert!(
        g.log
            .iter()
            .any(|m| m.delta.as_ref().is_some_and(|d| !d.removed.is_empty())),
        "a delta dropped purged tombstones"
    );
    let a = g.view("a");
    for id in ["b", "c"] {
        assert_eq!(g.view(id), a, "view of {id}");
    }
    // a new task replaying the whole log rebuilds the same view
    let mut late = SyncTask::with_options("z", opts(900_000)).unwrap();
    for m in &g.log {
        late.on_message(m, g.now).unwrap();
    }
    let mut v = late.known_tasks();
    v.retain(|s| s.task_id != "z");
    for s in &mut v {
        s.state_timestamp = 0;
    }
    assert_eq!(v, a);
}

#[test]
fn a_delta_is_only_for_regular_messages() {
    let mut g = group(900_000, &["a"]);
    rebalance(&mut g, 1, "a");
    let mut m = g
        .log
        .iter()
        .find(|m| m.kind == partkit::sync::MessageType::NewEpoch)
        .unwrap()
        .clone();
    m.delta = Some(partkit::sync::Delta::default());
    m.sync_epoch = "2-a".into();
    m.epoch_generation = 2;
    let t = &mut g.tasks.get_mut("a").unwrap().0;
    assert_eq!(
        t.on_message(&m, 0).unwrap_err().code(),
        "SYNC_MALFORMED_MESSAGE"
    );
}

#[test]
fn a_message_type_name_is_its_json_type() {
    use partkit::sync::MessageType;
    for kind in [
        MessageType::Regular,
        MessageType::RebalanceAnswer,
        MessageType::NewEpoch,
    ] {
        assert_eq!(
            serde_json::to_string(&kind).unwrap(),
            format!("\"{}\"", kind.as_str())
        );
    }
}
