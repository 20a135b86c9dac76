//! A latency table → a [`Latency`]: which keys each distribution takes, their ranges, and the
//! file of measured latencies an empirical distribution reads.

use std::sync::Arc;

use toml::{Spanned, Value};

use super::check::{Check, Result};
use super::{ConfigError, Origin, raw};
use crate::model::Latency;
use crate::model::latency::{Empirical, GammaQuantiles};
use crate::time::{DURATION_HELP, Tick, parse_duration};

/// Φ⁻¹(0.99): a lognormal's p99 is median · exp(σ · Z99).
const Z99: f64 = 2.326_347_874_040_841;

/// The distributions, each with the keys it requires; `lognormal` takes `sigma` or `p99`.
const DISTRIBUTIONS: [(&str, &[&str]); 8] = [
    ("constant", &["value"]),
    ("uniform", &["min", "max"]),
    ("exponential", &["mean"]),
    ("lognormal", &["median"]),
    ("gamma", &["shape", "mean"]),
    ("weibull", &["shape", "scale"]),
    ("empirical", &["file"]),
    ("folded_normal", &["mean", "sd"]),
];

pub fn latency(check: &Check, spanned: &Spanned<raw::Latency>, path: &str) -> Result<Latency> {
    distribution(check, spanned, path, Quantity::Duration)
}

/// What a distribution's values count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Durations: a unit (`"250ms"`) or a bare number of ticks; a file's `latency` column.
    Duration,
    /// Whole tokens, bare numbers only; a file's `tokens` column.
    Tokens,
}

/// A distribution of token counts, written as a latency is but in whole tokens: a model's
/// prompt or answer size. Its values are kept as ticks, one a token.
pub fn tokens(check: &Check, spanned: &Spanned<raw::Latency>, path: &str) -> Result<Latency> {
    distribution(check, spanned, path, Quantity::Tokens)
}

/// Refuses a token count that is not a whole number.
fn whole_tokens(check: &Check, raw: &raw::Latency, path: &str) -> Result<()> {
    let values = [
        ("value", &raw.value),
        ("min", &raw.min),
        ("max", &raw.max),
        ("mean", &raw.mean),
        ("median", &raw.median),
        ("p99", &raw.p99),
        ("scale", &raw.scale),
        ("sd", &raw.sd),
    ];
    for (key, value) in values {
        if let Some(v) = value.as_ref().filter(|v| !v.get_ref().is_integer()) {
            return check.error_allowing(
                v.span(),
                &format!("{path}.{key}"),
                format!(
                    "expected a number of tokens, found {}",
                    v.get_ref().type_str()
                ),
                "a whole number of tokens, such as 1200",
            );
        }
    }
    Ok(())
}

/// Refuses a key that does not belong to the distribution (first: it is most likely the one
/// mistyped), then a key it needs and lacks.
fn keys_of(
    check: &Check,
    spanned: &Spanned<raw::Latency>,
    (dist, needs): (&str, &[&str]),
    path: &str,
) -> Result<()> {
    let raw = spanned.get_ref();
    let takes: Vec<&str> = match dist {
        "lognormal" => vec!["median", "sigma", "p99"],
        _ => needs.to_vec(),
    };
    let given = [
        ("value", raw.value.as_ref().map(Spanned::span)),
        ("min", raw.min.as_ref().map(Spanned::span)),
        ("max", raw.max.as_ref().map(Spanned::span)),
        ("mean", raw.mean.as_ref().map(Spanned::span)),
        ("median", raw.median.as_ref().map(Spanned::span)),
        ("sigma", raw.sigma.as_ref().map(Spanned::span)),
        ("p99", raw.p99.as_ref().map(Spanned::span)),
        ("shape", raw.shape.as_ref().map(Spanned::span)),
        ("scale", raw.scale.as_ref().map(Spanned::span)),
        ("file", raw.file.as_ref().map(Spanned::span)),
        ("sd", raw.sd.as_ref().map(Spanned::span)),
    ];
    let allowed = match dist {
        "lognormal" => "for dist = \"lognormal\": median, and sigma or p99".to_string(),
        _ => format!("for dist = \"{dist}\": {}", needs.join(", ")),
    };
    // A key that does not belong is reported first: it is most likely the one mistyped.
    if let Some((key, Some(span))) = given
        .iter()
        .find(|(k, s)| s.is_some() && !takes.contains(k))
    {
        return check.error_allowing(
            span.clone(),
            &format!("{path}.{key}"),
            format!("`{key}` does not apply to dist = \"{dist}\""),
            &allowed,
        );
    }
    if let Some((key, _)) = given.iter().find(|(k, s)| s.is_none() && needs.contains(k)) {
        return check.error_allowing(
            spanned.span(),
            path,
            format!("dist = \"{dist}\" needs `{key}`"),
            &allowed,
        );
    }
    Ok(())
}

