//! A scripted endpoint: attempt k of every intent gets the k-th listed outcome after the listed
//! time (the last entry repeats), so an exact scenario can be written as it is told.

use super::{AttemptDraw, Fate};
use crate::time::Tick;

/// One listed outcome: what becomes of the attempt, and when it reaches the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub fate: Fate,
    /// From dispatch to the outcome at the client; a commit happens at the same tick.
    pub after: Tick,
    /// The wait the server asks for with a refusal (Retry-After).
    pub retry_after: Option<Tick>,
}

/// The outcomes of a scripted tool, by attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub steps: Vec<Step>,
}

impl Script {
    /// Attempt `attempt` (from 0) as its step says: the work takes the whole time, the network
    /// none, so a commit and its reply fall on the same tick. A failed connection has no work:
    /// its time is the request's.
    pub fn draw(&self, attempt: u32) -> AttemptDraw {
        let step = self.steps[(attempt as usize).min(self.steps.len() - 1)];
        let (request, service) = match step.fate {
            Fate::ConnectFailed => (step.after, Tick::ZERO),
            _ => (Tick::ZERO, step.after),
        };
        AttemptDraw::new(step.fate, request, service, Tick::ZERO, step.retry_after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_step_repeats() {
        let script = Script {
            steps: vec![
                Step {
                    fate: Fate::LostReply,
                    after: Tick(3),
                    retry_after: None,
                },
                Step {
                    fate: Fate::Delivered,
                    after: Tick(5),
                    retry_after: None,
                },
            ],
        };
        assert_eq!(script.draw(0).fate, Fate::LostReply);
        assert_eq!(script.draw(1).round_trip(), Tick(5));
        assert_eq!(script.draw(7).fate, Fate::Delivered);
    }
}
