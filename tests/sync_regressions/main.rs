//! Protocol tests: one named regression test per production bug of the Java connector
//! (reference page `task-sync.md`), plus rule-by-rule tests of `SyncTask`.

mod net;
mod production_bugs;
mod rules;
#[path = "../support/sync_world.rs"]
mod world;
