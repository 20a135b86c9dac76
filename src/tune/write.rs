//! The tuner's folder, `out/<name>/`, written whole or not at all: `candidates.csv`, the
//! Pareto chart, `recommended.toml` and a manifest.

use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};
use toml::{Table, Value};

use super::{Tuned, search};
use crate::config::Source;
use crate::error::Error;
use crate::metrics::Figure;
use crate::output::{Mark, Staging, dollars, finite};

/// A figure's value as the CSV writes it.
fn cell(f: Figure, x: f64) -> String {
    match f.is_money() {
        true => dollars(x),
        false => finite(x),
    }
}

/// `candidates.csv`: a row per candidate (its search figures, and for a finalist its
/// validation), then the config's policy as written, validated beside them.
fn candidates_csv(t: &Tuned) -> String {
    let figures = t.spec.figures();
    let mut header: Vec<String> = vec!["candidate".into()];
    header.extend(t.spec.keys.iter().map(|k| k.path.clone()));
    header.extend(["dropped_after_round".into(), "search_replications".into()]);
    for f in &figures {
        header.push(f.column().into());
        header.push(format!("{}_ci95", f.column()));
    }
    header.push("validation_replications".into());
    for f in &figures {
        header.push(format!("validation_{}", f.column()));
        header.push(format!("validation_{}_ci95", f.column()));
    }
    header.extend(["constraints_hold".into(), "chosen".into()]);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).expect("writing to memory");
    let validated = |obs: Option<&search::Observed>, row: &mut Vec<String>| {
        row.push(obs.map_or(String::new(), |o| o.runs.len().to_string()));
        for &f in &figures {
            let e = obs.map(|o| o.estimate(f));
            row.push(e.map_or(String::new(), |e| cell(f, e.mean)));
            row.push(e.map_or(String::new(), |e| cell(f, e.half_width)));
        }
        let holds = obs.map(|o| search::holds(&t.spec.constraints, |f| o.estimate(f)));
        row.push(holds.map_or(String::new(), |h| if h { "yes" } else { "no" }.into()));
    };
    for (i, c) in t.candidates.iter().enumerate() {
        let mut row = vec![format!("c{i:04}")];
        row.extend(c.values.iter().map(super::spec::plain));
        row.push(t.dropped[i].map_or(String::new(), |r| (r + 1).to_string()));
        let obs = &t.observed[i];
        row.push(obs.runs.len().to_string());
        for &f in &figures {
            let e = obs.estimate(f);
            row.push(cell(f, e.mean));
            row.push(cell(f, e.half_width));
        }
        let finalist = t.finalists.iter().find(|(j, _)| *j == i).map(|(_, o)| o);
        validated(finalist, &mut row);
        row.push(if t.chosen == Some(i) { "yes" } else { "no" }.into());
        w.write_record(&row).expect("writing to memory");
    }
    let mut row = vec![format!("{} (as written)", t.spec.policy)];
    row.extend(t.spec.keys.iter().map(|_| String::new()));
    row.extend([String::new(), "0".into()]);
    row.extend(figures.iter().flat_map(|_| [String::new(), String::new()]));
    validated(Some(&t.as_written), &mut row);
    row.push("no".into());
    w.write_record(&row).expect("writing to memory");
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("CSV of UTF-8 cells")
}

