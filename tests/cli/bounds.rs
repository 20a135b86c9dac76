//! Every integer, every product and every count that sizes memory or work is bounded where it
//! is written: a valid-looking config is refused at its key, never a panic, an abort or a run
//! that cannot end; and what is measured is exact, never wrapped or cut without a word.

use std::fs;
use std::time::{Duration, Instant};

use crate::binary::{configs, retrysim, text};
use crate::refusals::{Case, GOOD, refused};

fn case(name: &'static str, config: String, args: &[&str], says: &[&'static str]) -> Case {
    let mut all = vec!["run".to_string(), "c.toml".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    Case {
        name,
        files: vec![("c.toml", config.into_bytes())],
        args: all,
        code: 2,
        says: says.to_vec(),
    }
}

fn good_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

/// A config whose tools `a`, `b` and `c` call one another as `calls` says.
fn services(calls: &str) -> String {
    format!(
        "name = \"g\"\n[workload]\ntasks = 1\ncalls = [\"a\"]\n[[tool]]\nname = \"a\"\n{calls}\n\
         [[tool]]\nname = \"b\"\ncalls = [{{ call = \"c\", times = 10000 }}]\n[[tool]]\nname = \"c\"\n\
         [[policy]]\nname = \"p\"\n"
    )
}

/// A chain of `n` services listed callee-first: each tool calls the one before it.
fn chain_backwards(n: usize) -> String {
    let mut text = format!(
        "name = \"chain\"\n[workload]\ntasks = 1\ncalls = [\"s{}\"]\n",
        n - 1
    );
    for i in 0..n {
        text.push_str(&format!("[[tool]]\nname = \"s{i}\"\n"));
        if i > 0 {
            text.push_str(&format!("calls = [\"s{}\"]\n", i - 1));
        }
    }
    text + "[[policy]]\nname = \"p\"\n"
}

/// A chain of `n` services, each calling the next.
fn chain(n: usize) -> String {
    let mut text = String::from("name = \"chain\"\n[workload]\ntasks = 1\ncalls = [\"s0\"]\n");
    for i in 0..n {
        text.push_str(&format!("[[tool]]\nname = \"s{i}\"\n"));
        if i + 1 < n {
            text.push_str(&format!("calls = [\"s{}\"]\n", i + 1));
        }
    }
    text + "[[policy]]\nname = \"p\"\n"
}

const BIG: &str = "18446744073709551615";

fn model(input: &str, extra: &str) -> String {
    format!(
        "name = \"m\"\n[workload]\ntasks = 1\n{extra}[[tool]]\nname = \"llm\"\nkind = \"model\"\n\
         model = {{ input_tokens = {input}, output_tokens = {{ dist = \"constant\", value = 10 }}, \
         max_tokens = 100, first_token = {{ dist = \"constant\", value = \"1ms\" }}, \
         tokens_per_second = 100 }}\nprice = {{ input_per_million = 1 }}\n[[policy]]\nname = \"p\"\n"
    )
}

fn cases() -> Vec<Case> {
    [integer_cases(), size_cases(), token_cases()]
        .into_iter()
        .flatten()
        .collect()
}

/// Integers past what TOML holds, in a file or on the command line.
fn integer_cases() -> Vec<Case> {
    let big_seed = good_with("seed = 1", &format!("seed = {BIG}"));
    vec![
        case(
            "a seed past TOML's integers",
            big_seed,
            &[],
            &[
                "c.toml:2:8: seed: 18446744073709551615 is outside the integers a config holds",
                "2⁶³ − 1",
            ],
        ),
        case(
            "a float key written as an integer past TOML's",
            good_with(
                "max_attempts = 3",
                &format!("max_attempts = 3\nbackoff = {{ multiplier = {BIG} }}"),
            ),
            &[],
            &["policy[0].backoff.multiplier: 18446744073709551615 is outside the integers"],
        ),
        case(
            "tasks past TOML's integers",
            good_with("tasks = 10", "tasks = 9223372036854775808"),
            &[],
            &["workload.tasks: 9223372036854775808 is outside the integers"],
        ),
        case(
            "--set seed past TOML's integers",
            GOOD.to_string(),
            &["--set", "seed=9223372036854775808"],
            &[
                "(--set)",
                "seed: 9223372036854775808 is outside the integers a config holds",
            ],
        ),
        case(
            "--seed past TOML's integers",
            GOOD.to_string(),
            &["--seed", "9223372036854775808"],
            &["9223372036854775808 is outside the integers a config holds"],
        ),
    ]
}

/// Counts that size memory or work past their bounds: replicas, callers, fan-outs, chains.
fn size_cases() -> Vec<Case> {
    vec![
        case(
            "a billion replicas",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nreplicas = 1000000000",
            ),
            &[],
            &[
                "tool[0].replicas: 1000000000 is more than a tool's most replicas",
                "1 to 128",
            ],
        ),
        case(
            "a billion replicas by --set",
            GOOD.to_string(),
            &["--set", "tool.charge.replicas=1000000000"],
            &["tool[0].replicas", "1 to 128"],
        ),
        case(
            "a billion callers",
            good_with("tasks = 10", "tasks = 10\ncallers = 1000000000"),
            &[],
            &["workload.callers: 1000000000 is more than", "1 to 100000"],
        ),
        case(
            "two stacked fan-outs",
            services("calls = [{ call = \"b\", times = 10000 }]"),
            &[],
            &[
                "tool[0].calls[0]",
                "more than 100000 calls below it",
                "multiply",
            ],
        ),
        case(
            "a fan-out at its bound, a hundred tasks at once",
            services("calls = [{ call = \"b\", times = 9 }]")
                .replace("tasks = 1\n", "tasks = 100\n"),
            &[],
            &[
                "workload.clients",
                "could hold",
                "calls in flight, more than the 1000000",
            ],
        ),
        case(
            "times past TOML's integers",
            services(&format!("calls = [{{ call = \"b\", times = {BIG} }}]")),
            &[],
            &["tool[0].calls[0].times: 18446744073709551615 is outside the integers"],
        ),
        case(
            "a chain of 200 services",
            chain(200),
            &[],
            &["a chain of more than 100 services"],
        ),
        case(
            "a chain of 200 services listed callee-first",
            chain_backwards(200),
            &[],
            &["a chain of more than 100 services"],
        ),
    ]
}

