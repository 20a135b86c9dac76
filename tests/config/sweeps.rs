//! Sweeps read from a config: grids, zips, ranges, new keys, and errors placed at the path or
//! value at fault.

use crate::reading::{BASE, assert_says};
use retrysim::config::{Origin, Source};

/// The sweep `BASE` plus `sweep` expands to, or its error.
fn sweep(sweep: &str) -> Result<retrysim::sweep::Sweep, String> {
    Source {
        name: "c.toml".into(),
        text: format!("{BASE}[[tool]]\nname = \"u\"\n{sweep}"),
        origin: Origin::Text,
    }
    .sweep()
    .map_err(|e| e.to_string())
}

/// Each point's parameters, as the CSV would show them.
fn params(s: &retrysim::sweep::Sweep) -> Vec<Vec<String>> {
    s.points()
        .map(|p| p.params.iter().map(ToString::to_string).collect())
        .collect()
}

#[test]
fn a_grid_crosses_axes_with_the_last_varying_fastest() {
    let s = sweep(
        "[sweep]\n\
         [[sweep.axis]]\npath = \"tool.t.reply_loss\"\nvalues = [0.1, 0.2]\n\
         [[sweep.axis]]\npath = \"workload.clients\"\nvalues = [1, 5, 9]\n",
    )
    .unwrap();
    let want: Vec<Vec<&str>> = vec![
        vec!["0.1", "1"],
        vec!["0.1", "5"],
        vec!["0.1", "9"],
        vec!["0.2", "1"],
        vec!["0.2", "5"],
        vec!["0.2", "9"],
    ];
    assert_eq!(params(&s), want);
    let p = &s.point(4).experiment;
    assert_eq!(p.tools[0].faults.reply_loss, 0.2);
    assert_eq!(p.tools[1].faults.reply_loss, 0.0, "only the named tool");
    assert_eq!(p.workload.clients, 5);
    assert_eq!(
        s.base.workload.clients, 100,
        "the base is the config as written"
    );
}

#[test]
fn zipped_axes_pair_their_values_and_must_be_as_long() {
    let axes = "[[sweep.axis]]\npath = \"tool.request_loss\"\nvalues = [0.1, 0.2]\n\
                [[sweep.axis]]\npath = \"tool.reply_loss\"\nvalues = [0.3, 0.4]\n";
    let s = sweep(&format!("[sweep]\nmode = \"zip\"\n{axes}")).unwrap();
    assert_eq!(params(&s), vec![vec!["0.1", "0.3"], vec!["0.2", "0.4"]]);
    // Without a tool name the key is set on every tool.
    for t in &s.point(1).experiment.tools {
        assert_eq!((t.faults.request_loss, t.faults.reply_loss), (0.2, 0.4));
    }
    let e = sweep(&format!(
        "[sweep]\nmode = \"zip\"\n{}",
        axes.replace("[0.3, 0.4]", "[0.3]")
    ))
    .unwrap_err();
    assert_says(&e, &["sweep.axis[1]", "as many values", "has 2", "has 1"]);
}

#[test]
fn ranges_give_clean_decimals_durations_and_integers() {
    let range = |path: &str, start: &str, stop: &str, step: &str| {
        sweep(&format!(
            "[sweep]\n[[sweep.axis]]\npath = \"{path}\"\nstart = {start}\nstop = {stop}\nstep = {step}\n"
        ))
        .map(|s| params(&s).into_iter().map(|p| p[0].clone()).collect::<Vec<_>>())
    };
    assert_eq!(
        range("tool.t.reply_loss", "0.0", "0.5", "0.1").unwrap(),
        ["0", "0.1", "0.2", "0.3", "0.4", "0.5"]
    );
    assert_eq!(
        range("workload.tasks", "10", "40", "15").unwrap(),
        ["10", "25", "40"]
    );
    assert_eq!(
        range("horizon", "\"500ms\"", "\"2s\"", "\"500ms\"").unwrap(),
        ["500ms", "1s", "1.5s", "2s"]
    );
    let e = range("horizon", "\"1s\"", "2", "\"1s\"").unwrap_err();
    assert_says(&e, &["sweep.axis[0].stop", "one kind"]);
    let e = range("workload.tasks", "10", "5", "1").unwrap_err();
    assert_says(&e, &["sweep.axis[0].stop", "below start"]);
    let e = range("workload.tasks", "1", "5", "0").unwrap_err();
    assert_says(&e, &["sweep.axis[0].step", "more than 0"]);
}