fn distribution(
    check: &Check,
    spanned: &Spanned<raw::Latency>,
    path: &str,
    quantity: Quantity,
) -> Result<Latency> {
    let raw = spanned.get_ref();
    if quantity == Quantity::Tokens {
        whole_tokens(check, raw, path)?;
    }
    let dist = raw.dist.get_ref().as_str();
    let Some(&(_, needs)) = DISTRIBUTIONS.iter().find(|(name, _)| *name == dist) else {
        let names: Vec<String> = DISTRIBUTIONS
            .iter()
            .map(|(n, _)| format!("\"{n}\""))
            .collect();
        let meant = crate::suggest::closest(dist, DISTRIBUTIONS.iter().map(|(n, _)| *n));
        let e = ConfigError::at(
            check.source,
            raw.dist.span(),
            &format!("{path}.dist"),
            format!("unknown distribution \"{dist}\""),
        );
        return Err(e
            .allowed(names.join(", "))
            .suggesting(meant.map(|m| format!("did you mean \"{m}\"?"))));
    };
    keys_of(check, spanned, (dist, needs), path)?;
    let dur = |v: &Option<Spanned<Value>>, key: &str| {
        let v = v.as_ref().expect("presence checked above");
        amount(check, v, &format!("{path}.{key}"), quantity)
    };
    // A count of tokens is shown as one, a duration as one.
    let shown = |t: Tick| match quantity {
        Quantity::Duration => t.to_string(),
        Quantity::Tokens => t.0.to_string(),
    };
    let positive = |v: &Option<Spanned<f64>>, key: &str| {
        let valid: fn(f64) -> bool = |x| x.is_finite() && x > 0.0;
        let path = format!("{path}.{key}");
        check.number(
            v.as_ref(),
            &path,
            0.0,
            valid,
            "a positive number",
            "a finite number > 0",
        )
    };
    Ok(match dist {
        "constant" => Latency::Constant(dur(&raw.value, "value")?),
        "uniform" => {
            let (min, max) = (dur(&raw.min, "min")?, dur(&raw.max, "max")?);
            if min > max {
                return check.error(
                    raw.max.as_ref().expect("checked").span(),
                    &format!("{path}.max"),
                    format!("max ({}) is below min ({})", shown(max), shown(min)),
                );
            }
            Latency::Uniform { min, max }
        }
        "exponential" => Latency::Exponential {
            mean: dur(&raw.mean, "mean")?.0 as f64,
        },
        "lognormal" => lognormal(check, spanned, path, quantity)?,
        "gamma" => {
            let shape = positive(&raw.shape, "shape")?;
            Latency::Gamma(GammaQuantiles::new(
                shape,
                dur(&raw.mean, "mean")?.0 as f64 / shape,
            ))
        }
        "folded_normal" => Latency::FoldedNormal {
            mean: dur(&raw.mean, "mean")?.0 as f64,
            sd: match dur(&raw.sd, "sd")? {
                Tick::ZERO => {
                    return check.error_allowing(
                        raw.sd.as_ref().expect("checked").span(),
                        &format!("{path}.sd"),
                        "a spread of 0 is a constant".into(),
                        "a positive duration, or dist = \"constant\"",
                    );
                }
                sd => sd.0 as f64,
            },
        },
        "weibull" => Latency::Weibull {
            shape: positive(&raw.shape, "shape")?,
            scale: dur(&raw.scale, "scale")?.0 as f64,
        },
        _ => {
            let file = raw.file.as_ref().expect("checked");
            Latency::Empirical(empirical(check, file, &format!("{path}.file"), quantity)?)
        }
    })
}

