//! A request at its tool's door (see [`retrysim::endpoint::door`]): let in at once, after a wait
//! in line, or turned away — throttled by a limit, refused or swallowed by an outage, or sent
//! off by a full line. A request let in holds a [`Slot`] until its work is done; dropping it
//! frees its worker for the next in line, also when the request's connection is gone.

use std::sync::Arc;

use retrysim::endpoint::door::outage_ends;
use retrysim::model::OutageMode;
use retrysim::model::limiter::Refusal;
use retrysim::model::server::Arrival;
use retrysim::time::Tick;
use tokio::sync::oneshot;

use super::{Shared, State};

/// Why a request was turned away at the door.
pub(super) enum Turned {
    /// A rate or tokens-per-minute limit refused it: a 429 that says when to come back.
    Throttled(Refusal),
    /// The tool is down and fails fast: a 5xx at once.
    Down,
    /// The tool is down and swallows requests: the connection is held, unanswered, until the
    /// outage ends (in the config's time), then closed.
    Swallowed(Tick),
    /// The line was full: a 503 at once.
    Full,
}

/// A request let in at its tool's door, until its work is done.
pub(super) struct Slot {
    shared: Arc<Shared>,
    tool: usize,
    caller: u32,
    /// A worker took it up (and frees when it leaves).
    served: bool,
    /// Where it waits in line: told when a worker takes it up.
    taken: Option<oneshot::Receiver<()>>,
    /// A model's answer generated, where a tokens-per-minute limit reserved its `max_tokens`.
    pub generated: Option<u32>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Dropped while it waited: a worker may have taken it up in the meantime.
        if let Some(mut taken) = self.taken.take() {
            self.served = taken.try_recv().is_ok();
        }
        let now = self.shared.now();
        let mut state = self.shared.lock();
        let exp = &self.shared.exp;
        let freed = (state.doors).leave(
            exp,
            self.tool,
            now,
            (self.caller, self.generated),
            self.served,
        );
        wake(&mut state, self.tool, freed);
    }
}

/// Wakes the requests whose tickets a worker took up from the line: one whose connection is
/// gone gives its worker straight to the next.
fn wake(state: &mut State, tool: usize, freed: Vec<u64>) {
    let mut next = freed;
    while let Some(ticket) = next.pop() {
        let woken = state
            .waiting
            .remove(&ticket)
            .is_some_and(|tx| tx.send(()).is_ok());
        if !woken {
            next.extend(state.doors.abandoned(tool));
        }
    }
}

/// Applies every capacity window that opened or closed by now, waking the requests a change
/// takes up from a line: called as the server idles, so a line that waits out a window with no
/// request arriving or leaving still moves when it ends.
pub(super) fn tick(shared: &Shared) {
    let now = shared.now();
    let mut state = shared.lock();
    for tool in 0..shared.exp.tools.len() {
        let freed = state.doors.tick(&shared.exp, tool, now);
        wake(&mut state, tool, freed);
    }
}

/// Request `ticket` of caller `caller` at tool `tool`'s door now, reading `input` tokens: let in
/// (after its wait in line, where it waits) or turned away.
pub(super) async fn enter(
    shared: &Arc<Shared>,
    tool: usize,
    (caller, input): (u32, u64),
    ticket: u64,
) -> Result<Slot, Turned> {
    let now = shared.now();
    let mut slot = Slot {
        shared: shared.clone(),
        tool,
        caller,
        served: false,
        taken: None,
        generated: None,
    };
    {
        let mut state = shared.lock();
        let (arrival, freed) = state
            .doors
            .arrive(&shared.exp, tool, now, (caller, input), ticket);
        wake(&mut state, tool, freed);
        match arrival {
            Arrival::Served(_) => {}
            Arrival::Waiting => {
                let (tx, rx) = oneshot::channel();
                state.waiting.insert(ticket, tx);
                slot.taken = Some(rx);
            }
            Arrival::Throttled(refusal) => return Err(Turned::Throttled(refusal)),
            Arrival::Down(OutageMode::FailFast) => return Err(Turned::Down),
            Arrival::Down(OutageMode::Hang) => {
                let until = outage_ends(&shared.exp, tool, now).unwrap_or(now);
                return Err(Turned::Swallowed(until.since(now)));
            }
            Arrival::Full(_) => return Err(Turned::Full),
            Arrival::VersionMoved => unreachable!("the endpoint's writes carry no version"),
        }
    }
    if let Some(taken) = slot.taken.as_mut() {
        // The sender lives in the state until a worker takes the ticket up.
        let _ = taken.await;
        slot.taken = None;
    }
    slot.served = true;
    Ok(slot)
}
