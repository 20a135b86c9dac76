//! An attempt's fate, decided in one place: the only function the run asks how an attempt it
//! sends will end, and how long each leg takes.
//!
//! The fate comes from one source per attempt, in this order:
//! - a tool's **script**, which fails the same attempts in every run (and which the explorer
//!   leaves as written);
//! - the **explorer's** schedule, where `retrysim explore` walks the run: the choice it makes
//!   at this point, applied to what the faults drew (the latencies stay drawn);
//! - the tool's **faults**, drawn from the attempt's own random words (a replica's where it has
//!   its own, the burst's bad-state faults while a bursty tool is in a bad spell).
//!
//! A new way for attempts to fail (faults that come in bursts, outcomes replayed from a trace)
//! is a new source here and its config; nothing else decides a fate. What follows a fate is
//! not decided here: a model's generation (its service time, its answer's size, a stream that
//! breaks) is a step after it (`Intent::generate`), and the server's own refusals (a line full,
//! a rate limit, an outage) are the server's.

use crate::engine::rng::{Source, Streams};
use crate::model::burst::Timeline;
use crate::model::fault::WORDS_PER_ATTEMPT;
use crate::model::{AttemptDraw, Tool};
use crate::sim::choices::{self, Choices, Point};
use crate::time::Tick;

/// What an attempt's fate may depend on.
pub struct Asked<'a> {
    /// The tool, by its index and itself.
    pub tool: (usize, &'a Tool),
    /// The replica the balancer chose.
    pub replica: usize,
    /// The intent, by its id, and the attempt's number within it (0 the first).
    pub intent: u64,
    pub attempt: u32,
    /// When it is sent, and the wait its timer was set to (`None`: no timer).
    pub now: Tick,
    pub wait: Option<Tick>,
    /// The run's random streams, for a fault process's own.
    pub streams: &'a Streams,
    /// The attempt's own random words: the same for every configuration that sends it.
    pub words: &'a [u64; WORDS_PER_ATTEMPT],
}

/// A run's sources of fates beyond each tool's own draws, and their state.
#[derive(Default)]
pub struct Fates {
    /// The schedule being walked, where the explorer walks the run (or a config names one).
    pub explorer: Option<Choices>,
    /// Each bursty tool's (or failure domain's) timelines of good and bad spells, by the tool
    /// whose stream draws them and the replica (0 where the replicas share one), drawn as the
    /// run goes.
    bursts: Vec<Vec<Option<Timeline>>>,
}

impl Fates {
    /// Whether the tool `asked` names (its replica, where each has its own spells) is in its
    /// bad state at its send: never, without bursts.
    fn bad(&mut self, asked: &Asked) -> bool {
        let Some(burst) = &asked.tool.1.burst else {
            return false;
        };
        // Tools of one failure domain read the timelines of its first tool.
        let index = burst.timeline;
        let replica = if burst.per_replica { asked.replica } else { 0 };
        if self.bursts.len() <= index {
            self.bursts.resize(index + 1, Vec::new());
        }
        let timelines = &mut self.bursts[index];
        if timelines.len() <= replica {
            timelines.resize(replica + 1, None);
        }
        // Replica 0's stream is the tool's, so the replicas of a tool sharing one timeline
        // and the first of a tool with one each meet the same spells.
        let entity = index as u64 | (replica as u64) << 32;
        let stream = || asked.streams.stream(Source::Bursts, entity);
        let timeline = timelines[replica].get_or_insert_with(|| Timeline::new(burst, stream()));
        timeline.bad_at(burst, asked.now)
    }
}

/// The fate and latencies of the attempt `asked` describes, from its one source.
pub fn decide(asked: &Asked, fates: &mut Fates) -> AttemptDraw {
    let (index, tool) = asked.tool;
    if let Some(script) = &tool.script {
        return script.draw(asked.attempt);
    }
    let drawn = tool.draw(asked.words, asked.replica, (fates.bad(asked), asked.now));
    match &mut fates.explorer {
        None => drawn,
        Some(choices) => {
            let choice = choices.next(Point::Attempt {
                tool: index,
                intent: asked.intent,
                attempt: asked.attempt,
                wait: asked.wait,
            });
            choices::draw(drawn, choice, asked.wait, tool.faults.retry_after)
        }
    }
}
