//! `retrysim endpoint`: a config's tools served over real HTTP, so that a user's own client —
//! its HTTP library, its retry wrapper, its SDK — meets the faults the simulator models, and
//! the commits it causes are counted per business operation. What the endpoint decides is here,
//! free of the network, so it can be tested and fuzzed: the fate of each request
//! ([`act()`]), the idempotency keys a tool holds ([`keys`]), where a request's operation comes
//! from ([`operation`]), what was counted ([`ledger`]) and the same as a run in the simulator's terms ([`recorded`]), a real client held to a prediction
//! ([`predict`]) and the model APIs' wire formats ([`wire`]). The command's server carries the
//! decisions out on the wire.

pub mod act;
pub mod door;
pub mod keys;
pub mod ledger;
pub mod operation;
pub mod predict;
pub mod recorded;
pub mod wire;

pub use act::{Act, act, draw, generation, lookup_fails, should_retry};
pub use keys::{Admit, Keys};
pub use ledger::Ledger;
pub use operation::OperationFrom;

/// The most requests one endpoint run serves: each leaves a row in the ledger (about a hundred
/// bytes), so this bounds its memory near a hundred megabytes. Past it every request is
/// answered 503 and the run ends.
pub const MOST_REQUESTS: u64 = 1_000_000;

/// The largest request body read, in bytes: a tool call's arguments, or a chat's messages.
pub const MOST_BODY_BYTES: usize = 1 << 20;
