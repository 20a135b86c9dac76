//! Faults that come in bursts (Gilbert–Elliott): a tool alternates between a good state and a
//! bad one, each spell lasting an exponential time with its own mean, and an attempt meets the
//! faults of the state the tool is in **when the attempt is sent**. Real failures come in
//! spells — a retry 200 ms after a failure in a 3-second brown-out fails again — which
//! independent faults of the same average rate never show.
//!
//! A run draws the tool's timeline from a stream of its own (keyed by the run and the tool, as
//! every stream is), spell by spell as far as the run asks, so every configuration of one
//! experiment meets the same bursts at the same times (common random numbers). Tools in one
//! failure domain meet one timeline, drawn from the stream of the domain's first tool. Where
//! each replica has spells of its own (`per_replica`, a sharded store whose shards fail apart),
//! replica r's timeline is drawn from a stream of its own, keyed by the tool and r. The timeline
//! starts in its long-run state: bad with probability π_b = bad / (good + bad); spells being
//! memoryless, the first lasts an exponential time of its state's mean like any other.

use crate::engine::rng::{self, Stream};
use crate::model::Faults;
use crate::time::Tick;
use crate::variate::{happens, unit_open_low};

/// A tool's burst process.
#[derive(Clone, Debug, PartialEq)]
pub struct Burst {
    /// The mean time the tool stays good, and bad.
    pub good: Tick,
    pub bad: Tick,
    /// The faults an attempt meets while the tool is bad (in the good state, the tool's own).
    pub in_bad: Faults,
    /// The failure domain whose spells the tool shares with every tool naming it (a database
    /// behind two services, a provider behind two models), if it names one.
    pub domain: Option<String>,
    /// The tool whose stream draws the spells it meets: the first tool of its domain, or itself.
    pub timeline: usize,
    /// Each replica (each shard) has spells of its own; in a domain, replica r of every tool
    /// meets the same ones.
    pub per_replica: bool,
}

impl Burst {
    /// π_b, the long-run share of time in the bad state.
    pub fn bad_share(&self) -> f64 {
        self.bad.0 as f64 / (self.good.0 + self.bad.0) as f64
    }
}

/// One run's timeline of a tool's states, drawn spell by spell as the run asks.
#[derive(Clone, Debug)]
pub struct Timeline {
    stream: Stream,
    bad: bool,
    /// The end of the current spell.
    until: Tick,
}

impl Timeline {
    /// The timeline `stream` draws for `burst`, from its long-run state at tick 0.
    pub fn new(burst: &Burst, mut stream: Stream) -> Timeline {
        let bad = happens(rng::word(&mut stream), burst.bad_share());
        let until = spell(&mut stream, burst, bad);
        Timeline { stream, bad, until }
    }

    /// Whether the tool is bad at `now`. A run asks at times that never go back.
    pub fn bad_at(&mut self, burst: &Burst, now: Tick) -> bool {
        while now >= self.until {
            self.bad = !self.bad;
            self.until = self.until.after(spell(&mut self.stream, burst, self.bad));
        }
        self.bad
    }
}

/// The length of a spell in the bad state or the good one: exponential with that state's mean,
/// at least a tick, so time always moves past a spell.
fn spell(stream: &mut Stream, burst: &Burst, bad: bool) -> Tick {
    let mean = if bad { burst.bad } else { burst.good };
    let ticks = -(mean.0 as f64) * libm::log(unit_open_low(rng::word(stream)));
    Tick((ticks.round() as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams};

    fn burst() -> Burst {
        Burst {
            good: Tick::from_secs(9),
            bad: Tick::from_secs(1),
            in_bad: Faults::default(),
            domain: None,
            timeline: 0,
            per_replica: false,
        }
    }

    /// Over a long run the share of time bad is π_b = 1/10. Over T = 2·10⁵ s of alternating
    /// exponential spells (means g = 9 s, b = 1 s) the share's standard deviation is
    /// 2gb / √(T (g + b)³) = 0.0013: the bound, 0.006, is 4.7 of them.
    #[test]
    fn the_long_run_share_bad_is_pi_b() {
        let streams = Streams {
            seed: 7,
            point: 0,
            replication: 0,
        };
        let b = burst();
        let mut timeline = Timeline::new(&b, streams.stream(Source::Bursts, 0));
        let step = Tick::from_millis(10);
        let steps = 200_000_000 / 10;
        let bad = (0..steps)
            .filter(|k| timeline.bad_at(&b, Tick(k * step.0)))
            .count();
        let share = bad as f64 / steps as f64;
        assert!((share - 0.1).abs() < 0.006, "{share}");
    }

    /// Spells run their course: asked twice at one time, or at times inside one spell, the
    /// state stands; the same stream draws the same timeline.
    #[test]
    fn a_timeline_is_a_function_of_its_stream() {
        let streams = Streams {
            seed: 1,
            point: 2,
            replication: 3,
        };
        let b = burst();
        let times: Vec<Tick> = (0..5000).map(|k| Tick::from_millis(37 * k)).collect();
        let mut one = Timeline::new(&b, streams.stream(Source::Bursts, 4));
        let mut two = Timeline::new(&b, streams.stream(Source::Bursts, 4));
        let first: Vec<bool> = times.iter().map(|t| one.bad_at(&b, *t)).collect();
        let again: Vec<bool> = times.iter().map(|t| two.bad_at(&b, *t)).collect();
        assert_eq!(first, again);
        assert!(first.contains(&true) && first.contains(&false));
        assert_eq!(one.bad_at(&b, times[4999]), first[4999]);
    }
}
