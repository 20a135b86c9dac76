//! Reading configs, and the reference docs held against the code.

mod changes;
mod docs;
mod reading;
mod resolved;
mod sweeps;