/// `recommended.toml`: the config with the chosen policy alone, named for it, on the
/// validation's seed and replications, so running it gives the validation's figures again;
/// those figures, the constraints and how it was chosen in comments on top.
pub fn recommended(t: &Tuned, source: &Source) -> Option<String> {
    let chosen = t.chosen?;
    let runs = t.chosen_runs()?;
    let settings: Vec<String> = (t.spec.keys.iter().zip(&t.candidates[chosen].values))
        .map(|(k, v)| format!("{} = {v}", k.path))
        .collect();
    let settings = settings.join(", ");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by retrysim tune from {}; see \"Choosing a policy\" in docs/book/src/reference/commands.md.",
        source.name
    );
    let _ = writeln!(out, "# The policy \"{}\" with {settings}", t.spec.policy);
    let _ = writeln!(
        out,
        "# chosen among {} candidates by successive halving ({} rounds, {} replications under\n\
         # common random numbers), then validated on {} replications of seed {}, which the\n\
         # search never used:",
        t.candidates.len(),
        t.rounds.len(),
        t.observed.iter().map(|o| o.runs.len()).sum::<usize>(),
        t.spec.validation,
        t.validation_seed
    );
    for c in &t.spec.constraints {
        let e = runs.estimate(c.figure);
        let end = c.cautious(e.mean, e.half_width);
        let _ = writeln!(
            out,
            "#   {}: {} (95 % bound {end:.4}) holds",
            c.text(),
            Tuned::shown(e)
        );
    }
    let o = t.spec.objective.figure;
    let (verb, column) = (t.spec.objective.goal.verb(), o.column());
    let _ = writeln!(
        out,
        "#   objective, {verb} {column}: {}",
        Tuned::shown(runs.estimate(o))
    );
    let _ = writeln!(
        out,
        "#   as written, the policy had {column}: {}",
        Tuned::shown(t.as_written.estimate(o))
    );
    let _ = writeln!(
        out,
        "# `retrysim run` on this file gives these figures again."
    );
    out.push_str(&edited(t, source, chosen, &settings)?);
    Some(out)
}

/// The config's own text with the chosen policy alone in it, its searched keys set, the
/// `[tune]` table and the other policies gone, named, seeded and replicated as the validation
/// ran: the user's layout and comments kept, the file's opening comments (about the search)
/// replaced by the tuner's.
fn edited(t: &Tuned, source: &Source, chosen: usize, settings: &str) -> Option<String> {
    use toml_edit::{DocumentMut, value};
    let mut doc: DocumentMut = source.text.parse().ok()?;
    doc.remove("tune");
    let name = doc.get("name")?.as_str()?.to_string();
    doc["name"] = value(format!("{name}-recommended"));
    if let Some(mut key) = doc.as_table_mut().key_mut("name") {
        key.leaf_decor_mut().set_prefix("");
    }
    doc["description"] = value(format!(
        "{} as retrysim tune chose it: {settings}",
        t.spec.policy
    ));
    doc["seed"] = value(t.validation_seed as i64);
    doc["replications"] = value(t.spec.validation as i64);
    let policies = doc.get_mut("policy")?.as_array_of_tables_mut()?;
    policies.retain(|p| p.get("name").and_then(|n| n.as_str()) == Some(t.spec.policy.as_str()));
    let policy = policies.get_mut(0)?;
    policy["name"] = value(format!("{}-tuned", t.spec.policy));
    for (key, v) in t.spec.keys.iter().zip(&t.candidates[chosen].values) {
        // Walked without indexing, which panics on a list: a path this cannot follow writes
        // no recommended.toml rather than ending the run. The last key is added if absent.
        let (parents, last) = match key.path.rsplit_once('.') {
            Some((parents, last)) => (Some(parents), last),
            None => (None, key.path.as_str()),
        };
        let chosen = value(v.to_string().parse::<toml_edit::Value>().ok()?);
        let Some(parents) = parents else {
            policy.insert(last, chosen);
            continue;
        };
        let mut item = policy.get_mut(parents.split('.').next()?)?;
        for segment in parents.split('.').skip(1) {
            item = item.as_table_like_mut()?.get_mut(segment)?;
        }
        item.as_table_like_mut()?.insert(last, chosen);
    }
    Some(doc.to_string())
}

/// The chosen policy as `recommended.toml` names it, read back as any config's is.
pub fn chosen_policy(t: &Tuned, source: &Source) -> Option<crate::policy::Policy> {
    let text = recommended(t, source)?;
    let read = Source {
        name: "recommended.toml".into(),
        text,
        origin: source.origin.clone(),
    };
    read.sweep().ok().map(|s| s.base.policies[0].clone())
}

