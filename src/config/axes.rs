//! `[sweep]`: axes that each name a config key by its path and give it a list of values or a
//! range, crossed into a grid or zipped. Every point is the config with its values set, then
//! validated like any config, so a swept value obeys exactly the rules a written one does; a
//! point that breaks one is reported at the value that made it.
//!
//! Paths are those of [`super::path`].

use std::ops::Range;
use std::sync::Arc;

use toml::{Spanned, Table, Value};

use super::check::{Check, Result};
use super::path::set;
use super::{ConfigError, Files, Origin, Source, raw, validate};
use crate::experiment::Experiment;
use crate::sweep::{Axis, Census, MakePoint, Param, Sweep};
use crate::time::{DURATION_HELP, Tick};

/// Keys that belong to the whole experiment, not to one point.
const FIXED: [&str; 6] = [
    "name",
    "description",
    "seed",
    "replications",
    "output",
    "sweep",
];
/// A larger sweep is more likely a typo in a range than an intent.
const MAX_POINTS: usize = 100_000;

/// An axis as read: its values, each with the span an error about it points at.
struct Spec {
    path: String,
    path_span: Range<usize>,
    values: Vec<(Param, Range<usize>)>,
    range: Option<[Param; 3]>,
}

/// Reads the config's sweep, or makes a one-point sweep of a config without one.
pub fn sweep(source: &Source, raw: raw::Config) -> Result<Sweep> {
    let Some(head) = head(source, &raw)? else {
        return Ok(Sweep::single(validate::experiment(source, &raw, 0)?));
    };
    let Head {
        base,
        zip,
        doc,
        specs,
    } = head;
    let span = raw.sweep.as_ref().map_or(0..0, Spanned::span);
    let check = Check { source };
    let combos = combinations(&check, &specs, zip, span)?;
    let axes = axes_of(&specs);
    let maker = Maker {
        doc,
        paths: axes.iter().map(|a| a.path.clone()).collect(),
        name: source.name.clone(),
        // Its points read the config's files once between them (see `Origin::Point`).
        origin: match &source.origin {
            Origin::Folder(dir) => Origin::Point(dir.clone(), Files::default()),
            origin => origin.clone(),
        },
    };
    // Every point is made and checked here, so a mistake at any of them is found before
    // anything runs; what the run needs of it is counted, and the point dropped.
    let mut census = Census::default();
    for combo in combos {
        let params: Vec<Param> = (specs.iter().zip(&combo))
            .map(|(s, &v)| s.values[v].0.clone())
            .collect();
        let experiment = maker
            .try_make(&params, specs.len())
            .map_err(|inner| blame(source, &specs, &combo, &inner))?;
        same_configurations(source, &specs, &combo, &base, &experiment)?;
        census.add(&experiment);
    }
    Ok(Sweep::new(base, axes, zip, census, Arc::new(maker)))
}

/// Every point compares the configurations the config names, in its order: a table, a chart's
/// series and a comparison with theory are per configuration, so a value may change what a
/// configuration does, not which there are.
fn same_configurations(
    source: &Source,
    specs: &[Spec],
    combo: &[usize],
    base: &Experiment,
    point: &Experiment,
) -> Result<()> {
    let names =
        |e: &Experiment| -> Vec<String> { e.policies.iter().map(|p| p.name.clone()).collect() };
    let (want, got) = (names(base), names(point));
    if want == got {
        return Ok(());
    }
    let inner = ConfigError::at(
        source,
        0..0,
        "policy",
        format!(
            "this point compares [{}] where the config compares [{}]",
            got.join(", "),
            want.join(", ")
        ),
    )
    .allowed("values that change what a configuration does; every point compares the same configurations");
    Err(blame(source, specs, combo, &inner))
}

/// The sweep as a config declares it, before its points are made: the config as written,
/// checked, its axes and mode.
struct Head {
    base: Experiment,
    zip: bool,
    /// The config's table without its sweep, which each point's values are set in.
    doc: Table,
    specs: Vec<Spec>,
}

