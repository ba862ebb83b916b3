//! The start rule on fixed logs (the cases `findEpochStart`'s jest tests also check through the
//! wasm binding), and the join of a checkpoint's chunks.

use super::*;
use crate::sync::SyncTask;

type H = RecordHeader<'static>;

fn rec(offset: u64, header: Option<H>) -> LogRecord<'static> {
    LogRecord { offset, header }
}

fn msg(kind: MessageType, task: &'static str, sync_epoch: &'static str) -> H {
    H {
        kind: Some(kind),
        task_id: Some(task),
        sync_epoch: Some(sync_epoch),
        ..H::default()
    }
}

fn regular(task: &'static str, seq: u64) -> H {
    H {
        message_seq: Some(seq),
        ..msg(MessageType::Regular, task, "2-a")
    }
}

fn epoch(sync_epoch: &'static str, base: &'static str) -> H {
    H {
        base_epoch: Some(base),
        ..msg(MessageType::NewEpoch, "a", sync_epoch)
    }
}

fn checkpoint_in(after_task: &'static str, after_seq: u64, sync_epoch: &'static str) -> H {
    H {
        resend: true,
        checkpoint: Some((after_task, after_seq)),
        ..epoch(sync_epoch, "1-a")
    }
}

fn checkpoint(after_task: &'static str, after_seq: u64) -> H {
    checkpoint_in(after_task, after_seq, "2-a")
}

fn gen(h: H, generation: u64) -> H {
    H {
        epoch_generation: generation,
        ..h
    }
}

fn chunk(h: H, seq: u64, index: u32, count: u32) -> H {
    H {
        message_seq: Some(seq),
        chunk: Some(ChunkRef { index, count }),
        ..h
    }
}

