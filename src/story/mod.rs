//! One intent's story, or one task's: its attempts in time, read back from an output folder's
//! traces (`intents.csv`, `attempts.csv`) and the manifest, and told three ways — a plain text
//! timeline for the terminal ([`text`]), a Mermaid sequence diagram that renders on GitHub
//! ([`mermaid`]), and swimlanes drawn as a chart ([`crate::chart::lanes`]).

pub mod mermaid;
mod read;
pub mod text;

pub use read::Stories;

use crate::time::Tick;

/// What a configuration's policy puts on a story's time axis, from the manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Marks {
    /// The configuration's name.
    pub policy: String,
    /// The retry layers' names, outermost first; one unnamed layer for a flat policy.
    pub layers: Vec<String>,
    /// The operation's deadline, from its start.
    pub deadline: Option<Tick>,
    /// Whether every layer entered starts the deadline and the dispatch cap afresh.
    pub reset_each_layer: bool,
    /// When the operation is cancelled, from its start.
    pub cancel_after: Option<Tick>,
    /// Calls per task.
    pub calls: usize,
    /// Who calls each tool a service calls, as (callee, caller): a story across hops draws
    /// its requests from the caller, not the client.
    pub callers: Vec<(String, String)>,
}

/// One attempt as the trace recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    /// Its number within the intent, from 0.
    pub number: u32,
    /// Its attempt number in each layer, outermost first (`[2, 1, 3]` for `2/1/3`).
    pub path: Vec<u32>,
    pub dispatch: Tick,
    pub end: Tick,
    pub granted: Option<Tick>,
    pub outcome: String,
    pub committed: bool,
    pub key: String,
    /// The answer of the lookup made right after it, if one was (`found`, `not_found`,
    /// `failed`), and when that answer came.
    pub lookup: Option<(String, Tick)>,
}

impl Attempt {
    /// Its layer path as `attempts.csv` writes it: `2/1/3`.
    pub fn layer_path(&self) -> String {
        let numbers: Vec<String> = self.path.iter().map(u32::to_string).collect();
        numbers.join("/")
    }
}

/// One intent: how it ended and its attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct Intent {
    pub replication: u64,
    pub intent: u64,
    pub tool: String,
    pub status: String,
    pub stop_reason: String,
    pub business_state: String,
    pub start: Tick,
    pub end: Tick,
    pub effects: u64,
    /// Calls the breaker refused without sending.
    pub short_circuited: u64,
    pub attempts: Vec<Attempt>,
}

/// One intent's story, or one task's: its intents in call order.
#[derive(Clone, Debug, PartialEq)]
pub struct Story<'a> {
    pub experiment: &'a str,
    pub marks: &'a Marks,
    /// The task, when the story is a whole task's.
    pub task: Option<u64>,
    pub intents: Vec<&'a Intent>,
}

/// One row of a swimlane drawing: a name and its bars.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    pub name: String,
    pub bars: Vec<Bar>,
}

/// A stretch of one lane.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub from: Tick,
    pub to: Tick,
    pub kind: BarKind,
    /// A short label: the attempt's number in its layer.
    pub label: String,
}

/// What a bar stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum BarKind {
    /// An attempt of an inner layer, ending with this outcome; `committed` if it made a side
    /// effect.
    Attempt { outcome: String, committed: bool },
    /// An attempt of an outer layer: the span of the inner attempts it made.
    Span,
    /// A reconciliation lookup, with its answer.
    Lookup { answer: String },
}

/// A moment on a story's time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Moment {
    pub at: Tick,
    pub what: MomentKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MomentKind {
    Deadline,
    Cancelled,
    /// The breaker refused a call without sending it.
    BreakerRefused,
}

/// A span as a reader wants it: in ticks while short, in the largest unit that reads well
/// once it runs to thousands of ticks.
pub fn span_words(t: Tick) -> String {
    if t.0 < 10_000 {
        format!("{} ticks", t.0)
    } else {
        t.to_string()
    }
}

/// A point in time as [`span_words`] writes it, without the word "ticks".
pub fn time_words(t: Tick) -> String {
    if t.0 < 10_000 {
        t.0.to_string()
    } else {
        t.to_string()
    }
}

