//! Nested retry layers: an agent retries a tool wrapper that retries an SDK call, each with its
//! own rule and backoff. A layer's attempt is one call to the layer below; only the innermost
//! layer dispatches to the tool. Three layers of 3 attempts make up to 3³ = 27 dispatches.
//!
//! After a failure the innermost layer decides first. If it retries, the next dispatch is its
//! next attempt. If it gives up (attempts used up, or a class it does not retry), its caller
//! sees the same failure and decides by its own rule; a retry there enters every layer below
//! afresh, each at its first attempt. The operation stops when the outermost layer gives up,
//! with the outermost layer's reason. Everything else — deadline, dispatch cap, breaker, retry
//! budget, the safety gate — bounds the operation as a whole and stops it at once.
//!
//! The deadline and the dispatch cap are shared by every layer. `reset_each_layer` is the
//! broken control that practitioners meet in the wild: each layer entered replaces them with a
//! fresh deadline and a fresh cap, so no limit binds the operation as a whole.

use super::{Backoff, Retry, RetryDecision};
use crate::model::FailureClass;

/// One layer around the one that calls the tool.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    pub name: String,
    pub retry: Retry,
    pub backoff: Backoff,
}

/// The layers of a policy that nests its retries.
#[derive(Clone, Debug, PartialEq)]
pub struct Layers {
    /// The layers around the innermost, outermost first.
    pub outer: Vec<Layer>,
    /// The name of the innermost layer, whose rule and backoff are the policy's own.
    pub innermost: String,
    /// Each layer entered starts a fresh deadline and dispatch cap (the broken control).
    pub reset_each: bool,
}

/// How far an operation has got in each layer: the attempts begun in the layer's current
/// entry, outermost first. Every layer is at its first attempt when the first dispatch goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tries {
    attempts: Vec<u32>,
}

impl Tries {
    /// The first attempt of every one of `depth` layers.
    pub fn start(&mut self, depth: usize) {
        self.attempts.clear();
        self.attempts.resize(depth, 1);
    }

    /// No layer at all, the room kept.
    pub fn clear(&mut self) {
        self.attempts.clear();
    }

    /// The innermost layer's attempts so far in its current entry.
    pub fn innermost(&self) -> u32 {
        *self.attempts.last().expect("at least one layer")
    }

    /// Layer `layer` begins its next attempt, which enters the layers below afresh.
    pub fn begin(&mut self, layer: usize) {
        self.attempts[layer] += 1;
        self.attempts[layer + 1..].fill(1);
    }

    /// Which layer retries after a failure of `class`, and that retry's number within its
    /// layer; or, when every layer gives up, the outermost layer's reason.
    pub fn decide(
        &self,
        rule: impl Fn(usize) -> Retry,
        class: FailureClass,
    ) -> Result<(usize, u32), RetryDecision> {
        let mut last = RetryDecision::NotRetryable;
        for (layer, &made) in self.attempts.iter().enumerate().rev() {
            match rule(layer).decide(made, class) {
                RetryDecision::Retry { retry } => return Ok((layer, retry)),
                other => last = other,
            }
        }
        Err(last)
    }
}

/// The path of a dispatch through the layers, each layer's attempt number outermost first,
/// joined by `/` (`2/1/3`: no CSV reader takes it for a number, as it would `1.10`), given the layer each dispatch began an attempt of: the first dispatch
/// begins layer 0's first, a retry begins an attempt of the layer that retried.
pub fn paths(depth: usize, began: impl IntoIterator<Item = usize>) -> Vec<String> {
    let mut tries = Tries::default();
    began
        .into_iter()
        .enumerate()
        .map(|(i, layer)| {
            if i == 0 {
                tries.start(depth);
            } else {
                tries.begin(layer);
            }
            let numbers: Vec<String> = tries.attempts.iter().map(u32::to_string).collect();
            numbers.join("/")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Attempts;

    fn three(_: usize) -> Retry {
        Retry {
            max_attempts: Attempts::AtMost(3),
            retry_on: FailureClass::TRANSIENT.into_iter().collect(),
        }
    }

    /// Three layers of three attempts, every call failing: 27 dispatches, then the outermost
    /// layer's attempt limit.
    #[test]
    fn retries_multiply_across_layers() {
        let mut tries = Tries::default();
        tries.start(3);
        let mut began = vec![0];
        let stop = loop {
            match tries.decide(three, FailureClass::ServerError) {
                Ok((layer, _)) => {
                    tries.begin(layer);
                    began.push(layer);
                }
                Err(reason) => break reason,
            }
        };
        assert_eq!(began.len(), 27);
        assert_eq!(stop, RetryDecision::AttemptLimit);
        let paths = paths(3, began);
        assert_eq!(paths[..4], ["1/1/1", "1/1/2", "1/1/3", "1/2/1"]);
        assert_eq!(paths[26], "3/3/3");
    }

    /// A class the innermost layer does not retry goes up to a layer that does.
    #[test]
    fn a_class_goes_up_to_the_layer_that_retries_it() {
        let rule = |layer: usize| Retry {
            retry_on: if layer == 0 {
                FailureClass::ALL.into_iter().collect()
            } else {
                [FailureClass::Reset].into_iter().collect()
            },
            ..three(layer)
        };
        let mut tries = Tries::default();
        tries.start(2);
        assert_eq!(tries.decide(rule, FailureClass::Forbidden), Ok((0, 1)));
        tries.begin(0);
        assert_eq!(tries.innermost(), 1);
        assert_eq!(tries.decide(rule, FailureClass::Reset), Ok((1, 1)));
    }
}
