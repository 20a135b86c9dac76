//! Changed runs through the binary: they write beside the config's own output, never over it;
//! `check` and `plot` work on them; a bad change writes nothing.

use crate::binary;

use std::fs;

use binary::{configs, files, retrysim, text};

#[test]
fn a_changed_run_writes_beside_the_output_of_the_config_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("lost-reply.toml");
    let config = config.to_str().unwrap();
    let plain = retrysim(&["run", config, "--quiet"], tmp.path());
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    let before = files(&tmp.path().join("out/lost-reply"));
    for (args, folder) in [
        (
            vec!["--set", "tool.order.reply_loss=0.3"],
            "lost-reply+reply_loss=0.3",
        ),
        (vec!["--seed", "9"], "lost-reply+seed=9"),
        (
            vec!["--scan", "tool.order.reply_loss=0,0.2"],
            "lost-reply+reply_loss=0,0.2",
        ),
    ] {
        let run = [&["run", config, "--quiet"][..], &args].concat();
        let o = retrysim(&run, tmp.path());
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        let dir = tmp.path().join("out").join(folder);
        let manifest = fs::read_to_string(dir.join("manifest.toml")).unwrap();
        assert!(
            manifest.contains(&format!("changes = [\"{}\"]", args.join(" "))),
            "{manifest}"
        );
        // The same changes check against the folder, and plot redraws it.
        let check = [&["check", config, "--quiet"][..], &args].concat();
        let c = retrysim(&check, tmp.path());
        assert!(c.status.success(), "{args:?}: {}", text(&c.stderr));
        let p = retrysim(&["plot", dir.to_str().unwrap()], tmp.path());
        assert!(p.status.success(), "{}", text(&p.stderr));
    }
    assert_eq!(
        files(&tmp.path().join("out/lost-reply")),
        before,
        "the config's own output is untouched"
    );
    // A swept change reads as a sweep: one row per point and configuration.
    let swept = fs::read_to_string(
        tmp.path()
            .join("out/lost-reply+reply_loss=0,0.2/summary.csv"),
    )
    .unwrap();
    assert!(swept.starts_with("tool.order.reply_loss,experiment,"));
    assert_eq!(swept.lines().count(), 1 + 2 * 2);
}

#[test]
fn a_bad_change_writes_nothing_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("lost-reply.toml");
    let o = retrysim(
        &[
            "run",
            config.to_str().unwrap(),
            "--set",
            "tool.order.reply_loss=1.5",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("the command line (--set):1:23: tool[0].reply_loss: 1.5 is not a probability"),
        "{err}"
    );
    assert!(!tmp.path().join("out").exists());
    // A change to an output folder is a usage error: trace the config instead.
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("out/reconciliation");
    let t = retrysim(
        &[
            "trace",
            out.to_str().unwrap(),
            "--set",
            "tool.orders.reply_loss=0.3",
        ],
        tmp.path(),
    );
    assert_eq!(t.status.code(), Some(2));
    assert!(text(&t.stderr).contains("trace the config"));
}

/// A scanned run's printed header shows the values the scan gives a fault, never the base
/// config's value of the key.
#[test]
fn a_scan_header_shows_the_scanned_values() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("c.toml"), crate::refusals::GOOD).unwrap();
    let args = ["run", "c.toml", "--progress", "none", "--scan"];
    let out = retrysim(
        &[&args[..], &["tool.charge.reply_loss=0,0.3"]].concat(),
        tmp.path(),
    );
    let table = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        table.contains("charge: a = 0.1, b = {0, 0.3}, 5xx = 0"),
        "{table}"
    );
    let out = retrysim(
        &[&args[..], &["tool.server_error=0:0.5:0.1"]].concat(),
        tmp.path(),
    );
    let table = text(&out.stdout);
    assert!(table.contains("b = 0.2, 5xx = {0, 0.1, …, 0.5}"), "{table}");
}

/// A scan of more points than the printed table keeps: the table shows 50 of them, evenly
/// spaced, the first and last among them, and says so; `summary.csv` has every row, and the
/// comparison chart names the 12 points it draws.
#[test]
fn a_long_scan_prints_fifty_points_and_writes_every_row() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("c.toml"), crate::refusals::GOOD).unwrap();
    let out = retrysim(
        &[
            "run",
            "c.toml",
            "--progress",
            "none",
            "--scan",
            "tool.charge.reply_loss=0.002:0.2:0.002",
        ],
        tmp.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.contains("50 of the 100 points, evenly spaced"),
        "{table}"
    );
    let rows: Vec<&str> = (table.lines())
        .filter(|l| l.split_whitespace().nth(1) == Some("p"))
        .collect();
    assert_eq!(rows.len(), 50, "{table}");
    assert!(rows[0].starts_with("0.002 "), "{}", rows[0]);
    assert!(rows[49].starts_with("0.2 "), "{}", rows[49]);
    let dir = tmp.path().join("out/good+reply_loss=0.002_0.2_0.002");
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + 100);
    let chart = fs::read_to_string(dir.join("charts/comparison.svg")).unwrap();
    assert!(chart.contains("(12 of the 100 points, evenly spaced)"));
}

/// A changed run says what it is from its changes, not with the config's free text (which
/// speaks of the config as written): in its printed table, its charts and its JSON export.
#[test]
fn a_changed_run_is_described_by_its_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("lost-reply.toml");
    let config = config.to_str().unwrap();
    let args = [
        "run",
        config,
        "--set",
        "tool.order.reply_loss=0.3",
        "--seed",
        "7",
        "--export-json",
        "s.json",
    ];
    let o = retrysim(&args, tmp.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = "lost-reply with seed 7, tool.order.reply_loss = 0.3";
    assert!(text(&o.stdout).contains(said), "{}", text(&o.stdout));
    let json = fs::read_to_string(tmp.path().join("s.json")).unwrap();
    assert!(
        json.contains(&format!("\"description\": \"{said}\"")),
        "{json}"
    );
    let chart = tmp
        .path()
        .join("out/lost-reply+seed=7+reply_loss=0.3/charts/comparison.svg");
    let svg = fs::read_to_string(chart).unwrap();
    assert!(
        svg.contains(said) && !svg.contains("b = 0.2"),
        "the description as written"
    );
}