/// The experiment, axes and mode of a config's sweep without making its points: what a chart
/// needs of a manifest's config, which ran, so its points were checked then. A config without
/// a sweep has no axes.
pub fn outline(source: &Source, raw: raw::Config) -> Result<(Experiment, Vec<Axis>, bool)> {
    Ok(match head(source, &raw)? {
        None => (validate::experiment(source, &raw, 0)?, Vec::new(), false),
        Some(head) => (head.base, axes_of(&head.specs), head.zip),
    })
}

fn axes_of(specs: &[Spec]) -> Vec<Axis> {
    (specs.iter())
        .map(|s| Axis {
            path: s.path.clone(),
            values: s.values.iter().map(|(p, _)| p.clone()).collect(),
            range: s.range.clone(),
        })
        .collect()
}

/// Reads and checks a config's sweep up to its points; `None` for a config without one.
fn head(source: &Source, raw: &raw::Config) -> Result<Option<Head>> {
    let Some(spanned) = &raw.sweep else {
        return Ok(None);
    };
    let check = Check { source };
    let spec = spanned.get_ref();
    let listed = spec.axis.get_ref();
    if listed.is_empty() {
        return check.error_allowing(
            spec.axis.span(),
            "sweep.axis",
            "the sweep has no axis".into(),
            "one or more [[sweep.axis]] tables, each with a path and values or a range",
        );
    }
    // The config as written is checked first, so its own mistakes are placed where they are.
    let mut base = validate::experiment(source, raw, listed.len())?;
    let zip = match &spec.mode {
        None => false,
        Some(m) => check.choice(m, "sweep.mode", &[("grid", false), ("zip", true)])?,
    };
    let replications = check.count(
        spec.replications.as_ref(),
        "sweep.replications",
        base.replications,
        "0 replications run nothing",
    )?;

    base.replications = replications;
    let mut doc: Table = toml::from_str(&source.text).expect("the text parsed as a config above");
    doc.remove("sweep");
    let mut specs: Vec<Spec> = Vec::new();
    for (i, axis) in listed.iter().enumerate() {
        let spec = axis_spec(&check, axis, &format!("sweep.axis[{i}]"), &specs)?;
        // The path must lead somewhere a value can go; what value fits is validation's say.
        set(&mut doc.clone(), &spec.path, &spec.values[0].0.0).map_err(|why| {
            ConfigError::at(
                source,
                spec.path_span.clone(),
                &format!("sweep.axis[{i}].path"),
                why,
            )
        })?;
        specs.push(spec);
    }

    Ok(Some(Head {
        base,
        zip,
        doc,
        specs,
    }))
}

/// Makes a sweep's points: the config without its sweep, each axis's value set at its path,
/// then read and validated as any config is.
#[derive(Debug)]
struct Maker {
    doc: Table,
    paths: Vec<String>,
    name: String,
    origin: Origin,
}

impl Maker {
    fn try_make(&self, params: &[Param], axes: usize) -> Result<Experiment> {
        let mut doc = self.doc.clone();
        for (path, value) in self.paths.iter().zip(params) {
            set(&mut doc, path, &value.0).expect("paths checked when the sweep was read");
        }
        let source = Source {
            name: self.name.clone(),
            text: toml::to_string(&doc).expect("a TOML table serializes"),
            origin: self.origin.clone(),
        };
        super::parse(&source).and_then(|raw| validate::experiment(&source, &raw, axes))
    }
}

impl MakePoint for Maker {
    fn make(&self, params: &[Param]) -> Experiment {
        self.try_make(params, self.paths.len())
            .expect("every point was checked when the sweep was read")
    }
}

