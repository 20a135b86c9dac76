//! Stories read back from an output folder: the manifest for each configuration's marks, the
//! traces for what happened.

use std::path::Path;

use super::{Attempt, Intent, Marks, Story};
use crate::error::Error;
use crate::output::manifest::Written;
use crate::output::table::CsvTable;
use crate::output::trace::Trace;
use crate::time::Tick;

/// Every intent of an output folder's traces, with each configuration's marks.
#[derive(Clone, Debug)]
pub struct Stories {
    pub experiment: String,
    pub marks: Vec<Marks>,
    /// By configuration, in the config's order; within it, by replication and intent.
    intents: Vec<(usize, Intent)>,
}

impl Stories {
    /// Reads the manifest and both traces of the unswept run in `dir`.
    pub fn read(dir: &Path) -> Result<Stories, Error> {
        let sweep = Written::read(dir)?.sweep()?;
        if !sweep.axes.is_empty() {
            return Err(Error::NotInOutput(format!(
                "{} is a sweep: a story is told of one run; pin every swept key with --set \
                 and run it again",
                dir.display()
            )));
        }
        let exp = &sweep.base;
        let marks: Vec<Marks> = (exp.policies.iter())
            .map(|p| Marks {
                policy: p.name.clone(),
                layers: match &p.rule.layers {
                    None => vec![String::new()],
                    Some(l) => (l.outer.iter().map(|o| o.name.clone()))
                        .chain([l.innermost.clone()])
                        .collect(),
                },
                deadline: p.time.limits.deadline,
                reset_each_layer: p.rule.layers.as_ref().is_some_and(|l| l.reset_each),
                cancel_after: p.time.limits.cancel_after,
                calls: p.agent.calls.as_ref().unwrap_or(&exp.workload.calls).len(),
                callers: (exp.graph.edges.iter())
                    .filter_map(|e| {
                        let caller = &exp.tools[e.caller?].name;
                        Some((exp.tools[e.callee].name.clone(), caller.clone()))
                    })
                    .collect(),
            })
            .collect();
        let lookup_time: Vec<(String, Tick)> = (exp.tools.iter())
            .map(|t| (t.name.clone(), t.lookup.time))
            .collect();
        let intents = read_intents(dir, &marks, &lookup_time)?;
        Ok(Stories {
            experiment: exp.name.clone(),
            marks,
            intents,
        })
    }

    /// The story of `intent` (or of task `task`, when `task` is set) of configuration
    /// `policy` in replication `replication`; or what there is to choose from.
    pub fn story(
        &self,
        policy: &str,
        replication: u64,
        intent: Option<u64>,
        task: Option<u64>,
    ) -> Result<Story<'_>, Error> {
        let Some(p) = self.marks.iter().position(|m| m.policy == policy) else {
            let names: Vec<&str> = self.marks.iter().map(|m| m.policy.as_str()).collect();
            return Err(Error::NotInOutput(format!(
                "{} has no configuration `{policy}`: it has {}",
                self.experiment,
                names.join(", ")
            )));
        };
        let marks = &self.marks[p];
        let calls = marks.calls.max(1) as u64;
        let wanted = |i: &Intent| match task {
            Some(t) => i.intent / calls == t,
            None => Some(i.intent) == intent,
        };
        let of_run: Vec<&Intent> = self
            .intents
            .iter()
            .filter(|(q, i)| *q == p && i.replication == replication)
            .map(|(_, i)| i)
            .collect();
        let intents: Vec<&Intent> = of_run.iter().copied().filter(|i| wanted(i)).collect();
        if intents.is_empty() {
            let what = match task {
                Some(t) => format!("task {t}"),
                None => format!("intent {}", intent.unwrap_or(0)),
            };
            let last = of_run.iter().map(|i| i.intent).max();
            let have = match (task, last) {
                (_, None) => format!("replication {replication} traced no intents"),
                (Some(_), Some(n)) => format!("it has tasks 0 to {}", n / calls),
                (None, Some(n)) => format!("it has intents 0 to {n}"),
            };
            return Err(Error::NotInOutput(format!(
                "{} · {policy}: no {what} in replication {replication}: {have}",
                self.experiment
            )));
        }
        Ok(Story {
            experiment: &self.experiment,
            marks,
            task,
            intents,
        })
    }
}

/// Both traces, joined: each intent with its attempts.
fn read_intents(
    dir: &Path,
    marks: &[Marks],
    lookup_time: &[(String, Tick)],
) -> Result<Intents, Error> {
    for trace in Trace::ALL {
        if !dir.join(trace.file()).exists() {
            return Err(Error::NotInOutput(format!(
                "{} has no {}: run its config with `[output] intents = true` and `attempts = \
                 true` (or --intents --attempts), or give `trace` the config itself",
                dir.display(),
                trace.file()
            )));
        }
    }
    let (mut intents, declared) = intent_rows(dir, marks)?;
    join_attempts(dir, marks, lookup_time, (&mut intents, &declared))?;
    Ok(intents)
}

