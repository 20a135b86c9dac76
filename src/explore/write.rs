//! The explorer's folder, `<out>/<name>.explore/`, written whole or not at all: `explore.csv`,
//! each minimal counterexample as a config that replays it (`schedule = [...]`), its story in
//! words and as a Mermaid sequence diagram, and a manifest.

use std::fmt::Write as _;
use std::path::Path;

use toml::Value;

use super::invariant::{Counterexample, Invariant};
use super::{Explored, spec::Spec};
use crate::config::{Origin, Source, resolved};
use crate::error::Error;
use crate::experiment::Experiment;
use crate::output::{Mark, Staging, fixed};
use crate::run::Options;
use crate::story::{self, Stories};
use crate::sweep::Sweep;

/// The folder a config's exploration goes to, beside its run's.
pub fn folder_name(experiment: &str) -> String {
    format!("{experiment}.explore")
}

/// A counterexample as a config `retrysim run` and `trace` accept: the explored experiment
/// with the one configuration, every latency at its median (as explored), and the schedule.
pub fn replay(
    exp: &Experiment,
    policy: usize,
    invariant: &Invariant,
    c: &Counterexample,
) -> String {
    let mut one = exp.clone();
    // A changed run's name (`x+tasks=2`) holds characters a config's name may not.
    let name = format!(
        "{}-{}-{}",
        exp.name,
        exp.policies[policy].name,
        invariant.name()
    );
    one.name = (name.chars())
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    one.policies = vec![exp.policies[policy].clone()];
    one.schedule = Some(c.fates.clone());
    one.output.charts = Vec::new();
    one.output.timeseries = None;
    let table = resolved(&Sweep::single(one));
    let fates: Vec<&str> = c.fates.iter().map(|f| f.name()).collect();
    // Where workers crash at a rate, each send's crash point comes before its attempt.
    let points = match exp.workload.crash.and_then(|c| c.mean_uptime) {
        Some(_) => "choice points (each send's crash point, then\n# its attempt) meet, in order",
        None => "attempts meet, in the\n# order sent",
    };
    format!(
        "# Written by retrysim explore: a minimal counterexample to `{}` for configuration \"{}\"\n\
         # of {}: {} fault(s); intent {} breaks it in {} attempt(s). The run's {points}: {}; every later one is delivered. Every latency is at its median, as\n\
         # explored. `retrysim run` and `retrysim trace` replay it.\n{}",
        invariant.name(),
        exp.policies[policy].name,
        exp.name,
        c.faults,
        c.intent,
        c.events,
        fates.join(", "),
        toml::to_string(&table).expect("a TOML table serializes")
    )
}

/// The story of a counterexample's intent, in words and as Mermaid: its replay run with its
/// traces kept, in a scratch folder.
fn stories(config: &str, name: &str, intent: u64) -> Result<(String, String), Error> {
    let source = Source {
        name: format!("{name}.toml"),
        text: config.to_string(),
        origin: Origin::Text,
    };
    let mut sweep = source.sweep()?;
    sweep.trace(true, true);
    let scratch = tempfile::tempdir().map_err(Error::io("cannot make a scratch folder"))?;
    let (_, staging) = crate::produce::into_staging(
        &source,
        sweep,
        scratch.path(),
        &Options {
            threads: Some(1),
            ..Options::default()
        },
        &mut (),
    )?;
    let stories = Stories::read(staging.path())?;
    let policy = stories.marks[0].policy.clone();
    let story = stories.story(&policy, 0, Some(intent), None)?;
    Ok((story::text::render(&story), story::mermaid::render(&story)))
}

