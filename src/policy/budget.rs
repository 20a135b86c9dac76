//! Retry budgets: a client-wide allowance of retries, so that when a tool fails for everyone,
//! retries do not multiply its load. One budget per tool, shared by all the tasks of a run; first
//! attempts always go out, and a retry the budget refuses stops its intent at once
//! (`retry_budget_exhausted`), without a backoff.
//!
//! - `token_bucket` (gRPC `retryThrottling`): tokens start at `max_tokens`; a failed attempt
//!   takes 1 (with `debit_on = "retryable"`, only a failure of a class the policy retries, as
//!   gRPC counts its retryable status codes), a successful one gives back `token_ratio`;
//!   retries go out only while the tokens are above half of `max_tokens`.
//! - `aws_standard` (the AWS SDKs' retry quota): a bucket of `capacity` tokens; a retry costs
//!   `retry_cost` (`timeout_cost` after a timeout, `throttle_cost` after a 429 where it is
//!   set) and is refused if the bucket cannot pay; a
//!   retry that succeeds refunds its cost, and a first attempt that succeeds adds
//!   `success_credit`.
//! - `ratio` (Finagle `RetryBudget`, tower `TpsBudget`): over the last `ttl`, retries may number
//!   `percent` of the first attempts plus a reserve of `min_per_second` · ttl.
//! - `adaptive` (the adaptive retry bucket of published token-bucket-versus-breaker studies): a
//!   bucket of `size` tokens, full at the start, gains `deposit` on every first try (or every
//!   success); a retry goes out while it holds more than one token, and takes one.
//! - `failure_ratio` (the "retry breaker" of the same studies): retries go out while the
//!   failed attempts so far, retries included, are at most `ratio` of the first tries. It never
//!   resets and never stops a first try.

use std::collections::VecDeque;

use super::RetryOn;
use crate::model::FailureClass;
use crate::time::Tick;

/// A budget's kind and settings, as a policy configures it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BudgetRule {
    TokenBucket {
        max_tokens: f64,
        token_ratio: f64,
        /// The failures that take a token; `None`: every failure.
        debits: Option<RetryOn>,
    },
    AwsStandard {
        capacity: f64,
        retry_cost: f64,
        timeout_cost: f64,
        /// After a 429; `None`: `retry_cost`.
        throttle_cost: Option<f64>,
        success_credit: f64,
    },
    Ratio {
        ttl: Tick,
        min_per_second: f64,
        percent: f64,
    },
    Adaptive {
        size: f64,
        deposit: f64,
        /// Deposits on a success rather than on a first try.
        on_success: bool,
    },
    FailureRatio {
        ratio: f64,
    },
}

impl BudgetRule {
    pub fn name(&self) -> &'static str {
        match self {
            BudgetRule::TokenBucket { .. } => "token_bucket",
            BudgetRule::AwsStandard { .. } => "aws_standard",
            BudgetRule::Ratio { .. } => "ratio",
            BudgetRule::Adaptive { .. } => "adaptive",
            BudgetRule::FailureRatio { .. } => "failure_ratio",
        }
    }
}

/// One budget in a run.
#[derive(Clone, Debug)]
pub struct RetryBudget {
    rule: BudgetRule,
    tokens: f64,
    /// First attempts and retries sent in the last `ttl`, for a ratio.
    firsts: VecDeque<Tick>,
    retries: VecDeque<Tick>,
    /// First tries and failed attempts since the start, for a failure ratio.
    first_tries: u64,
    failures: u64,
}

impl RetryBudget {
    pub fn new(rule: BudgetRule) -> Self {
        let tokens = match rule {
            BudgetRule::TokenBucket { max_tokens, .. } => max_tokens,
            BudgetRule::AwsStandard { capacity, .. } => capacity,
            BudgetRule::Adaptive { size, .. } => size,
            BudgetRule::Ratio { .. } | BudgetRule::FailureRatio { .. } => 0.0,
        };
        RetryBudget {
            rule,
            tokens,
            firsts: VecDeque::new(),
            retries: VecDeque::new(),
            first_tries: 0,
            failures: 0,
        }
    }

    /// The tokens a bucket holds; `None` for a ratio, which holds none.
    pub fn tokens(&self) -> Option<f64> {
        match self.rule {
            BudgetRule::Ratio { .. } | BudgetRule::FailureRatio { .. } => None,
            _ => Some(self.tokens),
        }
    }

    /// A first attempt goes out at `now`.
    pub fn first_attempt(&mut self, now: Tick) {
        match self.rule {
            BudgetRule::Ratio { .. } => self.firsts.push_back(now),
            BudgetRule::Adaptive {
                size,
                deposit,
                on_success: false,
            } => self.tokens = (self.tokens + deposit).min(size),
            BudgetRule::FailureRatio { .. } => self.first_tries += 1,
            _ => {}
        }
    }

