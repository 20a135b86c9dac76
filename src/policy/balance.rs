//! Client-side load balancing: which replica of a tool an attempt goes to. A balancer sees only
//! what a real client-side balancer sees — the replicas, and the requests it has sent to each
//! and not yet seen settled — never the servers' own lines. Its view is one per tool for the
//! whole client pool (a sidecar proxy, a shared client), or one per caller where the policy's
//! `scope = "caller"`.
//!
//! The four rules, as published:
//! - `round_robin`: each replica in turn;
//! - `random`: one uniformly at random;
//! - `least_outstanding`: the one with the fewest requests in flight, ties to the next in the
//!   round-robin order (NGINX's `least_conn`);
//! - `power_of_two`: two distinct replicas at random, the one with fewer in flight, a tie to the
//!   first drawn (Mitzenmacher's two choices; Envoy's `LEAST_REQUEST` with its default
//!   `choice_count = 2`).

use crate::variate::integer_in;

/// How a client picks a tool's replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balancer {
    RoundRobin,
    Random,
    LeastOutstanding,
    PowerOfTwo,
}

impl Balancer {
    pub const ALL: [Balancer; 4] = [
        Balancer::RoundRobin,
        Balancer::Random,
        Balancer::LeastOutstanding,
        Balancer::PowerOfTwo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Balancer::RoundRobin => "round_robin",
            Balancer::Random => "random",
            Balancer::LeastOutstanding => "least_outstanding",
            Balancer::PowerOfTwo => "power_of_two",
        }
    }

    /// Whether a pick reads random words.
    pub fn is_random(self) -> bool {
        matches!(self, Balancer::Random | Balancer::PowerOfTwo)
    }
}

/// What one balancer knows of one tool's replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The replica the round-robin order comes to next.
    next: usize,
    /// Requests sent to each replica whose end the client has not yet seen.
    outstanding: Vec<u32>,
}

impl View {
    /// A view of `replicas` replicas, nothing sent yet.
    pub fn new(replicas: usize) -> Self {
        View {
            next: 0,
            outstanding: vec![0; replicas],
        }
    }

    /// The replica the next request goes to under `balancer`, `words` the two random words a
    /// random rule may read.
    pub fn pick(&mut self, balancer: Balancer, words: [u64; 2]) -> usize {
        let n = self.outstanding.len();
        let last = n as u64 - 1;
        let picked = match balancer {
            Balancer::RoundRobin => self.next,
            Balancer::Random => integer_in(words[0], 0, last) as usize,
            Balancer::LeastOutstanding => (0..n)
                .map(|k| (self.next + k) % n)
                .min_by_key(|&r| self.outstanding[r])
                .expect("a tool has a replica"),
            Balancer::PowerOfTwo if n == 1 => 0,
            Balancer::PowerOfTwo => {
                let first = integer_in(words[0], 0, last) as usize;
                // The second among the other n − 1, so the two differ.
                let other = integer_in(words[1], 0, last - 1) as usize;
                let second = if other >= first { other + 1 } else { other };
                match self.outstanding[second] < self.outstanding[first] {
                    true => second,
                    false => first,
                }
            }
        };
        self.next = (picked + 1) % n;
        picked
    }

    /// A request went to `replica`.
    pub fn sent(&mut self, replica: usize) {
        self.outstanding[replica] += 1;
    }

    /// The client saw the end of a request to `replica`: a reply, a timeout, a cancellation.
    pub fn settled(&mut self, replica: usize) {
        self.outstanding[replica] -= 1;
    }

    /// Requests in flight to `replica`, as the client counts them.
    pub fn outstanding(&self, replica: usize) -> u32 {
        self.outstanding[replica]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_takes_each_in_turn() {
        let mut view = View::new(3);
        let picks: Vec<usize> = (0..7)
            .map(|_| view.pick(Balancer::RoundRobin, [0, 0]))
            .collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn least_outstanding_takes_the_emptiest_and_breaks_ties_in_turn() {
        let mut view = View::new(3);
        view.sent(0);
        view.sent(0);
        view.sent(1);
        assert_eq!(view.pick(Balancer::LeastOutstanding, [0, 0]), 2);
        view.sent(2);
        view.settled(0);
        view.settled(0);
        // 0, 1 and 2 now hold 0, 1, 1: the emptiest.
        assert_eq!(view.pick(Balancer::LeastOutstanding, [0, 0]), 0);
        view.settled(1);
        view.settled(2);
        // All empty: the round-robin order, from after the last pick.
        assert_eq!(view.pick(Balancer::LeastOutstanding, [0, 0]), 1);
    }

    #[test]
    fn power_of_two_draws_two_distinct_and_keeps_the_lighter() {
        let mut view = View::new(4);
        for _ in 0..5 {
            view.sent(3);
        }
        // The top word draws the last replica, 3; the second word, from the other three.
        assert_eq!(view.pick(Balancer::PowerOfTwo, [u64::MAX, 0]), 0);
        assert_eq!(view.pick(Balancer::PowerOfTwo, [u64::MAX, u64::MAX]), 2);
        // Two equally loaded: the first drawn (0, then 3 − 1 = 2 of the others, which is 3:
        // the loaded one, so 0 stays).
        assert_eq!(view.pick(Balancer::PowerOfTwo, [0, u64::MAX]), 0);
        // The same word twice still names two replicas: never the loaded 3 over an empty one.
        for w in [0, u64::MAX / 3, u64::MAX / 2, u64::MAX] {
            assert_ne!(view.pick(Balancer::PowerOfTwo, [w, w]), 3);
        }
    }

    #[test]
    fn random_spreads_over_every_replica() {
        let mut view = View::new(5);
        let mut seen = [false; 5];
        for k in 0..5u64 {
            seen[view.pick(Balancer::Random, [k * (u64::MAX / 5) + 1, 0])] = true;
        }
        assert_eq!(seen, [true; 5]);
    }
}
