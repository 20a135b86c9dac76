//! Outcomes chosen rather than drawn: how `retrysim explore` walks a run through one schedule.
//! A run meets choice points in order — each attempt it sends, each reconciliation lookup it
//! makes — and the k-th point meets the k-th listed choice; past the list, and where a choice
//! is `Default`, an attempt is delivered within its timeout and a lookup answers. The run
//! records every point it met, so the explorer knows where the schedule could branch next.

use crate::model::{AttemptDraw, Choice, Fate};
use crate::time::Tick;

/// A point where a run chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// An attempt sent, with the wait its timer was set to (`None`: no timer).
    Attempt {
        tool: usize,
        intent: u64,
        attempt: u32,
        wait: Option<Tick>,
    },
    /// A lookup of an intent's key before a resend.
    Lookup { tool: usize, intent: u64 },
}

impl Point {
    pub fn tool(self) -> usize {
        match self {
            Point::Attempt { tool, .. } | Point::Lookup { tool, .. } => tool,
        }
    }

    pub fn intent(self) -> u64 {
        match self {
            Point::Attempt { intent, .. } | Point::Lookup { intent, .. } => intent,
        }
    }
}

/// The choices a run meets, and the points it met.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    pub made: Vec<Choice>,
    pub met: Vec<Point>,
}

impl Choices {
    pub fn new(made: Vec<Choice>) -> Choices {
        Choices {
            made,
            met: Vec::new(),
        }
    }

    /// The choice at the next point, `point`, which is recorded.
    pub(crate) fn next(&mut self, point: Point) -> Choice {
        let k = self.met.len();
        self.met.push(point);
        self.choice(k)
    }

    /// The choice met at the k-th point.
    pub fn choice(&self, k: usize) -> Choice {
        self.made.get(k).copied().unwrap_or(Choice::Default)
    }
}

/// An attempt's draw as `choice` makes it: a fault's fate (with the tool's Retry-After for a
/// 429), or a delivery whose service time puts its reply before the timer `wait` (on time) or
/// at it (late); the latencies otherwise as drawn.
pub fn draw(
    drawn: AttemptDraw,
    choice: Choice,
    wait: Option<Tick>,
    retry_after: Option<Tick>,
) -> AttemptDraw {
    let mut d = drawn;
    match choice {
        Choice::Fate(fate) => {
            d.fate = fate;
            d.retry_after = retry_after.filter(|_| fate == Fate::Throttled);
        }
        Choice::Default | Choice::Late | Choice::LookupFails => {
            d.fate = Fate::Delivered;
            d.retry_after = None;
            if let Some(wait) = wait {
                let budget = wait.0.saturating_sub(d.request.0 + d.reply.0);
                d.service = match choice {
                    Choice::Late => Tick(budget),
                    _ => Tick(d.service.0.min(budget.saturating_sub(1))),
                };
            }
        }
    }
    d
}
