//! The optional `[explore]` table: how many faults to explore, which invariants to check, and
//! how many of the workload's tasks (a run of thousands is explored on a few of its calls).
//! `retrysim run` passes it by; `retrysim explore` and `check` read it.

use super::invariant::Invariant;
use crate::config::{ConfigError, Source};
use crate::metrics::StopReason;

/// Faults explored when neither `--faults` nor `[explore] faults` says.
pub const FAULTS: usize = 2;
/// The most faults a schedule may have: past it the schedules are too many to walk.
pub const MOST_FAULTS: usize = 8;

/// The `[explore]` table, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub faults: usize,
    pub invariants: Vec<Invariant>,
    /// The tasks explored, where not the workload's.
    pub tasks: Option<u64>,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            faults: FAULTS,
            tasks: None,
            invariants: Invariant::DEFAULT
                .iter()
                .filter_map(|n| Invariant::named(n))
                .collect(),
        }
    }
}

impl Spec {
    /// The config's `[explore]` table, or the defaults without one.
    pub fn read(source: &Source) -> Result<Spec, ConfigError> {
        let raw = crate::config::parse_raw(source)?;
        let mut spec = Spec::default();
        let Some(table) = &raw.explore else {
            return Ok(spec);
        };
        let t = table.get_ref();
        if let Some(k) = &t.faults {
            let allowed = format!("a whole number from 0 to {MOST_FAULTS}");
            spec.faults = whole(
                source,
                k,
                ("explore.faults", "faults"),
                0..=MOST_FAULTS as u64,
                &allowed,
            )? as usize;
        }
        if let Some(n) = &t.tasks {
            let allowed = "a whole number of 1 or more, such as 1";
            spec.tasks = Some(whole(
                source,
                n,
                ("explore.tasks", "tasks to explore"),
                1..=u64::MAX,
                allowed,
            )?);
        }
        if let Some(invariants) = &t.invariants {
            for (name, on) in invariants.get_ref() {
                let (Some(inv), Some(on)) = (Invariant::named(name), on.as_bool()) else {
                    return Err(ConfigError::at(
                        source,
                        invariants.span(),
                        &format!("explore.invariants.{name}"),
                        format!("`{name} = {on}` does not turn an invariant on or off"),
                    )
                    .allowed(format!("{} = true or false", Invariant::NAMED.join(", "))));
                };
                spec.invariants.retain(|i| *i != inv);
                if on {
                    spec.invariants.push(inv);
                }
            }
            spec.invariants
                .sort_by_key(|i| Invariant::NAMED.iter().position(|n| *n == i.name()));
        }
        if let Some(list) = &t.stop_reasons {
            let mut reasons = Vec::new();
            for (i, r) in list.get_ref().iter().enumerate() {
                let Some(reason) = StopReason::ALL
                    .into_iter()
                    .find(|s| s.name() == r.get_ref())
                else {
                    let names: Vec<&str> = StopReason::ALL.iter().map(|s| s.name()).collect();
                    return Err(ConfigError::at(
                        source,
                        r.span(),
                        &format!("explore.stop_reasons[{i}]"),
                        format!("\"{}\" is not a stop reason", r.get_ref()),
                    )
                    .allowed(names.join(", ")));
                };
                reasons.push(reason);
            }
            spec.invariants.push(Invariant::StopsFor(reasons));
        }
        Ok(spec)
    }
}

/// The whole number `v` of the table's `key`, within `range`; else its refusal, saying it is
/// not a number of `what` and what is `allowed`.
fn whole(
    source: &Source,
    v: &toml::Spanned<i64>,
    (key, what): (&str, &str),
    range: std::ops::RangeInclusive<u64>,
    allowed: &str,
) -> Result<u64, ConfigError> {
    match u64::try_from(*v.get_ref()) {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(ConfigError::at(
            source,
            v.span(),
            key,
            format!("{} is not a number of {what}", v.get_ref()),
        )
        .allowed(allowed)),
    }
}