/// Writes the exploration of `exp` (as explored: [`super::fixed`]) into a staging folder for
/// `<root>/<name>.explore`.
pub fn into_staging(
    exp: &Experiment,
    source: &Source,
    spec: &Spec,
    found: &[Explored],
    root: &Path,
) -> Result<Staging, Error> {
    let name = folder_name(&exp.name);
    let staging = Staging::new(root, &name, Mark::Output)?;
    let dir = staging.path();
    let write = |file: &str, bytes: &[u8]| {
        let path = dir.join(file);
        std::fs::write(&path, bytes).map_err(Error::io(format!("cannot write {}", path.display())))
    };
    let mut files = vec!["explore.csv".to_string()];
    let mut csv = csv::Writer::from_writer(Vec::new());
    let header = [
        "policy",
        "invariant",
        "faults",
        "schedules",
        "violations",
        "violation_probability",
        "explored_probability",
        "beyond_faults_bound",
        "attempts_per_intent",
        "duplicates_per_intent",
        "counterexample_faults",
        "counterexample_attempts",
        "counterexample",
    ];
    csv.write_record(header).expect("writing to memory");
    let mut made_folder = false;
    for (p, explored) in found.iter().enumerate() {
        let policy = &exp.policies[p].name;
        for (inv, v) in spec.invariants.iter().zip(&explored.violations) {
            let mut file = String::new();
            if let Some(c) = &v.minimal {
                if !made_folder {
                    std::fs::create_dir_all(dir.join("counterexamples"))
                        .map_err(Error::io("cannot make the counterexamples folder"))?;
                    made_folder = true;
                }
                let stem = format!("counterexamples/{policy}-{}", inv.name().replace('_', "-"));
                let config = replay(exp, p, inv, c);
                let (text, mermaid) = stories(&config, &stem, c.intent)?;
                write(&format!("{stem}.toml"), config.as_bytes())?;
                write(&format!("{stem}.txt"), text.as_bytes())?;
                write(&format!("{stem}.mmd"), mermaid.as_bytes())?;
                files.extend([
                    format!("{stem}.toml"),
                    format!("{stem}.txt"),
                    format!("{stem}.mmd"),
                ]);
                file = format!("{stem}.toml");
            }
            let minimal = v.minimal.as_ref();
            csv.write_record([
                policy.clone(),
                inv.name().to_string(),
                spec.faults.to_string(),
                explored.schedules.to_string(),
                v.schedules.to_string(),
                format!("{:.12}", v.probability),
                format!("{:.12}", explored.explored),
                format!("{:.12}", explored.beyond()),
                fixed(explored.attempts),
                fixed(explored.duplicates),
                minimal.map_or(String::new(), |c| c.faults.to_string()),
                minimal.map_or(String::new(), |c| c.events.to_string()),
                file,
            ])
            .expect("writing to memory");
        }
    }
    let bytes = csv.into_inner().expect("writing to memory");
    write("explore.csv", &bytes)?;
    write(
        "manifest.toml",
        manifest(exp, source, spec, &files).as_bytes(),
    )?;
    Ok(staging)
}

fn manifest(exp: &Experiment, source: &Source, spec: &Spec, files: &[String]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(source.text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let mut m = toml::Table::new();
    m.insert("retrysim".into(), env!("CARGO_PKG_VERSION").into());
    m.insert("command".into(), "explore".into());
    m.insert("config".into(), source.name.clone().into());
    m.insert("config_sha256".into(), hex.into());
    m.insert("seed".into(), Value::Integer(exp.seed as i64));
    m.insert("faults".into(), Value::Integer(spec.faults as i64));
    if let Some(tasks) = spec.tasks {
        m.insert("tasks".into(), Value::Integer(tasks as i64));
    }
    let names = spec
        .invariants
        .iter()
        .map(|i| Value::String(i.name().into()))
        .collect();
    m.insert("invariants".into(), Value::Array(names));
    m.insert(
        "files".into(),
        Value::Array(files.iter().map(|f| f.as_str().into()).collect()),
    );
    let mut out = String::from("# Written by retrysim explore; see out/README.md.\n");
    let _ = write!(
        out,
        "{}",
        toml::to_string(&m).expect("a TOML table serializes")
    );
    out
}
