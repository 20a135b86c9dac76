//! Reservations: money an agent sets aside for a call before it sends it (an order's price),
//! and where that money goes when the call ends. A success moves it to spent; a call that
//! surely did nothing (every attempt refused before its commit point) releases it. A call whose
//! outcome the agent does not know is the hard case: released at once (`release =
//! "on_failure"`), the money may be spent again while the first order lands — a release while
//! an effect exists is **released wrongly**, the invariant this module counts; held until an
//! answer comes (`"when_conclusive"`), it stays reserved at the end of the run, for an
//! operator. Money is in picodollars, as bills are, so every sum is exact.

use serde::{Deserialize, Serialize};

use super::{BusinessState, Status};

/// When an agent releases a failed call's reservation (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// On any failure, as a naive agent does: where an effect landed unseen, the money is
    /// spent twice.
    OnFailure,
    /// Only when the call surely did nothing; an unknown outcome keeps its reservation until an
    /// answer comes.
    WhenConclusive,
}

impl Release {
    pub const ALL: [Release; 2] = [Release::OnFailure, Release::WhenConclusive];

    pub fn name(self) -> &'static str {
        match self {
            Release::OnFailure => "on_failure",
            Release::WhenConclusive => "when_conclusive",
        }
    }
}

/// Where one call's reservation went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    pub spent: u64,
    pub released: u64,
    /// Released while an effect of the call had landed.
    pub released_wrongly: u64,
    /// Still reserved at the end, the outcome unknown.
    pub held: u64,
}

/// Where a reservation of `amount` goes for a call that ended `status`, the agent knowing
/// `business`, the server having made `effects`, under the rule `release`.
pub fn settle(
    amount: u64,
    (status, business, effects): (Status, BusinessState, u32),
    release: Release,
) -> Settled {
    let landed = effects > 0;
    let release_it = || Settled {
        released: amount,
        released_wrongly: if landed { amount } else { 0 },
        ..Settled::default()
    };
    match (status, business, release) {
        (Status::Succeeded, ..) | (_, BusinessState::Confirmed, _) => Settled {
            spent: amount,
            ..Settled::default()
        },
        (_, BusinessState::Unknown, Release::WhenConclusive) => Settled {
            held: amount,
            ..Settled::default()
        },
        _ => release_it(),
    }
}

/// What one configuration's reservations came to, over its reserving calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationTotals {
    pub calls: u64,
    pub reserved: u128,
    pub spent: u128,
    pub released: u128,
    pub released_wrongly: u128,
    /// Calls whose reservation was released wrongly.
    pub wrong_releases: u64,
    pub held: u128,
    /// Calls still holding their reservation at the end.
    pub held_calls: u64,
    /// What the server charged: the amount for every effect, duplicates included.
    pub charged: u128,
}

impl ReservationTotals {
    /// Counts a call that reserved `amount`, made `effects` and settled as `settled`.
    pub fn add(&mut self, amount: u64, effects: u32, settled: Settled) {
        self.calls += 1;
        self.reserved += u128::from(amount);
        self.spent += u128::from(settled.spent);
        self.released += u128::from(settled.released);
        self.released_wrongly += u128::from(settled.released_wrongly);
        self.wrong_releases += u64::from(settled.released_wrongly > 0);
        self.held += u128::from(settled.held);
        self.held_calls += u64::from(settled.held > 0);
        self.charged += u128::from(amount) * u128::from(effects);
    }

    pub fn merge(&mut self, other: &ReservationTotals) {
        self.calls += other.calls;
        self.reserved += other.reserved;
        self.spent += other.spent;
        self.released += other.released;
        self.released_wrongly += other.released_wrongly;
        self.wrong_releases += other.wrong_releases;
        self.held += other.held;
        self.held_calls += other.held_calls;
        self.charged += other.charged;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::StopReason;

    /// Every ending, both rules: a success spends; a refusal before any commit releases,
    /// rightly; an unknown outcome is released at once (wrongly where the order landed) or
    /// held; the money always goes exactly one way.
    #[test]
    fn a_reservation_goes_exactly_one_way() {
        let failed = Status::Stopped(StopReason::AttemptLimit);
        let cases = [
            (
                (Status::Succeeded, BusinessState::Confirmed, 1),
                Release::OnFailure,
                (15, 0, 0, 0),
            ),
            (
                (failed, BusinessState::NotAttempted, 0),
                Release::OnFailure,
                (0, 15, 0, 0),
            ),
            (
                (failed, BusinessState::Unknown, 1),
                Release::OnFailure,
                (0, 15, 15, 0),
            ),
            (
                (failed, BusinessState::Unknown, 0),
                Release::OnFailure,
                (0, 15, 0, 0),
            ),
            (
                (failed, BusinessState::Unknown, 1),
                Release::WhenConclusive,
                (0, 0, 0, 15),
            ),
            (
                (failed, BusinessState::NotAttempted, 0),
                Release::WhenConclusive,
                (0, 15, 0, 0),
            ),
        ];
        for (ending, rule, (spent, released, wrongly, held)) in cases {
            let s = settle(15, ending, rule);
            assert_eq!(
                (s.spent, s.released, s.released_wrongly, s.held),
                (spent, released, wrongly, held),
                "{ending:?} {rule:?}"
            );
            assert_eq!(s.spent + s.released + s.held, 15);
        }
    }
}
