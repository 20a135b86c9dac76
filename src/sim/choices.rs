//! Fates chosen rather than drawn: how `retrysim explore` walks a run through one schedule of
//! outcomes. The k-th attempt the run sends, whatever its intent or tool, meets the k-th listed
//! fate; past the list every attempt is delivered. The run records every attempt it sent, so
//! the explorer knows where the schedule could branch next.

use crate::model::Fate;

/// One attempt a run sent, in the order sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub tool: usize,
    pub intent: u64,
    pub attempt: u32,
}

/// The fates a run's attempts meet, and the attempts it sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    pub fates: Vec<Fate>,
    pub sent: Vec<Sent>,
}

impl Choices {
    pub fn new(fates: Vec<Fate>) -> Choices {
        Choices {
            fates,
            sent: Vec::new(),
        }
    }

    /// The fate of the next attempt sent, `sent`, which is recorded.
    pub(crate) fn next(&mut self, sent: Sent) -> Fate {
        let k = self.sent.len();
        self.sent.push(sent);
        self.fates.get(k).copied().unwrap_or(Fate::Delivered)
    }

    /// The fate the k-th attempt sent met.
    pub fn fate(&self, k: usize) -> Fate {
        self.fates.get(k).copied().unwrap_or(Fate::Delivered)
    }
}