fn axis_spec(check: &Check, axis: &Spanned<raw::Axis>, at: &str, earlier: &[Spec]) -> Result<Spec> {
    let raw = axis.get_ref();
    let path = raw.path.get_ref().clone();
    let segments: Vec<&str> = path.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return check.error_allowing(
            raw.path.span(),
            &format!("{at}.path"),
            format!("\"{path}\" is not a key path"),
            "keys joined by dots, such as \"tool.charge.reply_loss\" or \"workload.tasks\"",
        );
    }
    if FIXED.contains(&segments[0]) {
        return check.error_allowing(
            raw.path.span(),
            &format!("{at}.path"),
            format!("`{}` belongs to the whole experiment and cannot be swept", segments[0]),
            "a key of horizon, [workload], [[tool]] or [[policy]]; replications per point go in [sweep]",
        );
    }
    if earlier.iter().any(|s| s.path == path) {
        return check.error(
            raw.path.span(),
            &format!("{at}.path"),
            format!("\"{path}\" is swept twice"),
        );
    }
    let range_keys = [&raw.start, &raw.stop, &raw.step];
    let written_range = match range_keys {
        [Some(a), Some(z), Some(d)] => Some([a, z, d].map(|v| Param(v.get_ref().clone()))),
        _ => None,
    };
    let values = match (&raw.values, range_keys) {
        (Some(list), [None, None, None]) => {
            if list.get_ref().is_empty() {
                return check.error_allowing(
                    list.span(),
                    &format!("{at}.values"),
                    "an axis with no values has no points".into(),
                    "one or more values",
                );
            }
            list.get_ref()
                .iter()
                .map(|v| (Param(v.get_ref().clone()), v.span()))
                .collect()
        }
        (None, [Some(start), Some(stop), Some(step)]) => range(check, at, start, stop, step)?
            .into_iter()
            .map(|v| (Param(v), axis.span()))
            .collect(),
        (Some(list), _) => {
            return check.error_allowing(
                list.span(),
                &format!("{at}.values"),
                "an axis has values or a range, not both".into(),
                "`values = [...]`, or `start`, `stop` and `step`",
            );
        }
        (None, _) => {
            return check.error_allowing(
                axis.span(),
                at,
                "the axis has no values".into(),
                "`values = [...]`, or all of `start`, `stop` and `step`",
            );
        }
    };
    Ok(Spec {
        path,
        path_span: raw.path.span(),
        values,
        range: written_range,
    })
}

/// The values from `start` to `stop`, both included, by `step`: integers, decimals (kept to 12
/// significant places, so 0.1 steps print as 0.3, not 0.30000000000000004) or durations. A stop
/// the steps do not reach is refused, saying where they stop: a range that silently ends short
/// of what was asked reads as the whole of it.
fn range(
    check: &Check,
    at: &str,
    start: &Spanned<Value>,
    stop: &Spanned<Value>,
    step: &Spanned<Value>,
) -> Result<Vec<Value>> {
    let range = Steps {
        check,
        at,
        start,
        stop,
        step,
    };
    match (start.get_ref(), stop.get_ref(), step.get_ref()) {
        (Value::Integer(a), Value::Integer(z), Value::Integer(d)) => range.integers(*a, *z, *d),
        (Value::String(_), Value::String(_), Value::String(_)) => range.durations(),
        (a, z, d) => range.decimals(a, z, d),
    }
}

/// The most values a range may give one axis.
const MAX_VALUES: u64 = 10_000;

/// A range as written, and the refusals every kind of range shares.
struct Steps<'a> {
    check: &'a Check<'a>,
    at: &'a str,
    start: &'a Spanned<Value>,
    stop: &'a Spanned<Value>,
    step: &'a Spanned<Value>,
}

