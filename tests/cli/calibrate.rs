//! `retrysim calibrate`: the shipped config is what the command makes of the shipped trace,
//! its rates and latencies hold the generator's true parameters within sampling error, the
//! config it writes reproduces the trace when simulated, and a bad trace is refused where it
//! is bad, with nothing written.

use std::fs;
use std::path::Path;

use retrysim::calibrate::{self, Outcome};

use crate::binary::{configs, files, retrysim, text};

const TRACE: &str = "configs/data/synthetic-trace.jsonl";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_shipped_config_is_the_trace_calibrated() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let run = retrysim(&["calibrate", TRACE, "--out", out], root());
    assert!(run.status.success(), "{}", text(&run.stderr));
    let said = text(&run.stdout);
    assert!(
        said.contains("read 4369 client calls to 2 operations"),
        "{said}"
    );
    assert!(
        said.contains("387 spans of other kinds read past"),
        "{said}"
    );
    assert_eq!(
        fs::read(tmp.path().join("calibrated.toml")).unwrap(),
        fs::read(configs().join("calibrated.toml")).unwrap(),
        "configs/calibrated.toml is not what calibrate writes: rerun the command in docs/book/src/reference/commands.md"
    );
    assert_eq!(
        files(&tmp.path().join("data/calibrated")),
        files(&configs().join("data/calibrated"))
    );
}

/// `configs/data/synthetic-trace.py`'s parameters, each held within a 99.9 % interval of what
/// calibrate read: binomial for the shares, the sample median's for a lognormal's median.
#[test]
fn calibrated_rates_hold_the_generators_parameters() {
    let observed = calibrate::read(&root().join(TRACE), TRACE).unwrap();
    let z = 3.29;
    for (name, median, sigma, shares) in [
        (
            "POST /v1/charges",
            0.120,
            0.6,
            vec![
                (Outcome::ServerError, 0.03),
                (Outcome::Throttled, 0.02),
                (Outcome::Forbidden, 0.005),
                (Outcome::Invalid, 0.01),
                (Outcome::Timeout, 0.015),
            ],
        ),
        (
            "GET /v1/search",
            0.040,
            0.4,
            vec![(Outcome::ServerError, 0.01)],
        ),
    ] {
        let op = &observed.operations[name];
        let n = op.attempts() as f64;
        for (outcome, p) in shares {
            let bound = z * (p * (1.0 - p) / n).sqrt();
            let got = op.rate(outcome);
            assert!(
                (got - p).abs() <= bound,
                "{name} {outcome:?}: {got} vs {p} ± {bound}"
            );
        }
        // The sample median of a lognormal: ln m̂ ~ N(ln m, (π/2) σ² / n).
        let answered = op.latency.len() as f64;
        let got = op.latency.near(0.5).0 as f64 / 1e6;
        let bound = z * sigma * (std::f64::consts::FRAC_PI_2 / answered).sqrt();
        assert!(
            (got / median).ln().abs() <= bound,
            "{name} median {got} vs {median}"
        );
    }
    // The generator's charges arrive 4 a second, 8 from 300 s to 450 s: 3000 in all.
    let first = observed.operations["POST /v1/charges"].arrivals.total() as f64;
    assert!((first - 3000.0).abs() <= z * 3000f64.sqrt(), "{first}");
}

/// Simulated as observed, the calibrated tool ends its calls in the trace's shares.
#[test]
fn the_calibrated_tool_reproduces_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let args = [
        "run",
        "configs/calibrated.toml",
        "--out",
        out,
        "--set",
        "replications=20",
        "--quiet",
    ];
    let run = retrysim(&args, root());
    assert!(run.status.success(), "{}", text(&run.stderr));
    let observed = calibrate::read(&root().join(TRACE), TRACE).unwrap();
    let op = &observed.operations["POST /v1/charges"];
    let tools =
        fs::read_to_string(tmp.path().join("calibrated+replications=20/tools.csv")).unwrap();
    let mut lines = tools.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(row[1], "as-observed");
    let cell = |name: &str| -> f64 {
        row[header.iter().position(|h| *h == name).unwrap()]
            .parse()
            .unwrap()
    };
    let calls = cell("calls");
    for (column, outcomes) in [
        ("outcome_5xx", vec![Outcome::ServerError]),
        ("outcome_429", vec![Outcome::Throttled]),
        ("outcome_403", vec![Outcome::Forbidden]),
        ("outcome_4xx", vec![Outcome::Invalid]),
        ("outcome_timeout", vec![Outcome::Timeout]),
    ] {
        let p: f64 = outcomes.iter().map(|&o| op.rate(o)).sum();
        let got = cell(column) / calls;
        let bound = 3.29 * (p * (1.0 - p) / calls).sqrt();
        assert!((got - p).abs() <= bound, "{column}: {got} vs {p} ± {bound}");
    }
}