/// `in-words.md`: the chosen policy in every library's words, with what each cannot say.
fn in_words(policy: &crate::policy::Policy) -> String {
    let mut out = String::from(
        "# The recommended policy in the libraries' words\n\nWritten by retrysim tune. Each \
         library's nearest settings, then every rule on which they differ from the policy \
         (retrysim reads the settings back through its preset and compares), and what the \
         library has no setting for.\n",
    );
    for library in crate::words::LIBRARIES {
        let w = crate::words::say(policy, library).expect("a library retrysim knows");
        let _ = write!(out, "\n## {library}\n\n```\n{}\n```\n\n", w.code);
        match w.differences.is_empty() {
            true => out.push_str("Exactly the policy.\n"),
            false => {
                for d in &w.differences {
                    let _ = writeln!(out, "- {d}");
                }
            }
        }
    }
    out
}

/// The manifest: which retrysim, which config, which seeds, which files; the `[tune]` table the
/// chart is drawn for, and the experiment as resolved, as a run's manifest has it.
fn manifest(t: &Tuned, source: &Source, sweep: &crate::sweep::Sweep, files: &[String]) -> String {
    let digest = Sha256::digest(source.text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let mut m = Table::new();
    m.insert("retrysim".into(), env!("CARGO_PKG_VERSION").into());
    m.insert("command".into(), "tune".into());
    m.insert("config".into(), source.name.clone().into());
    m.insert("config_sha256".into(), hex.into());
    m.insert("seed".into(), Value::Integer(t.seed as i64));
    let seeds = t
        .rounds
        .iter()
        .map(|r| Value::Integer(r.seed as i64))
        .collect();
    m.insert("search_seeds".into(), Value::Array(seeds));
    m.insert(
        "validation_seed".into(),
        Value::Integer(t.validation_seed as i64),
    );
    m.insert(
        "files".into(),
        Value::Array(files.iter().map(|f| f.as_str().into()).collect()),
    );
    let mut tune = Table::new();
    let o = &t.spec.objective;
    tune.insert(
        "objective".into(),
        format!("{} {}", o.goal.verb(), o.figure.column()).into(),
    );
    let constraints = t
        .spec
        .constraints
        .iter()
        .map(|c| Value::String(c.text()))
        .collect();
    tune.insert("constraints".into(), Value::Array(constraints));
    tune.insert("policy".into(), t.spec.policy.clone().into());
    m.insert("tune".into(), Value::Table(tune));
    m.insert(
        "resolved".into(),
        Value::Table(crate::config::resolved(sweep)),
    );
    let text = toml::to_string(&m).expect("a TOML table serializes");
    format!("# Written by retrysim tune; see out/README.md.\n{text}")
}

/// Writes the tuner's folder `<root>/<name>` into a staging folder, to be committed whole.
pub fn into_staging(t: &Tuned, source: &Source, root: &Path, name: &str) -> Result<Staging, Error> {
    let staging = Staging::new(root, name, Mark::Output)?;
    let dir = staging.path();
    let write = |file: &str, bytes: &[u8]| {
        let path = dir.join(file);
        std::fs::write(&path, bytes).map_err(Error::io(format!("cannot write {}", path.display())))
    };
    let sweep = source.sweep()?;
    let mut files = vec!["candidates.csv".to_string()];
    write("candidates.csv", candidates_csv(t).as_bytes())?;
    for format in &sweep.base.output.chart_formats {
        files.push(format!("charts/pareto.{}", format.name()));
    }
    if let Some(text) = recommended(t, source) {
        write("recommended.toml", text.as_bytes())?;
        files.push("recommended.toml".into());
        if let Some(policy) = chosen_policy(t, source) {
            write("in-words.md", in_words(&policy).as_bytes())?;
            files.push("in-words.md".into());
        }
    }
    write(
        "manifest.toml",
        manifest(t, source, &sweep, &files).as_bytes(),
    )?;
    crate::chart::draw_all(dir, None)?;
    Ok(staging)
}
