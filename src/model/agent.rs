//! An agent's task as a loop of turns: each turn the model is called, then the tools it asked
//! for, for a number of turns drawn per task; the last turn is the model's answer alone. Each
//! turn's model call reads its own prompt and every earlier turn's answer and tool results, so
//! the context grows as the task goes on, and a call made late costs more than one made early.

use super::latency::Latency;

/// The loop a workload's tasks run, over its list of calls: the model first, then its tools.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentLoop {
    /// Turns a task takes (a distribution read as a count), at least 1.
    pub turns: Latency,
    /// Tokens each tool call's result adds to the context.
    pub result_tokens: u32,
}

impl AgentLoop {
    /// The most turns a task may take: more would be a loop no agent runs.
    pub const MOST_TURNS: u64 = 10_000;

    /// A task's turns, from one word of its own stream.
    pub fn turns(&self, word: u64) -> u32 {
        // Validation holds the distribution's largest value to MOST_TURNS.
        self.turns.sample(word).0.clamp(1, Self::MOST_TURNS) as u32
    }
}