/// The most tokens a token distribution's value may be: far past any model's context, and
/// small enough that a context grown over every turn an agent may take is counted exactly.
pub const MOST_TOKENS: u64 = 1_000_000_000_000;
/// The most rows a latency, token or arrival file holds: eight bytes each kept, so 80 MB.
pub const MOST_SAMPLES: usize = 10_000_000;

/// A duration or a count of tokens, as `quantity` says the distribution holds.
fn amount(check: &Check, value: &Spanned<Value>, path: &str, quantity: Quantity) -> Result<Tick> {
    match quantity {
        Quantity::Duration => check.duration(value, path),
        Quantity::Tokens => token_count(check, value, path),
    }
}

/// A whole number of tokens, 0 to [`MOST_TOKENS`] (the integer was checked as one already).
fn token_count(check: &Check, value: &Spanned<Value>, path: &str) -> Result<Tick> {
    match value.get_ref() {
        Value::Integer(n) if (0..=MOST_TOKENS as i64).contains(n) => Ok(Tick(*n as u64)),
        Value::Integer(n) if *n < 0 => check.error_allowing(
            value.span(),
            path,
            format!("{n} is negative; token counts are zero or more"),
            "a whole number of tokens, such as 1200",
        ),
        Value::Integer(n) => check.error_allowing(
            value.span(),
            path,
            format!("{n} tokens is more than a token count may be"),
            &format!("a whole number of tokens from 0 to {MOST_TOKENS}"),
        ),
        other => check.error_allowing(
            value.span(),
            path,
            format!("expected a number of tokens, found {}", other.type_str()),
            "a whole number of tokens, such as 1200",
        ),
    }
}

/// By median and spread σ, or by median and 99th percentile (σ = ln(p99/median)/Φ⁻¹(0.99)).
fn lognormal(
    check: &Check,
    spanned: &Spanned<raw::Latency>,
    path: &str,
    quantity: Quantity,
) -> Result<Latency> {
    let raw = spanned.get_ref();
    let value = |v: &Spanned<Value>, at: &str| amount(check, v, at, quantity);
    let median = value(
        raw.median.as_ref().expect("checked"),
        &format!("{path}.median"),
    )?;
    let sigma = match (&raw.sigma, &raw.p99) {
        (Some(sigma), None) => check.number(
            Some(sigma),
            &format!("{path}.sigma"),
            0.0,
            |s| s.is_finite() && s >= 0.0,
            "a spread",
            "a finite number ≥ 0",
        )?,
        (None, Some(p99)) => {
            let p = value(p99, &format!("{path}.p99"))?;
            if p < median || median == Tick::ZERO {
                let (p, median) = match quantity {
                    Quantity::Duration => (p.to_string(), median.to_string()),
                    Quantity::Tokens => (format!("{} tokens", p.0), format!("{} tokens", median.0)),
                };
                return check.error_allowing(
                    p99.span(),
                    &format!("{path}.p99"),
                    format!("a p99 of {p} with a median of {median} is no lognormal"),
                    "a positive median, and p99 ≥ median",
                );
            }
            libm::log(p.0 as f64 / median.0 as f64) / Z99
        }
        _ => {
            return check.error_allowing(
                spanned.span(),
                path,
                "dist = \"lognormal\" needs one of `sigma` and `p99`".into(),
                "median, and sigma or p99",
            );
        }
    };
    Ok(Latency::LogNormal {
        median: median.0 as f64,
        sigma,
    })
}

/// Reads a CSV of measured latencies (a header, and a column `latency` of durations) or token
/// counts (a column `tokens` of whole numbers), sorted, at most [`MOST_SAMPLES`] rows.
fn empirical(
    check: &Check,
    file: &Spanned<String>,
    path: &str,
    quantity: Quantity,
) -> Result<Empirical> {
    let column = match quantity {
        Quantity::Duration => "latency",
        Quantity::Tokens => "tokens",
    };
    samples(check, file, path, (column, quantity))
}

/// Reads a CSV of arrival times since the start (a header, and a column `at` of durations),
/// sorted, at most [`MOST_SAMPLES`] rows: `arrival = "recorded"`'s file.
pub(crate) fn arrival_times(
    check: &Check,
    file: &Spanned<String>,
    path: &str,
) -> Result<Empirical> {
    samples(check, file, path, ("at", Quantity::Duration))
}

