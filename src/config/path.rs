//! Setting a config key by its path, as sweeps and the command line's `--set` and `--scan` do.
//!
//! Paths follow the TOML: `workload.tasks`, `horizon`, `policy.retry-only.max_attempts`.
//! Under `tool` and `policy` the next segment picks an element by its `name`; without a name
//! (`tool.reply_loss`) the key is set on every element. In any other list a number picks an
//! element by its position from 0 (`workload.rate.2.at`, `tool.api.outages.0.until`). A key
//! the document leaves out is added, and so is a table on the way to it.

use toml::{Table, Value};

/// Arrays of tables whose elements a path picks by name.
const NAMED: [&str; 2] = ["tool", "policy"];

/// The most segments a path may have. The deepest key a config has is five deep
/// (`tool.<name>.outages.<n>.until`); a path is walked one table a segment, so its length bounds
/// the walk's depth, here and in the TOML writer and reader after it.
pub const MAX_SEGMENTS: usize = 16;

/// Sets the key at `path` in the config document; says why when the path leads nowhere.
pub fn set(doc: &mut Table, path: &str, value: &Value) -> std::result::Result<(), String> {
    let segments: Vec<&str> = path.split('.').collect();
    if segments.len() > MAX_SEGMENTS {
        return Err(format!(
            "`{path}` has {} keys in a row; no config key is more than {MAX_SEGMENTS} deep",
            segments.len()
        ));
    }
    set_in(doc, &segments, value, path)
}

fn set_in(
    table: &mut Table,
    segments: &[&str],
    value: &Value,
    path: &str,
) -> std::result::Result<(), String> {
    let (&key, rest) = segments.split_first().expect("paths have a segment");
    if rest.is_empty() {
        if let Some(Value::Table(_)) = table.get(key) {
            return Err(format!(
                "`{path}` is a table; name one of its keys, such as `{path}.<key>`"
            ));
        }
        table.insert(key.to_string(), value.clone());
        return Ok(());
    }
    let entry = table
        .entry(key.to_string())
        .or_insert_with(|| Value::Table(Table::new()));
    match entry {
        Value::Table(inner) => set_in(inner, rest, value, path),
        Value::Array(items) if NAMED.contains(&key) => {
            let named = items
                .iter()
                .position(|item| item.get("name").and_then(Value::as_str) == Some(rest[0]));
            match named {
                Some(_) if rest.len() == 1 => Err(format!(
                    "`{path}` names a {key}; add the key to set, such as `{path}.<key>`"
                )),
                Some(i) => match &mut items[i] {
                    Value::Table(item) => set_in(item, &rest[1..], value, path),
                    _ => Err(format!("`{key}` is not a list of tables")),
                },
                // `tool.reply_loss`: the key on every tool; `tool.x.reply_loss`: tool x's.
                None if rest.len() == 1 => items.iter_mut().try_for_each(|item| match item {
                    Value::Table(item) => set_in(item, rest, value, path),
                    _ => Err(format!("`{key}` is not a list of tables")),
                }),
                None => {
                    let names: Vec<&str> = items
                        .iter()
                        .filter_map(|i| i.get("name").and_then(Value::as_str))
                        .collect();
                    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    let meant = crate::suggest::closest(rest[0], names.iter().copied())
                        .map_or(String::new(), |n| format!("; did you mean \"{n}\"?"));
                    Err(format!(
                        "no {key} is named \"{}\" (the config's: {}){meant}",
                        rest[0],
                        quoted.join(", ")
                    ))
                }
            }
        }
        Value::Array(items) => {
            let Ok(i) = rest[0].parse::<usize>() else {
                return Err(format!(
                    "`{key}` is a list: pick an element by its position from 0, such as `{key}.0`"
                ));
            };
            let len = items.len();
            match items.get_mut(i) {
                None => Err(format!(
                    "`{key}` has {len} elements, from 0; `{path}` asks for element {i}"
                )),
                Some(slot) if rest.len() == 1 => {
                    *slot = value.clone();
                    Ok(())
                }
                Some(Value::Table(item)) => set_in(item, &rest[1..], value, path),
                Some(_) => Err(format!(
                    "element {i} of `{key}` holds a value, so `{path}` leads nowhere"
                )),
            }
        }
        _ => Err(format!("`{key}` holds a value, so `{path}` leads nowhere")),
    }
}
