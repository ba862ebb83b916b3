//! The options the protocol tests run with, and the world they run in (tests/support's, with
//! its clock moved by ticks alone and fencing allowed: some rules fence a task on purpose).

use partkit::sync::SyncOptions;

pub use crate::world::{specs, World};

pub fn opts() -> SyncOptions {
    SyncOptions {
        rebalance_timeout: 1_000,
        epoch_ack_timeout: 500,
        removal_delay: 100,
        tombstone_ttl: 10_000,
        state_refresh_interval: 50_000,
        ..SyncOptions::default()
    }
}

/// Tasks `ids` with [`opts`] on an empty log, the clock at 0.
pub fn net(ids: &[&str]) -> World {
    let mut n = World::new(ids, opts());
    n.allow_fenced = true;
    n
}

/// Tasks `ids` in epoch 1, which the first leads, and its partitions `tokens` spread over them
/// (everyone has read everything).
pub fn epoch_one(ids: &[&str], tokens: &[&str]) -> World {
    let mut n = net(ids);
    n.announce(1, ids[0], ids);
    n.settle();
    assert_eq!(
        n.task(ids[0]).epoch(),
        Some(format!("1-{}", ids[0]).as_str())
    );
    n.add_partitions(ids[0], &specs(tokens));
    n.settle();
    n
}

/// Three tasks in epoch 1 with p0..p5 spread over them.
pub fn three_tasks() -> World {
    epoch_one(&["t1", "t2", "t3"], &["p0", "p1", "p2", "p3", "p4", "p5"])
}
