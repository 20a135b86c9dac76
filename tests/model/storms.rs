//! Servers that push back, over time: arrivals that follow a rate schedule, the time series
//! that watches them, and the retry storm of `configs/retry-storm.toml`.

use retrysim::metrics::{Count, Measure, Sample, SeriesStats};
use retrysim::model::{Arrival, RateSchedule};
use retrysim::run::PointResult;
use retrysim::time::{TICKS_PER_SECOND, Tick};

use crate::common::{self, shipped};

const S: u64 = TICKS_PER_SECOND;

/// A configuration's series and recovery, by name.
fn policy<'a>(
    exp: &retrysim::experiment::Experiment,
    result: &'a PointResult,
    name: &str,
) -> &'a retrysim::run::PolicyResult {
    let i = exp.policies.iter().position(|p| p.name == name).unwrap();
    &result.policies[i]
}

/// The count `c` at `tool` summed over the runs and the bins from `from` to `until` seconds.
fn total(stats: &SeriesStats, tool: usize, c: Count, from: u64, until: u64) -> f64 {
    let width = stats.width().0;
    ((from * S / width) as usize..(until * S / width) as usize)
        .map(|i| {
            let m = stats.count(tool, i, c);
            m.mean() * m.count() as f64
        })
        .sum()
}

/// The shipped storm: after the spike, retrying at once keeps the server down for good, while
/// no retries, backoff with jitter and a retry budget each bring goodput back within 10 s.
#[test]
fn a_retry_storm_outlives_its_spike_unless_retries_are_spread_or_budgeted() {
    let exp = shipped("retry-storm.toml");
    let result = common::run_one(exp.clone());
    let windows = exp.recovery_windows().expect("a spike, and time around it");
    assert_eq!(windows.trigger, (Tick(30 * S), Tick(35 * S)));
    for name in ["no-retry", "backoff-jitter", "retry-budget"] {
        let r = policy(&exp, &result, name).recovery.unwrap();
        let back = r.time_to_recover.unwrap_or(Tick::MAX);
        assert!(back <= Tick(10 * S), "{name}: {r:?}");
        assert!(r.before > 0.95, "{name}: {r:?}");
    }
    let storm = policy(&exp, &result, "retry-immediately");
    assert_eq!(storm.recovery.unwrap().time_to_recover, None);
    // Goodput under half the offered load in every 5 s from 15 s after the spike to the end
    // of arrivals: well over the 30 s the storm must last.
    let stats = storm.series.as_ref().unwrap();
    for from in (50..120).step_by(5) {
        let offered = total(stats, 0, Count::Offered, from, from + 5);
        let goodput = total(stats, 0, Count::Goodput, from, from + 5);
        assert!(goodput < 0.5 * offered, "{from} s: {goodput} of {offered}");
    }
}

/// Arrivals follow the schedule: the tasks offered in each stretch are a Poisson count with the
/// schedule's mean, inside four standard deviations (√mean) over the five replications.
#[test]
fn arrivals_follow_the_rate_schedule() {
    let exp = shipped("retry-storm.toml");
    let result = common::run_one(exp.clone());
    let stats = policy(&exp, &result, "no-retry").series.as_ref().unwrap();
    let runs = exp.replications as f64;
    for (from, until, rate) in [(0, 30, 50.0), (30, 35, 135.0), (35, 120, 50.0)] {
        let expected = runs * rate * (until - from) as f64;
        let got = total(stats, 0, Count::Offered, from, until);
        assert!(
            (got - expected).abs() < 4.0 * expected.sqrt(),
            "{from}–{until} s: {got} offered, {expected} expected"
        );
    }
    assert_eq!(total(stats, 0, Count::Offered, 120, 200), 0.0);
}

/// The series counts what the totals count, tool by tool: every attempt once as a first try
/// or a retry, every intent once as offered, every success once as goodput; and the default
/// experiment's calls to a tool that is down all fall inside its outage (20 s to 35 s).
#[test]
fn the_time_series_adds_up_to_the_totals() {
    for config in ["retry-storm.toml", "reliability-layer.toml"] {
        let exp = shipped(config);
        let result = common::run_one(exp.clone());
        for (policy, r) in exp.policies.iter().zip(&result.policies) {
            let stats = r.series.as_ref().unwrap();
            for t in 0..exp.tools.len() {
                let all = |c: Count| {
                    let bins = stats.len(t) as u64 * stats.width().0 / S;
                    total(stats, t, c, 0, bins)
                };
                let totals = r.tool_totals(t);
                let at = format!("{config}: {} at {}", policy.name, exp.tools[t].name);
                let calls = all(Count::FirstTry) + all(Count::Retry);
                assert_eq!(calls, totals.calls as f64, "{at}");
                assert_eq!(all(Count::Offered), totals.intents as f64, "{at}");
                assert_eq!(all(Count::Goodput), totals.successes as f64, "{at}");
                let down = all(Count::CallWhileDown);
                assert_eq!(down, totals.calls_while_down as f64, "{at}");
                let refused = all(Count::ShortCircuited);
                assert_eq!(refused, totals.short_circuited as f64, "{at}");
                let inside = total(stats, t, Count::CallWhileDown, 20, 35);
                assert_eq!(inside, down, "{at}");
            }
        }
    }
}

