//! `out/schema.json`: every CSV file's columns as a Frictionless Table Schema, made from the
//! column tables that write the files, so a reader (pandas, polars, R, `frictionless
//! validate`) can load each column with its one type instead of guessing it from the cells.
//!
//! A file's columns are the same in every output folder except its leading parameter columns,
//! which are the sweep's axes. So the document holds one Table Schema per file, and, for each
//! shipped experiment that sweeps, the fields of its parameter columns, which a reader puts in
//! front. A parameter's type follows the values its axis takes in the config (the manifest's
//! `[resolved.sweep]` holds them): integers are `integer`, numbers `number`, anything else, or a
//! mixture such as `["unlimited", 1]`, `string`.

use serde_json::{Value, json};

use super::column::{Column, Kind};
use super::trace::Trace;
use super::{crashes, edges, replicas, reservations, runs, summary, timeseries, tools};
use crate::sweep::{Param, Sweep};

/// Every CSV file a run writes, what one of its rows is, and its columns after the parameter
/// columns, in the order `out/README.md` lists them.
pub fn files() -> [(&'static str, &'static str, Vec<Column>); 11] {
    [
        (
            "summary.csv",
            "one per sweep point × configuration",
            summary::columns(),
        ),
        (
            "runs.csv",
            "one per sweep point × configuration × replication",
            runs::columns(),
        ),
        (
            "tools.csv",
            "one per sweep point × configuration × tool it calls",
            tools::columns(),
        ),
        (
            "timeseries.csv",
            "one per sweep point × configuration × tool it calls × bin of time (opt-in)",
            timeseries::columns(),
        ),
        (
            "replicas.csv",
            "one per sweep point × configuration × replica of a tool with several it calls",
            replicas::columns(),
        ),
        (
            "crashes.csv",
            "one per sweep point × configuration, where the workers holding calls crash",
            crashes::columns(),
        ),
        (
            "reservations.csv",
            "one per sweep point × configuration, where a tool reserves money before each call",
            reservations::columns(),
        ),
        (
            "edges.csv",
            "one per sweep point × configuration × edge of the call graph (where a tool is a service)",
            edges::columns(),
        ),
        (
            "replica-timeseries.csv",
            "one per sweep point × configuration × replica of a tool with several it calls × bin of time (with timeseries)",
            timeseries::replica_columns(),
        ),
        (
            "intents.csv",
            "one per intent (opt-in)",
            Trace::Intents.columns(),
        ),
        (
            "attempts.csv",
            "one per attempt (opt-in)",
            Trace::Attempts.columns(),
        ),
    ]
}

/// A column as a Table Schema field: `required` where a cell is never empty.
fn field(column: &Column) -> Value {
    let (kind, required) = match column.kind {
        Kind::Text => ("string", true),
        Kind::Word(_) => ("string", true),
        Kind::Count => ("integer", true),
        Kind::CountOrEmpty => ("integer", false),
        Kind::Number => ("number", true),
        Kind::NumberOrEmpty => ("number", false),
        Kind::Label => ("string", false),
        Kind::Flag => ("boolean", true),
    };
    let mut field = json!({ "name": column.name, "type": kind });
    let mut constraints = serde_json::Map::new();
    if required {
        constraints.insert("required".into(), true.into());
    }
    match column.kind {
        Kind::Count | Kind::CountOrEmpty => {
            constraints.insert("minimum".into(), 0.into());
        }
        Kind::Word(words) => {
            constraints.insert("enum".into(), json!(words));
        }
        Kind::Flag => {
            field["trueValues"] = json!(["true"]);
            field["falseValues"] = json!(["false"]);
        }
        _ => {}
    }
    if !constraints.is_empty() {
        field["constraints"] = constraints.into();
    }
    field
}

/// The Table Schema type of a parameter column whose axis takes `values`.
pub fn parameter_type(values: &[Param]) -> &'static str {
    use toml::Value::{Float, Integer};
    if values.iter().all(|p| matches!(p.0, Integer(_))) {
        "integer"
    } else if values.iter().all(|p| matches!(p.0, Integer(_) | Float(_))) {
        "number"
    } else {
        "string"
    }
}

/// `out/schema.json` for the output folders of `sweeps`, pretty-printed with a final newline.
pub fn document(sweeps: &[Sweep]) -> String {
    let tables: serde_json::Map<String, Value> = files()
        .iter()
        .map(|(file, rows, columns)| {
            let schema = json!({
                "fields": columns.iter().map(field).collect::<Vec<_>>(),
                "missingValues": [""],
            });
            (file.to_string(), json!({ "rows": rows, "schema": schema }))
        })
        .collect();
    let parameters: serde_json::Map<String, Value> = sweeps
        .iter()
        .filter(|s| !s.axes.is_empty())
        .map(|s| {
            let fields: Vec<Value> = s
                .axes
                .iter()
                .map(|a| json!({ "name": a.path, "type": parameter_type(&a.values) }))
                .collect();
            (s.base.name.clone(), json!({ "fields": fields }))
        })
        .collect();
    let document = json!({
        "description": "The columns of every CSV file retrysim writes, as Frictionless Table \
            Schemas (https://specs.frictionlessdata.io/table-schema/). A file in a sweep's \
            output folder starts with one parameter column per axis: prepend the experiment's \
            `parameters` fields (for another folder, type each axis by its values in the \
            folder's manifest.toml, [resolved.sweep]: all integers `integer`, all numbers \
            `number`, else `string`). out/README.md says what each column means.",
        "tables": tables,
        "parameters": parameters,
    });
    let mut text = serde_json::to_string_pretty(&document).expect("a JSON value serialises");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A column name means one thing: the same type in every file that has it.
    #[test]
    fn a_column_name_has_one_type_in_every_file() {
        let mut kinds: BTreeMap<&str, (&str, Kind)> = BTreeMap::new();
        for (file, _, columns) in files() {
            for c in columns {
                let (first, kind) = *kinds.entry(c.name).or_insert((file, c.kind));
                assert_eq!(
                    kind,
                    c.kind,
                    "`{}` is {} in {first} and {} in {file}",
                    c.name,
                    kind.name(),
                    c.kind.name()
                );
            }
        }
    }

    #[test]
    fn a_parameter_is_typed_by_its_axis_values() {
        let p = |v: toml::Value| Param(v);
        let ints = [p(1.into()), p(10.into())];
        let mixed = [p(0.into()), p(0.5.into())];
        let words = [p("unlimited".into()), p(1.into())];
        assert_eq!(
            [ints, mixed, words].map(|v| parameter_type(&v)),
            ["integer", "number", "string"]
        );
    }

    #[test]
    fn an_optional_count_is_an_integer_that_may_be_missing() {
        let f = field(&super::super::column::col(
            "max_attempts",
            Kind::CountOrEmpty,
        ));
        assert_eq!(
            f,
            json!({"name": "max_attempts", "type": "integer", "constraints": {"minimum": 0}})
        );
    }
}