#[test]
fn an_access_log_is_read_by_its_header() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("access.csv");
    let mut rows = String::from("status,operation,timestamp,duration_ms,retry_after\n");
    for i in 0..200 {
        // Failures spread out, one every five calls: no burst to find.
        let status = match i % 20 {
            0 => "503",
            5 => "429",
            10 => "timeout",
            15 => "UNAVAILABLE",
            _ => "200",
        };
        let after = if status == "429" { "3" } else { "" };
        rows.push_str(&format!(
            "{status},checkout,2026-11-30T12:00:{:02}.{:03}Z,{},{after}\n",
            i / 4,
            (i % 4) * 250,
            50 + i % 7
        ));
    }
    fs::write(&log, rows).unwrap();
    let out = tmp.path().join("cal");
    let run = retrysim(
        &["calibrate", "access.csv", "--out", "cal", "--name", "shop"],
        tmp.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let config = fs::read_to_string(out.join("shop.toml")).unwrap();
    for line in [
        "server_error = 0.1\n",
        "throttled = 0.05\n",
        "retry_after = \"3s\"",
        "request_loss = 0.05",
        "loss_seen_as = \"silence\"",
        "{ at = \"0s\", per_second = 4 }",
        "file = \"data/shop/checkout.csv\"",
    ] {
        assert!(config.contains(line), "{line} not in\n{config}");
    }
    // The written config runs.
    let run = retrysim(
        &["run", "cal/shop.toml", "--out", "o", "--quiet"],
        tmp.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
}

/// An access log whose failures come in spells — a tool good for 20 s on average and bad for
/// 2 s, failing every call then, called 10 times a second for an hour (each spell and gap drawn
/// by a fixed generator) — is found bursty, and its tool written with the fitted spells: their
/// means lie near the true 20 s and 2 s and their chances of failing near 0 and 1 (the test
/// in `calibrate::burst` holds the intervals' coverage); the config runs. The same calls
/// failing one time in eleven, at even places, are independent and keep their flat rate.
#[test]
fn failures_in_bursts_are_found_and_fitted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut draw = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut bad, mut until) = (false, 0.0);
    let mut rows = String::from("timestamp,operation,duration_ms,status\n");
    for i in 0..36_000 {
        let t = i as f64 / 10.0;
        while t >= until {
            bad = !bad;
            until += -(1.0 - draw()).ln() * if bad { 2.0 } else { 20.0 };
        }
        let status = if bad { "503" } else { "200" };
        rows.push_str(&format!("{t:.1},search,40,{status}\n"));
    }
    fs::write(tmp.path().join("bursty.csv"), rows).unwrap();
    let run = retrysim(&["calibrate", "bursty.csv", "--out", "cal"], tmp.path());
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("in bursts (z "),
        "{}",
        text(&run.stdout)
    );
    let config = fs::read_to_string(tmp.path().join("cal/calibrated.toml")).unwrap();
    let line = (config.lines())
        .find(|l| l.starts_with("burst = "))
        .unwrap_or_else(|| panic!("no burst in\n{config}"));
    // Every bad spell's call failed, and no good spell's: the fitted chances are at or near
    // the ends of their range.
    let chance = |text: &str| -> f64 {
        let value = text.split("server_error = ").nth(1).unwrap();
        value.split([' ', '\n']).next().unwrap().parse().unwrap()
    };
    assert!(chance(line) >= 0.999, "{line}");
    let good = config.split("\n[[tool]]").nth(1).unwrap();
    assert!(
        !good.contains("\nserver_error = ") || chance(good) < 0.001,
        "{config}"
    );
    let seconds = |key: &str| -> f64 {
        let value = line.split(&format!("{key} = \"")).nth(1).unwrap();
        value.split('s').next().unwrap().parse().unwrap()
    };
    let (good, bad) = (seconds("good"), seconds("bad"));
    assert!(
        (15.0..25.0).contains(&good) && (1.5..2.5).contains(&bad),
        "{line}"
    );
    let run = retrysim(
        &["run", "cal/calibrated.toml", "--out", "o", "--quiet"],
        tmp.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));

    let mut rows = String::from("timestamp,operation,duration_ms,status\n");
    for i in 0..3_000 {
        let status = if i % 11 == 0 { "503" } else { "200" };
        rows.push_str(&format!("{:.1},search,40,{status}\n", i as f64 / 10.0));
    }
    fs::write(tmp.path().join("even.csv"), rows).unwrap();
    let run = retrysim(&["calibrate", "even.csv", "--out", "even"], tmp.path());
    assert!(
        text(&run.stdout).contains("independent (z "),
        "{}",
        text(&run.stdout)
    );
    let config = fs::read_to_string(tmp.path().join("even/calibrated.toml")).unwrap();
    assert!(config.contains("\nserver_error = 0.091") && !config.contains("burst = "));
}

