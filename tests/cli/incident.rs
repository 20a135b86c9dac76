//! A recorded incident as a config replays it: `arrival = "recorded"` starts the tasks at the
//! times a file lists, and a tool's `health` gives each stretch of time the faults and the
//! slowness the trace showed, whatever policy sends into it. Bad files and keys are refused
//! where they are bad.

use std::fs;

use crate::binary::{retrysim, text};

/// A config replaying `arrivals` (the `at` column's rows) at a tool whose health is `health`
/// (a CSV), written in a folder of its own with its data.
fn incident(arrivals: &str, health: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("data")).unwrap();
    fs::write(
        dir.path().join("data/arrivals.csv"),
        format!("at\n{arrivals}"),
    )
    .unwrap();
    fs::write(dir.path().join("data/health.csv"), health).unwrap();
    let config = format!(
        "name = \"incident\"\n[workload]\narrival = \"recorded\"\narrivals = \"data/arrivals.csv\"\n\
         clients = 100\n[[tool]]\nname = \"t\"\nhealth = \"data/health.csv\"\n\
         service_time = {{ dist = \"constant\", value = \"10ms\" }}\n{extra}\n\
         [[policy]]\nname = \"p\"\nmax_attempts = 3\n\
         backoff = {{ kind = \"exponential\", initial_delay = \"400ms\", jitter = \"none\" }}\n"
    );
    fs::write(dir.path().join("c.toml"), config).unwrap();
    dir
}

/// Five arrivals replayed when the file says, in its order whatever the rows' (the file is
/// sorted); a tool healthy for its first second, failing every call with a 5xx three times as
/// slow in the next, and healthy again after: the calls that arrive in the bad second fail and
/// retry, 400 ms later still in it, 800 ms after that out of it; the others succeed at once.
/// The closed forms stand aside, and the replay is the same bytes when run again.
#[test]
fn a_recorded_incident_replays_its_arrivals_and_its_stretches() {
    let health = "from,calls,server_error,latency\n0s,10,0,1\n1s,10,1,3\n2s,10,0,1\n";
    let dir = incident("3s\n0s\n0.5s\n1s\n1.2s\n", health, "");
    let run = retrysim(&["run", "c.toml", "--out", "o", "--attempts"], dir.path());
    assert!(run.status.success(), "{}", text(&run.stderr));
    let attempts = fs::read_to_string(dir.path().join("o/incident/attempts.csv")).unwrap();
    let rows: Vec<(String, String, String)> = (attempts.lines().skip(1))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[3].to_string(), f[6].to_string(), f[9].to_string())
        })
        .collect();
    let row = |intent: &str, dispatch: u64, outcome: &str| {
        (
            intent.to_string(),
            dispatch.to_string(),
            outcome.to_string(),
        )
    };
    assert_eq!(
        rows,
        [
            row("0", 0, "ok"),
            row("1", 500_000, "ok"),
            row("2", 1_000_000, "5xx"),
            row("2", 1_432_000, "5xx"),
            row("2", 2_264_000, "ok"),
            row("3", 1_200_000, "5xx"),
            row("3", 1_632_000, "5xx"),
            row("3", 2_464_000, "ok"),
            row("4", 3_000_000, "ok"),
        ]
    );
    let summary = fs::read_to_string(dir.path().join("o/incident/summary.csv")).unwrap();
    assert!(
        summary.lines().nth(1).unwrap().contains(",none,"),
        "{summary}"
    );
    let again = retrysim(&["run", "c.toml", "--out", "o2", "--attempts"], dir.path());
    assert!(again.status.success(), "{}", text(&again.stderr));
    let replayed = fs::read_to_string(dir.path().join("o2/incident/attempts.csv")).unwrap();
    assert_eq!(attempts, replayed);
}

