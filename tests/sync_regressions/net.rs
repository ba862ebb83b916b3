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

/// Three tasks in epoch 1 with p0..p5 spread over them.
pub fn three_tasks() -> World {
    let mut n = net(&["t1", "t2", "t3"]);
    n.announce(1, "t1", &["t1", "t2", "t3"]);
    n.settle();
    assert_eq!(n.task("t1").epoch(), Some("1-t1"));
    n.add_partitions("t1", &specs(&["p0", "p1", "p2", "p3", "p4", "p5"]));
    n.settle();
    n
}
