//! The `[tune]` table: which policy's keys to search and over what values, the constraints a
//! choice must meet and the objective it is best at, and how many replications to spend.
//! Read with the config (its keys are checked there), validated here against the figures and
//! the policy it names.

use toml::{Spanned, Value};

use crate::config::raw::Tune as RawTune;
use crate::config::{ConfigError, Source};
use crate::metrics::{Better, Figure};
use crate::time::{Tick, parse_duration};

/// Replications the search spends in all, by default: enough that the last rounds, where the
/// decision is close, get tens each.
pub const BUDGET: u64 = 400;
/// Replications per finalist on the fresh seeds of the validation.
pub const VALIDATION: u64 = 20;
/// Candidates the search hands to the validation.
pub const FINALISTS: u64 = 3;
/// The most replications a search may spend, and a validation give each finalist: the search
/// keeps every replication's figures (about a quarter of a kilobyte each) to compare candidates
/// on common random numbers, so these bound its memory (about 27 MB at the most).
pub const MOST_BUDGET: u64 = 100_000;
pub const MOST_VALIDATION: u64 = 10_000;
/// The most candidates a search may have: the values' product.
pub const MOST_CANDIDATES: usize = 4096;

/// Which way the objective is to go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Objective {
    pub figure: Figure,
    pub goal: Better,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constraint {
    pub figure: Figure,
    /// `>=` (the figure must be at least `bound`) or `<=` (at most).
    pub at_least: bool,
    pub bound: f64,
}

impl Constraint {
    /// Whether `value` meets it.
    pub fn met(&self, value: f64) -> bool {
        match self.at_least {
            true => value >= self.bound,
            false => value <= self.bound,
        }
    }

    /// The end of an interval `mean ± half_width` the constraint is judged at: the lower for
    /// `>=`, the upper for `<=`. Its 95 % bound holds when this end meets it.
    pub fn cautious(&self, mean: f64, half_width: f64) -> f64 {
        match self.at_least {
            true => mean - half_width,
            false => mean + half_width,
        }
    }

    /// The other end: where even the most hopeful reading of the interval misses it.
    pub fn hopeful(&self, mean: f64, half_width: f64) -> f64 {
        self.cautious(mean, -half_width)
    }

    pub fn text(&self) -> String {
        let op = if self.at_least { ">=" } else { "<=" };
        format!("{} {op} {}", self.figure.column(), self.bound)
    }
}

/// One searched key: its path in the policy table and the values tried, as TOML.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    pub path: String,
    pub values: Vec<Value>,
    /// Where the key is written in the `[tune.search]` table, for an error about its values.
    pub span: std::ops::Range<usize>,
}

/// The `[tune]` table, validated.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The `[[policy]]` whose keys are searched.
    pub policy: String,
    pub keys: Vec<Key>,
    /// Where `[tune.search]` is in the config, for errors a candidate causes.
    pub search_span: std::ops::Range<usize>,
    pub objective: Objective,
    pub constraints: Vec<Constraint>,
    pub budget: u64,
    pub validation: u64,
    pub finalists: u64,
}

impl Spec {
    /// Validates `raw`, read from `source`, whose policies are named `policies`.
    pub fn read(source: &Source, raw: &RawTune, policies: &[String]) -> Result<Spec, ConfigError> {
        let err = |span: std::ops::Range<usize>, path: &str, msg: String| {
            ConfigError::at(source, span, path, msg)
        };
        let policy = match (&raw.policy, policies) {
            (Some(p), _) if policies.contains(p.get_ref()) => p.get_ref().clone(),
            (Some(p), _) => {
                return Err(err(
                    p.span(),
                    "tune.policy",
                    format!("no [[policy]] is named \"{}\"", p.get_ref()),
                )
                .allowed(policies.join(", "))
                .suggesting(
                    crate::suggest::closest(p.get_ref(), policies.iter().map(String::as_str))
                        .map(|m| format!("did you mean \"{m}\"?")),
                ));
            }
            (None, [one]) => one.clone(),
            (None, _) => {
                return Err(err(
                    raw.search.span(),
                    "tune.policy",
                    "the config has several [[policy]] tables: name the one to search".into(),
                )
                .allowed(format!("policy = one of {}", policies.join(", "))));
            }
        };
        let objective = objective(source, &raw.objective)?;
        let constraints = (raw.constraints.iter())
            .enumerate()
            .map(|(i, c)| constraint(source, c, i))
            .collect::<Result<Vec<_>, _>>()?;
        let mut keys = Vec::new();
        for (path, value) in raw.search.get_ref() {
            let at = format!("tune.search.{path}");
            let values = values(value).map_err(|why| {
                err(raw.search.span(), &at, why).allowed(
                    "a list of values, or { from, to, points, scale = \"linear\" | \"log\" } over numbers or durations",
                )
            })?;
            keys.push(Key {
                path: path.clone(),
                values,
                span: key_span(source, raw.search.span(), path),
            });
        }
        if keys.is_empty() {
            return Err(
                err(raw.search.span(), "tune.search", "nothing to search".into())
                    .allowed("a policy key and its values, such as max_attempts = [2, 3, 4, 5]"),
            );
        }
        let count: usize = keys.iter().map(|k| k.values.len()).product();
        if count > MOST_CANDIDATES {
            return Err(err(
                raw.search.span(),
                "tune.search",
                format!("{count} candidates; at most {MOST_CANDIDATES}"),
            )
            .allowed("fewer values, or fewer points on a range"));
        }
        let positive = |v: &Option<Spanned<u64>>, path: &str, default: u64, (least, most)| match v {
            Some(n) if *n.get_ref() < least => {
                Err(err(n.span(), path, format!("{} is too few", n.get_ref()))
                    .allowed(format!("a whole number from {least} to {most}")))
            }
            Some(n) if *n.get_ref() > most => Err(err(
                n.span(),
                path,
                format!("{} is more than a search may spend", n.get_ref()),
            )
            .allowed(format!("a whole number from {least} to {most}"))),
            Some(n) => Ok(*n.get_ref()),
            None => Ok(default),
        };
        Ok(Spec {
            policy,
            keys,
            search_span: raw.search.span(),
            objective,
            constraints,
            budget: positive(&raw.budget, "tune.budget", BUDGET, (2, MOST_BUDGET))?,
            validation: positive(
                &raw.validation,
                "tune.validation",
                VALIDATION,
                (2, MOST_VALIDATION),
            )?,
            finalists: positive(
                &raw.finalists,
                "tune.finalists",
                FINALISTS,
                (1, MOST_CANDIDATES as u64),
            )?,
        })
    }