/// A bad trace is refused with exit 2, its file and line (and JSON path) named, and nothing
/// written.
#[test]
fn a_bad_trace_is_refused_where_it_is_bad() {
    let span = r#"{"name":"op","kind":3,"startTimeUnixNano":"1000","endTimeUnixNano":"2000""#;
    let line = |s: &str| format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{s}]}}]}}]}}"#);
    let cases: Vec<(&str, String, &[&str])> = vec![
        (
            "t.jsonl",
            format!(
                "{}\n{{\"resourceSpans\":[{{\"scopeSpans\":[\n",
                line(&format!("{span}}}"))
            ),
            &["t.jsonl:2:", "EOF while parsing"],
        ),
        (
            "t.jsonl",
            format!(
                "{}\n",
                line(&span.replace(
                    "\"endTimeUnixNano\":\"2000\"",
                    "\"endTimeUnixNano\":\"500\"}"
                ))
            ),
            &[
                "t.jsonl:1:",
                "resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano",
                "before it starts",
            ],
        ),
        (
            "t.jsonl",
            format!(
                "{}\n",
                line(
                    &span
                        .replace(r#""name":"op""#, r#""name":7"#)
                        .replace("2000\"", "2000\"}")
                )
            ),
            &["t.jsonl:1:", "resourceSpans[0].scopeSpans[0].spans[0].name"],
        ),
        (
            "t.jsonl",
            format!(
                "{}\n",
                line(
                    &span
                        .replace("\"kind\":3", "\"kind\":2")
                        .replace("2000\"", "2000\"}")
                )
            ),
            &["t.jsonl: no client calls", "1 spans of other kinds"],
        ),
        (
            "a.csv",
            "timestamp,operation,duration\n1,op,5ms\n".into(),
            &["a.csv:1:", "no `status` column"],
        ),
        (
            "a.csv",
            "timestamp,operation,duration,status\n1,op,5ms,200\n2,op,5ms,OKAY\n".into(),
            &["a.csv:3:", "status: `OKAY`"],
        ),
        (
            "a.csv",
            "timestamp,operation,duration,status\n1,op,5,200\n".into(),
            &["a.csv:2:", "duration: `5` has no known unit"],
        ),
        (
            "a.csv",
            "timestamp,operation,duration,status\nyesterday,op,5ms,200\n".into(),
            &["a.csv:2:", "timestamp: `yesterday`"],
        ),
        (
            "a.csv",
            "timestamp,operation,duration,status,resend\n1,op,5ms,200,1\n".into(),
            &["a.csv: every call resends an earlier one"],
        ),
    ];
    for (file, body, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join(file), &body).unwrap();
        let run = retrysim(&["calibrate", file, "--out", "cal"], tmp.path());
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{body}\n{err}");
        for part in says {
            assert!(err.contains(part), "{part:?} not in {err}");
        }
        assert!(
            !tmp.path().join("cal").exists(),
            "{file}: something was written"
        );
    }
}

/// A trace the real OpenTelemetry Python SDK wrote (`tests/fixtures/otel-python/make.py`: the
/// requests and WSGI instrumentations against a flaky loopback server; its README gives the
/// schedule). `requests` names a refused connection and a dropped one alike
/// (`ConnectionError`): only the message's evidence (`NewConnectionError`,
/// `NameResolutionError`, `ConnectTimeoutError`) makes a call a failed connection, and only a
/// server span that completed tells a lost reply from a lost request. Both spellings of the
/// Retry-After header attribute are read; Python writes `retry_after`.
#[test]
fn a_real_sdk_trace_tells_lost_replies_from_lost_requests() {
    let dir = root().join("tests/fixtures/otel-python");
    // (file, calls, refused + connect timeouts + DNS failures, replies lost (completed at the
    // server: dropped after the work, and read timeouts), requests lost (dropped before the
    // work, and resets), 503s).
    let cases: [(&str, u64, u64, u64, u64, u64); 2] = [
        ("spans.jsonl", 200, 8 + 4 + 4, 20 + 4, 12 + 8, 30),
        ("spans-legacy.jsonl", 49, 2 + 1 + 1, 5 + 1, 3 + 2, 7),
    ];
    for (file, calls, connect, replies, requests, refusals) in cases {
        let path = dir.join(file);
        let observed = calibrate::read(&path, file).unwrap_or_else(|e| panic!("{e}"));
        let op = &observed.operations["GET"];
        assert_eq!(op.attempts(), calls, "{file}");
        assert_eq!(
            op.count(Outcome::Connect),
            connect,
            "{file}: failed connections"
        );
        assert_eq!(op.count(Outcome::ServerError), refusals, "{file}: 503s");
        assert_eq!(op.retry_after.len(), refusals, "{file}: Retry-After read");
        let u = observed.unanswered("GET").expect("server spans joined");
        assert_eq!(
            (u.replies_lost, u.requests_lost),
            (replies, requests),
            "{file}"
        );
    }
}
