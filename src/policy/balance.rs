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
//!   `choice_count = 2`);
//! - `peak_ewma`: two drawn as `power_of_two` does, the one of lower cost: its peak-sensitive
//!   moving average of round trips times (its requests in flight + 1), as Finagle's and
//!   Linkerd's balancers weigh a host. A round trip above the average replaces it at once (the
//!   peak); one below pulls it down with weight 1 − e^(−Δt/τ), Δt the time since the last
//!   sample and τ the decay time (`peak_ewma_decay`, 10 s by default, Finagle's and Linkerd's).
//!   A replica not yet measured costs the default round trip (30 ms, Linkerd's) times its load;
//! - `by_key`: the replica the call's key hashes to, every attempt of it: a sharded store or a
//!   cell-based service, where a key lives on one shard and nowhere else. The key is a word of
//!   the call's own stream ([`shard_of`]), so one call meets one shard in every configuration.
//!   A shard is not a host to route around: neither another replica for a retry nor outlier
//!   ejection goes with it (validation refuses both).
//!
//! A balancer picks among the replicas a pick may take: those not ejected by outlier detection
//! ([`Ejection`], Envoy's consecutive-5xx detection), and of those the ones a retry's host rule
//! leaves ([`RetryHost`]); where the rule leaves none, any not ejected; where every replica is
//! ejected, any (Envoy's panic mode).

use crate::model::FailureClass;
use crate::time::Tick;
use crate::variate::integer_in;

/// Which replica a retry may go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryHost {
    /// Whichever the balancer picks.
    Any,
    /// One this intent has not sent to yet (Envoy's `previous_hosts` retry predicate).
    Other,
    /// The first attempt's again (a sticky session).
    Same,
}

impl RetryHost {
    pub const ALL: [RetryHost; 3] = [RetryHost::Any, RetryHost::Other, RetryHost::Same];

    pub fn name(self) -> &'static str {
        match self {
            RetryHost::Any => "any",
            RetryHost::Other => "other",
            RetryHost::Same => "same",
        }
    }

    /// Whether an attempt may go to `replica`, the intent having sent to the replicas in the
    /// bit set `tried` and its first attempt to `first` (none yet for a first attempt).
    pub fn allows(self, replica: usize, tried: u128, first: Option<usize>) -> bool {
        match (self, first) {
            (_, None) | (RetryHost::Any, _) => true,
            (RetryHost::Other, _) => tried & (1 << replica) == 0,
            (RetryHost::Same, Some(f)) => replica == f,
        }
    }
}

/// Outlier ejection, with Envoy's names and defaults: after `consecutive_5xx` failures in a row
/// (a 5xx, a 503, a reset, a failed connection or a timeout: what Envoy's router counts as
/// 5xx), a replica is ejected for `base_ejection_time` × the times it has been ejected, at most
/// `max_ejection_time`; at most `max_ejection_percent` % of the replicas are out at once, and
/// always at least one may be. Any other answer ends a run of failures. Envoy returns an
/// ejected host at its next `interval` sweep; here it returns the moment its time is up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ejection {
    pub consecutive_5xx: u32,
    pub base_ejection_time: Tick,
    pub max_ejection_time: Tick,
    pub max_ejection_percent: f64,
}

impl Default for Ejection {
    /// Envoy's defaults: 5 in a row, 30 s, at most 300 s, at most 10 %.
    fn default() -> Self {
        Ejection {
            consecutive_5xx: 5,
            base_ejection_time: Tick::from_secs(30),
            max_ejection_time: Tick::from_secs(300),
            max_ejection_percent: 10.0,
        }
    }
}

impl Ejection {
    /// Whether an attempt that ended in `failure` (none: a receipt) is a failure to outlier
    /// detection: what Envoy's router counts as a 5xx — one, a 503, a reset, a failed
    /// connection, a timeout.
    pub fn counts(failure: Option<FailureClass>) -> bool {
        matches!(
            failure,
            Some(
                FailureClass::ServerError
                    | FailureClass::Overloaded
                    | FailureClass::Reset
                    | FailureClass::Connect
                    | FailureClass::Timeout
                    | FailureClass::StreamBroken
            )
        )
    }