/// What is wrong is refused with exit 2 where it is, and nothing is written.
#[test]
fn a_bad_incident_is_refused_where_it_is_bad() {
    let good = "from,server_error\n0s,0\n";
    let cases = [
        (
            "0s\n",
            "from,server_error\n0s,0.7\n1s,1.5\n",
            "",
            "data/health.csv:3: server_error: 1.5 is no probability",
        ),
        (
            "0s\n",
            "from,server_error,throttled\n0s,0.7,0.4\n",
            "",
            "the rates add up to more than 1",
        ),
        (
            "0s\n",
            "from,server_error\n1s,0\n",
            "",
            "the first stretch is from 0s",
        ),
        (
            "0s\n",
            "from,server_error\n0s,0\n0s,0\n",
            "",
            "not after the stretch before it",
        ),
        ("0s\n", "from,errors\n0s,0\n", "", "no column `errors`"),
        (
            "soon\n",
            good,
            "",
            "data/arrivals.csv:2: `soon` has no known unit",
        ),
        (
            "0s\n",
            good,
            "burst = { good = \"9s\", bad = \"1s\" }",
            "a recorded health beside a burst",
        ),
    ];
    for (arrivals, health, extra, said) in cases {
        let dir = incident(arrivals, health, extra);
        let run = retrysim(&["run", "c.toml", "--out", "o"], dir.path());
        assert_eq!(run.status.code(), Some(2), "{said}");
        assert!(
            text(&run.stderr).contains(said),
            "{said} in {}",
            text(&run.stderr)
        );
        assert!(!dir.path().join("o").exists());
    }
    let dir = incident("0s\n", good, "");
    let config = fs::read_to_string(dir.path().join("c.toml")).unwrap();
    let poisson = config.replace("arrival = \"recorded\"", "arrival = \"poisson\"");
    fs::write(dir.path().join("c.toml"), poisson).unwrap();
    let run = retrysim(&["run", "c.toml", "--out", "o"], dir.path());
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("replayed only where arrival = \"recorded\""));
}

/// An access log of ten minutes, a call every 100 ms: failing one call in fifty, and every
/// call from 200 s to 260 s (an outage); where `retried`, each failure is followed 50 ms later
/// by a resend (which fails during the outage).
fn outage_log(retried: bool) -> String {
    let mut rows = String::from("timestamp,operation,duration_ms,status,resend\n");
    for i in 0..6_000 {
        let t = i as f64 / 10.0;
        let down = (200.0..260.0).contains(&t);
        let failed = down || i % 50 == 0;
        let status = if failed { "503" } else { "200" };
        rows.push_str(&format!("{t:.2},pay,40,{status},false\n"));
        if failed && retried {
            let again = if down { "503" } else { "200" };
            rows.push_str(&format!("{:.2},pay,40,{again},true\n", t + 0.05));
        }
    }
    rows
}

/// `retrysim calibrate LOG --out cal --name NAME --incident`, then `more`, run in `dir`.
fn calibrate_incident(
    dir: &std::path::Path,
    (log, name): (&str, &str),
    more: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "calibrate",
        log,
        "--out",
        "cal",
        "--name",
        name,
        "--incident",
    ];
    args.extend_from_slice(more);
    retrysim(&args, dir)
}

