//! Contention on a versioned record (`configs/jitter-contention*.toml`): the properties of
//! read-modify-write, where the version is checked, and the relations between the jitter
//! formulas the published simulator found, at every client count from 50 up.

use std::collections::BTreeMap;
use std::path::Path;

use retrysim::metrics::Status;

use crate::common::{self, experiment, shipped};

/// Every client ends with exactly one success and one effect; a conflict never commits; and
/// the commits are as many as the successes, so the record's version counts them.
#[test]
fn every_client_writes_once_and_no_conflict_commits() {
    let mut exp = shipped("jitter-contention.toml");
    exp.workload.tasks = Some(30);
    exp.workload.clients = 30;
    for policy in 0..exp.policies.len() {
        let traced = common::traced(&exp, policy);
        assert_eq!(traced.len(), 30);
        let mut commits = 0;
        for (record, attempts) in &traced {
            assert_eq!((record.status, record.effects), (Status::Succeeded, 1));
            assert_eq!(record.writes as usize, attempts.len());
            for a in attempts {
                assert!(!(a.committed && a.outcome.name() == "conflict_version"));
                commits += u32::from(a.committed);
            }
            let conflicts = attempts
                .iter()
                .filter(|a| a.outcome.name() == "conflict_version")
                .count();
            assert_eq!(conflicts + 1, attempts.len(), "all but the last conflicted");
        }
        assert_eq!(commits, 30);
    }
}

/// Two writes read the same version and reach the record together, each 10 ticks of work.
/// Checked on arrival, the second is refused at once; checked at commit, both are taken up
/// and the second loses only when its work is done, 10 ticks later; under a lock, the second
/// finds the first holding it and is refused at once.
#[test]
fn the_version_is_checked_where_the_tool_says() {
    let conflict_at = |check: &str| {
        let exp = experiment(&format!(
            "name = \"v\"\n[workload]\ntasks = 2\nclients = 2\n[[tool]]\nname = \"r\"\n\
             kind = \"record\"\nversion_check = \"{check}\"\n\
             request_latency = {{ dist = \"constant\", value = 1 }}\n\
             service_time = {{ dist = \"constant\", value = 10 }}\n\
             reply_latency = {{ dist = \"constant\", value = 1 }}\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 1\n"
        ));
        let traced = common::traced(&exp, 0);
        let lost: Vec<u64> = traced
            .iter()
            .flat_map(|(_, attempts)| attempts)
            .filter(|a| a.outcome.name() == "conflict_version")
            .map(|a| a.end.0)
            .collect();
        assert_eq!(lost.len(), 1, "{check}");
        lost[0]
    };
    // Read 0→1→2, write 2→3: refused at 3, heard at 4; or taken up, lost at 13, heard at 14.
    assert_eq!(conflict_at("arrival"), 4);
    assert_eq!(conflict_at("commit"), 14);
    assert_eq!(conflict_at("lock"), 4);
}

/// The shipped sweep's relations at every client count from 50 up, read from its committed
/// output (which the golden test holds to the code): no backoff finishes soonest and does the
/// most work; exponential backoff without jitter is by far the slowest; full and equal jitter
/// do the least work; decorrelated jitter sits between on work.
#[test]
fn jitter_does_the_least_work_and_lock_step_backoff_takes_longest() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("out/jitter-contention-sweep/summary.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (clients, policy) = (at("workload.clients"), at("policy"));
    let (work, makespan) = (at("work_per_client"), at("makespan_s"));
    let mut points: BTreeMap<u32, BTreeMap<String, (f64, f64)>> = BTreeMap::new();
    for row in reader.records() {
        let row = row.unwrap();
        let n: u32 = row[clients].parse().unwrap();
        let value = |i: usize| row[i].parse::<f64>().unwrap();
        (points.entry(n).or_default()).insert(row[policy].into(), (value(work), value(makespan)));
    }
    assert_eq!(points.len(), 20);
    for (n, p) in points.range(50..) {
        let (none, exp, equal, full, decorrelated) = (
            p["none"],
            p["exponential"],
            p["equal"],
            p["full"],
            p["decorrelated"],
        );
        let label = format!("{n} clients: {p:?}");
        let others = [exp, equal, full, decorrelated];
        assert!(
            others.iter().all(|o| none.1 < o.1 && none.0 > o.0),
            "{label}"
        );
        let jittered = [none, equal, full, decorrelated];
        assert!(jittered.iter().all(|o| exp.1 > 5.0 * o.1), "{label}");
        let least = equal.0.max(full.0);
        assert!(
            least < decorrelated.0 && decorrelated.0 < exp.0.min(none.0),
            "{label}"
        );
    }
}