/// The shipped herd: jitter keeps the line short and finishes soonest; backoff without jitter
/// brings the whole herd back at once; no backoff hammers the tool while it is down and never
/// drains; a breaker per client keeps the line empty by failing every call.
#[test]
fn jitter_breaks_up_the_herd_that_backoff_alone_keeps_together() {
    let exp = shipped("thundering-herd.toml");
    let result = common::run_one(exp.clone());
    let get = |name: &str| policy(&exp, &result, name);
    let (none, exp_, jitter, breaker) = (
        get("no-backoff"),
        get("exponential"),
        get("full-jitter"),
        get("breaker-per-client"),
    );
    let peak = |r: &retrysim::run::PolicyResult| r.peak_queue.unwrap();
    assert!(peak(jitter) < 20.0 && peak(exp_) > 50.0 * peak(jitter));
    assert!(peak(none) > peak(exp_) && peak(breaker) == 0.0);
    let down = |r: &retrysim::run::PolicyResult| r.tool_totals(0).calls_while_down;
    assert!(down(none) > 10 * down(exp_) && down(breaker) < down(exp_));
    assert!(jitter.completion_p50 < exp_.completion_p50);
    assert!(jitter.completion_p99 < exp_.completion_p99);
    let success = |r: &retrysim::run::PolicyResult| r.estimate(Measure::Success).mean;
    assert_eq!((success(jitter), success(exp_)), (1.0, 1.0));
    assert!(success(none) < 0.5 && success(breaker) == 0.0);
}

/// The ramp: while the load is over capacity every configuration collapses, retries or not;
/// once it falls back, no retries and a retry budget come back, and retrying at once does not.
#[test]
fn on_a_ramp_everyone_collapses_over_capacity_and_retries_decide_the_way_back() {
    let exp = shipped("retry-storm-ramp.toml");
    let result = common::run_one(exp.clone());
    for p in &exp.policies {
        let stats = policy(&exp, &result, &p.name).series.as_ref().unwrap();
        let offered = total(stats, 0, Count::Offered, 80, 100);
        let goodput = total(stats, 0, Count::Goodput, 80, 100);
        assert!(
            goodput < 0.5 * offered,
            "{}: {goodput} of {offered}",
            p.name
        );
    }
    let back = |name: &str| {
        policy(&exp, &result, name)
            .recovery
            .unwrap()
            .time_to_recover
    };
    assert!(back("no-retry").is_some() && back("retry-budget").is_some());
    assert_eq!(back("retry-immediately"), None);
}

/// The metastability map at three of its corners: a short spike at full load and a long one at
/// 70 % leave both configurations unharmed; a long spike at full load keeps retrying at once
/// down for good, while the budget brings goodput back.
#[test]
fn a_long_spike_at_full_load_is_what_tips_retries_into_a_storm() {
    let at = |end: u64, scale: f64| {
        let mut exp = shipped("metastability-map.toml");
        let Arrival::Scheduled(schedule) = &exp.workload.arrival else {
            panic!("the map's arrivals follow a schedule");
        };
        let mut points = schedule.points().to_vec();
        points[2].at = Tick(end * S);
        exp.workload.arrival = Arrival::Scheduled(RateSchedule::new(points, scale));
        let result = common::run_one(exp.clone());
        let back = |name: &str| {
            policy(&exp, &result, name)
                .recovery
                .unwrap()
                .time_to_recover
        };
        (back("retry-immediately"), back("retry-budget"))
    };
    assert_eq!(at(31, 1.0), (Some(Tick::ZERO), Some(Tick::ZERO)));
    assert_eq!(at(40, 0.7), (Some(Tick::ZERO), Some(Tick::ZERO)));
    let (storm, budget) = at(40, 1.0);
    assert_eq!(storm, None);
    assert!(budget.is_some_and(|t| t <= Tick(20 * S)), "{budget:?}");
}

/// A storm is bimodal: each replication recovers or collapses, and the share that recovered is
/// counted run by run. Read independently from each run's own success rate (a collapsed run
/// serves under 60 % of its tasks, one that came back over 80 %: nothing falls between), the
/// count is the same, and the share's Wilson interval holds it.
#[test]
fn recovery_is_judged_in_each_replication_and_counted_across_them() {
    let exp = shipped("retry-storm.toml");
    let result = common::run_one(exp.clone());
    for (p, name) in exp.policies.iter().enumerate() {
        let runs: Vec<f64> = (0..exp.replications)
            .map(|replication| {
                let job = retrysim::sim::Job {
                    point: 0,
                    policy: p,
                    replication,
                };
                retrysim::sim::totals(&exp, job)
                    .totals
                    .get(Measure::Success)
                    .mean()
            })
            .collect();
        assert!(
            runs.iter().all(|&s| !(0.6..=0.8).contains(&s)),
            "{}: a run neither collapsed nor back: {runs:?}",
            name.name
        );
        let back = runs.iter().filter(|&&s| s > 0.8).count() as u64;
        let judged = policy(&exp, &result, &name.name)
            .recoveries
            .clone()
            .unwrap();
        assert_eq!(judged.replications, exp.replications, "{}", name.name);
        assert_eq!(judged.recovered(), back, "{}: {runs:?}", name.name);
        let (share, (lo, hi)) = judged.share();
        assert!(lo <= share && share <= hi, "{}", name.name);
    }
    let storm = policy(&exp, &result, "retry-immediately")
        .recoveries
        .clone()
        .unwrap();
    assert!(
        (1..exp.replications).contains(&storm.recovered()),
        "the storm collapses in some runs and not in others: {storm:?}"
    );
}