/// `calibrate --incident` on the outage log of a client that tried once. It writes the
/// arrivals and a health whose stretches hold the outage, the config runs, and its
/// `as-observed` policy (one attempt, as the log's client made) fails, over five
/// replications of the 6 000 replayed calls, as often as the log did: 708 of 6 000, within
/// 3.29 binomial standard errors (each replayed call draws from its stretch's rate, whose
/// mean over the calls is the log's share). Its replay agrees with the log bin by bin; the log
/// of a client that resent its failures does not, and the report says a policy other than
/// the claimed one is the likely reason.
#[test]
fn a_trace_calibrated_as_an_incident_replays_its_failures() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("log.csv"), outage_log(false)).unwrap();
    let calibrate = |log: &str, name: &str| {
        let run = calibrate_incident(dir.path(), (log, name), &[]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        text(&run.stdout)
    };
    let said = calibrate("log.csv", "inc");
    assert!(said.contains("replay_agrees: yes"), "{said}");
    fs::write(dir.path().join("retried.csv"), outage_log(true)).unwrap();
    let said = calibrate("retried.csv", "re");
    assert!(said.contains("replay_agrees: no"), "{said}");
    let likely = "likely: a policy other than \"as-observed\"";
    assert!(
        said.contains(likely) && said.contains("(708 calls are resends)"),
        "{said}"
    );
    let config = fs::read_to_string(dir.path().join("cal/inc.toml")).unwrap();
    for line in [
        "arrival = \"recorded\"",
        "arrivals = \"data/inc/arrivals.csv\"",
        "health = \"data/inc/pay-health.csv\"",
    ] {
        assert!(config.contains(line), "{line} in\n{config}");
    }
    let arrivals = fs::read_to_string(dir.path().join("cal/data/inc/arrivals.csv")).unwrap();
    assert_eq!(arrivals.lines().count(), 1 + 6_000);
    let health = fs::read_to_string(dir.path().join("cal/data/inc/pay-health.csv")).unwrap();
    assert!(health.contains("\n200s,10,0,1,0,0,0,0,0,1\n"), "{health}");
    assert!(health.contains("\n259s,10,0,1,0,0,0,0,0,1\n"), "{health}");
    assert!(health.contains("\n260s,10,0,0.1,0,0,0,0,0,1\n"), "{health}");
    let run = retrysim(
        &["run", "cal/inc.toml", "--out", "o", "--quiet"],
        dir.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let summary = fs::read_to_string(dir.path().join("o/inc/summary.csv")).unwrap();
    let mut lines = summary.lines();
    let columns: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let row: Vec<&str> = (lines.find(|l| l.contains(",as-observed,")))
        .unwrap()
        .split(',')
        .collect();
    let failed = 1.0 - row[at("success_rate")].parse::<f64>().unwrap();
    let p = 708.0 / 6_000.0;
    let bound = 3.29 * (p * (1.0 - p) / 30_000.0_f64).sqrt();
    assert!(
        (failed - p).abs() <= bound,
        "{failed} against {p} ± {bound}"
    );
}

/// A policy claimed for the trace's client (`--claimed`, a file of one `[[policy]]`) is held
/// to the trace both ways: the client that resent each failure once, 10 ms after its answer,
/// replays as the claim of one resend after 10 ms says (`replay_agrees: yes`), and the claim
/// stands in the config as written; the client that never resent does not, and the likely
/// reason says the claimed policy sends attempts that client did not. A claim with a bad key
/// is refused at its own line with exit 2, and one without `--incident` too, before anything
/// is written.
#[test]
fn a_claimed_policy_is_held_to_the_trace_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("log.csv"), outage_log(false)).unwrap();
    fs::write(dir.path().join("retried.csv"), outage_log(true)).unwrap();
    let claim = "# the payment client\n[[policy]]\nname = \"resends-once\"\nmax_attempts = 2\n\
                 backoff = { kind = \"constant\", initial_delay = \"10ms\" }\n";
    fs::write(dir.path().join("claim.toml"), claim).unwrap();
    let calibrate = |log: &str, name: &str, claim: &str| {
        calibrate_incident(dir.path(), (log, name), &["--claimed", claim])
    };
    let run = calibrate("retried.csv", "re", "claim.toml");
    let said = text(&run.stdout);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        said.contains("replay_agrees: yes — \"resends-once\""),
        "{said}"
    );
    let config = fs::read_to_string(dir.path().join("cal/re.toml")).unwrap();
    assert!(config.contains(claim.trim_end()), "{config}");
    assert!(!config.contains("\"as-observed\""), "{config}");
    let run = calibrate("log.csv", "once", "claim.toml");
    let said = text(&run.stdout);
    assert!(said.contains("replay_agrees: no"), "{said}");
    let likely = "likely: a policy other than \"resends-once\": the claimed policy sends \
                  attempts the trace's client did not";
    assert!(said.contains(likely), "{said}");
    // Every bin is in replay.csv, each z recomputed from the counts beside it and held to the
    // bound recomputed from the rows; the bins outside it include the outage's, where the
    // claim resends every failure.
    let bins = fs::read_to_string(dir.path().join("cal/data/once/replay.csv")).unwrap();
    let mut rows = bins.lines();
    assert_eq!(
        rows.next(),
        Some("from_s,figure,trace,replay_mean,replay_sd,z,within")
    );
    let rows: Vec<&str> = rows.collect();
    // Within is |z| at most the two-sided 5 % point Bonferroni-corrected over every row.
    let normal = statrs::distribution::Normal::standard();
    let bound = statrs::distribution::ContinuousCDF::inverse_cdf(
        &normal,
        1.0 - 0.05 / (2.0 * rows.len() as f64),
    );
    let mut outside = Vec::new();
    for row in rows {
        let f: Vec<&str> = row.split(',').collect();
        let [trace, mean, sd]: [f64; 3] = [2, 3, 4].map(|i| f[i].parse().unwrap());
        let z: f64 = f[5].parse().unwrap();
        match sd {
            0.0 => assert_eq!(z.is_infinite(), trace != mean, "{row}"),
            // The spread is written to three decimals: z within what that rounding moves.
            sd => assert!(
                (z - (trace - mean) / sd).abs() < 0.01 + 0.001 * z.abs() / sd,
                "{row}"
            ),
        }
        assert_eq!(f[6] == "true", z.abs() <= bound, "{row} against {bound}");
        if f[6] == "false" {
            outside.push((f[0].parse::<f64>().unwrap(), f[1]));
        }
    }
    assert!(!outside.is_empty());
    assert!(
        (outside.iter())
            .any(|&(from, figure)| figure == "attempts" && (200.0..260.0).contains(&from)),
        "{outside:?}"
    );

    fs::write(
        dir.path().join("bad.toml"),
        "[[policy]]\nname = \"x\"\nretries = 2\n",
    )
    .unwrap();
    let run = calibrate("log.csv", "bad", "bad.toml");
    assert_eq!(run.status.code(), Some(2));
    assert!(
        text(&run.stderr).contains("bad.toml:3:1: policy[0].retries: unknown field"),
        "{}",
        text(&run.stderr)
    );
    assert!(!dir.path().join("cal/bad.toml").exists());
    assert!(!dir.path().join("cal/data/bad").exists());
    let alone = [
        "calibrate",
        "log.csv",
        "--out",
        "x",
        "--claimed",
        "claim.toml",
    ];
    let run = retrysim(&alone, dir.path());
    assert_eq!(run.status.code(), Some(2));
    assert!(!dir.path().join("x").exists());
}

