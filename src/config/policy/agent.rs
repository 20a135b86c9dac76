//! What an agent loop's tasks call (`calls`, read with the workload's tools by the caller), the
//! task-level retry (`replan`), what outlives a crash of the worker (`durability`), and the
//! admission rule that sends only within the worker's lease (`admit_within_lease`).

use crate::config::check::{Check, Result, key};
use crate::config::raw;
use crate::config::resolve::{at, some, texts, when};
use crate::model::Tool;
use crate::policy::{AgentRule, Durability, Release, Replan, ReplanFrom};

pub(super) fn read(check: &Check, raw: &raw::Policy, path: &str) -> Result<AgentRule> {
    let replan = key!(path, raw.replan);
    let durability = key!(path, raw.durability);
    let release = key!(path, raw.release);
    Ok(AgentRule {
        calls: None,
        within_lease: raw
            .admit_within_lease
            .as_ref()
            .is_some_and(|a| *a.get_ref()),
        release: check.named(
            release.value.as_ref(),
            &release.path,
            &Release::ALL,
            Release::name,
            Release::OnFailure,
        )?,
        durability: check.named(
            durability.value.as_ref(),
            &durability.path,
            &Durability::ALL,
            Durability::name,
            Durability::Checkpoint,
        )?,
        replan: match replan.value {
            None => None,
            Some(r) => {
                let r = r.get_ref();
                let from = key!(replan.path, r.from);
                Some(Replan {
                    from: check.named(
                        Some(from.value),
                        &from.path,
                        &ReplanFrom::ALL,
                        ReplanFrom::name,
                        ReplanFrom::Start,
                    )?,
                    max: r.max.as_ref().map_or(1, |m| *m.get_ref()),
                })
            }
        },
    })
}

pub(super) fn write(agent: &AgentRule, tools: &[Tool], out: &mut raw::Policy) {
    let AgentRule {
        calls,
        replan,
        durability,
        release,
        within_lease,
    } = agent;
    out.admit_within_lease = when(*within_lease, true);
    out.release = when(*release != Release::OnFailure, release.name().into());
    out.durability = when(
        *durability != Durability::Checkpoint,
        durability.name().into(),
    );
    out.calls =
        (calls.as_ref()).and_then(|calls| texts(calls.iter().map(|&c| tools[c].name.as_str())));
    out.replan = replan.map(|r| {
        at(raw::Replan {
            from: at(r.from.name().to_string()),
            max: some(r.max),
        })
    });
}

/// The re-plans, where the loop has any (its calls are the table's heading's).
pub(super) fn describe(agent: &AgentRule, out: &mut Vec<String>) {
    let AgentRule {
        calls: _,
        replan,
        durability,
        release,
        within_lease,
    } = agent;
    if *durability == Durability::IntentLog {
        out.push("an intent log before each send".into());
    }
    if *within_lease {
        out.push("sends only within its lease".into());
    }
    if *release == Release::WhenConclusive {
        out.push("reservations held while unknown".into());
    }
    if let Some(r) = replan {
        let times = if r.max == 1 {
            "once".to_string()
        } else {
            format!("{} times", r.max)
        };
        out.push(format!("re-plans {times} from the {}", r.from.name()));
    }
}
