//! Output folders `plot` cannot read: each broken in one way, each refused with exit 2, named
//! by file, line and column, and nothing drawn.

use std::fs;

use crate::binary::{files, retrysim, text};
use crate::refusals::GOOD;

/// `row` with its cell `i` replaced by `cell`.
fn with_cell(row: &str, i: usize, cell: &str) -> String {
    let mut cells: Vec<&str> = row.split(',').collect();
    cells[i] = cell;
    cells.join(",")
}

/// An output folder broken in one way: `plot` refuses it with exit 2, names the file, line
/// and column, and writes no chart, partial or whole.
#[test]
fn broken_output_folders_are_refused_by_plot() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("c.toml"), GOOD).unwrap();
    let run = retrysim(
        &["run", "c.toml", "--progress", "none", "--quiet"],
        tmp.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let good = tmp.path().join("out/good");
    fs::remove_dir_all(good.join("charts")).unwrap();
    let summary = fs::read_to_string(good.join("summary.csv")).unwrap();
    let header = summary.lines().next().unwrap().to_string();
    let row = summary.lines().nth(1).unwrap().to_string();
    let manifest = fs::read_to_string(good.join("manifest.toml")).unwrap();
    let swapped = header.replacen("experiment,policy", "policy,experiment", 1);
    let cases: Vec<(&str, &str, String, Vec<String>)> = vec![
        (
            "a summary with only its header",
            "summary.csv",
            format!("{header}\n"),
            vec![
                "summary.csv: 0 rows".into(),
                "1 configurations make 1".into(),
            ],
        ),
        (
            "a word where a number belongs",
            "summary.csv",
            format!("{header}\n{}\n", with_cell(&row, 6, "abc")),
            vec![
                "summary.csv: line 2, column `attempts_per_intent`: `abc` is not a number value"
                    .into(),
            ],
        ),
        (
            "a row too short",
            "summary.csv",
            format!("{header}\ngood,p\n"),
            vec![format!(
                "summary.csv: line 2: 2 cells, expected {}",
                header.split(',').count()
            )],
        ),
        (
            "two columns swapped",
            "summary.csv",
            format!("{swapped}\n{row}\n"),
            vec!["summary.csv: column 1 is `policy`, expected `experiment`".into()],
        ),
        (
            "a configuration the manifest does not name",
            "summary.csv",
            format!("{header}\n{}\n", with_cell(&row, 1, "q")),
            vec![
                "summary.csv: line 2, column `policy`: `q` where the manifest's sweep has `p`"
                    .into(),
            ],
        ),
        (
            "a row too many",
            "summary.csv",
            format!("{header}\n{row}\n{row}\n"),
            vec!["summary.csv: 2 rows".into()],
        ),
        (
            "a manifest that is not TOML",
            "manifest.toml",
            "[resolved\n".into(),
            vec!["manifest.toml".into()],
        ),
        (
            "more points finished than the sweep has",
            "manifest.toml",
            manifest.replace("points_finished = 1\n", "points_finished = 2\n"),
            vec!["manifest.toml: `points_finished` is not a count of the sweep's 1 points".into()],
        ),
        (
            "a manifest without its config",
            "manifest.toml",
            manifest.split("[resolved]").next().unwrap().to_string(),
            vec!["manifest.toml: no [resolved] table".into()],
        ),
        (
            "an unknown chart in the manifest",
            "manifest.toml",
            manifest.replace("charts = [\"comparison\"]", "charts = [\"pie\"]"),
            vec!["manifest.toml: [resolved] output.charts[0]: unknown value \"pie\"".into()],
        ),
    ];
    assert!(manifest.contains("charts = [\"comparison\"]"), "{manifest}");
    assert!(manifest.contains("points_finished = 1\n"), "{manifest}");
    for (label, file, content, says) in cases {
        refused(tmp.path(), &good, (label, file, &content), &says);
    }
}

/// `good` copied to `root/broken` with `file` replaced by `content` is refused by `plot` with
/// exit 2 and every phrase of `says`, and nothing written.
fn refused(
    root: &std::path::Path,
    good: &std::path::Path,
    case: (&str, &str, &str),
    says: &[String],
) {
    let (label, file, content) = case;
    let dir = root.join("broken");
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir(&dir).unwrap();
    for entry in fs::read_dir(good).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    fs::write(dir.join(file), content).unwrap();
    let before = files(&dir);
    let out = retrysim(&["plot", "broken"], root);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{label}: {err}");
    for phrase in says {
        assert!(
            err.contains(phrase.as_str()),
            "{label}: no {phrase:?} in\n{err}"
        );
    }
    assert!(!err.contains("panicked"), "{label}: {err}");
    assert_eq!(files(&dir), before, "{label}: plot wrote something");
    assert!(!dir.join("charts").exists(), "{label}: a chart folder");
}

/// Every number retrysim writes is finite, so `plot` refuses `nan` and `inf` in any numeric
/// column of any file it reads, and a time series cut to its header, with exit 2, drawing
/// nothing (not even the charts that file is not needed for).
#[test]
fn plot_refuses_numbers_that_are_not_finite_and_a_header_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let config = GOOD.replace("tasks = 10", "tasks = 50")
        + "[output]\ntimeseries = \"1s\"\ncharts = [\"comparison\", \"goodput\"]\n";
    fs::write(tmp.path().join("c.toml"), config).unwrap();
    let run = retrysim(
        &["run", "c.toml", "--progress", "none", "--quiet"],
        tmp.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let good = tmp.path().join("out/good");
    fs::remove_dir_all(good.join("charts")).unwrap();
    let read = |f: &str| fs::read_to_string(good.join(f)).unwrap();
    let (summary, series) = (read("summary.csv"), read("timeseries.csv"));
    let column = |csv: &str, name: &str| {
        csv.lines()
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == name)
            .unwrap()
    };
    let with = |csv: &str, name: &str, cell: &str| {
        let mut lines: Vec<String> = csv.lines().map(String::from).collect();
        lines[1] = with_cell(&lines[1], column(csv, name), cell);
        lines.join("\n") + "\n"
    };
    let cases = [
        (
            "summary.csv",
            with(&summary, "success_rate", "nan"),
            "`nan` is not a number value",
        ),
        (
            "summary.csv",
            with(&summary, "attempts_ci95", "inf"),
            "`inf` is not a number or empty value",
        ),
        (
            "timeseries.csv",
            with(&series, "goodput_per_s", "-inf"),
            "`-inf` is not a number value",
        ),
        (
            "timeseries.csv",
            with(&series, "offered_per_s", "NaN"),
            "`NaN` is not a number value",
        ),
        (
            "timeseries.csv",
            series.lines().next().unwrap().to_string() + "\n",
            "timeseries.csv: a header and no rows",
        ),
    ];
    for (file, content, says) in cases {
        let dir = tmp.path().join("broken");
        if dir.exists() {
            fs::remove_dir_all(&dir).unwrap();
        }
        fs::create_dir(&dir).unwrap();
        for entry in fs::read_dir(&good).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        fs::write(dir.join(file), content).unwrap();
        let out = retrysim(&["plot", "broken"], tmp.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{says}: {err}");
        assert!(err.contains(says), "{says}: {err}");
        assert!(!dir.join("charts").exists(), "{says}: a chart was drawn");
    }
}