/// The shipped incident is what `calibrate --incident` makes of the shipped trace, file for
/// file, and its replay of the client it saw agrees with the trace.
#[test]
fn the_shipped_incident_is_the_trace_calibrated() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tmp.path().to_str().unwrap();
    let args = [
        "calibrate",
        "configs/data/incident-trace.csv",
        "--out",
        out,
        "--name",
        "incident-recorded",
        "--incident",
    ];
    let run = retrysim(&args, root);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("replay_agrees: yes"),
        "{}",
        text(&run.stdout)
    );
    let configs = crate::binary::configs();
    assert_eq!(
        fs::read(tmp.path().join("incident-recorded.toml")).unwrap(),
        fs::read(configs.join("incident-recorded.toml")).unwrap(),
        "configs/incident-recorded.toml is not what calibrate writes: rerun the command in configs/incident-replay.toml"
    );
    assert_eq!(
        crate::binary::files(&tmp.path().join("data/incident-recorded")),
        crate::binary::files(&configs.join("data/incident-recorded"))
    );
}

/// `incident-replay`'s `tuned` is the policy `retrysim tune configs/tune-incident.toml` chose
/// on the same incident: the settings of `out/tune-incident/recommended.toml`'s policy (which
/// the golden test holds to what tune writes now), line for line.
#[test]
fn the_replays_tuned_policy_is_the_one_tune_chose() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| fs::read_to_string(root.join(path)).unwrap();
    let settings = |text: &str, name: &str| -> Vec<String> {
        let named = format!("[[policy]]\nname = \"{name}\"\n");
        let from = text
            .find(&named)
            .unwrap_or_else(|| panic!("no {name} in\n{text}"));
        let rest = &text[from + named.len()..];
        (rest.lines().take_while(|l| !l.trim().is_empty()))
            .map(str::to_string)
            .collect()
    };
    let chosen = settings(
        &read("out/tune-incident/recommended.toml"),
        "reliable-tuned",
    );
    assert!(chosen.len() >= 3, "{chosen:?}");
    assert_eq!(
        settings(&read("configs/incident-replay.toml"), "tuned"),
        chosen,
        "configs/incident-replay.toml's tuned is not what tune chose: copy the policy of out/tune-incident/recommended.toml"
    );
}
