//! The reference docs against the code: every config key the reader accepts is in
//! `configs/README.md`, and every column of every output file is in `out/README.md` with its
//! type.

use std::fs;
use std::path::Path;

use retrysim::config::{Origin, Source};
use retrysim::output::column::Column;
use retrysim::output::schema;

fn read(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The keys serde lists as expected when `table_text` has an unknown key `zzz` in it.
fn accepted_keys(table_text: &str) -> Vec<String> {
    let source = Source {
        name: "keys.toml".into(),
        text: table_text.into(),
        origin: Origin::Text,
    };
    let e = source.sweep().expect_err("zzz is no key");
    assert!(e.message.contains("unknown field `zzz`"), "{e}");
    let expected = e.allowed.as_deref().expect("a list of keys");
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

/// The base config with `line` in its policy.
fn policy_with(line: &str) -> String {
    BASE.replace("name = \"p\"", &format!("name = \"p\"\n{line}"))
}

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
        BASE.replace(
            "name = \"a\"",
            "name = \"a\"\nreplica = [{ index = 0, zzz = 1 }]",
        ),
        BASE.replace("name = \"p\"", "name = \"p\"\nzzz = 1"),
        BASE.replace(
            "name = \"a\"",
            "name = \"a\"\nkind = \"model\"\nmodel = { zzz = 1 }",
        ),
        BASE.replace(
            "name = \"a\"",
            "name = \"a\"\ntokens_per_minute = { zzz = 1 }",
        ),
        BASE.replace("name = \"a\"", "name = \"a\"\nprice = { zzz = 1 }"),
        BASE.replace("name = \"a\"", "name = \"a\"\nrate_limit = { zzz = 1 }"),
        BASE.replace("name = \"p\"", "name = \"p\"\nsend_tokens = { zzz = 1 }"),
        BASE.replace("name = \"p\"", "name = \"p\"\nreplan = { zzz = 1 }"),
        BASE.replace("tasks = 1", "tasks = 1\nagent = { zzz = 1 }"),
        BASE.replace("name = \"p\"", "name = \"p\"\nbackoff = { zzz = 1 }"),
        format!("{BASE}[tune]\nzzz = 1"),
        format!("{BASE}[explore]\nzzz = 1"),
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
        policy_with("send_rate = { zzz = 1 }"),
        policy_with("preset = { zzz = 1 }"),
        policy_with("preset.urllib3 = { zzz = 1 }"),
        policy_with("preset.tenacity = { zzz = 1 }"),
        policy_with("preset.tenacity = { wait_exponential = { zzz = 1 } }"),
        policy_with("preset.tenacity = { wait_exponential_jitter = { zzz = 1 } }"),
        policy_with("preset.botocore = { zzz = 1 }"),
        policy_with("preset.polly = { zzz = 1 }"),
        policy_with("preset.resilience4j = { zzz = 1 }"),
        policy_with("preset.envoy = { zzz = 1 }"),
        policy_with("preset.openai = { zzz = 1 }"),
        policy_with("preset.anthropic = { zzz = 1 }"),
        policy_with("preset.envoy = { retry_back_off = { base_interval = \"1s\", zzz = 1 } }"),
        policy_with(
            "preset.envoy = { rate_limited_retry_back_off = { reset_headers = [], zzz = 1 } }",
        ),
        policy_with(
            "preset.envoy = { rate_limited_retry_back_off = { reset_headers = [{ name = \"x\", zzz = 1 }] } }",
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
    schema::files()
        .into_iter()
        .map(|(f, _, c)| (f, c))
        .collect()
}

/// `out/schema.json` is what the column tables make of the shipped configs. After changing a
/// column, write it again with `RETRYSIM_WRITE_SCHEMA=1 cargo test --test config schema`.
#[test]
fn the_committed_schema_is_the_code_s() {
    let sweeps: Vec<_> = crate::shipped::configs()
        .iter()
        .map(|s| s.sweep().unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let made = schema::document(&sweeps);
    let path = crate::shipped::root().join("out/schema.json");
    if std::env::var_os("RETRYSIM_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &made).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == made,
        "out/schema.json is stale: write it again with \
         `RETRYSIM_WRITE_SCHEMA=1 cargo test --test config schema`"
    );
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
    let files = output_files();
    let mut cells = 0u64;
    for dir in crate::shipped::outputs() {
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

/// Every default configs/README.md writes as one literal (`"1ms"`, `0`, `false`) is the value
/// the code fills in: read from the `[resolved]` table of a config that sets nothing it need
/// not. Keys the resolved table leaves out when unset (such as `slowdown`) are skipped.
#[test]
fn the_documented_defaults_are_the_codes() {
    let text = "name = \"d\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n\
                [[tool]]\nname = \"u\"\nworkers = 2\n[[policy]]\nname = \"p\"\n";
    let source = retrysim::config::Source {
        name: "d.toml".into(),
        text: text.into(),
        origin: Origin::Text,
    };
    let resolved = retrysim::config::resolved(&source.sweep().unwrap());
    let first = |key: &str| -> Vec<&toml::Table> {
        let list = resolved[key].as_array().unwrap();
        list.iter().filter_map(toml::Value::as_table).collect()
    };
    let sections: [(&str, Vec<&toml::Table>); 5] = [
        ("## Top level", vec![&resolved]),
        (
            "## `[workload]`",
            vec![resolved["workload"].as_table().unwrap()],
        ),
        ("## `[[tool]]`", first("tool")),
        ("## `[[policy]]`", first("policy")),
        (
            "## `[output]`",
            vec![resolved["output"].as_table().unwrap()],
        ),
    ];
    let doc = read("configs/README.md");
    let same = |a: &toml::Value, b: &toml::Value| match (a.as_float(), b.as_float()) {
        _ if a == b => true,
        (Some(x), _) | (_, Some(x)) => {
            let other = |v: &toml::Value| v.as_integer().map(|i| i as f64).or(v.as_float());
            other(a) == Some(x) && other(b) == Some(x)
        }
        _ => false,
    };
    let (mut compared, mut wrong) = (0, Vec::new());
    for (heading, tables) in sections {
        let start = doc.find(heading).unwrap_or_else(|| panic!("no {heading}"));
        let section = &doc[start + heading.len()..];
        let section = &section[..section.find("\n## ").unwrap_or(section.len())];
        let section = &section[..section.find("\n### ").unwrap_or(section.len())];
        for line in section.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split(" | ").collect();
            let (key, default) = (cells[0].trim_matches(['|', ' ', '`']), cells[1].trim());
            let Some(literal) = default.strip_prefix('`').and_then(|d| d.strip_suffix('`')) else {
                continue;
            };
            if literal.contains('`') {
                continue;
            }
            let Ok(mut parsed) = toml::from_str::<toml::Table>(&format!("v = {literal}")) else {
                continue;
            };
            let documented = parsed.remove("v").unwrap();
            let Some(actual) = tables.iter().find_map(|t| t.get(key)) else {
                continue;
            };
            compared += 1;
            if !same(&documented, actual) {
                wrong.push(format!(
                    "{heading} {key}: documented {documented}, code {actual}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(compared >= 30, "only {compared} defaults compared");
}

/// The reference's example config runs under a name of its own: saving it and running it
/// never writes over the output of a shipped config.
#[test]
fn the_references_example_config_names_no_shipped_output() {
    let reference = read("docs/book/src/reference/configs.md");
    let at = reference.find("## A config, briefly").expect("the section");
    let block = reference[at..]
        .split("```")
        .nth(1)
        .expect("its config block");
    let name = block
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.split('"').next())
        .expect("a name");
    let shipped: Vec<String> = crate::shipped::outputs()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        !shipped.contains(&name.to_string()),
        "`{name}` is a shipped output's name"
    );
    let text = block.trim_start_matches("toml\n");
    let source = retrysim::config::Source {
        name: "configs.md".into(),
        text: text.into(),
        origin: Origin::Text,
    };
    source
        .sweep()
        .unwrap_or_else(|e| panic!("the reference's config: {e}"));
}

/// The README stays a front door: at most 400 lines, naming no file outside the repository,
/// every file it links to present. A new feature goes to the book; the README gains a line.
#[test]
fn the_readme_is_short_and_links_only_what_a_clone_has() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; the book takes the rest"
    );
    for doc in ["README.md", "CONTRIBUTING.md"] {
        let text = read(doc);
        assert!(
            !text.contains("../"),
            "{doc} names a file outside the repository"
        );
        for (at, _) in text.match_indices("](") {
            let target = text[at + 2..].split(')').next().unwrap_or_default();
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || file.starts_with("http") {
                continue;
            }
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR")).join(file).exists(),
                "{doc} links to {file}, which a clone lacks"
            );
        }
    }
}

/// The book's reference holds every key and every column: its chapters include the two
/// files the tests above hold to the code, rather than copies that could drift.
#[test]
fn the_reference_includes_every_key_and_column() {
    let summary = read("docs/book/src/SUMMARY.md");
    for (chapter, file) in [
        ("reference/config-keys.md", "configs/README.md"),
        ("reference/output-columns.md", "out/README.md"),
    ] {
        assert!(
            summary.contains(&format!("]({chapter})")),
            "{chapter} is not in the book"
        );
        let text = read(&format!("docs/book/src/{chapter}"));
        assert!(
            text.contains(&format!("{{{{#include ../../../../{file}}}}}")),
            "{chapter} does not include {file}"
        );
    }
}

/// The licence a teacher reads is the one the package declares.
#[test]
fn the_licence_file_is_the_declared_one() {
    let manifest = read("Cargo.toml");
    assert!(
        manifest.contains("\nlicense = \"MIT\"\n"),
        "Cargo.toml declares MIT"
    );
    assert!(read("LICENSE").starts_with("MIT License\n"));
}

/// The reference's cost form under the classic faults names the 5xx before the work beside the
/// lost requests, as the code's form does (`theory::stream`): 1 − a − e, not 1 − a.
#[test]
fn the_references_cost_form_names_every_fault_it_lists() {
    let readme = read("docs/book/src/reference/features.md");
    assert!(
        !readme.contains("E[attempts]·(1 − a) billed"),
        "a form without e"
    );
    assert!(readme.contains("E[attempts]·(1 − a − e) billed"));
}
