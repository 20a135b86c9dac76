//! An output folder read for a comparison: its manifest's seed, and of `summary.csv` and
//! `runs.csv` each configuration's figures, keyed by its point (the swept keys' values) and its
//! name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::Value;

use crate::error::Error;
use crate::metrics::Figure;
use crate::output::manifest::Written;
use crate::output::table::CsvTable;
use crate::output::{runs, summary};

/// Which configuration at which point: the swept keys with their values, and the name.
pub type Key = (Vec<(String, String)>, String);

/// One configuration's row of `summary.csv`, the figures read as numbers (`None` where empty).
#[derive(Clone, Debug)]
pub struct Summary {
    pub replications: u64,
    /// The intents (for the per-intent figures) and tasks a one-replication interval is taken
    /// across.
    pub intents: u64,
    pub tasks: u64,
    pub values: [Option<f64>; Figure::ALL.len()],
    pub half_widths: [Option<f64>; Figure::ALL.len()],
}

/// An output folder, read.
pub struct Folder {
    pub path: PathBuf,
    pub seed: u64,
    /// Each configuration's row, in the file's order.
    pub rows: Vec<(Key, Summary)>,
    /// Each configuration's replications, in order: every figure's value in each.
    pub runs: BTreeMap<Key, Vec<[Option<f64>; Figure::ALL.len()]>>,
}

impl Folder {
    pub fn read(dir: &Path) -> Result<Folder, Error> {
        let written = Written::read(dir)?;
        let seed = (written.table.get("seed"))
            .and_then(Value::as_integer)
            .and_then(|s| u64::try_from(s).ok())
            .ok_or_else(|| written.bad("no `seed`"))?;
        let (_, axes, _) = written.outline()?;
        let paths: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
        let table = CsvTable::read(&dir.join("summary.csv"), &paths, &summary::columns())?;
        let number = |cell: &str| cell.parse::<f64>().ok();
        let key = |cells: &[String], policy: usize| -> Key {
            let point = paths.iter().cloned().zip(cells.iter().cloned()).collect();
            (point, cells[policy].clone())
        };
        let (policy, reps) = (table.at("policy"), table.at("replications"));
        let (intents, tasks) = (table.at("intents"), table.at("tasks"));
        let mut rows: Vec<(Key, Summary)> = Vec::new();
        let mut seen: BTreeMap<Key, u64> = BTreeMap::new();
        for (line, cells) in table.rows() {
            let key = key(cells, policy);
            if let Some(first) = seen.insert(key.clone(), line) {
                return Err(Error::BadOutput(format!(
                    "{}:{line}: a second row for {} (the first is on line {first}): a summary has \
                     one row for each configuration at each point",
                    dir.join("summary.csv").display(),
                    super::render::label(&key),
                )));
            }
            let count = |at: usize| cells[at].parse::<u64>().unwrap_or(0);
            let row = Summary {
                replications: count(reps),
                intents: count(intents),
                tasks: count(tasks),
                values: Figure::ALL.map(|f| number(&cells[table.at(f.column())])),
                half_widths: Figure::ALL.map(|f| number(&cells[table.at(f.interval_column())])),
            };
            rows.push((key, row));
        }
        let mut runs: BTreeMap<Key, Vec<_>> = BTreeMap::new();
        // Every run writes runs.csv: the paired test reads it, and without it a comparison
        // would fall back to Welch's without a word.
        let runs_path = dir.join("runs.csv");
        {
            let columns = runs::columns();
            let at = |name: &str| {
                paths.len()
                    + columns
                        .iter()
                        .position(|c| c.name == name)
                        .expect("a runs.csv column")
            };
            let policy = at("policy");
            let places = Figure::ALL.map(|f| at(f.column()));
            CsvTable::each(&runs_path, &paths, &columns, |_, record| {
                let cells: Vec<String> = record.iter().map(String::from).collect();
                let values = places.map(|p| number(&cells[p]));
                runs.entry(key(&cells, policy)).or_default().push(values);
            })?;
        }
        Ok(Folder {
            path: dir.to_path_buf(),
            seed,
            rows,
            runs,
        })
    }
}