/// The column `column` of the CSV `file` names, read as `quantity`, sorted.
fn samples(
    check: &Check,
    file: &Spanned<String>,
    path: &str,
    (column, quantity): (&str, Quantity),
) -> Result<Empirical> {
    let name = file.get_ref();
    let fail = |why: String| ConfigError::at(check.source, file.span(), path, why);
    let files = match &check.source.origin {
        Origin::Point(_, files) => Some(files),
        _ => None,
    };
    if let Some(samples) = files.and_then(|f| f.get(name)) {
        return Ok(Empirical {
            file: name.clone(),
            samples,
        });
    }
    let Some((found, shown)) = locate(check, file, path)? else {
        return Ok(Empirical::named(name));
    };
    let opened = std::fs::File::open(&found).map_err(|e| fail(format!("{shown}: {e}")))?;
    let samples: Arc<[Tick]> = read_samples(opened, &shown, (column, quantity))
        .map_err(fail)?
        .into();
    if let Some(files) = files {
        files.keep(name, samples.clone());
    }
    Ok(Empirical {
        file: name.clone(),
        samples,
    })
}

/// Where the file `file` names lies, and how to show it: inside the config's folder, or an
/// error; `None` for a manifest read back, which names its files without reading them.
pub(crate) fn locate(
    check: &Check,
    file: &Spanned<String>,
    path: &str,
) -> Result<Option<(std::path::PathBuf, String)>> {
    let name = file.get_ref();
    let fail = |why: String| ConfigError::at(check.source, file.span(), path, why);
    let dir = match &check.source.origin {
        Origin::Folder(dir) | Origin::Point(dir, _) => dir,
        Origin::Manifest => return Ok(None),
        Origin::Text => {
            return Err(fail(
                "a config without a folder (the built-in one) cannot read files".into(),
            ));
        }
    };
    let target = dir.join(name);
    let (Ok(folder), Ok(found)) = (dir.canonicalize(), target.canonicalize()) else {
        return Err(fail(format!("cannot find {}", target.display())));
    };
    if !found.starts_with(&folder) {
        return check.error_allowing(
            file.span(),
            path,
            format!("{name} lies outside the config's folder"),
            "a path relative to the config, inside its folder",
        );
    }
    Ok(Some((found, target.display().to_string())))
}

/// The column `name` of a CSV's bytes, read as `quantity`, sorted; errors name the file (as
/// `shown`) and line.
pub(crate) fn read_samples(
    bytes: impl std::io::Read,
    shown: &str,
    (name, quantity): (&str, Quantity),
) -> std::result::Result<Vec<Tick>, String> {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers = reader.headers().map_err(|e| format!("{shown}: {e}"))?;
    let Some(column) = headers.iter().position(|h| h.trim() == name) else {
        return Err(format!("{shown}: no `{name}` column in the header"));
    };
    let mut samples = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("{shown}: {e}"))?;
        let line = record.position().map_or(0, |p| p.line());
        let cell = record.get(column).unwrap_or("").trim();
        let tick = match (cell.parse::<u64>(), quantity) {
            (Ok(t), Quantity::Tokens) if t > MOST_TOKENS => {
                return Err(format!(
                    "{shown}:{line}: {t} tokens is more than a token count may be; write a whole number from 0 to {MOST_TOKENS}"
                ));
            }
            (Ok(t), _) => Tick(t),
            (Err(_), Quantity::Tokens) => {
                return Err(format!(
                    "{shown}:{line}: \"{cell}\" is no number of tokens; write a whole number"
                ));
            }
            (Err(_), Quantity::Duration) => parse_duration(cell).map_err(|why| {
                // A unit left out already says what to write.
                let why = why.to_string();
                match why.contains(DURATION_HELP) {
                    true => format!("{shown}:{line}: {why}"),
                    false => format!("{shown}:{line}: {why}; write {DURATION_HELP}"),
                }
            })?,
        };
        if samples.len() == MOST_SAMPLES {
            return Err(format!(
                "{shown}:{line}: more than {MOST_SAMPLES} rows; a file holds at most that many"
            ));
        }
        samples.push(tick);
    }
    if samples.is_empty() {
        return Err(format!("{shown}: no {name}"));
    }
    samples.sort_unstable();
    Ok(samples)
}