impl Story<'_> {
    /// When the story begins and ends.
    pub fn span(&self) -> (Tick, Tick) {
        let start = self
            .intents
            .iter()
            .map(|i| i.start)
            .min()
            .unwrap_or(Tick::ZERO);
        let end = self.intents.iter().map(|i| i.end).max().unwrap_or(start);
        (start, end)
    }

    /// Dispatches made, over every intent.
    pub fn dispatches(&self) -> usize {
        self.intents.iter().map(|i| i.attempts.len()).sum()
    }

    /// Side effects committed beyond the first of each intent.
    pub fn duplicates(&self) -> u64 {
        self.intents
            .iter()
            .map(|i| i.effects.saturating_sub(1))
            .sum()
    }

    /// How the story ended: the last intent's status and stop reason.
    pub fn ending(&self) -> String {
        match self.intents.last() {
            Some(i) if i.status == "succeeded" => "succeeded".into(),
            Some(i) => i.stop_reason.clone(),
            None => "no intents".into(),
        }
    }

    /// The lanes to draw: for a single intent, one per retry layer (outermost first); for a
    /// task, one per call, each showing its dispatches.
    pub fn lanes(&self) -> Vec<Lane> {
        let depth = self.marks.layers.len();
        if let [intent] = self.intents[..] {
            (0..depth)
                .map(|layer| Lane {
                    name: if depth == 1 {
                        intent.tool.clone()
                    } else {
                        self.marks.layers[layer].clone()
                    },
                    bars: if layer + 1 == depth {
                        dispatches(intent)
                    } else {
                        spans(intent, layer)
                    },
                })
                .collect()
        } else {
            self.intents
                .iter()
                .map(|i| Lane {
                    name: i.tool.clone(),
                    bars: dispatches(i),
                })
                .collect()
        }
    }

    /// The deadline, the cancellation and the breaker's refusals that came before the story
    /// ended, in time order.
    pub fn moments(&self) -> Vec<Moment> {
        let (_, end) = self.span();
        let mut out = Vec::new();
        for i in &self.intents {
            if let Some(d) = self.marks.deadline.filter(|_| !self.marks.reset_each_layer) {
                out.push(Moment {
                    at: i.start.after(d),
                    what: MomentKind::Deadline,
                });
            }
            if let Some(c) = self.marks.cancel_after
                && i.stop_reason == "cancelled"
            {
                out.push(Moment {
                    at: i.start.after(c),
                    what: MomentKind::Cancelled,
                });
            }
            if i.short_circuited > 0 {
                out.push(Moment {
                    at: i.end,
                    what: MomentKind::BreakerRefused,
                });
            }
        }
        out.retain(|m| m.at <= end);
        out.sort_by_key(|m| m.at);
        out.dedup();
        out
    }
}

/// Each dispatch of `intent` as a bar, and each lookup after one.
fn dispatches(intent: &Intent) -> Vec<Bar> {
    let mut bars = Vec::new();
    for a in &intent.attempts {
        bars.push(Bar {
            from: a.dispatch,
            to: a.end,
            kind: BarKind::Attempt {
                outcome: a.outcome.clone(),
                committed: a.committed,
            },
            label: a.path.last().map_or(String::new(), u32::to_string),
        });
        if let Some((answer, at)) = &a.lookup {
            bars.push(Bar {
                from: a.end,
                to: *at,
                kind: BarKind::Lookup {
                    answer: answer.clone(),
                },
                label: String::new(),
            });
        }
    }
    bars
}

/// Each attempt of outer layer `layer`: from its first dispatch to its last one's end.
fn spans(intent: &Intent, layer: usize) -> Vec<Bar> {
    let mut bars: Vec<Bar> = Vec::new();
    let mut current: Option<&[u32]> = None;
    for a in &intent.attempts {
        let prefix = &a.path[..=layer.min(a.path.len() - 1)];
        match bars.last_mut() {
            Some(bar) if current == Some(prefix) => bar.to = bar.to.max(a.end),
            _ => {
                bars.push(Bar {
                    from: a.dispatch,
                    to: a.end,
                    kind: BarKind::Span,
                    label: prefix.last().map_or(String::new(), u32::to_string),
                });
                current = Some(prefix);
            }
        }
    }
    bars
}
