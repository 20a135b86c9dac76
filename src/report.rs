//! The table `retrysim run` prints: one row per configuration, each measurement beside its
//! closed form.

use std::fmt::Write;

use crate::metrics::{Estimate, Measure, Sample, StopReason};
use crate::model::{Tool, Workload};
use crate::run::{PolicyResult, Results};
use crate::time::Tick;
use crate::verdict::{self, Verdict};

/// A mean with its interval; a single sample has none, and shows the mean alone.
fn with_ci(e: Estimate) -> String {
    if e.half_width.is_finite() {
        format!("{:.4} ± {:.4}", e.mean, e.half_width)
    } else {
        format!("{:.4}", e.mean)
    }
}

/// A statistic with its sign, two decimals, never −0.00.
fn signed(x: f64) -> String {
    if !x.is_finite() {
        return if x > 0.0 { "+∞" } else { "−∞" }.into();
    }
    let text = format!("{x:+.2}");
    if text == "-0.00" {
        "+0.00".into()
    } else {
        text
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// A completion time to three significant figures, in the unit that reads best.
fn seconds(t: Tick) -> String {
    let s = t.seconds();
    match s {
        s if s >= 100.0 => format!("{s:.0} s"),
        s if s >= 10.0 => format!("{s:.1} s"),
        s if s >= 1.0 => format!("{s:.2} s"),
        s => format!("{:.3} s", s),
    }
}

/// How many intents stopped, by reason, such as `attempt_limit 60`; `—` if none did.
fn stops(r: &PolicyResult) -> String {
    let counts: Vec<String> = StopReason::ALL
        .into_iter()
        .map(|reason| (reason, r.totals.stopped(reason)))
        .filter(|&(_, n)| n > 0)
        .map(|(reason, n)| format!("{} {n}", reason.name()))
        .collect();
    if counts.is_empty() {
        "—".into()
    } else {
        counts.join(", ")
    }
}

/// Renders the comparison table: the heading, one row per configuration per sweep point, the
/// verdict's key, the task and recovery tables where they apply, each configuration described,
/// and a note on intents the horizon stopped.
pub fn table(results: &Results) -> String {
    let sweep = &results.sweep;
    let exp = &sweep.base;
    let mut out = heading(results);
    let comparisons = sweep.census.comparisons;
    out.push_str(&aligned(&main_rows(results, comparisons)));
    if !results.keeps_all() {
        let _ = writeln!(
            out,
            "{} of the {} points, evenly spaced; summary.csv has every row",
            results.kept.len(),
            results.finished
        );
    }
    if comparisons > 0 {
        out.push_str(&verdict_key(comparisons));
    }
    let _ = writeln!(out);
    if exp.many_calls() {
        out.push_str(&tasks(results));
        let _ = writeln!(out);
    }
    if let Some(table) = recoveries(results) {
        out.push_str(&table);
        let _ = writeln!(out);
    }
    if let Some(table) = costs(results) {
        out.push_str(&table);
        let _ = writeln!(out);
    }
    if exp.graph.is_measured() {
        out.push_str(&edges(results));
        let _ = writeln!(out);
    }
    if !sweep.axes.is_empty() {
        let _ = writeln!(
            out,
            "configurations as written, before each point's values:"
        );
    }
    for policy in &exp.policies {
        let _ = writeln!(
            out,
            "{}: {}",
            policy.name,
            crate::config::policy::describe(policy)
        );
        for (e, edge) in &policy.edge.overrides {
            let name = exp.graph.edges[*e].name(&exp.tools);
            let _ = writeln!(
                out,
                "  edge {name}: {}",
                crate::config::policy::describe(edge)
            );
            if let Some(falls) = crate::config::policy::fallbacks(&edge.edge, &exp.tools) {
                let _ = writeln!(out, "    {falls}");
            }
        }
    }
    out.push_str(&hung_notes(results));
    out
}

/// The experiment's name and description, its seed, replications, arrivals, tools and points.
fn heading(results: &Results) -> String {
    let sweep = &results.sweep;
    let exp = &sweep.base;
    let mut out = String::new();
    let reps = exp.replications;
    let across = if reps == 1 {
        "across intents"
    } else {
        "across replications"
    };
    let _ = writeln!(out, "{}", exp.name);
    if !exp.description.is_empty() {
        let _ = writeln!(out, "{}", exp.description);
    }
    let tools: Vec<String> = exp
        .called_tools(&exp.workload.calls)
        .map(|t| {
            match (&t.script, &t.health) {
                (Some(_), _) => format!("{}: scripted", t.name),
                (None, Some(h)) => format!(
                    "{}: a recorded health in {} stretches ({})",
                    t.name,
                    h.stretches.len(),
                    h.file
                ),
                (None, None) => {
                    // a, b and the 5xx share always; the rarer faults where drawn or swept.
                    let faults = faults(sweep, (&t.name, ""), &t.faults, 3);
                    let mut text = format!("{}: {}", t.name, faults.join(", "));
                    if let Some(burst) = &t.burst {
                        let _ = write!(text, "; {}", bursts(sweep, &t.name, burst));
                    }
                    text
                }
            }
        })
        .collect();
    let points = if sweep.axes.is_empty() {
        String::new()
    } else {
        let swept: Vec<&str> = sweep.paths().collect();
        format!(
            " · {} points over {}",
            sweep.len(),
            swept.join(if sweep.zip { " zipped with " } else { " × " })
        )
    };
    let _ = writeln!(
        out,
        "seed {} · {} replication{} · {} · {}{points}\n95% intervals {across}\n",
        exp.seed,
        reps,
        if reps == 1 { "" } else { "s" },
        arrivals(&exp.workload),
        tools.join("; "),
    );

    out
}

/// The header and one row per configuration per finished point.
fn main_rows(results: &Results, comparisons: usize) -> Vec<Vec<String>> {
    let sweep = &results.sweep;
    let header: Vec<String> = sweep
        .paths()
        .map(|p| p.rsplit('.').next().unwrap_or(p))
        .chain([
            "configuration",
            "attempts/intent",
            "theory",
            "duplicates/intent",
            "theory",
            "success",
            "ghosts",
            "p99 time",
            "stopped",
            "verdict",
        ])
        .map(String::from)
        .collect();
    let mut rows = vec![header];
    for (point, result) in results.shown() {
        for (policy, r) in point.experiment.policies.iter().zip(&result.policies) {
            let est = |m: Measure| r.estimate(m);
            let (attempts, duplicates) = (est(Measure::Attempts), est(Measure::Duplicates));
            let theory = |f: fn(&crate::theory::ClosedForms) -> f64| {
                r.theory
                    .as_ref()
                    .map_or("—".to_string(), |t| format!("{:.4}", f(t)))
            };
            let agrees = match (verdict::of(r, comparisons), verdict::furthest(r)) {
                (Some(Verdict::TooFew), _) if verdict::shared_run(r) => {
                    "too_few (one replication of intents that share bursts)".into()
                }
                (Some(Verdict::TooFew), _) => "too_few (one observation: no interval)".into(),
                (Some(v), Some(s)) => {
                    let word = match v {
                        Verdict::Disagrees => "DISAGREES",
                        other => other.name(),
                    };
                    format!(
                        "{word} (t {} on {}, {} df)",
                        signed(s.t),
                        s.measure.name(),
                        s.df
                    )
                }
                _ => "—".to_string(),
            };
            let cells = [
                policy.name.clone(),
                with_ci(attempts),
                theory(|t| t.attempts),
                with_ci(duplicates),
                theory(|t| t.duplicates),
                percent(est(Measure::Success).mean),
                percent(est(Measure::Ghost).mean),
                seconds(r.completion_p99),
                stops(r),
                agrees,
            ];
            rows.push(with_params(point, cells));
        }
    }
    rows
}

/// What the verdict column means, for a table of `comparisons` comparisons.
fn verdict_key(comparisons: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "verdict: each row compares attempts, effects, duplicates, success and ghosts with \
             theory by Student's t, (mean − theory) / standard error,\n         and shows the \
             t furthest from 0; agrees = every t inside its 95 % interval; borderline = one \
             outside, as one comparison in twenty is by chance;\n         disagrees = one \
             outside a {:.2} % interval (Bonferroni over the table's {comparisons} \
             comparisons): a table of correct rows shows it with a chance of {:.0} % at most",
        100.0 * verdict::widened_level(comparisons),
        100.0 * verdict::FAMILY_ERROR
    );
    out
}

/// A note for each configuration and point whose intents the horizon stopped.
fn hung_notes(results: &Results) -> String {
    let sweep = &results.sweep;
    let mut out = String::new();
    for (point, result) in results.shown() {
        for (policy, r) in point.experiment.policies.iter().zip(&result.policies) {
            let hung = r.totals.stopped(StopReason::Hung);
            if hung > 0 {
                let at: Vec<String> = sweep
                    .paths()
                    .zip(&point.params)
                    .map(|(path, v)| format!(" at {path} = {v}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "note: the horizon ({}) stopped {hung} intents of {}{} before they ended \
                     (status hung); no closed form applies",
                    point.experiment.horizon,
                    policy.name,
                    at.concat()
                );
            }
        }
    }
    out
}

/// Rows as columns aligned on their widest cell, two spaces apart.
pub fn aligned(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| {
            rows.iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// The task view, for workloads whose tasks make several calls: tasks that succeeded in every
/// call, the calls sent, and per tool its calls, the calls that reached it while it was down,
/// and the duplicate effects of a write — summed over replications.
/// A row of a printed table: the point's parameters, then `cells`.
fn with_params(
    point: &crate::sweep::Point,
    cells: impl IntoIterator<Item = String>,
) -> Vec<String> {
    point
        .params
        .iter()
        .map(ToString::to_string)
        .chain(cells)
        .collect()
}

/// A fault table as the header states it, `name = value` each: the first `always` (a, b, the
/// 5xx share) whatever they are, the others where drawn or swept, a swept one as the values
/// its sweep takes (the key `key` under `prefix` of tool `tool`).
fn faults(
    sweep: &crate::sweep::Sweep,
    (tool, prefix): (&str, &str),
    f: &crate::model::Faults,
    always: usize,
) -> Vec<String> {
    [
        ("a", "request_loss", f.request_loss),
        ("b", "reply_loss", f.reply_loss),
        ("5xx", "server_error", f.server_error),
        ("429", "throttled", f.throttled),
        ("403", "forbidden", f.forbidden),
        ("4xx", "invalid", f.invalid),
        ("connect", "connect_failure", f.connect_failure),
        ("503", "overloaded", f.overloaded),
        (
            "5xx after commit",
            "error_after_commit",
            f.error_after_commit,
        ),
    ]
    .into_iter()
    .enumerate()
    .filter_map(|(i, (name, key, p))| {
        let key = format!("{prefix}{key}");
        let swept = swept(sweep, tool, &key);
        (i < always || p > 0.0 || swept.is_some())
            .then(|| format!("{name} = {}", swept.unwrap_or(p.to_string())))
    })
    .collect()
}

/// A bursty tool's bad spells as the header states them: how long each state lasts (or that the
/// sweep sets it) and the faults of the bad one that are not nothing.
fn bursts(sweep: &crate::sweep::Sweep, tool: &str, burst: &crate::model::Burst) -> String {
    let spell = |key: &str, t: crate::time::Tick| {
        swept(sweep, tool, &format!("burst.{key}")).unwrap_or(t.to_string())
    };
    let faults = faults(sweep, (tool, "burst.in_bad."), &burst.in_bad, 0);
    format!(
        "{}bad spells of {} between good ones of {}: {}",
        if burst.per_replica {
            "each replica its own "
        } else {
            ""
        },
        spell("bad", burst.bad),
        spell("good", burst.good),
        if faults.is_empty() {
            "no faults".into()
        } else {
            faults.join(", ")
        }
    )
}

/// The values a sweep gives key `key` of tool `tool` (swept by its name or on every tool), as
/// `{0, 0.1, …, 0.5}`; `None` where no axis sweeps it.
fn swept(sweep: &crate::sweep::Sweep, tool: &str, key: &str) -> Option<String> {
    let axis = sweep
        .axes
        .iter()
        .find(|a| a.path == format!("tool.{tool}.{key}") || a.path == format!("tool.{key}"))?;
    let values: Vec<String> = axis.values.iter().map(ToString::to_string).collect();
    Some(match values.as_slice() {
        [first, second, .., last] if values.len() > 4 => {
            format!("{{{first}, {second}, …, {last}}}")
        }
        all => format!("{{{}}}", all.join(", ")),
    })
}

/// Each configuration's replications judged one by one against the trigger: how many recovered,
/// the share with its interval (its complement is the probability of collapse), and the median
/// time those took; `None` without a trigger.
fn recoveries(results: &Results) -> Option<String> {
    let sweep = &results.sweep;
    let mut rows = vec![
        sweep
            .paths()
            .map(|p| p.rsplit('.').next().unwrap_or(p).to_string())
            .chain(
                [
                    "configuration",
                    "recovered",
                    "share (95 % Wilson)",
                    "time to recover (median)",
                ]
                .map(String::from),
            )
            .collect::<Vec<_>>(),
    ];
    for (point, result) in results.shown() {
        for (policy, r) in point.experiment.policies.iter().zip(&result.policies) {
            let Some(v) = &r.recoveries else { continue };
            let (share, (lo, hi)) = v.share();
            let time = match (v.median(), v.median_interval()) {
                (None, _) => "—".to_string(),
                (Some(m), None) => seconds(m),
                (Some(m), Some((a, b))) => {
                    format!("{} ({} – {})", seconds(m), seconds(a), seconds(b))
                }
            };
            let cells = [
                policy.name.clone(),
                format!("{} of {}", v.recovered(), v.replications),
                format!("{} ({} – {})", percent(share), percent(lo), percent(hi)),
                time,
            ];
            rows.push(with_params(point, cells));
        }
    }
    (rows.len() > 1).then(|| {
        let mut out = aligned(&rows);
        out.push_str(
            "recovered: goodput back to within 10 % of its level before the trigger and staying \
             there, judged in each replication; 1 − share is the probability of collapse\n",
        );
        out
    })
}

/// The call graph's edges: each configuration's calls per call of the task on each, with the
/// closed form where it holds, the retries, duplicates and orphaned calls among them, and the
/// calls each edge served.
fn edges(results: &Results) -> String {
    let sweep = &results.sweep;
    let comparisons = sweep.census.edge_comparisons;
    let names = [
        "configuration",
        "edge",
        "calls/intent",
        "theory",
        "verdict",
        "retries",
        "duplicates",
        "orphaned",
        "served",
    ];
    let mut rows = vec![
        sweep
            .paths()
            .map(|p| p.rsplit('.').next().unwrap_or(p).to_string())
            .chain(names.map(String::from))
            .collect::<Vec<_>>(),
    ];
    for (point, result) in results.shown() {
        let exp = &point.experiment;
        for (policy, r) in exp.policies.iter().zip(&result.policies) {
            for (e, edge) in exp.graph.edges.iter().enumerate() {
                let f = crate::output::edges::Figures::of(r, e, comparisons);
                let calls = match f.ci {
                    Some(ci) => format!("{:.3} ± {ci:.3}", f.calls),
                    None => format!("{:.3}", f.calls),
                };
                let cells = [
                    policy.name.clone(),
                    edge.name(&exp.tools),
                    calls,
                    f.theory.map_or("—".into(), |t| format!("{t:.3}")),
                    f.verdict.map_or("—", Verdict::name).to_string(),
                    format!("{:.3}", f.retries),
                    format!("{:.3}", f.duplicates),
                    format!("{:.3}", f.orphaned),
                    format!("{:.3}", f.served),
                ];
                rows.push(with_params(point, cells));
            }
        }
    }
    let mut out = aligned(&rows);
    out.push_str(
        "per call of the task, over each edge of the call graph (edges.csv); duplicates here \
         are counted at every layer, where the table above counts the task's own tools\n",
    );
    let mut tails = vec![
        sweep
            .paths()
            .map(|p| p.rsplit('.').next().unwrap_or(p).to_string())
            .chain(["configuration", "p99 time", "closed form"].map(String::from))
            .collect::<Vec<_>>(),
    ];
    for (point, result) in results.shown() {
        for (policy, r) in point.experiment.policies.iter().zip(&result.policies) {
            if let Some(form) = r.fan_out_p99 {
                let cells = [
                    policy.name.clone(),
                    seconds(r.completion_p99),
                    seconds(form),
                ];
                tails.push(with_params(point, cells));
            }
        }
    }
    if tails.len() > 1 {
        let _ = writeln!(out);
        out.push_str(&aligned(&tails));
        out.push_str(
            "a fan-out's time is its slowest call's: P(max ≤ t) = F(t)ᴺ for N independent calls\n",
        );
    }
    out
}

fn tasks(results: &Results) -> String {
    let exp = &results.sweep.base;
    let tools: Vec<(usize, &Tool)> = (exp.called(&exp.workload.calls))
        .map(|t| (t, &exp.tools[t]))
        .collect();
    let mut header: Vec<String> = results
        .sweep
        .paths()
        .map(|p| p.rsplit('.').next().unwrap_or(p).to_string())
        .collect();
    header.extend(["configuration", "tasks succeeded", "calls"].map(String::from));
    for (_, tool) in &tools {
        header.push(format!("{} calls", tool.name));
        if !tool.server.outages.is_empty() {
            header.push(format!("{} calls while down", tool.name));
        }
        if tool.server.writes() {
            header.push(format!("{} duplicates", tool.name));
        }
    }
    header.push("short-circuited".into());
    let mut rows = vec![header];
    for (point, result) in results.shown() {
        for (policy, r) in point.experiment.policies.iter().zip(&result.policies) {
            let (tasks, succeeded) = (r.totals.tasks, r.totals.tasks_succeeded);
            let mut row: Vec<String> = point.params.iter().map(ToString::to_string).collect();
            let calls: u64 = tools.iter().map(|&(t, _)| r.tool_totals(t).calls).sum();
            row.extend([
                policy.name.clone(),
                format!(
                    "{succeeded}/{tasks} ({})",
                    percent(succeeded as f64 / tasks as f64)
                ),
                calls.to_string(),
            ]);
            for &(t, tool) in &tools {
                let totals = r.tool_totals(t);
                row.push(totals.calls.to_string());
                if !tool.server.outages.is_empty() {
                    row.push(totals.calls_while_down.to_string());
                }
                if tool.server.writes() {
                    row.push(totals.duplicates.to_string());
                }
            }
            row.push(r.totals.short_circuited.to_string());
            rows.push(row);
        }
    }
    aligned(&rows)
}

/// What the tasks cost, where a tool has a price: dollars per thousand tasks with their 95 %
/// interval (across replications) and the closed forms' where they apply, with whether they
/// agree; per thousand successful tasks; what retries added and what paid for work never used,
/// each in dollars with its interval and as a share of the bill; and the model tokens a task
/// read and generated.
fn costs(results: &Results) -> Option<String> {
    let billed =
        (results.shown()).any(|(_, result)| result.policies.iter().any(|r| r.costs.billed));
    if !billed {
        return None;
    }
    let mut header: Vec<String> = results
        .sweep
        .paths()
        .map(|p| p.rsplit('.').next().unwrap_or(p).to_string())
        .collect();
    header.extend(
        [
            "configuration",
            "$ / 1000 tasks",
            "theory",
            "agrees",
            "$ / 1000 successes",
            "retries add",
            "wasted",
            "tokens in / out per task",
        ]
        .map(String::from),
    );
    let thousand = |m: &crate::metrics::Moments| {
        let e = Estimate::from_sample(m);
        match e.half_width.is_finite() {
            true => format!("{:.2} ± {:.2}", 1e3 * e.mean, 1e3 * e.half_width),
            false => format!("{:.2}", 1e3 * e.mean),
        }
    };
    let mut rows = vec![header];
    for (point, result) in results.shown() {
        for (policy, r) in point.experiment.policies.iter().zip(&result.policies) {
            let c = &r.costs;
            let mut row: Vec<String> = point.params.iter().map(ToString::to_string).collect();
            // Dollars a thousand tasks with their interval, and their share of the bill.
            let part = |m: &crate::metrics::Moments| match c.per_task.mean() {
                0.0 => thousand(m),
                all => format!("{} ({})", thousand(m), percent(m.mean() / all)),
            };
            row.extend([
                policy.name.clone(),
                thousand(&c.per_task),
                (r.cost_theory).map_or("—".into(), |t| format!("{:.2}", 1e3 * t.cost_per_task)),
                match r.cost_agrees() {
                    "none" => "—".into(),
                    word => word.into(),
                },
                match c.per_success.mean().is_finite() {
                    true => thousand(&c.per_success),
                    false => "—".into(),
                },
                part(&c.retries),
                part(&c.wasted),
                match (c.input_tokens.mean(), c.output_tokens.mean()) {
                    (0.0, 0.0) => "—".into(),
                    (input, output) => format!("{input:.0} / {output:.0}"),
                },
            ]);
            rows.push(row);
        }
    }
    Some(aligned(&rows))
}

/// How many tasks each replication runs, or for how long they arrive.
fn arrivals(w: &Workload) -> String {
    match (w.tasks, w.duration) {
        (Some(n), None) => format!("{n} tasks each"),
        (None, Some(d)) => format!("tasks arriving for {d} each"),
        (Some(n), Some(d)) => format!("up to {n} tasks arriving for {d} each"),
        (None, None) => unreachable!("validated: a count or a duration"),
    }
}
