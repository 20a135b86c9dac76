//! `run --export-json FILE`: `summary.csv` as one JSON document, for dashboards and scripts.
//! It is read back from the file the run wrote, every cell checked against its column, so the
//! two never disagree: each row an object keyed by the CSV's columns (the swept keys' first),
//! counts and numbers as JSON numbers, words and names as strings, an empty cell as `null`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::column::Kind;
use super::manifest::Written;
use super::summary;
use super::table::CsvTable;
use crate::error::Error;

/// The document for the output folder `dir`.
pub fn summary(dir: &Path) -> Result<String, Error> {
    let written = Written::read(dir)?;
    let (exp, axes, _) = written.outline()?;
    let paths: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    let columns = summary::columns();
    let table = CsvTable::read(&dir.join("summary.csv"), &paths, &columns)?;
    let kinds: Vec<Option<Kind>> = (paths.iter().map(|_| None))
        .chain(columns.iter().map(|c| Some(c.kind)))
        .collect();
    let rows: Vec<Value> = table
        .rows()
        .map(|(_, cells)| {
            let row: Map<String, Value> = (table.columns().iter())
                .zip(cells)
                .zip(&kinds)
                .map(|((name, cell), kind)| (name.clone(), value(cell, *kind)))
                .collect();
            Value::Object(row)
        })
        .collect();
    let doc = json!({
        "experiment": exp.name,
        "description": exp.description,
        "seed": exp.seed,
        "replications": exp.replications,
        "parameters": paths,
        "rows": rows,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value serializes");
    text.push('\n');
    Ok(text)
}

/// One cell as JSON, by its column's type; a swept key's value as the number or boolean it
/// reads as, else as written (a duration, a word).
fn value(cell: &str, kind: Option<Kind>) -> Value {
    match kind {
        _ if cell.is_empty() => Value::Null,
        None => match (cell.parse::<i64>(), cell.parse::<f64>(), cell) {
            (Ok(i), ..) => Value::from(i),
            (_, Ok(x), _) if x.is_finite() => Value::from(x),
            (.., "true" | "false") => Value::Bool(cell == "true"),
            _ => Value::String(cell.to_string()),
        },
        Some(Kind::Count | Kind::CountOrEmpty) => {
            cell.parse::<u64>().map_or(Value::Null, Value::from)
        }
        Some(Kind::Number | Kind::NumberOrEmpty) => {
            cell.parse::<f64>().map_or(Value::Null, Value::from)
        }
        Some(Kind::Flag) => Value::Bool(cell == "true"),
        _ => Value::String(cell.to_string()),
    }
}