    /// An attempt's outcome reached the client: `retry` if it was not the first, with the cost
    /// the budget took for it.
    pub fn outcome(&mut self, failure: Option<FailureClass>, retry_cost: Option<f64>) {
        match self.rule {
            BudgetRule::TokenBucket {
                max_tokens,
                token_ratio,
                debits,
            } => {
                self.tokens = match failure {
                    Some(class) if debits.is_none_or(|d| d.contains(class)) => {
                        (self.tokens - 1.0).max(0.0)
                    }
                    Some(_) => self.tokens,
                    None => (self.tokens + token_ratio).min(max_tokens),
                };
            }
            BudgetRule::AwsStandard {
                capacity,
                success_credit,
                ..
            } => {
                let refund = match (failure, retry_cost) {
                    (None, Some(cost)) => cost,
                    (None, None) => success_credit,
                    (Some(_), _) => 0.0,
                };
                self.tokens = (self.tokens + refund).min(capacity);
            }
            BudgetRule::Adaptive {
                size,
                deposit,
                on_success: true,
            } if failure.is_none() => self.tokens = (self.tokens + deposit).min(size),
            BudgetRule::FailureRatio { .. } if failure.is_some() => self.failures += 1,
            BudgetRule::Ratio { .. }
            | BudgetRule::Adaptive { .. }
            | BudgetRule::FailureRatio { .. } => {}
        }
    }