fn find(records: &[LogRecord<'static>], at_low: bool, low: u64) -> EpochStart {
    find_epoch_start(records, at_low, low).expect("valid records")
}

use EpochStart::{AfterCheckpoint, At, Extend};

fn after(offset: u64, checkpoint: &[u64]) -> EpochStart {
    AfterCheckpoint {
        offset,
        checkpoint: checkpoint.to_vec(),
    }
}

#[test]
fn starts_at_the_first_new_epoch_of_the_base_of_the_latest() {
    let records = [
        rec(10, Some(msg(MessageType::Regular, "t", "1-a"))),
        rec(11, Some(epoch("2-a", "1-a"))),
        rec(12, Some(msg(MessageType::Regular, "t", "2-a"))),
        rec(13, Some(epoch("2-a", "1-a"))), // a re-publication
        rec(14, Some(msg(MessageType::RebalanceAnswer, "t", "2-a"))),
        rec(15, Some(epoch("3-b", "2-a"))),
        rec(16, None),
    ];
    assert_eq!(find(&records, false, 0), At(11));
}

#[test]
fn a_stale_latest_new_epoch_still_leads_back_to_an_epoch_every_task_applied() {
    // 3-b was computed from 1-a while 2-a was in force: every reader ignores it
    let records = [
        rec(5, Some(epoch("1-a", ""))),
        rec(6, Some(epoch("2-a", "1-a"))),
        rec(7, Some(epoch("3-b", "1-a"))),
    ];
    assert_eq!(find(&records, true, 5), At(5));
}

#[test]
fn asks_for_more_of_the_log_when_the_base_is_not_in_the_window() {
    let records = [
        rec(100, Some(msg(MessageType::Regular, "t", "2-a"))),
        rec(101, Some(epoch("3-b", "2-a"))),
    ];
    assert_eq!(find(&records, false, 0), Extend);
    // at the start of the retained log: the latest epoch itself is the best left
    assert_eq!(find(&records, true, 100), At(101));
}

#[test]
fn the_first_epoch_or_no_epoch_at_all_replays_the_whole_retained_log() {
    let first = [
        rec(3, Some(msg(MessageType::RebalanceAnswer, "t", ""))),
        rec(4, Some(epoch("1-a", ""))),
    ];
    assert_eq!(find(&first, true, 3), At(3));
    assert_eq!(find(&first[..1], false, 0), Extend);
    let none = [
        rec(0, None),
        rec(1, Some(msg(MessageType::Regular, "t", ""))),
    ];
    assert_eq!(find(&none, true, 0), At(0));
    assert_eq!(find(&[], true, 9), At(9));
    assert_eq!(find(&[], false, 9), Extend);
}

#[test]
fn the_base_epoch_is_started_at_its_first_chunk_never_at_a_later_one() {
    // the window starts in the middle of the base epoch's chunks: more log is needed
    let records = [
        rec(20, Some(chunk(epoch("2-a", "1-a"), 8, 1, 2))),
        rec(21, Some(regular("b", 4))),
        rec(22, Some(epoch("3-b", "2-a"))),
    ];
    assert_eq!(find(&records, false, 0), Extend);
    // at the start of the retained log: the latest epoch itself
    assert_eq!(find(&records, true, 20), At(22));
    // whose first chunk is gone too: the whole retained log
    let latest_cut = [
        rec(20, Some(chunk(epoch("3-b", "2-a"), 8, 1, 2))),
        rec(21, Some(regular("b", 4))),
    ];
    assert_eq!(find(&latest_cut, true, 20), At(20));
    // with its first chunk: there
    let whole = [
        rec(19, Some(chunk(epoch("2-a", "1-a"), 7, 0, 2))),
        rec(20, Some(chunk(epoch("2-a", "1-a"), 8, 1, 2))),
        rec(21, Some(epoch("3-b", "2-a"))),
    ];
    assert_eq!(find(&whole, false, 0), At(19));
}

#[test]
fn a_chunked_checkpoint_without_a_sender_followed_by_an_unreadable_record_is_passed_over() {
    let first = H {
        task_id: None,
        ..chunk(checkpoint("b", 4), 5, 0, 2)
    };
    let records = [
        rec(10, Some(epoch("1-a", ""))),
        rec(11, Some(epoch("2-a", "1-a"))),
        rec(12, Some(regular("b", 4))),
        rec(13, Some(first)),
        rec(14, None),
    ];
    assert_eq!(find(&records, true, 10), At(10));
}

#[test]
fn the_latest_clean_checkpoint_wins() {
    let mut records = vec![
        rec(10, Some(epoch("1-a", ""))),
        rec(11, Some(epoch("2-a", "1-a"))),
        rec(12, Some(regular("b", 4))),
        rec(13, Some(checkpoint("b", 4))), // clean
        rec(14, Some(regular("c", 9))),
        rec(15, Some(checkpoint("b", 5))), // unclean: 14 is c's, and b's 5 is not there
        rec(16, Some(regular("a", 3))),
    ];
    assert_eq!(find(&records, false, 0), At(13));
    records.push(rec(17, Some(checkpoint("a", 3))));
    assert_eq!(find(&records, false, 0), At(17));
}

#[test]
fn a_checkpoint_followed_by_a_newer_new_epoch_still_wins() {
    let records = [
        rec(40, Some(regular("b", 1))),
        rec(41, Some(checkpoint("b", 1))),
        rec(42, Some(epoch("3-b", "2-a"))),
        rec(43, Some(regular("b", 2))),
    ];
    assert_eq!(find(&records, false, 0), At(41));
}

#[test]
fn an_unclean_checkpoint_is_applied_first_and_the_replay_starts_after_the_record_it_names() {
    let records = vec![
        rec(20, Some(epoch("2-a", "1-a"))),
        rec(21, Some(regular("b", 4))),
        rec(22, Some(regular("c", 1))),
        rec(23, Some(checkpoint("b", 4))), // names 21: 22 came between
    ];
    assert_eq!(find(&records, false, 0), after(22, &[23]));
    let mut more = records.clone();
    more.extend([
        rec(24, Some(checkpoint("a", 1))),
        rec(25, Some(regular("a", 2))),
    ]);
    assert_eq!(find(&more, false, 0), after(22, &[23]));
    let mut clean = records.clone();
    clean.extend([
        rec(24, Some(regular("a", 1))),
        rec(25, Some(checkpoint("a", 1))),
    ]);
    assert_eq!(find(&clean, false, 0), At(25));
    // the named record at its first place (a producer retry wrote it twice)
    let dup = [
        rec(30, Some(regular("b", 7))),
        rec(31, Some(regular("c", 1))),
        rec(32, Some(regular("b", 7))),
        rec(33, Some(checkpoint("b", 7))),
    ];
    assert_eq!(find(&dup, false, 0), after(31, &[33]));
}

/// A checkpoint's author that lags behind the log names a record in the middle of another
/// sender's message in chunks (the chunk wait over, it took the message as abandoned, but the
/// other chunks had landed and it had not read them yet): the message completes after the
/// named record, and a task replaying from there would never read its first chunk.
#[test]
fn the_replay_starts_at_the_first_chunk_of_a_message_the_named_record_falls_in_the_middle_of() {
    let c = |seq, index| Some(chunk(regular("c", seq), seq, index, 3));
    // clean: the replay starts at c's first chunk, not at the checkpoint
    let clean = [
        rec(10, Some(epoch("2-a", "1-a"))),
        rec(11, c(3, 0)),
        rec(12, Some(regular("a", 3))),
        rec(13, Some(checkpoint("a", 3))),
        rec(14, c(4, 1)),
        rec(15, c(5, 2)),
    ];
    assert_eq!(find(&clean, false, 0), after(11, &[13]));
    // unclean: the same, not the record after the named one
    let unclean = [
        rec(10, Some(epoch("2-a", "1-a"))),
        rec(11, c(3, 0)),
        rec(12, Some(regular("a", 3))),
        rec(13, c(4, 1)),
        rec(14, Some(checkpoint("a", 3))),
        rec(15, c(5, 2)),
    ];
    assert_eq!(find(&unclean, false, 0), after(11, &[14]));
    // the earliest of several, whatever else came between
    let two = [
        rec(10, Some(epoch("2-a", "1-a"))),
        rec(11, Some(chunk(regular("b", 7), 7, 0, 2))),
        rec(12, c(3, 0)),
        rec(13, Some(regular("a", 3))),
        rec(14, Some(checkpoint("a", 3))),
        rec(15, Some(chunk(regular("b", 8), 8, 1, 2))),
        rec(16, c(4, 1)),
        rec(17, c(5, 2)),
    ];
    assert_eq!(find(&two, false, 0), after(11, &[14]));
    // a message abandoned half-way (its sender died) completes nowhere: nothing to read again
    let abandoned = [
        rec(10, Some(epoch("2-a", "1-a"))),
        rec(11, c(3, 0)),
        rec(12, Some(regular("a", 3))),
        rec(13, Some(checkpoint("a", 3))),
        rec(14, c(4, 1)),
    ];
    assert_eq!(find(&abandoned, false, 0), At(13));
    // completed before the named record: nothing to read again either
    let complete = [
        rec(10, Some(epoch("2-a", "1-a"))),
        rec(11, c(3, 0)),
        rec(12, c(4, 1)),
        rec(13, c(5, 2)),
        rec(14, Some(regular("a", 3))),
        rec(15, Some(checkpoint("a", 3))),
    ];
    assert_eq!(find(&complete, false, 0), At(15));
    // its first chunk is not in the records: the checkpoint cannot be used
    let cut = [
        rec(12, c(4, 1)),
        rec(13, Some(regular("a", 3))),
        rec(14, Some(checkpoint("a", 3))),
        rec(15, c(5, 2)),
    ];
    assert_eq!(find(&cut, false, 0), Extend);
    // nor with a record missing between that first chunk and the named record
    let hole = [
        rec(10, Some(epoch("2-a", "1-a"))),
        rec(11, c(3, 0)),
        rec(13, Some(regular("a", 3))),
        rec(14, Some(checkpoint("a", 3))),
        rec(15, c(4, 1)),
        rec(16, c(5, 2)),
    ];
    assert_eq!(find(&hole, true, 10), At(10));
}

#[test]
fn a_chunked_checkpoint_stands_at_its_first_chunk_and_counts_only_whole() {
    let part = |seq, index| {
        Some(chunk(
            H {
                task_id: Some("a"),
                ..checkpoint("b", 4)
            },
            seq,
            index,
            2,
        ))
    };
    let records = [
        rec(20, Some(epoch("2-a", "1-a"))),
        rec(21, Some(regular("b", 4))),
        rec(22, part(7, 0)),
        rec(23, part(8, 1)),
    ];
    assert_eq!(find(&records, false, 0), At(22));
    // another record between its chunks: applied joined first, then read from after the named one
    let between = [
        rec(20, Some(epoch("2-a", "1-a"))),
        rec(21, Some(regular("b", 4))),
        rec(22, part(7, 0)),
        rec(23, Some(regular("c", 1))),
        rec(24, part(8, 1)),
    ];
    assert_eq!(find(&between, false, 0), after(22, &[22, 24]));
    // its last chunk never landed (its author died half-way): not a place to start
    assert_eq!(find(&records[..3], false, 0), Extend);
    // the record with the next counter is not its next chunk (out of order): not whole
    let disordered = [
        rec(20, Some(epoch("2-a", "1-a"))),
        rec(21, Some(regular("b", 4))),
        rec(22, part(7, 0)),
        rec(
            23,
            Some(chunk(
                H {
                    task_id: Some("a"),
                    ..checkpoint("b", 4)
                },
                8,
                0,
                2,
            )),
        ),
    ];
    assert_eq!(find(&disordered, true, 20), At(20));
}

#[test]
fn checkpoints_that_cannot_be_used_fall_back_to_the_base_epoch_rule() {
    let records = vec![
        rec(20, Some(epoch("2-a", "1-a"))),
        rec(21, Some(regular("b", 4))),
        rec(22, Some(checkpoint("b", 3))), // names b's seq 3, which is not in the records
        rec(24, Some(checkpoint("b", 4))), // 23 is not in the records
        rec(26, Some(checkpoint("c", 1))), // names a record not in the records
    ];
    assert_eq!(find(&records, false, 0), Extend);
    let mut with_base = vec![rec(19, Some(epoch("1-a", "")))];
    with_base.extend(records);
    assert_eq!(find(&with_base, false, 0), At(19));
    // a checkpoint at the window's first record cannot be checked
    let first = [
        rec(22, Some(checkpoint("b", 3))),
        rec(23, Some(regular("b", 5))),
    ];
    assert_eq!(find(&first, false, 0), Extend);
    // not a checkpoint: no resend, or not a NewEpoch
    let not_resent = H {
        resend: false,
        ..checkpoint("b", 4)
    };
    let records = [
        rec(1, Some(epoch("1-a", ""))),
        rec(2, Some(regular("b", 4))),
        rec(3, Some(not_resent)),
    ];
    assert_eq!(find(&records, false, 0), At(1));
    let regular_with_one = H {
        kind: Some(MessageType::Regular),
        ..checkpoint("b", 4)
    };
    let records = [
        rec(1, Some(epoch("1-a", ""))),
        rec(2, Some(regular("b", 4))),
        rec(3, Some(regular_with_one)),
    ];
    assert_eq!(find(&records, false, 0), Extend); // 1-a is the first epoch
    assert_eq!(find(&records, true, 1), At(1));
}

#[test]
fn a_checkpoint_written_by_a_task_still_behind_is_passed_over() {
    let records = [
        rec(50, Some(gen(checkpoint_in("x", 1, "5-a"), 5))),
        rec(51, Some(gen(regular("b", 4), 5))), // b had applied epoch 5
        rec(52, Some(gen(checkpoint_in("b", 4, "1-a"), 1))), // clean, written from epoch 1
        rec(53, Some(gen(regular("c", 2), 5))),
    ];
    assert_eq!(find(&records, false, 0), Extend);
    // a fresh NewEpoch attempt computed from a stale view does not count: every task ignored it
    let attempt = [
        rec(60, Some(gen(regular("b", 4), 1))),
        rec(61, Some(gen(epoch("5-a", "0-z"), 5))),
        rec(62, Some(gen(regular("c", 1), 1))),
        rec(63, Some(gen(checkpoint_in("c", 1, "1-a"), 1))),
    ];
    assert_eq!(find(&attempt, false, 0), At(63));
}

#[test]
fn a_checkpoint_whose_author_missed_a_new_epoch_built_on_its_epoch_is_passed_over() {
    let records = vec![
        rec(58, Some(gen(regular("b", 3), 1))),
        rec(59, Some(gen(checkpoint_in("b", 3, "1-a"), 1))),
        rec(60, Some(gen(regular("b", 4), 1))),
        rec(61, Some(gen(epoch("5-a", "1-a"), 5))),
        rec(62, Some(gen(regular("c", 1), 1))),
        rec(63, Some(gen(checkpoint_in("c", 1, "1-a"), 1))),
    ];
    assert_eq!(find(&records, false, 0), At(59));
    // a NewEpoch whose last chunk never landed applied nowhere: 63 stays a place to start
    let mut partial = records.clone();
    partial[3] = rec(61, Some(chunk(gen(epoch("5-a", "1-a"), 5), 9, 0, 2)));
    assert_eq!(find(&partial, false, 0), At(63));
}

#[test]
fn wrong_typed_fields_count_as_absent() {
    let records = [
        rec(
            1,
            Some(H {
                kind: Some(MessageType::NewEpoch),
                ..H::default()
            }),
        ),
        rec(2, Some(H::default())),
        rec(
            3,
            Some(H {
                kind: Some(MessageType::NewEpoch),
                resend: true,
                ..H::default()
            }),
        ),
    ];
    assert_eq!(find(&records, true, 1), At(1));
}

#[test]
fn offsets_out_of_order_are_invalid_arguments() {
    let records = [rec(2, None), rec(1, None)];
    let e = find_epoch_start(&records, true, 0).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    let e = find_epoch_start(&[rec(2, None), rec(2, None)], true, 0).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
}

#[test]
fn adversarial_counts_and_counters_neither_panic_nor_loop() {
    let huge = H {
        task_id: Some("a"),
        ..chunk(checkpoint("b", 4), u64::MAX - 1, 0, u32::MAX)
    };
    let records = [
        rec(0, Some(epoch("2-a", "1-a"))),
        rec(1, Some(regular("b", 4))),
        rec(2, Some(huge.clone())),
        rec(3, Some(chunk(huge.clone(), u64::MAX, 1, u32::MAX))),
        rec(u64::MAX, Some(regular("c", u64::MAX))),
    ];
    assert_eq!(find(&records, true, 0), At(0));
}

/// A checkpoint and its three chunks as a `SyncTask` splits one: the header in every chunk, the
/// states in order, a's partitions over chunks 0 and 1, b's over chunks 1 and 2.
fn chunked_checkpoint() -> (SyncMessage, Vec<SyncMessage>) {
    let parts = |task: &str, r: std::ops::Range<usize>| {
        serde_json::json!({"taskID": task, "stateVersion": 1, "data": {"partitions": r
            .map(|i| serde_json::json!({"token": format!("{task}{i}"), "state": "Running"}))
            .collect::<Vec<_>>()}})
    };
    let message = |states: Vec<serde_json::Value>, seq: u64, chunk: Option<u32>| {
        let mut m = serde_json::json!({
            "syncEpoch": "2-a", "taskID": "a", "messageTimestamp": 5, "type": "NewEpoch",
            "epochGeneration": 2, "baseEpoch": "1-a", "resend": true, "messageSeq": seq,
            "checkpoint": {"afterTaskID": "b", "afterSeq": 4}, "connectorState": states
        });
        if let Some(index) = chunk {
            m["chunk"] = serde_json::json!({"index": index, "count": 3});
        }
        serde_json::from_value::<SyncMessage>(m).expect("a message")
    };
    let whole = message(vec![parts("a", 0..8), parts("b", 0..8)], 11, None);
    let chunks = vec![
        message(vec![parts("a", 0..3)], 9, Some(0)),
        message(vec![parts("a", 3..8), parts("b", 0..2)], 10, Some(1)),
        message(vec![parts("b", 2..8)], 11, Some(2)),
    ];
    (whole, chunks)
}

#[test]
fn join_chunks_rebuilds_the_message_as_a_sync_task_reads_it() {
    let (whole, parts) = chunked_checkpoint();
    let joined = join_chunks(parts.clone()).expect("joins");
    assert_eq!(joined.connector_state, whole.connector_state);
    assert_eq!(joined.chunk, None);
    assert_eq!(joined.message_seq, Some(11));
    assert_eq!(joined, whole);
    // a SyncTask reading the chunks applies the same state
    let mut task = SyncTask::new("z").expect("a task");
    for (i, p) in parts.iter().enumerate() {
        task.on_message(p, 10 + i as u64).expect("a chunk");
    }
    let mut direct = SyncTask::new("z").expect("a task");
    direct.on_message(&joined, 10).expect("the message");
    assert_eq!(task.known_tasks(), direct.known_tasks());
    let first = checkpoint_message(parts).expect("joins");
    assert_eq!(first.message_seq, None);
    assert_eq!(first.connector_state, whole.connector_state);
}

#[test]
fn join_chunks_refuses_what_a_sync_task_would_not_join() {
    let (_, parts) = chunked_checkpoint();
    let code = |parts: Vec<SyncMessage>| join_chunks(parts).map(|_| ()).unwrap_err().code();
    assert_eq!(code(Vec::new()), "INVALID_ARGUMENT");
    assert_eq!(code(parts[1..].to_vec()), "INVALID_ARGUMENT"); // not from the first
    assert_eq!(code(parts[..parts.len() - 1].to_vec()), "INVALID_ARGUMENT"); // one missing
    let mut swapped = parts.clone();
    swapped.swap(1, 2);
    assert_eq!(code(swapped), "INVALID_ARGUMENT");
    let mut other_sender = parts.clone();
    other_sender[1].task_id = "q".into();
    assert_eq!(code(other_sender), "INVALID_ARGUMENT");
    let mut gap = parts.clone();
    gap[1].message_seq = Some(99);
    assert_eq!(code(gap), "INVALID_ARGUMENT");
    let mut other_epoch = parts.clone();
    other_epoch[2].sync_epoch = "3-b".into();
    assert_eq!(code(other_epoch), "INVALID_ARGUMENT");
    // a whole message alone comes back as it is; with others it is refused
    let mut one = parts[0].clone();
    one.chunk = None;
    assert_eq!(join_chunks(vec![one.clone()]), Ok(one.clone()));
    assert_eq!(code(vec![one.clone(), one]), "INVALID_ARGUMENT");
}

/// Random logs for the vectors: small pools of ids so that checkpoints name records, chunks
/// follow, and epochs build on each other often.
struct Gen(u64);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % n
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }

    fn header(&mut self) -> Option<H> {
        if self.below(12) == 0 {
            return None;
        }
        const EPOCHS: [&str; 5] = ["1-a", "2-a", "3-b", "4-c", ""];
        const TASKS: [&str; 3] = ["a", "b", "c"];
        let kinds = [
            Some(MessageType::NewEpoch),
            Some(MessageType::NewEpoch),
            Some(MessageType::Regular),
            Some(MessageType::Regular),
            Some(MessageType::RebalanceAnswer),
            None,
        ];
        let maybe = |g: &mut Gen, n| g.below(n) != 0;
        let mut h = H {
            kind: self.pick(&kinds),
            sync_epoch: maybe(self, 8).then(|| self.pick(&EPOCHS)),
            base_epoch: maybe(self, 2).then(|| self.pick(&EPOCHS)),
            resend: self.below(2) == 0,
            task_id: maybe(self, 10).then(|| self.pick(&TASKS)),
            message_seq: maybe(self, 8).then(|| 1 + self.below(6)),
            epoch_generation: self.below(4),
            checkpoint: None,
            chunk: None,
        };
        if self.below(3) == 0 {
            h.checkpoint = Some((self.pick(&TASKS), 1 + self.below(6)));
        }
        if self.below(4) == 0 {
            let count = 1 + self.below(3) as u32;
            h.chunk = Some(ChunkRef {
                index: self.below(u64::from(count)) as u32,
                count,
            });
        }
        Some(h)
    }
}

