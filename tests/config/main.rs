//! Reading configs, and the reference docs held against the code.

mod backoffs;
mod changes;
mod docs;
mod load;
mod presets;
mod reading;
mod resolved;
#[path = "../shipped/mod.rs"]
mod shipped;
mod sweeps;