/// A model's token counts, an agent's turns and a price past what they allow.
fn token_cases() -> Vec<Case> {
    vec![
        case(
            "a token count past its bound",
            model("{ dist = \"constant\", value = 2000000000000 }", ""),
            &[],
            &[
                "tool[0].model.input_tokens.value",
                "2000000000000 tokens is more than a token count may be",
            ],
        ),
        case(
            "a negative token count",
            model("{ dist = \"constant\", value = -5 }", ""),
            &[],
            &["-5 is negative; token counts are zero or more"],
        ),
        case(
            "a reversed token range",
            model("{ dist = \"uniform\", min = 20, max = 10 }", ""),
            &[],
            &["max (10) is below min (20)"],
        ),
        case(
            "agent turns past 10 000",
            model(
                "{ dist = \"constant\", value = 100 }",
                "calls = [\"llm\"]\nagent = { turns = { dist = \"constant\", value = 20000 } }\n",
            ),
            &[],
            &[
                "workload.agent.turns",
                "a task of 20000 turns is more than the 10000",
            ],
        ),
        case(
            "agent turns without a most",
            model(
                "{ dist = \"constant\", value = 100 }",
                "calls = [\"llm\"]\nagent = { turns = { dist = \"exponential\", mean = 5 } }\n",
            ),
            &[],
            &["workload.agent.turns", "without a largest value"],
        ),
        case(
            "a price of 1e300",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nprice = { per_call = 1e300 }",
            ),
            &[],
            &["1e300 is not a price here", "from 0 to 1000000"],
        ),
    ]
}

#[test]
fn sizes_past_their_bounds_are_refused_at_their_key() {
    for c in &cases() {
        let tmp = tempfile::tempdir().unwrap();
        refused(c, tmp.path());
        let err = {
            let out = retrysim(
                &c.args.iter().map(String::as_str).collect::<Vec<_>>(),
                tmp.path(),
            );
            text(&out.stderr)
        };
        assert!(
            !err.contains(&"9".repeat(40)),
            "{}: a number printed whole: {err}",
            c.name
        );
    }
}

/// A bill past 2⁶⁴ picodollars ($1.8·10⁷) is summed exactly: thirty attempts at $1 000 000,
/// each a 5xx after the work (billed), are $3·10⁷, not a wrapped $1.16·10⁷.
#[test]
fn a_bill_past_two_to_the_64_picodollars_is_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let config = "name = \"dear\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n\
                  error_after_commit = 1.0\nprice = { per_call = 1000000 }\n\
                  [[policy]]\nname = \"p\"\nmax_attempts = 30\n";
    fs::write(tmp.path().join("c.toml"), config).unwrap();
    let out = retrysim(&["run", "c.toml", "--quiet"], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cost = column(&tmp.path().join("out/dear/summary.csv"), "cost_per_task");
    assert_eq!(cost.parse::<f64>().unwrap(), 3e7, "{cost}");
}