#[test]
fn a_path_may_add_a_key_or_table_the_config_left_out() {
    let s = sweep(
        "[sweep]\n[[sweep.axis]]\npath = \"policy.p.backoff.initial_delay\"\nvalues = [\"1ms\", \"2ms\"]\n",
    )
    .unwrap();
    assert_eq!(
        s.point(1).experiment.policies[0].rule.backoff.initial_delay,
        retrysim::time::Tick(2_000)
    );
}

#[test]
fn bad_sweeps_point_at_the_path_or_value_at_fault() {
    let axis = |body: &str| sweep(&format!("[sweep]\n[[sweep.axis]]\n{body}\n")).unwrap_err();
    let e = axis("path = \"tool.t.reply_los\"\nvalues = [0.1]");
    assert_says(
        &e,
        &[
            "c.toml:12:8: sweep.axis[0].path",
            "unknown field `reply_los`",
            "reply_loss",
        ],
    );
    let e = axis("path = \"tool.t.reply_loss\"\nvalues = [0.1, 1.5]");
    assert_says(
        &e,
        &[
            "c.toml:13:16: sweep.axis[0]",
            "at tool.t.reply_loss = 1.5",
            "not a probability",
            "allowed: a number from 0 to 1",
        ],
    );
    let e = axis("path = \"workload.tasks\"\nvalues = [5, \"many\"]");
    assert_says(
        &e,
        &[
            "c.toml:13:14: sweep.axis[0]",
            "workload.tasks",
            "invalid type",
        ],
    );
    let e = axis("path = \"workload.tasks\"\nvalues = []");
    assert_says(&e, &["sweep.axis[0].values", "no points"]);
    let e = axis("path = \"seed\"\nvalues = [1, 2]");
    assert_says(&e, &["sweep.axis[0].path", "whole experiment"]);
    let e = axis("path = \"tool.t\"\nvalues = [1]");
    assert_says(&e, &["sweep.axis[0].path", "names a tool"]);
    let e = axis("path = \"workload.tasks\"");
    assert_says(&e, &["sweep.axis[0]", "has no values"]);
    let e = sweep("[sweep]\naxis = []\n").unwrap_err();
    assert_says(&e, &["sweep.axis", "no axis"]);
    let e = sweep(
        "[sweep]\nmode = \"cross\"\n[[sweep.axis]]\npath = \"workload.tasks\"\nvalues = [1]\n",
    )
    .unwrap_err();
    assert_says(&e, &["sweep.mode", "\"grid\", \"zip\""]);
    let e = sweep("[output]\ncharts = [\"grid\"]\n").unwrap_err();
    assert_says(
        &e,
        &["output.charts", "needs a sweep of 2 axes", "comparison"],
    );
}

/// A sweep keeps no point: each is made from the config when asked for, and what the command
/// line changes on the base (the seed, traces, the folder's name) reaches every one of them.
#[test]
fn points_are_made_with_the_bases_seed_name_and_traces() {
    let mut s = sweep(
        "[sweep]\n\
         [[sweep.axis]]\npath = \"tool.t.reply_loss\"\nvalues = [0.1, 0.2, 0.3]\n\
         [[sweep.axis]]\npath = \"workload.clients\"\nvalues = [1, 4]\n",
    )
    .unwrap();
    s.set_seed(99);
    s.trace(true, false);
    s.base.name = "renamed".into();
    assert_eq!(s.len(), 6);
    for (i, p) in s.points().enumerate() {
        assert_eq!(p.index, i);
        let e = &p.experiment;
        assert_eq!((e.seed, e.name.as_str()), (99, "renamed"));
        assert!(e.output.intents && !e.output.attempts);
        assert_eq!(p.params, s.params(i));
        assert_eq!(
            e.tools[0].faults.reply_loss.to_string(),
            p.params[0].to_string()
        );
    }
}

/// Every point compares the configurations the config names: a value may change what a
/// configuration does, never which there are or what it is called.
#[test]
fn a_value_that_changes_which_configurations_there_are_is_refused() {
    let e = sweep(
        "[sweep]\n[[sweep.axis]]\npath = \"policy\"\n\
         values = [[{ name = \"p\" }], [{ name = \"p\" }, { name = \"q\" }]]\n",
    )
    .unwrap_err();
    assert_says(
        &e,
        &[
            "sweep.axis[0]",
            "this point compares [p, q] where the config compares [p]",
            "every point compares the same configurations",
        ],
    );
    let e = sweep("[sweep]\n[[sweep.axis]]\npath = \"policy.p.name\"\nvalues = [\"p\", \"r\"]\n")
        .unwrap_err();
    assert_says(&e, &["compares [r] where the config compares [p]"]);
    // What a configuration does may change.
    sweep("[sweep]\n[[sweep.axis]]\npath = \"policy.p.max_attempts\"\nvalues = [1, 3]\n").unwrap();
}