    /// Whether a retry after a failure of `class` may go out at `now`; if so, the cost it takes.
    pub fn withdraw(&mut self, now: Tick, class: FailureClass) -> Option<f64> {
        match self.rule {
            BudgetRule::TokenBucket { max_tokens, .. } => {
                (self.tokens > max_tokens / 2.0).then_some(0.0)
            }
            BudgetRule::AwsStandard {
                retry_cost,
                timeout_cost,
                throttle_cost,
                ..
            } => {
                let cost = match class {
                    FailureClass::Timeout => timeout_cost,
                    FailureClass::Throttled => throttle_cost.unwrap_or(retry_cost),
                    _ => retry_cost,
                };
                (self.tokens >= cost).then(|| {
                    self.tokens -= cost;
                    cost
                })
            }
            BudgetRule::Ratio {
                ttl,
                min_per_second,
                percent,
            } => {
                for sent in [&mut self.firsts, &mut self.retries] {
                    while sent.front().is_some_and(|&t| now.since(t) >= ttl) {
                        sent.pop_front();
                    }
                }
                let seconds = ttl.seconds();
                let allowed = percent * self.firsts.len() as f64 + min_per_second * seconds;
                ((self.retries.len() + 1) as f64 <= allowed).then(|| {
                    self.retries.push_back(now);
                    0.0
                })
            }
            BudgetRule::Adaptive { .. } => (self.tokens > 1.0).then(|| {
                self.tokens -= 1.0;
                1.0
            }),
            BudgetRule::FailureRatio { ratio } => {
                (self.failures as f64 <= ratio * self.first_tries as f64).then_some(0.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TICKS_PER_SECOND;

    const FAIL: Option<FailureClass> = Some(FailureClass::ServerError);

    #[test]
    fn a_token_bucket_retries_while_above_half() {
        let mut b = RetryBudget::new(BudgetRule::TokenBucket {
            max_tokens: 10.0,
            token_ratio: 0.1,
            debits: None,
        });
        // Failures take the tokens 10 → 6: every retry still allowed.
        for _ in 0..4 {
            b.outcome(FAIL, None);
            assert!(b.withdraw(Tick(0), FailureClass::ServerError).is_some());
        }
        b.outcome(FAIL, None);
        assert!(
            b.withdraw(Tick(0), FailureClass::ServerError).is_none(),
            "5 is not above 5"
        );
        for _ in 0..10 {
            b.outcome(None, None);
        }
        assert!(
            b.withdraw(Tick(0), FailureClass::ServerError).is_some(),
            "6 after 10 successes"
        );
    }

    /// gRPC counts only the failures it would retry: a 403 the policy does not retry leaves the
    /// bucket as it was, a 5xx it retries takes a token.
    #[test]
    fn a_grpc_bucket_can_count_only_what_is_retried() {
        let retried: RetryOn = [FailureClass::ServerError].into_iter().collect();
        let mut b = RetryBudget::new(BudgetRule::TokenBucket {
            max_tokens: 10.0,
            token_ratio: 0.1,
            debits: Some(retried),
        });
        b.outcome(Some(FailureClass::Forbidden), None);
        assert_eq!(b.tokens, 10.0);
        b.outcome(FAIL, None);
        assert_eq!(b.tokens, 9.0);
    }

    /// Five tokens, full: four retries take it to one, which is not more than one; five first
    /// tries deposit half a token, which buys one retry and no more.
    #[test]
    fn the_adaptive_bucket_retries_while_above_one_and_refills_on_first_tries() {
        let mut b = RetryBudget::new(BudgetRule::Adaptive {
            size: 5.0,
            deposit: 0.1,
            on_success: false,
        });
        let retry = |b: &mut RetryBudget| b.withdraw(Tick(0), FailureClass::ServerError);
        for _ in 0..4 {
            assert_eq!(retry(&mut b), Some(1.0));
        }
        assert_eq!(retry(&mut b), None);
        (0..5).for_each(|_| b.first_attempt(Tick(0)));
        assert!(retry(&mut b).is_some());
        assert_eq!(retry(&mut b), None);
        // Deposits stop at the size.
        (0..1000).for_each(|_| b.first_attempt(Tick(0)));
        assert_eq!(b.tokens(), Some(5.0));
    }

    /// Retries go while failures are at most a tenth of the first tries, and the count never
    /// resets.
    #[test]
    fn the_failure_ratio_blocks_retries_once_failures_pass_the_ratio() {
        let mut b = RetryBudget::new(BudgetRule::FailureRatio { ratio: 0.1 });
        let retry = |b: &mut RetryBudget| b.withdraw(Tick(0), FailureClass::ServerError);
        (0..20).for_each(|_| b.first_attempt(Tick(0)));
        b.outcome(FAIL, None);
        b.outcome(FAIL, None);
        assert!(retry(&mut b).is_some(), "2 of 20");
        b.outcome(FAIL, None);
        assert!(retry(&mut b).is_none(), "3 of 20");
        (0..10).for_each(|_| b.first_attempt(Tick(0)));
        assert!(retry(&mut b).is_some(), "3 of 30");
        assert_eq!(b.tokens(), None);
    }

    #[test]
    fn the_aws_quota_charges_timeouts_more_and_refunds_successful_retries() {
        let mut b = RetryBudget::new(BudgetRule::AwsStandard {
            capacity: 12.0,
            retry_cost: 5.0,
            timeout_cost: 10.0,
            throttle_cost: None,
            success_credit: 1.0,
        });
        assert_eq!(b.withdraw(Tick(0), FailureClass::Timeout), Some(10.0));
        assert_eq!(
            b.withdraw(Tick(0), FailureClass::ServerError),
            None,
            "2 left"
        );
        b.outcome(None, Some(10.0));
        assert_eq!(b.withdraw(Tick(0), FailureClass::ServerError), Some(5.0));
        b.outcome(None, None);
        b.outcome(None, None);
        assert_eq!(b.tokens, 9.0, "12 − 5 + 1 + 1");
    }

    /// botocore's current costs: 14 for a retry, 5 after a throttle. A 429 without a cost of
    /// its own pays the retry's.
    #[test]
    fn a_throttle_can_cost_its_own() {
        let rule = |throttle_cost| BudgetRule::AwsStandard {
            capacity: 500.0,
            retry_cost: 14.0,
            timeout_cost: 14.0,
            throttle_cost,
            success_credit: 1.0,
        };
        let mut b = RetryBudget::new(rule(Some(5.0)));
        assert_eq!(b.withdraw(Tick(0), FailureClass::Throttled), Some(5.0));
        assert_eq!(b.withdraw(Tick(0), FailureClass::ServerError), Some(14.0));
        assert_eq!(b.tokens, 481.0);
        let mut b = RetryBudget::new(rule(None));
        assert_eq!(b.withdraw(Tick(0), FailureClass::Throttled), Some(14.0));
    }

    #[test]
    fn a_ratio_allows_a_share_of_recent_first_attempts_and_a_reserve() {
        let mut b = RetryBudget::new(BudgetRule::Ratio {
            ttl: Tick(10 * TICKS_PER_SECOND),
            min_per_second: 0.1,
            percent: 0.2,
        });
        // The reserve alone: 0.1/s over 10 s is one retry.
        assert!(b.withdraw(Tick(0), FailureClass::Reset).is_some());
        assert!(b.withdraw(Tick(1), FailureClass::Reset).is_none());
        for t in 0..10 {
            b.first_attempt(Tick(t));
        }
        assert!(
            b.withdraw(Tick(2), FailureClass::Reset).is_some(),
            "1 + 20 % of 10 = 3"
        );
        assert!(b.withdraw(Tick(3), FailureClass::Reset).is_some());
        assert!(b.withdraw(Tick(4), FailureClass::Reset).is_none());
        let later = Tick(11 * TICKS_PER_SECOND);
        assert!(
            b.withdraw(later, FailureClass::Reset).is_some(),
            "the window has moved on"
        );
    }
}