/// A line of an output file that does not read as retrysim writes it.
fn bad(path: &Path, line: u64, why: String) -> Error {
    Error::BadOutput(format!("{}: line {line}: {why}", path.display()))
}

/// Intents, each with its configuration's index (by `marks`), as a trace lists them.
type Intents = Vec<(usize, Intent)>;

/// intents.csv's rows, and the attempts each declares.
fn intent_rows(dir: &Path, marks: &[Marks]) -> Result<(Intents, Vec<u64>), Error> {
    let path = dir.join(Trace::Intents.file());
    let table = CsvTable::read(&path, &[], &Trace::Intents.columns())?;
    let at = |name: &str| table.at(name);
    let count = |cells: &[String], name: &str, line: u64| {
        let cell = &cells[at(name)];
        cell.parse::<u64>()
            .map_err(|_| bad(&path, line, format!("`{cell}` is too large a count")))
    };
    let mut intents: Vec<(usize, Intent)> = Vec::new();
    // Each intent's attempts, as intents.csv counts them: where several rows in a row go by
    // one number (a task's call, its fallbacks and its services' calls), the attempts rows
    // fill each in turn.
    let mut declared: Vec<u64> = Vec::new();
    for (line, cells) in table.rows() {
        declared.push(count(cells, "attempts", line)?);
        let policy = &cells[at("policy")];
        let p = marks
            .iter()
            .position(|m| &m.policy == policy)
            .ok_or_else(|| bad(&path, line, format!("no configuration `{policy}`")))?;
        intents.push((
            p,
            Intent {
                replication: count(cells, "replication", line)?,
                intent: count(cells, "intent", line)?,
                tool: cells[at("tool")].clone(),
                status: cells[at("status")].clone(),
                stop_reason: cells[at("stop_reason")].clone(),
                business_state: cells[at("business_state")].clone(),
                start: Tick(count(cells, "start_tick", line)?),
                end: Tick(count(cells, "end_tick", line)?),
                effects: count(cells, "effects", line)?,
                short_circuited: count(cells, "short_circuited", line)?,
                attempts: Vec::new(),
            },
        ));
    }
    Ok((intents, declared))
}

/// attempts.csv's rows, each given to its intent.
fn join_attempts(
    dir: &Path,
    marks: &[Marks],
    lookup_time: &[(String, Tick)],
    (intents, declared): (&mut [(usize, Intent)], &[u64]),
) -> Result<(), Error> {
    let path = dir.join(Trace::Attempts.file());
    let table = CsvTable::read(&path, &[], &Trace::Attempts.columns())?;
    let at = |name: &str| table.at(name);
    // Both files list intents in the same order, each intent's attempts together.
    let mut next = 0;
    for (line, cells) in table.rows() {
        let count = |name: &str| {
            let cell = &cells[at(name)];
            cell.parse::<u64>()
                .map_err(|_| bad(&path, line, format!("`{cell}` is too large a count")))
        };
        let (policy, replication, intent) = (
            &cells[at("policy")],
            count("replication")?,
            count("intent")?,
        );
        let same = |(p, i): &(usize, Intent)| {
            marks[*p].policy == *policy && i.replication == replication && i.intent == intent
        };
        while next < intents.len()
            && (!same(&intents[next]) || intents[next].1.attempts.len() as u64 >= declared[next])
        {
            next += 1;
        }
        let Some((_, owner)) = intents.get_mut(next) else {
            return Err(bad(
                &path,
                line,
                format!(
                    "an attempt of {policy} intent {intent} that intents.csv does not list in this order"
                ),
            ));
        };
        let path_cell = &cells[at("layer")];
        let layers = path_cell
            .split('/')
            .map(str::parse::<u32>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad(&path, line, format!("`{path_cell}` is not a layer path")))?;
        let end = Tick(count("end_tick")?);
        let lookup = match cells[at("lookup")].as_str() {
            "none" => None,
            answer => {
                let time = lookup_time
                    .iter()
                    .find(|(t, _)| *t == owner.tool)
                    .map_or(Tick::ZERO, |(_, t)| *t);
                Some((answer.to_string(), end.after(time)))
            }
        };
        let granted = &cells[at("granted_timeout_ticks")];
        owner.attempts.push(Attempt {
            number: count("attempt")? as u32,
            path: layers,
            dispatch: Tick(count("dispatch_tick")?),
            end,
            granted: if granted.is_empty() {
                None
            } else {
                Some(Tick(count("granted_timeout_ticks")?))
            },
            outcome: cells[at("outcome")].clone(),
            committed: cells[at("committed")] == "true",
            key: cells[at("key")].clone(),
            lookup,
        });
    }
    Ok(())
}