impl Steps<'_> {
    fn integers(&self, a: i64, z: i64, d: i64) -> Result<Vec<Value>> {
        if d <= 0 {
            return self.not_positive();
        }
        if z < a {
            return self.backwards();
        }
        // In i128: the span of two i64 can pass i64::MAX.
        let n = (i128::from(z) - i128::from(a)) / i128::from(d) + 1;
        if n > i128::from(MAX_VALUES) {
            return self.too_many(u64::try_from(n).unwrap_or(u64::MAX));
        }
        let last = i128::from(a) + (n - 1) * i128::from(d);
        if last != i128::from(z) {
            return self.short(last.to_string(), (last + i128::from(d)).to_string());
        }
        Ok((0..n as i64).map(|i| Value::Integer(a + i * d)).collect())
    }

    fn durations(&self) -> Result<Vec<Value>> {
        let (start, stop, step) = (self.start, self.stop, self.step);
        let a = self.check.duration(start, &format!("{}.start", self.at))?;
        let z = self.check.duration(stop, &format!("{}.stop", self.at))?;
        let d = self.check.duration(step, &format!("{}.step", self.at))?;
        if d == Tick::ZERO {
            return self.not_positive();
        }
        if z < a {
            return self.backwards();
        }
        let n = (z.0 - a.0) / d.0 + 1;
        if n > MAX_VALUES {
            return self.too_many(n);
        }
        let last = a.0 + (n - 1) * d.0;
        if last != z.0 {
            return self.short(
                Tick(last).to_string(),
                Tick(last.saturating_add(d.0)).to_string(),
            );
        }
        Ok((0..n)
            .map(|i| Value::String(Tick(a.0 + i * d.0).to_string()))
            .collect())
    }

    /// Decimals, or a refusal of a mix of kinds.
    fn decimals(&self, a: &Value, z: &Value, d: &Value) -> Result<Vec<Value>> {
        let (start, stop, step) = (self.start, self.stop, self.step);
        let number = |v: &Value| match v {
            Value::Integer(i) => Some(*i as f64),
            Value::Float(x) => Some(*x),
            _ => None,
        };
        let (Some(a), Some(z), Some(d)) = (number(a), number(z), number(d)) else {
            // The odd one out: start itself if it is neither kind, else the first unlike it.
            let kind = |v: &Value| (number(v).is_some(), matches!(v, Value::String(_)));
            let (odd, key) = match kind(start.get_ref()) {
                (false, false) => (start, "start"),
                first => [(stop, "stop"), (step, "step")]
                    .into_iter()
                    .find(|(v, _)| kind(v.get_ref()) != first)
                    .expect("not all of one kind"),
            };
            return self.check.error_allowing(
                odd.span(),
                &format!("{}.{key}", self.at),
                format!(
                    "`{key}` is a {}; start, stop and step must be of one kind",
                    odd.get_ref().type_str()
                ),
                &format!("all numbers, or all durations ({DURATION_HELP})"),
            );
        };
        if !(d > 0.0 && d.is_finite()) {
            return self.not_positive();
        }
        if z < a {
            return self.backwards();
        }
        // A hair of slack, so 0 to 0.5 by 0.1 reaches 0.5 despite binary fractions. Counted
        // in floats first: a span of 10³⁰ steps is no u64.
        let steps = ((z - a) / d + 1e-9).floor();
        if steps.is_nan() || steps >= MAX_VALUES as f64 {
            return self.too_many(if steps.is_finite() && steps < u64::MAX as f64 {
                steps as u64 + 1
            } else {
                u64::MAX
            });
        }
        let n = steps as u64 + 1;
        let last = a + steps * d;
        if z - last > 1e-9 * d {
            let shown = |x: f64| {
                format!("{x:.12}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            };
            return self.short(shown(last), shown(last + d));
        }
        Ok((0..n)
            .map(|i| {
                let x = a + i as f64 * d;
                Value::Float(
                    format!("{x:.12e}")
                        .parse()
                        .expect("a formatted float parses"),
                )
            })
            .collect())
    }

    fn too_many(&self, n: u64) -> Result<Vec<Value>> {
        self.check.error_allowing(
            self.step.span(),
            &format!("{}.step", self.at),
            format!("the range has {n} values"),
            &format!("at most {MAX_VALUES} values on one axis"),
        )
    }

    fn not_positive(&self) -> Result<Vec<Value>> {
        self.check.error_allowing(
            self.step.span(),
            &format!("{}.step", self.at),
            "the step must be more than 0".into(),
            "a positive step, in the type of start and stop",
        )
    }

    fn backwards(&self) -> Result<Vec<Value>> {
        self.check.error_allowing(
            self.stop.span(),
            &format!("{}.stop", self.at),
            "stop is below start".into(),
            "stop ≥ start",
        )
    }

    /// Where the steps stop short of `stop`: refused, with the stops on either side.
    fn short(&self, last: String, next: String) -> Result<Vec<Value>> {
        self.check.error_allowing(
            self.stop.span(),
            &format!("{}.stop", self.at),
            format!("the steps stop at {last}, short of the stop"),
            &format!("a stop a whole number of steps from start ({last} or {next}), or a step that divides stop − start"),
        )
    }
}

/// The value index of every axis at every point: a grid with the last axis varying fastest, or
/// the axes zipped.
fn combinations(
    check: &Check,
    specs: &[Spec],
    zip: bool,
    span: Range<usize>,
) -> Result<Vec<Vec<usize>>> {
    let lens: Vec<usize> = specs.iter().map(|s| s.values.len()).collect();
    if zip {
        if let Some(i) = lens.iter().position(|&n| n != lens[0]) {
            return check.error_allowing(
                specs[i].path_span.clone(),
                &format!("sweep.axis[{i}]"),
                format!(
                    "zipped axes need as many values each: \"{}\" has {}, \"{}\" has {}",
                    specs[0].path, lens[0], specs[i].path, lens[i]
                ),
                "axes of one length with mode = \"zip\", or mode = \"grid\"",
            );
        }
        return Ok((0..lens[0]).map(|v| vec![v; lens.len()]).collect());
    }
    let total = lens
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&n| n <= MAX_POINTS);
    let Some(total) = total else {
        return check.error_allowing(
            span,
            "sweep",
            "the grid has too many points".into(),
            &format!("at most {MAX_POINTS} points"),
        );
    };
    Ok((0..total)
        .map(|mut index| {
            let mut combo = vec![0; lens.len()];
            for (slot, &n) in combo.iter_mut().zip(&lens).rev() {
                *slot = index % n;
                index /= n;
            }
            combo
        })
        .collect())
}

