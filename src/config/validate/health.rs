//! A tool's `health`: the file of its recorded stretches, as `retrysim calibrate` writes it.
//!
//! A CSV with a header: `from` (a duration since the start; the first 0, each later than the
//! one before), the rates of the faults its calls met — any of `request_loss`, `server_error`,
//! `reply_loss`, `throttled`, `forbidden`, `invalid`, `connect_failure`, each in [0, 1], adding
//! up to at most 1, a missing one 0 — `latency` (its service times against the tool's, above
//! 0; 1 where missing) and `calls` (how many calls the trace showed in it: read past). At most
//! [`MOST_SAMPLES`] stretches.

use std::sync::Arc;

use crate::config::ConfigError;
use crate::config::check::{Check, Result};
use crate::config::latency::{MOST_SAMPLES, locate};
use crate::config::raw;
use crate::model::Faults;
use crate::model::health::{Health, Stretch};
use crate::time::{Tick, parse_duration};

/// The rate columns, in the order a stretch's faults are filled.
const RATES: [&str; 7] = [
    "request_loss",
    "server_error",
    "reply_loss",
    "throttled",
    "forbidden",
    "invalid",
    "connect_failure",
];

/// The tool's recorded health, where it names one: refused beside a script, a burst or
/// replicas, which each decide its faults otherwise. `faults` are the tool's own, whose
/// `retry_after` and kinds the stretches keep.
pub(super) fn health(
    check: &Check,
    raw: &raw::Tool,
    faults: &Faults,
    path: &str,
) -> Result<Option<Health>> {
    let Some(file) = &raw.health else {
        return Ok(None);
    };
    let at = format!("{path}.health");
    let beside = [
        (
            raw.script.is_some(),
            "a script, which decides every attempt",
        ),
        (
            raw.burst.is_some(),
            "a burst, whose spells the record already shows",
        ),
        (
            !raw.replica.is_empty(),
            "replicas, which a record of one server cannot tell apart",
        ),
    ];
    if let Some((_, what)) = beside.iter().find(|(is, _)| *is) {
        return check.error_allowing(
            file.span(),
            &at,
            format!("a recorded health beside {what}"),
            "a health on a tool without a script, a burst or replicas",
        );
    }
    let Some((found, shown)) = locate(check, file, &at)? else {
        return Ok(Some(Health {
            file: file.get_ref().clone(),
            stretches: Arc::new([]),
        }));
    };
    let fail = |why: String| ConfigError::at(check.source, file.span(), &at, why);
    let opened = std::fs::File::open(&found).map_err(|e| fail(format!("{shown}: {e}")))?;
    let stretches = read(opened, &shown, faults).map_err(fail)?;
    Ok(Some(Health {
        file: file.get_ref().clone(),
        stretches: stretches.into(),
    }))
}

/// The stretches of a health file's bytes (shown as `shown`), each with `base`'s kinds of fault
/// and its own rates.
pub(crate) fn read(
    bytes: impl std::io::Read,
    shown: &str,
    base: &Faults,
) -> std::result::Result<Vec<Stretch>, String> {
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| format!("{shown}: {e}"))?
        .clone();
    let known = |h: &str| h == "from" || h == "latency" || h == "calls" || RATES.contains(&h);
    if let Some(unknown) = header.iter().map(str::trim).find(|h| !known(h)) {
        return Err(format!(
            "{shown}:1: no column `{unknown}`; the columns: from, latency, calls, {}",
            RATES.join(", ")
        ));
    }
    let column = |name: &str| header.iter().position(|h| h.trim() == name);
    let Some(from) = column("from") else {
        return Err(format!("{shown}:1: no `from` column in the header"));
    };
    let (latency, rates) = (column("latency"), RATES.map(column));
    let mut stretches: Vec<Stretch> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("{shown}: {e}"))?;
        let line = record.position().map_or(0, |p| p.line());
        let bad = |why: String| format!("{shown}:{line}: {why}");
        if stretches.len() == MOST_SAMPLES {
            return Err(bad(format!("more than {MOST_SAMPLES} stretches")));
        }
        let cell = |i: usize| record.get(i).unwrap_or("").trim();
        let start = parse_duration(cell(from)).map_err(|e| bad(format!("from: {e}")))?;
        match stretches.last() {
            None if start != Tick::ZERO => return Err(bad("the first stretch is from 0s".into())),
            Some(last) if start <= last.from => {
                return Err(bad(format!(
                    "from {start}, not after the stretch before it"
                )));
            }
            _ => {}
        }
        let number = |i: Option<usize>, name: &str, default: f64| match i.map(cell) {
            None | Some("") => Ok(default),
            Some(text) => (text.parse::<f64>().ok())
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(format!("{name}: `{text}` is not a number"))),
        };
        let mut r = [0.0; 7];
        for (k, (&i, name)) in rates.iter().zip(RATES).enumerate() {
            r[k] = number(i, name, 0.0)?;
            if !(0.0..=1.0).contains(&r[k]) {
                return Err(bad(format!("{name}: {} is no probability", r[k])));
            }
        }
        if r.iter().sum::<f64>() > 1.0 + 1e-9 {
            return Err(bad("the rates add up to more than 1".into()));
        }
        let scale = number(latency, "latency", 1.0)?;
        if scale <= 0.0 {
            return Err(bad(format!("latency: {scale} is not above 0")));
        }
        // In the order of `RATES`.
        stretches.push(Stretch {
            from: start,
            faults: Faults {
                request_loss: r[0],
                server_error: r[1],
                reply_loss: r[2],
                throttled: r[3],
                forbidden: r[4],
                invalid: r[5],
                connect_failure: r[6],
                error_after_commit: 0.0,
                overloaded: 0.0,
                ..*base
            },
            latency: scale,
        });
    }
    if stretches.is_empty() {
        return Err(format!("{shown}: no stretches"));
    }
    Ok(stretches)
}