    /// The figures the search reads: the objective, then each constraint's.
    pub fn figures(&self) -> Vec<Figure> {
        let mut v = vec![self.objective.figure];
        for c in &self.constraints {
            if !v.contains(&c.figure) {
                v.push(c.figure);
            }
        }
        v
    }
}

/// Where `key` is written in the search table that starts at `table`: the first line from there
/// to the next table's header that sets it (bare or quoted), else the table.
fn key_span(source: &Source, table: std::ops::Range<usize>, key: &str) -> std::ops::Range<usize> {
    let text = source.text.get(table.start..).unwrap_or_default();
    let mut at = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if n > 0 && line.trim_start().starts_with('[') {
            break;
        }
        let written = line.trim_start();
        let bare = written.strip_prefix(key);
        let quoted = written.strip_prefix(&format!("\"{key}\""));
        if bare
            .or(quoted)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
        {
            let start = table.start + at + (line.len() - written.len());
            return start..start + line.trim_end().len() - (line.len() - written.len());
        }
        at += line.len();
    }
    table
}

/// A value as a person writes it in a table or a CSV cell: a string without its quotes.
pub fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A figure by its column name, or an error listing them.
fn figure(
    source: &Source,
    text: &Spanned<String>,
    path: &str,
    name: &str,
) -> Result<Figure, ConfigError> {
    Figure::named(name).ok_or_else(|| {
        let names = Figure::ALL.map(Figure::column);
        ConfigError::at(
            source,
            text.span(),
            path,
            format!("`{name}` is not a figure the tuner can read"),
        )
        .allowed(names.join(", "))
        .suggesting(crate::suggest::closest(name, names).map(|m| format!("did you mean \"{m}\"?")))
    })
}

/// `minimise FIGURE` or `maximise FIGURE` (also spelt -ize).
fn objective(source: &Source, text: &Spanned<String>) -> Result<Objective, ConfigError> {
    let words: Vec<&str> = text.get_ref().split_whitespace().collect();
    let goal = match words.first().copied() {
        Some("minimise" | "minimize") => Better::Lower,
        Some("maximise" | "maximize") => Better::Higher,
        _ => None.ok_or_else(|| {
            ConfigError::at(
                source,
                text.span(),
                "tune.objective",
                format!("\"{}\" is not an objective", text.get_ref()),
            )
            .allowed(
                "\"minimise FIGURE\" or \"maximise FIGURE\", such as \"minimise calls_per_task\"",
            )
        })?,
    };
    let [_, name] = words[..] else {
        return Err(ConfigError::at(
            source,
            text.span(),
            "tune.objective",
            "name one figure after the word".to_string(),
        )
        .allowed("\"minimise calls_per_task\""));
    };
    Ok(Objective {
        figure: figure(source, text, "tune.objective", name)?,
        goal,
    })
}

