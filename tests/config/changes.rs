//! `--seed`, `--set` and `--scan`: a config changed from the command line, validated like the
//! file, its errors placed on the flag, its name saying what changed.

use retrysim::config::{Change, Origin, Source};
use retrysim::sweep::Param;

const BASE: &str = r#"name = "c"
[workload]
tasks = 10
[[tool]]
name = "t"
reply_loss = 0.1
[[tool]]
name = "u"
[[policy]]
name = "p"
max_attempts = 3
[output]
charts = ["comparison"]
"#;

fn source(text: &str) -> Source {
    Source {
        name: "c.toml".into(),
        text: text.into(),
        origin: Origin::Text,
    }
}

fn set(flag: &str) -> Change {
    Change::Set(flag.into())
}

fn scan(flag: &str) -> Change {
    Change::Scan(flag.into())
}

/// The error `changes` make of `BASE`, as the user reads it.
fn refused(changes: &[Change]) -> String {
    match source(BASE).changed(changes) {
        Ok(s) => panic!("accepted: {changes:?} as {}", s.base.name),
        Err(e) => e.to_string(),
    }
}

fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} not in\n{message}");
    }
}

#[test]
fn a_set_changes_one_key_and_names_the_run_for_it() {
    let sweep = source(BASE)
        .changed(&[
            Change::Seed(7),
            set("tool.t.reply_loss=0.3"),
            set("workload.tasks=25"),
        ])
        .unwrap();
    let exp = &sweep.point(0).experiment;
    assert_eq!(exp.name, "c+seed=7+reply_loss=0.3+tasks=25");
    assert_eq!(sweep.base.name, exp.name);
    assert_eq!((exp.seed, exp.workload.tasks), (7, Some(25)));
    assert_eq!(exp.tools[0].faults.reply_loss, 0.3);
    assert_eq!(exp.tools[1].faults.reply_loss, 0.0, "tool u is untouched");
    assert_eq!(
        sweep.changes,
        [
            "--seed 7",
            "--set tool.t.reply_loss=0.3",
            "--set workload.tasks=25"
        ]
    );
    // Without changes, the config as written, under its own name.
    let plain = source(BASE).changed(&[]).unwrap();
    assert_eq!((plain.base.name.as_str(), plain.changes.len()), ("c", 0));
    // A value TOML cannot read is a string: durations need no quotes.
    let timed = source(BASE).changed(&[set("policy.p.timeout=2s")]).unwrap();
    assert_eq!(timed.base.name, "c+timeout=2s");
}

#[test]
fn a_scan_makes_a_one_axis_sweep() {
    let range = source(BASE)
        .changed(&[scan("tool.t.reply_loss=0:0.4:0.1")])
        .unwrap();
    assert_eq!(range.axes.len(), 1);
    assert_eq!(range.axes[0].path, "tool.t.reply_loss");
    let values: Vec<String> = range.axes[0].values.iter().map(Param::to_string).collect();
    assert_eq!(values, ["0", "0.1", "0.2", "0.3", "0.4"]);
    assert_eq!(range.base.name, "c+reply_loss=0_0.4_0.1");
    let list = source(BASE)
        .changed(&[scan("policy.p.max_attempts=1,2,5")])
        .unwrap();
    let attempts: Vec<String> = list.axes[0].values.iter().map(Param::to_string).collect();
    assert_eq!(attempts, ["1", "2", "5"]);
    assert_eq!(list.len(), 3);
}

#[test]
fn a_bad_value_is_placed_on_its_flag() {
    let e = refused(&[set("tool.t.reply_loss=1.5")]);
    assert_says(
        &e,
        &[
            "the command line (--set):1:19:",
            "reply_loss: 1.5 is not a probability",
            "1 | tool.t.reply_loss=1.5",
            "^^^",
            "allowed: a number from 0 to 1",
        ],
    );
    let e = refused(&[scan("tool.t.reply_loss=0:2:0.5")]);
    assert_says(
        &e,
        &["the command line (--scan):1:19:", "is not a probability"],
    );
}

#[test]
fn a_path_that_leads_nowhere_is_refused_at_the_path() {
    let cases: [(Change, &[&str]); 7] = [
        (
            set("tool.x.reply_loss=0.3"),
            &["(--set):1:1:", "no tool is named \"x\"", "\"t\", \"u\""],
        ),
        (
            set("tool.t.reply_lost=0.3"),
            &["(--set):1:1:", "unknown field `reply_lost`"],
        ),
        (
            set("reply_loss"),
            &["no `=` between key and value", "PATH=VALUE"],
        ),
        (set("=3"), &["\"\" is not a key path"]),
        (
            set("sweep.mode=zip"),
            &["`sweep.mode` cannot be changed here"],
        ),
        (set("name=other"), &["the name is made from the changes"]),
        (
            scan("seed=1,2"),
            &["(--scan)", "belongs to the whole experiment"],
        ),
    ];
    for (change, says) in cases {
        assert_says(&refused(std::slice::from_ref(&change)), says);
    }
    assert_says(
        &refused(&[scan("workload.tasks=")]),
        &["neither a range nor a list"],
    );
}

#[test]
fn a_swept_config_is_pinned_by_set_and_not_scanned_again() {
    let swept = format!(
        "{BASE}[sweep]\n[[sweep.axis]]\npath = \"tool.t.reply_loss\"\nvalues = [0.1, 0.2]\n"
    )
    .replace(
        "charts = [\"comparison\"]",
        "charts = [\"duplicate-curve\", \"comparison\"]",
    );
    let e = source(&swept)
        .changed(&[scan("workload.tasks=1,2")])
        .unwrap_err()
        .to_string();
    assert_says(
        &e,
        &[
            "the config already sweeps",
            "--set on each swept key pins it",
        ],
    );
    // Pinning the only swept key takes the axis away, and the chart that needed it.
    let pinned = source(&swept)
        .changed(&[set("tool.t.reply_loss=0.3")])
        .unwrap();
    assert!(pinned.axes.is_empty());
    assert_eq!(pinned.len(), 1);
    let charts: Vec<&str> = pinned.base.output.charts.iter().map(|c| c.name()).collect();
    assert_eq!(charts, ["comparison"]);
}

#[test]
fn the_files_own_mistakes_are_placed_in_the_file() {
    let broken = BASE.replace("reply_loss = 0.1", "reply_loss = 2");
    let e = source(&broken)
        .changed(&[set("workload.tasks=5")])
        .unwrap_err()
        .to_string();
    assert_says(&e, &["c.toml:6:", "2 is not a probability"]);
}

/// `--set output.charts=[]` asks for no chart, with a scan or without; only a list the changes
/// emptied (every chart named needing an axis that was pinned) gives way to the defaults.
#[test]
fn an_empty_chart_list_set_on_the_command_line_draws_none() {
    for changes in [
        vec![set("output.charts=[]")],
        vec![set("output.charts=[]"), scan("tool.t.reply_loss=0.1,0.2")],
    ] {
        let sweep = source(BASE).changed(&changes).unwrap();
        assert!(sweep.base.output.charts.is_empty(), "{changes:?}");
    }
    let scanned = source(BASE)
        .changed(&[scan("tool.t.reply_loss=0.1,0.2")])
        .unwrap();
    let charts: Vec<&str> = scanned
        .base
        .output
        .charts
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(charts, ["comparison"]);
}
