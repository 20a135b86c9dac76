//! The `retrysim` binary as a user meets it: runs and their files, the sweep workflow, output
//! folders, and the catalogue of bad input.

mod arguments;
mod binary;
mod bounds;
mod broken_output;
mod calibrate;
mod changes;
mod compare;
mod endpoint;
mod explore;
mod folders;
mod hardening;
mod incident;
mod refusals;
mod run;
mod serve;
mod shards;
#[path = "../shipped/mod.rs"]
mod shipped;
mod trace;
mod tune;
mod workflow;
