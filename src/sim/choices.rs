//! Outcomes chosen rather than drawn: how `retrysim explore` walks a run through one schedule.
//! A run meets choice points in order — each attempt it sends, each reconciliation lookup it
//! makes, and where workers crash at a rate each send's crash point just before it — and the
//! k-th point meets the k-th listed choice; past the list, and where a choice is `Default`, an
//! attempt is delivered within its timeout, a lookup answers and the worker lives on. The run
//! records every point it met, so the explorer knows where the schedule could branch next.
//!
//! Where workers crash at a rate, a run through a schedule crashes them at its crash points
//! only (a scripted crash point stands): the point before a send stands for the stretch since
//! the worker's previous one — its start, or the end of its last attempt's wait — and for the
//! wait of the attempt it sends, so the explorer can weigh a crash there by the rate.

use std::collections::BTreeMap;

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
    /// Just before an intent's worker sends an attempt: it may crash before the send, over
    /// the stretch `before` since its previous crash point, or with the attempt in flight,
    /// over its wait `during` (its round trip, or its timer where shorter); workers live
    /// `mean_uptime` on average.
    Crash {
        tool: usize,
        intent: u64,
        before: Tick,
        during: Tick,
        mean_uptime: Tick,
    },
}

impl Point {
    pub fn tool(self) -> usize {
        match self {
            Point::Attempt { tool, .. }
            | Point::Lookup { tool, .. }
            | Point::Crash { tool, .. } => tool,
        }
    }

    pub fn intent(self) -> u64 {
        match self {
            Point::Attempt { intent, .. }
            | Point::Lookup { intent, .. }
            | Point::Crash { intent, .. } => intent,
        }
    }
}

/// The choices a run meets, and the points it met.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    pub made: Vec<Choice>,
    pub met: Vec<Point>,
    /// Where each intent's worker's stretch to its next crash point begins, by intent: the
    /// end of its last attempt's wait, or when it took the call over.
    stretches: BTreeMap<u64, Tick>,
}

impl Choices {
    pub fn new(made: Vec<Choice>) -> Choices {
        Choices {
            made,
            met: Vec::new(),
            stretches: BTreeMap::new(),
        }
    }

    /// The choice at the crash point of a send from intent `intent` (of tool `tool`, started at
    /// `start`) at `now`, whose attempt would wait `during`, by workers of mean uptime `mean`.
    pub(crate) fn crash_point(
        &mut self,
        (tool, intent, start): (usize, u64, Tick),
        now: Tick,
        during: Tick,
        mean_uptime: Tick,
    ) -> Choice {
        let from = self.stretches.get(&intent).copied().unwrap_or(start);
        self.stretches.insert(intent, now.after(during));
        self.next(Point::Crash {
            tool,
            intent,
            before: Tick(now.0.saturating_sub(from.0)),
            during,
            mean_uptime,
        })
    }

    /// Intent `intent`'s call was taken over at `now`: the replacement's stretch begins.
    pub(crate) fn taken_over(&mut self, intent: u64, now: Tick) {
        self.stretches.insert(intent, now);
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
        // A crash's choice listed at an attempt is no fault of the attempt's.
        Choice::Default
        | Choice::Late
        | Choice::LookupFails
        | Choice::CrashBeforeSend
        | Choice::CrashInFlight => {
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