/// A prompt of 5·10⁹ tokens is counted whole, not cut at 2³² − 1.
#[test]
fn a_prompt_past_two_to_the_32_tokens_is_counted_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let config = model("{ dist = \"constant\", value = 5000000000 }", "");
    fs::write(tmp.path().join("c.toml"), config).unwrap();
    let out = retrysim(&["run", "c.toml", "--quiet"], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = tmp.path().join("out/m/summary.csv");
    let tokens = column(&summary, "input_tokens_per_task");
    assert_eq!(tokens.parse::<f64>().unwrap(), 5e9, "{tokens}");
    // $1 a million tokens: $5 000 for the prompt.
    assert_eq!(
        column(&summary, "cost_per_task").parse::<f64>().unwrap(),
        5000.0
    );
}

/// A column of a one-row summary.csv.
fn column(path: &std::path::Path, name: &str) -> String {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == name).unwrap();
    row[at].to_string()
}

/// A chain of 100 services is validated and run in well under a second a service: the walks
/// up and down the chain stay linear.
#[test]
fn a_chain_at_its_bound_runs_quickly() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("c.toml"), chain(100)).unwrap();
    let started = Instant::now();
    let out = retrysim(&["run", "c.toml", "--quiet"], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// `explore` bounds its work, schedules times a run's calls, before it walks one: a shipped
/// config of 20 000 tasks, and a billion tasks to four faults, are refused at once.
#[test]
fn explore_refuses_work_past_its_bound_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let real = configs().join("real-clients.toml");
    let layer = configs().join("reliability-layer.toml");
    for args in [
        vec!["explore", real.to_str().unwrap(), "--faults", "1"],
        vec![
            "explore",
            layer.to_str().unwrap(),
            "--faults",
            "4",
            "--set",
            "workload.tasks=1000000000",
        ],
    ] {
        let started = Instant::now();
        let out = retrysim(&args, tmp.path());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(
            err.contains("more than the 5e7 an exploration makes"),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(20), "{args:?}");
        assert!(!tmp.path().join("out").exists());
    }
}

/// `tune` checks every searched value before the search, and places a bad one at its key in
/// `[tune.search]`, not at the file's first line; a budget past its bound is refused.
#[test]
fn tune_checks_its_searched_values_before_it_searches() {
    let tmp = tempfile::tempdir().unwrap();
    let config = format!(
        "{GOOD}\n[tune]\nobjective = \"minimise attempts_per_intent\"\n\n[tune.search]\n\
         max_attempts = [2, 3]\ntimeout = [\"1s\", \"-2s\"]\n"
    );
    fs::write(tmp.path().join("c.toml"), &config).unwrap();
    let out = retrysim(&["tune", "c.toml", "--quiet"], tmp.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let line = config
        .lines()
        .position(|l| l.starts_with("timeout"))
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("c.toml:{line}:1: tune.search.timeout")),
        "{err}"
    );
    assert!(err.contains("the searched value -2s"), "{err}");
    assert!(!tmp.path().join("out").exists());
    // Keys are checked together: a first delay above the policy's own cap is fine beside a
    // searched cap above it.
    let together = format!(
        "{}\n[tune]\nobjective = \"minimise attempts_per_intent\"\nbudget = 4\nvalidation = 2\n\n\
         [tune.search]\n\"backoff.initial_delay\" = [\"4s\"]\n\"backoff.max_delay\" = [\"10s\"]\n",
        GOOD.replace(
            "max_attempts = 3",
            "max_attempts = 3\nbackoff = { initial_delay = \"100ms\", max_delay = \"2s\" }"
        )
    );
    fs::write(tmp.path().join("t.toml"), &together).unwrap();
    let out = retrysim(&["tune", "t.toml", "--quiet", "-o", "tuned"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let budget = config.replace("[tune.search]", "budget = 1000000000\n\n[tune.search]");
    fs::write(tmp.path().join("c.toml"), &budget).unwrap();
    let out = retrysim(&["tune", "c.toml", "--quiet"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("tune.budget"),
        "{}",
        text(&out.stderr)
    );
}

/// `serve --bind` on an address this machine does not have says so (it sends nothing).
#[test]
fn serve_on_an_address_not_on_this_machine_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = retrysim(&["serve", "--port", "0", "--bind", "192.0.2.1"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("192.0.2.1 is no address of this machine"),
        "{err}"
    );
}