/// Places an error found at a point on the value that made it: the value of the axis whose key
/// the error names (the last axis if none does), or the path itself for an unknown key.
fn blame(source: &Source, specs: &[Spec], combo: &[usize], inner: &ConfigError) -> ConfigError {
    let leaf = |s: &Spec| s.path.rsplit('.').next().unwrap_or_default().to_string();
    let i = specs
        .iter()
        .rposition(|s| inner.path.ends_with(&leaf(s)))
        .unwrap_or(specs.len() - 1);
    let point: Vec<String> = specs
        .iter()
        .zip(combo)
        .map(|(s, &v)| format!("{} = {}", s.path, s.values[v].0))
        .collect();
    let message = if inner.path.is_empty() {
        inner.message.clone()
    } else {
        format!("{}: {}", inner.path, inner.message)
    };
    let (span, path) = if inner.message.starts_with("unknown field") {
        (specs[i].path_span.clone(), format!("sweep.axis[{i}].path"))
    } else {
        (
            specs[i].values[combo[i]].1.clone(),
            format!("sweep.axis[{i}]"),
        )
    };
    let error = ConfigError::at(
        source,
        span,
        &path,
        format!("at {}: {message}", point.join(", ")),
    )
    .suggesting(inner.suggestion.clone());
    match &inner.allowed {
        Some(allowed) => error.allowed(allowed.clone()),
        None => error,
    }
}