/// `FIGURE >= NUMBER` or `FIGURE <= NUMBER`.
fn constraint(
    source: &Source,
    text: &Spanned<String>,
    i: usize,
) -> Result<Constraint, ConfigError> {
    let path = format!("tune.constraints.{i}");
    let bad = |why: String| {
        ConfigError::at(source, text.span(), &path, why).allowed(
            "\"FIGURE >= NUMBER\" or \"FIGURE <= NUMBER\", such as \"task_success_rate >= 0.99\"",
        )
    };
    let t = text.get_ref();
    let (name, at_least, bound) = match (t.split_once(">="), t.split_once("<=")) {
        (Some((n, b)), None) => (n, true, b),
        (None, Some((n, b))) => (n, false, b),
        _ => return Err(bad(format!("\"{t}\" is not a constraint"))),
    };
    let bound: f64 = match bound.trim().parse() {
        Ok(b) if f64::is_finite(b) => b,
        _ => return Err(bad(format!("`{}` is not a number", bound.trim()))),
    };
    Ok(Constraint {
        figure: figure(source, text, &path, name.trim())?,
        at_least,
        bound,
    })
}

/// The values a searched key takes: a list as written, or a range's points.
fn values(value: &Value) -> Result<Vec<Value>, String> {
    let range = match value {
        Value::Array(items) if !items.is_empty() => return Ok(items.clone()),
        Value::Array(_) => return Err("an empty list".into()),
        Value::Table(t) => t,
        other => return Err(format!("`{other}` is one value, not values to search")),
    };
    for key in range.keys() {
        if !["from", "to", "points", "scale"].contains(&key.as_str()) {
            return Err(format!("unknown key `{key}` in a range"));
        }
    }
    let points = match range.get("points").and_then(Value::as_integer) {
        Some(n @ 2..=64) => n as usize,
        _ => return Err("a range needs `points`, a whole number from 2 to 64".into()),
    };
    let log = match range.get("scale").and_then(Value::as_str) {
        None | Some("linear") => false,
        Some("log") => true,
        Some(other) => {
            return Err(format!(
                "scale \"{other}\" is neither \"linear\" nor \"log\""
            ));
        }
    };
    let (Some(from), Some(to)) = (range.get("from"), range.get("to")) else {
        return Err("a range needs `from` and `to`".into());
    };
    let steps = |a: f64, b: f64| -> Result<Vec<f64>, String> {
        if log && (a <= 0.0 || b <= 0.0) {
            return Err("a log scale needs both ends above zero".into());
        }
        Ok((0..points)
            .map(|i| {
                let t = i as f64 / (points - 1) as f64;
                match log {
                    true => (a.ln() + t * (b.ln() - a.ln())).exp(),
                    false => a + t * (b - a),
                }
            })
            .collect())
    };
    let mut out: Vec<Value> = match (from, to) {
        (Value::Integer(a), Value::Integer(b)) => (steps(*a as f64, *b as f64)?.into_iter())
            .map(|x| Value::Integer(x.round() as i64))
            .collect(),
        (Value::String(a), Value::String(b)) => {
            let parse = |t: &str| parse_duration(t).map_err(|e| e.to_string());
            let (a, b) = (parse(a)?, parse(b)?);
            // Durations to the millisecond above one, as a person would write them.
            (steps(a.0 as f64, b.0 as f64)?.into_iter())
                .map(|x| {
                    let ticks = if x >= 1000.0 {
                        (x / 1000.0).round() * 1000.0
                    } else {
                        x.round()
                    };
                    Value::String(Tick(ticks as u64).to_string())
                })
                .collect()
        }
        (a, b) => match (
            a.as_float().or(a.as_integer().map(|i| i as f64)),
            b.as_float().or(b.as_integer().map(|i| i as f64)),
        ) {
            (Some(a), Some(b)) => steps(a, b)?
                .into_iter()
                .map(|x| Value::Float((x * 1e6).round() / 1e6))
                .collect(),
            _ => return Err("`from` and `to` are two numbers or two durations".into()),
        },
    };
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(text: &str) -> Vec<String> {
        let t: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        values(&t["v"])
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn ranges_give_their_points() {
        assert_eq!(
            range("{ from = 1, to = 9, points = 5 }"),
            ["1", "3", "5", "7", "9"]
        );
        assert_eq!(
            range("{ from = \"100ms\", to = \"10s\", points = 3, scale = \"log\" }"),
            ["\"100ms\"", "\"1s\"", "\"10s\""]
        );
        assert_eq!(range("[2, 3]"), ["2", "3"]);
        assert_eq!(
            range("{ from = 1, to = 2, points = 4 }"),
            ["1", "2"],
            "rounded, then the same values once"
        );
    }

    #[test]
    fn constraints_hold_at_their_cautious_end() {
        let c = Constraint {
            figure: Figure::TaskSuccess,
            at_least: true,
            bound: 0.99,
        };
        assert!(c.met(c.cautious(0.995, 0.004)) && !c.met(c.cautious(0.995, 0.006)));
        assert!(c.met(c.hopeful(0.985, 0.006)));
        let c = Constraint {
            figure: Figure::CompletionP99,
            at_least: false,
            bound: 2.0,
        };
        assert!(!c.met(c.cautious(1.9, 0.2)) && c.met(c.hopeful(2.1, 0.2)));
    }
}
