//! When to try again: which failures are retryable, and how many attempts an intent may make.

use std::fmt;

use crate::model::FailureClass;

/// A class's bit in a [`RetryOn`].
fn bit(class: FailureClass) -> u16 {
    1 << class as u16
}

/// The set of failure classes a policy retries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryOn(u16);

// Every class has a bit.
const _: () = assert!(FailureClass::ALL.len() <= u16::BITS as usize);

impl RetryOn {
    /// Whether the set takes in `class`. A connect failure is a reset known never to have left
    /// the client, so a set with `reset` takes it in too; `connect` alone takes in only that.
    pub fn contains(self, class: FailureClass) -> bool {
        let bits = match class {
            FailureClass::Connect => bit(class) | bit(FailureClass::Reset),
            _ => bit(class),
        };
        self.0 & bits != 0
    }

    /// The classes either set retries.
    pub fn union(self, other: RetryOn) -> RetryOn {
        RetryOn(self.0 | other.0)
    }

    /// The classes listed, as a config writes them.
    pub fn classes(self) -> impl Iterator<Item = FailureClass> {
        FailureClass::ALL
            .into_iter()
            .filter(move |c| self.0 & bit(*c) != 0)
    }
}

impl FromIterator<FailureClass> for RetryOn {
    fn from_iter<I: IntoIterator<Item = FailureClass>>(iter: I) -> Self {
        RetryOn(iter.into_iter().fold(0, |bits, c| bits | bit(c)))
    }
}

/// How many attempts an intent may make, counting the first: 3 attempts = 2 retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempts {
    AtMost(u32),
    Unlimited,
}

impl Attempts {
    pub fn cap(self) -> Option<u32> {
        match self {
            Attempts::AtMost(n) => Some(n),
            Attempts::Unlimited => None,
        }
    }
}

impl fmt::Display for Attempts {
    /// "3 attempts = 2 retries", so nobody mistakes one count for the other.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Attempts::AtMost(1) => write!(f, "1 attempt = no retry"),
            Attempts::AtMost(2) => write!(f, "2 attempts = 1 retry"),
            Attempts::AtMost(n) => write!(f, "{n} attempts = {} retries", n - 1),
            Attempts::Unlimited => write!(f, "unlimited attempts"),
        }
    }
}

/// The retry rule: a cap on attempts and the classes worth another try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    pub max_attempts: Attempts,
    pub retry_on: RetryOn,
}

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Send retry number `retry` (1 for the second attempt).
    Retry { retry: u32 },
    /// The failure's class is not in `retry_on`.
    NotRetryable,
    /// Every allowed attempt has been made.
    AttemptLimit,
}

impl Retry {
    /// Decides after the `attempts_made`-th attempt failed with `class`.
    pub fn decide(&self, attempts_made: u32, class: FailureClass) -> RetryDecision {
        if !self.retry_on.contains(class) {
            RetryDecision::NotRetryable
        } else if self.max_attempts.cap().is_some_and(|n| attempts_made >= n) {
            RetryDecision::AttemptLimit
        } else {
            RetryDecision::Retry {
                retry: attempts_made,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_attempts_counts_the_first_attempt() {
        let retry = Retry {
            max_attempts: Attempts::AtMost(3),
            retry_on: FailureClass::ALL.into_iter().collect(),
        };
        assert_eq!(
            retry.decide(1, FailureClass::Reset),
            RetryDecision::Retry { retry: 1 }
        );
        assert_eq!(
            retry.decide(2, FailureClass::Reset),
            RetryDecision::Retry { retry: 2 }
        );
        assert_eq!(
            retry.decide(3, FailureClass::Reset),
            RetryDecision::AttemptLimit
        );
        assert_eq!(Attempts::AtMost(3).to_string(), "3 attempts = 2 retries");
    }

    #[test]
    fn classes_outside_retry_on_stop() {
        let retry = Retry {
            max_attempts: Attempts::Unlimited,
            retry_on: [FailureClass::Reset].into_iter().collect(),
        };
        assert_eq!(
            retry.decide(1, FailureClass::ServerError),
            RetryDecision::NotRetryable
        );
        assert_eq!(
            retry.decide(99, FailureClass::Reset),
            RetryDecision::Retry { retry: 99 }
        );
    }
}
