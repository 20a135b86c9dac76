//! The `retrysim` binary as a user meets it: runs and their files, the sweep workflow, output
//! folders, and the catalogue of bad input.

mod binary;
mod refusals;
mod run;
mod workflow;