    /// The most of `replicas` out at once: the share, rounded down, but never less than one.
    pub fn most_out(&self, replicas: usize) -> usize {
        ((replicas as f64 * self.max_ejection_percent / 100.0).floor() as usize).max(1)
    }
}

/// What outlier detection holds on one replica.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Host {
    /// Failures in a row, since its last other answer or ejection.
    failures: u32,
    /// Out until then.
    ejected_until: Tick,
    /// Times it has been ejected.
    ejections: u32,
}

/// How a client picks a tool's replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balancer {
    RoundRobin,
    Random,
    LeastOutstanding,
    PowerOfTwo,
    /// Two choices by peak-EWMA cost, the moving average decaying over this time (τ).
    PeakEwma(Tick),
    /// The shard the call's key hashes to.
    ByKey,
}

/// Peak EWMA's decay time unless a policy sets one: Finagle's and Linkerd's 10 s.
pub const PEAK_EWMA_DECAY: Tick = Tick::from_secs(10);
/// The round trip peak EWMA assumes of a replica it has not measured: Linkerd's 30 ms.
const DEFAULT_RTT: Tick = Tick::from_millis(30);

impl Balancer {
    pub const ALL: [Balancer; 6] = [
        Balancer::RoundRobin,
        Balancer::Random,
        Balancer::LeastOutstanding,
        Balancer::PowerOfTwo,
        Balancer::PeakEwma(PEAK_EWMA_DECAY),
        Balancer::ByKey,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Balancer::RoundRobin => "round_robin",
            Balancer::Random => "random",
            Balancer::LeastOutstanding => "least_outstanding",
            Balancer::PowerOfTwo => "power_of_two",
            Balancer::PeakEwma(_) => "peak_ewma",
            Balancer::ByKey => "by_key",
        }
    }

    /// Whether a pick reads random words.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Balancer::Random | Balancer::PowerOfTwo | Balancer::PeakEwma(_)
        )
    }
}

/// The shard of `replicas` a call whose key word is `key` belongs to: the word mapped onto
/// `0 … replicas − 1` without a modulo's bias.
pub fn shard_of(key: u64, replicas: usize) -> usize {
    integer_in(key, 0, replicas as u64 - 1) as usize
}

/// A replica's peak-sensitive moving average of round trips, in ticks, and when it last took a
/// sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ewma {
    rtt: f64,
    at: Tick,
    measured: bool,
}

impl Ewma {
    /// Takes a round trip `rtt` seen at `now`, the average decaying over `decay`.
    fn sample(&mut self, rtt: Tick, now: Tick, decay: Tick) {
        let rtt = rtt.0 as f64;
        if !self.measured || rtt > self.rtt {
            self.rtt = rtt;
        } else {
            let elapsed = now.0.saturating_sub(self.at.0) as f64;
            let keep = libm::exp(-elapsed / decay.0.max(1) as f64);
            self.rtt = self.rtt * keep + rtt * (1.0 - keep);
        }
        (self.at, self.measured) = (now, true);
    }

    /// The cost of one more request to a replica with `outstanding` in flight.
    fn cost(&self, outstanding: u32) -> f64 {
        let rtt = if self.measured {
            self.rtt
        } else {
            DEFAULT_RTT.0 as f64
        };
        rtt * f64::from(outstanding + 1)
    }
}

/// What one balancer knows of one tool's replicas.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The replica the round-robin order comes to next.
    next: usize,
    /// Requests sent to each replica whose end the client has not yet seen.
    outstanding: Vec<u32>,
    /// Outlier detection's state of each replica.
    hosts: Vec<Host>,
    /// Each replica's round trips as peak EWMA weighs them (untouched under the other rules).
    ewma: Vec<Ewma>,
}