/// The JSON of a start in `findEpochStart`'s contract.
fn start_json(s: &EpochStart) -> serde_json::Value {
    use serde_json::json;
    match s {
        At(o) => json!({"offset": o.to_string()}),
        AfterCheckpoint { offset, checkpoint } if checkpoint.len() > 1 => json!({
            "offset": offset.to_string(),
            "checkpoint": checkpoint[0].to_string(),
            "chunks": checkpoint.iter().map(u64::to_string).collect::<Vec<_>>(),
        }),
        AfterCheckpoint { offset, checkpoint } => {
            json!({"offset": offset.to_string(), "checkpoint": checkpoint[0].to_string()})
        }
        Extend => json!({"extend": true}),
    }
}

/// Random logs and where the rule starts on each, as `findEpochStart`'s arguments and answer:
/// `tests/vectors/epoch-start.json`, which `tests/epoch-start.test.js` checks the JS-bound
/// function against. `PARTKIT_WRITE_VECTORS=1` writes the file (after a change of the rule);
/// otherwise the file must be what the rule answers now.
#[test]
fn vectors_for_the_js_binding() {
    use serde_json::json;
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut cases = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let kind = |s: &EpochStart| match s {
        At(_) => 0,
        AfterCheckpoint { checkpoint, .. } if checkpoint.len() > 1 => 1,
        AfterCheckpoint { .. } => 2,
        Extend => 3,
    };
    for _ in 0..150 {
        let n = 1 + g.below(10) as usize;
        let mut offset = g.below(4);
        let low = if g.below(2) == 0 { offset } else { 0 };
        let at_low = g.below(3) != 0;
        let mut records = Vec::new();
        for i in 0..n {
            records.push(rec(offset, g.header()));
            offset += if g.below(10) == 0 { 2 } else { 1 };
            if i == 0 && g.below(3) == 0 {
                // a checkpoint in two chunks naming the record before it, maybe another between
                let named = records[0]
                    .header
                    .as_ref()
                    .and_then(|h| h.task_id.zip(h.message_seq));
                let (task, seq) = named.unwrap_or(("b", 1));
                let cp = H {
                    task_id: Some("a"),
                    epoch_generation: g.below(4),
                    ..checkpoint_in(task, seq, g.pick(&["1-a", "2-a"]))
                };
                let whole = g.below(2) == 0;
                if whole {
                    records.push(rec(offset, g.header()));
                    offset += 1;
                    records.push(rec(offset, Some(cp)));
                    offset += 1;
                } else {
                    records.push(rec(offset, Some(chunk(cp.clone(), 4, 0, 2))));
                    offset += 1;
                    if g.below(2) == 0 {
                        records.push(rec(offset, g.header()));
                        offset += 1;
                    }
                    records.push(rec(offset, Some(chunk(cp, 5, 1, 2))));
                    offset += 1;
                }
            }
        }
        let start = find(&records, at_low, low);
        seen.insert(kind(&start));
        let js_records: Vec<_> = records
            .iter()
            .map(|r| {
                let message = r.header.as_ref().map(|h| {
                    let mut m = serde_json::Map::new();
                    // (a field of the wrong type counts as absent: some are written so)
                    match h.kind {
                        Some(k) => m.insert("type".into(), json!(k.as_str())),
                        None => m.insert("type".into(), json!(7)),
                    };
                    if let Some(e) = h.sync_epoch {
                        m.insert("syncEpoch".into(), json!(e));
                    }
                    match h.base_epoch {
                        Some(e) => m.insert("baseEpoch".into(), json!(e)),
                        None => m.insert("baseEpoch".into(), json!({})),
                    };
                    m.insert("resend".into(), json!(h.resend));
                    if let Some(t) = h.task_id {
                        m.insert("taskID".into(), json!(t));
                    }
                    match h.message_seq {
                        Some(s) => m.insert("messageSeq".into(), json!(s)),
                        None => m.insert("messageSeq".into(), json!(-1)),
                    };
                    m.insert("epochGeneration".into(), json!(h.epoch_generation));
                    if let Some((t, s)) = h.checkpoint {
                        m.insert(
                            "checkpoint".into(),
                            json!({"afterTaskID": t, "afterSeq": s}),
                        );
                    }
                    if let Some(c) = &h.chunk {
                        m.insert("chunk".into(), json!({"index": c.index, "count": c.count}));
                    }
                    serde_json::Value::Object(m)
                });
                json!({"offset": r.offset, "message": message})
            })
            .collect();
        cases.push(json!({
            "records": js_records,
            "where": {"atLow": at_low, "low": low},
            "start": start_json(&start),
        }));
    }
    assert_eq!(seen.len(), 4, "every kind of answer is among the vectors");
    let text = serde_json::to_string(&cases).expect("JSON") + "\n";
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/epoch-start.json"
    );
    if std::env::var_os("PARTKIT_WRITE_VECTORS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(path).parent().expect("a dir")).expect("dir");
        std::fs::write(path, &text).expect("written");
    }
    let stored = std::fs::read_to_string(path).expect("tests/vectors/epoch-start.json");
    assert!(
        stored == text,
        "tests/vectors/epoch-start.json is not what the rule answers now: PARTKIT_WRITE_VECTORS=1"
    );
}
