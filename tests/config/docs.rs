//! The reference docs against the code: every config key the reader accepts is in
//! `configs/README.md`, and every column of every output file is in `out/README.md` with its
//! type.

use std::fs;
use std::path::Path;

use retrysim::config::Source;
use retrysim::output::column::Column;
use retrysim::output::trace::Trace;
use retrysim::output::{runs, summary, timeline, tools};

fn read(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The keys serde lists as expected when `table_text` has an unknown key `zzz` in it.
fn accepted_keys(table_text: &str) -> Vec<String> {
    let source = Source {
        name: "keys.toml".into(),
        text: table_text.into(),
        dir: None,
    };
    let e = source.sweep().expect_err("zzz is no key").to_string();
    let first = e.lines().next().unwrap();
    assert!(first.contains("unknown field `zzz`"), "{first}");
    let expected = &first[first.find("expected").expect("a list of keys")..];
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

const BASE: &str = r#"
name = "t"
[workload]
tasks = 1
[[tool]]
name = "a"
[[policy]]
name = "p"
"#;

#[test]
fn every_config_key_is_documented() {
    let doc = read("configs/README.md");
    let tables = [
        "zzz = 1\n[workload]\ntasks = 1".to_string(),
        BASE.replace("tasks = 1", "tasks = 1\nzzz = 1"),
        BASE.replace("name = \"a\"", "name = \"a\"\nzzz = 1"),
        BASE.replace(
            "name = \"a\"",
            "name = \"a\"\nservice_time = { dist = \"constant\", zzz = 1 }",
        ),
        BASE.replace(
            "name = \"a\"",
            "name = \"a\"\noutages = [{ from = 1, until = 2, zzz = 1 }]",
        ),
        BASE.replace(
            "name = \"a\"",
            "name = \"a\"\nscript = [{ outcome = \"ok\", after = 1, zzz = 1 }]",
        ),
        BASE.replace("name = \"p\"", "name = \"p\"\nzzz = 1"),
        BASE.replace("name = \"p\"", "name = \"p\"\nbackoff = { zzz = 1 }"),
        BASE.replace("name = \"p\"", "name = \"p\"\nbreaker = { zzz = 1 }"),
        BASE.replace(
            "name = \"p\"",
            "name = \"p\"\nretry_budget = { kind = \"ratio\", zzz = 1 }",
        ),
        BASE.replace(
            "name = \"p\"",
            "name = \"p\"\nadmission = { reserve = 1, min_attempt = 1, timeout_cap = 1, zzz = 1 }",
        ),
        BASE.replace(
            "name = \"p\"",
            "name = \"p\"\nlayers = [{ name = \"x\", zzz = 1 }]",
        ),
        format!("{BASE}[output]\nzzz = 1"),
        format!("{BASE}[sweep]\nzzz = 1\n[[sweep.axis]]\npath = \"seed\""),
        format!("{BASE}[sweep]\n[[sweep.axis]]\npath = \"seed\"\nzzz = 1"),
    ];
    let mut checked = 0;
    for table in &tables {
        for key in accepted_keys(table) {
            let written = [
                format!("`{key}`"),
                format!("`[{key}]`"),
                format!("`[[{key}]]`"),
            ];
            assert!(
                written.iter().any(|w| doc.contains(w.as_str())),
                "configs/README.md lacks `{key}`"
            );
            checked += 1;
        }
    }
    assert!(checked > 90, "only {checked} keys found");
}

/// The rows of the table under the heading that names `file` in `out/README.md`: each row's
/// column names with its type.
fn documented(doc: &str, file: &str) -> Vec<(String, String)> {
    let heading = format!("## `{file}`");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("no section for {file}"));
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let kind = cells[1].trim().to_string();
        for name in cells[0].split('`').skip(1).step_by(2) {
            rows.push((name.to_string(), kind.clone()));
        }
    }
    rows
}

/// Every CSV file retrysim writes, with its columns after the parameter columns.
fn output_files() -> Vec<(&'static str, Vec<Column>)> {
    vec![
        ("summary.csv", summary::columns()),
        ("runs.csv", runs::columns()),
        ("tools.csv", tools::columns()),
        ("timeline.csv", timeline::columns()),
        ("intents.csv", Trace::Intents.columns()),
        ("attempts.csv", Trace::Attempts.columns()),
    ]
}

#[test]
fn every_column_is_documented_with_its_type() {
    let doc = read("out/README.md");
    let files = output_files();
    for (file, columns) in &files {
        let rows = documented(&doc, file);
        for c in columns {
            let kinds: Vec<&str> = rows
                .iter()
                .filter(|(n, _)| n == c.name)
                .map(|(_, k)| k.as_str())
                .collect();
            assert_eq!(kinds, [c.kind.name()], "{file}: column `{}`", c.name);
        }
        for (name, _) in &rows {
            assert!(
                columns.iter().any(|c| c.name == name),
                "{file}: out/README.md documents `{name}`, which is no column"
            );
        }
    }
}

/// Every cell of every CSV file committed under `out/` has its column's type: one type per
/// column in every file, whatever the experiment.
#[test]
fn every_committed_cell_has_its_columns_type() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("out");
    let files = output_files();
    let mut cells = 0u64;
    for experiment in fs::read_dir(&out).unwrap() {
        let dir = experiment.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for (file, columns) in &files {
            let path = dir.join(file);
            let Ok(mut reader) = csv::Reader::from_path(&path) else {
                continue;
            };
            let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
            let params = header.len() - columns.len();
            let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
            assert_eq!(header[params..], names[..], "{}", path.display());
            for record in reader.records() {
                let record = record.unwrap();
                for (cell, column) in record.iter().skip(params).zip(columns) {
                    assert!(
                        column.kind.accepts(cell),
                        "{}: `{cell}` in column `{}` is not a {} value",
                        path.display(),
                        column.name,
                        column.kind.name()
                    );
                    cells += 1;
                }
            }
        }
    }
    assert!(cells > 50_000, "only {cells} cells checked");
}