impl View {
    /// A view of `replicas` replicas, nothing sent yet.
    pub fn new(replicas: usize) -> Self {
        View {
            next: 0,
            outstanding: vec![0; replicas],
            hosts: vec![Host::default(); replicas],
            ewma: vec![Ewma::default(); replicas],
        }
    }

    /// Whether `replica` is ejected at `now`.
    pub fn ejected(&self, replica: usize, now: Tick) -> bool {
        now < self.hosts[replica].ejected_until
    }

    /// The replica the next request goes to under `balancer` at `now`, among those `rule`
    /// allows (see the module doc for the fall-backs); `words` the two random words a random
    /// rule may read, or under `by_key` the call's key word first (its shard, whatever the
    /// rule and ejection say: validation lets neither stand beside it).
    pub fn pick(
        &mut self,
        balancer: Balancer,
        now: Tick,
        rule: impl Fn(usize) -> bool,
        words: [u64; 2],
    ) -> usize {
        let n = self.outstanding.len();
        // In round-robin order from the cursor, so the order-keeping rules read it as is.
        // In index order: the random rules draw by index, whatever the cursor.
        let up: Vec<usize> = (0..n).filter(|&r| !self.ejected(r, now)).collect();
        let allowed: Vec<usize> = up.iter().copied().filter(|&r| rule(r)).collect();
        let among = match (allowed.is_empty(), up.is_empty()) {
            (false, _) => allowed,
            (true, false) => up,
            (true, true) => (0..n).collect(),
        };
        let last = among.len() as u64 - 1;
        // How far past the cursor a replica stands: the round-robin order.
        let turn = |r: usize| (r + n - self.next) % n;
        let picked = match balancer {
            Balancer::RoundRobin => *among
                .iter()
                .min_by_key(|&&r| turn(r))
                .expect("a pick has a replica to take"),
            Balancer::Random => among[integer_in(words[0], 0, last) as usize],
            Balancer::LeastOutstanding => *among
                .iter()
                .min_by_key(|&&r| (self.outstanding[r], turn(r)))
                .expect("a pick has a replica to take"),
            Balancer::PowerOfTwo | Balancer::PeakEwma(_) if among.len() == 1 => among[0],
            Balancer::PowerOfTwo | Balancer::PeakEwma(_) => {
                let first = integer_in(words[0], 0, last) as usize;
                // The second among the other ones, so the two differ.
                let other = integer_in(words[1], 0, last - 1) as usize;
                let second = if other >= first { other + 1 } else { other };
                let (a, b) = (among[first], among[second]);
                let lighter = match balancer {
                    Balancer::PeakEwma(_) => {
                        let cost = |r: usize| self.ewma[r].cost(self.outstanding[r]);
                        cost(b) < cost(a)
                    }
                    _ => self.outstanding[b] < self.outstanding[a],
                };
                if lighter { b } else { a }
            }
            Balancer::ByKey => shard_of(words[0], n),
        };
        self.next = (picked + 1) % n;
        picked
    }

    /// The client saw how a request to `replica` ended at `now`: `failed` as outlier detection
    /// counts failures. Whether the replica was ejected for it.
    pub fn observe(&mut self, replica: usize, now: Tick, failed: bool, rule: &Ejection) -> bool {
        let n = self.hosts.len();
        let out = (0..n).filter(|&r| self.ejected(r, now)).count();
        let host = &mut self.hosts[replica];
        if !failed {
            host.failures = 0;
            return false;
        }
        host.failures += 1;
        let eject = host.failures >= rule.consecutive_5xx
            && now >= host.ejected_until
            && out < rule.most_out(n);
        if eject {
            host.ejections += 1;
            host.failures = 0;
            let time = rule
                .base_ejection_time
                .0
                .saturating_mul(u64::from(host.ejections));
            host.ejected_until = now.after(Tick(time.min(rule.max_ejection_time.0)));
        }
        eject
    }

    /// A request went to `replica`.
    pub fn sent(&mut self, replica: usize) {
        self.outstanding[replica] += 1;
    }

    /// The client saw the end of a request to `replica`: a reply, a timeout, a cancellation.
    pub fn settled(&mut self, replica: usize) {
        self.outstanding[replica] -= 1;
    }

    /// The client saw a request to `replica` end at `now`, `rtt` after it was sent: peak EWMA
    /// takes it as a sample (the other rules read no round trips).
    pub fn timed(&mut self, balancer: Balancer, replica: usize, rtt: Tick, now: Tick) {
        if let Balancer::PeakEwma(decay) = balancer {
            self.ewma[replica].sample(rtt, now, decay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_takes_each_in_turn() {
        let mut view = View::new(3);
        let picks: Vec<usize> = (0..7)
            .map(|_| view.pick(Balancer::RoundRobin, Tick::ZERO, |_| true, [0, 0]))
            .collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn least_outstanding_takes_the_emptiest_and_breaks_ties_in_turn() {
        let mut view = View::new(3);
        view.sent(0);
        view.sent(0);
        view.sent(1);
        assert_eq!(
            view.pick(Balancer::LeastOutstanding, Tick::ZERO, |_| true, [0, 0]),
            2
        );
        view.sent(2);
        view.settled(0);
        view.settled(0);
        // 0, 1 and 2 now hold 0, 1, 1: the emptiest.
        assert_eq!(
            view.pick(Balancer::LeastOutstanding, Tick::ZERO, |_| true, [0, 0]),
            0
        );
        view.settled(1);
        view.settled(2);
        // All empty: the round-robin order, from after the last pick.
        assert_eq!(
            view.pick(Balancer::LeastOutstanding, Tick::ZERO, |_| true, [0, 0]),
            1
        );
    }

    /// Peak EWMA keeps the cheaper of two: a replica measured slow costs more than a fast
    /// one with a request in flight; a peak replaces the average at once, and a fast sample
    /// pulls it back down by 1 − e^(−Δt/τ).
    #[test]
    fn peak_ewma_weighs_round_trips_and_load() {
        let decay = Tick::from_secs(10);
        let ewma = Balancer::PeakEwma(decay);
        let mut view = View::new(2);
        view.timed(ewma, 0, Tick::from_millis(20), Tick::from_secs(1));
        view.timed(ewma, 1, Tick::from_millis(200), Tick::from_secs(1));
        view.sent(0);
        // 20 ms × 2 in flight against 200 ms × 1: replica 0, whichever is drawn first.
        for words in [[0, 0], [u64::MAX, 0]] {
            assert_eq!(view.pick(ewma, Tick::from_secs(1), |_| true, words), 0);
        }
        // A peak: 300 ms replaces 20 ms at once.
        view.timed(ewma, 0, Tick::from_millis(300), Tick::from_secs(2));
        assert_eq!(view.ewma[0].rtt, 300_000.0);
        // τ later a 100 ms sample keeps e^−1 of the average: 100 + 200·e^−1 ms.
        view.timed(ewma, 0, Tick::from_millis(100), Tick::from_secs(12));
        let expected = 100_000.0 + 200_000.0 * (-1f64).exp();
        assert!(
            (view.ewma[0].rtt - expected).abs() < 1e-6,
            "{}",
            view.ewma[0].rtt
        );
        // Another rule takes no samples.
        view.timed(
            Balancer::PowerOfTwo,
            1,
            Tick::from_millis(1),
            Tick::from_secs(13),
        );
        assert_eq!(view.ewma[1].rtt, 200_000.0);
        // Unmeasured, a replica costs the default 30 ms round trip times its load.
        assert_eq!(View::new(1).ewma[0].cost(1), 60_000.0);
    }

    #[test]
    fn power_of_two_draws_two_distinct_and_keeps_the_lighter() {
        let mut view = View::new(4);
        for _ in 0..5 {
            view.sent(3);
        }
        // The top word draws the last replica, 3; the second word, from the other three.
        assert_eq!(
            view.pick(Balancer::PowerOfTwo, Tick::ZERO, |_| true, [u64::MAX, 0]),
            0
        );
        assert_eq!(
            view.pick(
                Balancer::PowerOfTwo,
                Tick::ZERO,
                |_| true,
                [u64::MAX, u64::MAX]
            ),
            2
        );
        // Two equally loaded: the first drawn (0, then 3 − 1 = 2 of the others, which is 3:
        // the loaded one, so 0 stays).
        assert_eq!(
            view.pick(Balancer::PowerOfTwo, Tick::ZERO, |_| true, [0, u64::MAX]),
            0
        );
        // The same word twice still names two replicas: never the loaded 3 over an empty one.
        for w in [0, u64::MAX / 3, u64::MAX / 2, u64::MAX] {
            assert_ne!(
                view.pick(Balancer::PowerOfTwo, Tick::ZERO, |_| true, [w, w]),
                3
            );
        }
    }

    /// A keyed pick is the key's shard, the same at every attempt whatever the view holds:
    /// the rule, the load and the round-robin cursor change nothing. Keys spread over every
    /// shard, each word range of width 2⁶⁴/8 to one shard.
    #[test]
    fn a_keyed_pick_is_the_keys_shard() {
        let mut view = View::new(8);
        for k in 0..8u64 {
            let key = k * (u64::MAX / 8) + 7;
            assert_eq!(shard_of(key, 8), k as usize);
            for _ in 0..3 {
                let picked = view.pick(Balancer::ByKey, Tick::ZERO, |r| r != k as usize, [key, 0]);
                assert_eq!(picked, k as usize);
                view.sent(picked);
            }
        }
        assert_eq!(shard_of(u64::MAX, 8), 7);
        assert_eq!(shard_of(u64::MAX, 1), 0);
    }

    #[test]
    fn random_spreads_over_every_replica() {
        let mut view = View::new(5);
        let mut seen = [false; 5];
        for k in 0..5u64 {
            seen[view.pick(
                Balancer::Random,
                Tick::ZERO,
                |_| true,
                [k * (u64::MAX / 5) + 1, 0],
            )] = true;
        }
        assert_eq!(seen, [true; 5]);
    }

    #[test]
    fn a_pick_takes_what_the_rule_allows_then_what_is_up_then_anything() {
        let mut view = View::new(3);
        let now = Tick::ZERO;
        // Only replica 2 allowed: round robin goes there whatever its cursor.
        assert_eq!(view.pick(Balancer::RoundRobin, now, |r| r == 2, [0, 0]), 2);
        // Nothing allowed: any replica, in turn.
        assert_eq!(view.pick(Balancer::RoundRobin, now, |_| false, [0, 0]), 0);
        let rule = Ejection {
            consecutive_5xx: 2,
            max_ejection_percent: 50.0,
            ..Ejection::default()
        };
        assert!(!view.observe(1, now, true, &rule));
        assert!(view.observe(1, now, true, &rule));
        assert!(view.ejected(1, now) && !view.ejected(1, Tick::from_secs(30)));
        // Replica 1 is out: never picked while another is up, by any balancer that routes
        // around a replica (a keyed one goes to the key's shard, and no ejection stands beside
        // it).
        for balancer in Balancer::ALL.into_iter().filter(|&b| b != Balancer::ByKey) {
            for k in 0..6u64 {
                let words = [k * (u64::MAX / 6), u64::MAX - k];
                assert_ne!(
                    view.pick(balancer, now, |_| true, words),
                    1,
                    "{}",
                    balancer.name()
                );
            }
        }
        // At most one of three is out at 50 %: a second replica failing stays in.
        assert!(!view.observe(0, now, true, &rule));
        assert!(!view.observe(0, now, true, &rule));
        assert!(!view.ejected(0, now));
    }

    #[test]
    fn an_ejection_lasts_longer_each_time_up_to_the_most() {
        let mut view = View::new(2);
        let rule = Ejection {
            consecutive_5xx: 1,
            base_ejection_time: Tick::from_secs(30),
            max_ejection_time: Tick::from_secs(70),
            max_ejection_percent: 10.0,
        };
        let mut now = Tick::ZERO;
        let mut lengths = Vec::new();
        for _ in 0..3 {
            assert!(view.observe(0, now, true, &rule));
            let back = (0..)
                .map(Tick::from_secs)
                .find(|&t| !view.ejected(0, t))
                .unwrap();
            lengths.push(back.since(now).0 / 1_000_000);
            now = back;
        }
        // 30 s, 60 s, then 90 s cut to the most, 70 s; 10 % of two still lets one go.
        assert_eq!(lengths, [30, 60, 70]);
        // A success ends a run of failures.
        let mut view = View::new(2);
        let twice = Ejection {
            consecutive_5xx: 2,
            ..rule
        };
        assert!(!view.observe(0, now, true, &twice));
        assert!(!view.observe(0, now, false, &twice));
        assert!(!view.observe(0, now, true, &twice));
    }

    #[test]
    fn a_retry_host_rule_reads_the_intents_own_attempts() {
        let tried = 0b0101;
        assert!(RetryHost::Other.allows(1, tried, Some(0)));
        assert!(!RetryHost::Other.allows(2, tried, Some(0)));
        assert!(RetryHost::Same.allows(0, tried, Some(0)));
        assert!(!RetryHost::Same.allows(1, tried, Some(0)));
        // A first attempt goes anywhere.
        assert!(RetryHost::Same.allows(1, 0, None) && RetryHost::Other.allows(2, 0, None));
    }

    /// The acceptance properties, over long random runs of picks and answers: no pick takes an
    /// ejected replica while one is up; never more than the share is out; a retry under `other`
    /// never goes back to a replica its intent tried while an untried one is up.
    #[test]
    fn ejection_and_host_rules_hold_over_random_runs() {
        let mut word = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            word ^= word << 13;
            word ^= word >> 7;
            word ^= word << 17;
            word
        };
        let rule = Ejection {
            consecutive_5xx: 2,
            base_ejection_time: Tick(50),
            max_ejection_time: Tick(400),
            max_ejection_percent: 40.0,
        };
        // A keyed balancer stands beside neither rule (validation refuses both).
        for balancer in Balancer::ALL.into_iter().filter(|&b| b != Balancer::ByKey) {
            let n = 6;
            let mut view = View::new(n);
            let mut now = Tick::ZERO;
            let (mut tried, mut first) = (0u128, None);
            for step in 0..20_000 {
                now = now.after(Tick(next() % 7));
                if step % 4 == 0 {
                    (tried, first) = (0, None);
                }
                let allows = |r: usize| RetryHost::Other.allows(r, tried, first);
                let up: Vec<usize> = (0..n).filter(|&r| !view.ejected(r, now)).collect();
                let r = view.pick(balancer, now, allows, [next(), next()]);
                if !up.is_empty() {
                    assert!(
                        !view.ejected(r, now),
                        "{} picked an ejected replica",
                        balancer.name()
                    );
                }
                if up.iter().any(|&u| allows(u)) {
                    assert!(
                        allows(r),
                        "{} went back to a tried replica",
                        balancer.name()
                    );
                }
                view.sent(r);
                tried |= 1 << r;
                first.get_or_insert(r);
                view.settled(r);
                // Replicas 0 and 1 fail always, the rest one time in five.
                let failed = r < 2 || next() % 5 == 0;
                view.observe(r, now, failed, &rule);
                let out = (0..n).filter(|&r| view.ejected(r, now)).count();
                assert!(out <= rule.most_out(n), "{out} out of {n}");
            }
        }
    }
}
