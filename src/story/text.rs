//! A story as plain text for the terminal: a heading, the lanes drawn in characters on a
//! shared time axis, then every event in time order with its tick.

use std::fmt::Write;

use super::{Bar, BarKind, MomentKind, Story};
use crate::time::Tick;

/// Columns the lanes are drawn across.
const WIDTH: usize = 64;

/// The whole story as text, ending in a newline.
pub fn render(story: &Story) -> String {
    let mut out = String::new();
    let (start, end) = story.span();
    let _ = writeln!(out, "{}", heading(story));
    for i in &story.intents {
        let state = if i.status == "succeeded" {
            "succeeded".to_string()
        } else {
            format!("stopped: {}", i.stop_reason)
        };
        let _ = writeln!(
            out,
            "  intent {} ({}): {state} · {} attempt(s) · {} side effect(s) · ticks {} → {} · \
             business state {}",
            i.intent,
            i.tool,
            i.attempts.len(),
            i.effects,
            i.start.0,
            i.end.0,
            i.business_state
        );
    }
    out.push('\n');
    let lanes = story.lanes();
    let name_width = lanes
        .iter()
        .map(|l| l.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let span = end.since(start).0.max(1);
    let column = |t: Tick| ((t.since(start).0 as u128 * WIDTH as u128) / span as u128) as usize;
    let _ = writeln!(
        out,
        "{:name_width$}  {:<w$}{}",
        "tick",
        start.0,
        end.0,
        w = WIDTH - end.0.to_string().len() + 1
    );
    for lane in &lanes {
        let mut row = vec![' '; WIDTH + 1];
        for bar in &lane.bars {
            draw_bar(&mut row, bar, column(bar.from), column(bar.to));
        }
        let _ = writeln!(
            out,
            "{:name_width$}  {}",
            lane.name,
            row.iter().collect::<String>().trim_end()
        );
    }
    let moments = story.moments();
    for m in &moments {
        let x = column(m.at.min(end).max(start));
        let _ = writeln!(
            out,
            "{:name_width$}  {}┆ {} at {}",
            "",
            " ".repeat(x),
            moment_name(&m.what),
            super::time_words(m.at)
        );
    }
    out.push_str(LEGEND);
    if story.marks.layers.len() > 1 && story.intents.len() == 1 {
        out.push_str("  [2--] an outer layer's attempt, spanning its inner ones\n");
    }
    out.push('\n');
    let _ = writeln!(out, "{:>8}  {:<9}{:<9}what", "tick", "attempt", "layer");
    for (at, attempt, layer, what) in events(story) {
        let _ = writeln!(out, "{at:>8}  {attempt:<9}{layer:<9}{what}");
    }
    out
}

/// The story's first line: what, whose, and how it ended.
pub fn heading(story: &Story) -> String {
    let (start, end) = story.span();
    let whose = match (story.task, story.intents.first()) {
        (Some(t), _) => format!("task {t}"),
        (None, Some(i)) => format!("intent {}", i.intent),
        (None, None) => "nothing".into(),
    };
    format!(
        "{} · {} · {whose}: {} dispatch(es) in {}, {}",
        story.experiment,
        story.marks.policy,
        story.dispatches(),
        super::span_words(end.since(start)),
        story.ending()
    )
}

const LEGEND: &str =
    "  [==+ an attempt and how it ended: + ok, x refused or 5xx, ? lost (request or reply),
      T timeout, C cancelled, * committed a side effect · ~~ a lookup\n";

fn draw_bar(row: &mut [char], bar: &Bar, from: usize, to: usize) {
    let (fill, last) = match &bar.kind {
        BarKind::Attempt { outcome, committed } => ('=', end_glyph(outcome, *committed)),
        BarKind::Span => ('-', ']'),
        BarKind::Lookup { .. } => ('~', '~'),
    };
    // A lookup starts where its attempt's end glyph is: it begins one column on.
    let from = if matches!(bar.kind, BarKind::Lookup { .. }) {
        (from + 1).min(row.len() - 1)
    } else {
        from
    };
    let to = to.max(from);
    for c in &mut row[from..=to] {
        *c = fill;
    }
    if !matches!(bar.kind, BarKind::Lookup { .. }) {
        row[from] = '[';
    }
    row[to] = last;
    // The label sits inside the bar where it fits.
    let room = to.saturating_sub(from + 1);
    if matches!(bar.kind, BarKind::Span) && bar.label.len() <= room {
        for (k, ch) in bar.label.chars().enumerate() {
            row[from + 1 + k] = ch;
        }
    }
}

fn end_glyph(outcome: &str, committed: bool) -> char {
    if committed {
        return '*';
    }
    match outcome {
        "ok" => '+',
        "lost_request" | "lost_reply" => '?',
        "timeout" => 'T',
        "cancelled" => 'C',
        "unanswered" => '.',
        _ => 'x',
    }
}

fn moment_name(m: &MomentKind) -> &'static str {
    match m {
        MomentKind::Deadline => "deadline",
        MomentKind::Cancelled => "cancelled",
        MomentKind::BreakerRefused => "breaker refused the call",
    }
}

/// Every event of the story in time order: (tick, attempt, layer path, what happened).
pub fn events(story: &Story) -> Vec<(u64, String, String, String)> {
    let mut out: Vec<(u64, usize, String, String, String)> = Vec::new();
    let mut order = 0;
    let mut push = |at: Tick, attempt: String, layer: String, what: String| {
        out.push((at.0, order, attempt, layer, what));
        order += 1;
    };
    for m in story.moments() {
        if m.what != MomentKind::BreakerRefused {
            push(
                m.at,
                String::new(),
                String::new(),
                moment_name(&m.what).to_string(),
            );
        }
    }
    let many = story.intents.len() > 1;
    for i in &story.intents {
        let tool = if many {
            format!("{}: ", i.tool)
        } else {
            String::new()
        };
        for a in &i.attempts {
            let path = a.layer_path();
            let granted = a
                .granted
                .map_or(String::new(), |g| format!(", granted {} ticks", g.0));
            let key = if a.key.is_empty() {
                String::new()
            } else {
                format!(", key {}", a.key)
            };
            let number = format!("#{}", a.number);
            push(
                a.dispatch,
                number.clone(),
                path,
                format!("{tool}sent{granted}{key}"),
            );
            let effect = if a.committed {
                ", committed a side effect"
            } else {
                ""
            };
            push(
                a.end,
                number.clone(),
                String::new(),
                format!("{tool}{}{effect}", outcome_words(&a.outcome)),
            );
            if let Some((answer, at)) = &a.lookup {
                push(
                    a.end,
                    number.clone(),
                    String::new(),
                    format!("{tool}lookup of {} sent", a.key),
                );
                push(
                    *at,
                    number,
                    String::new(),
                    format!("{tool}lookup answered: {}", answer.replace('_', " ")),
                );
            }
        }
        if i.short_circuited > 0 {
            push(
                i.end,
                String::new(),
                String::new(),
                format!("{tool}the breaker refused the call: never sent"),
            );
        }
        let ending = if i.status == "succeeded" {
            format!("{tool}succeeded ({})", i.business_state.replace('_', " "))
        } else {
            format!("{tool}stopped: {}", i.stop_reason)
        };
        push(i.end, String::new(), String::new(), ending);
    }
    out.sort_by_key(|e| (e.0, e.1));
    out.into_iter()
        .map(|(t, _, a, l, w)| (t, a, l, w))
        .collect()
}

/// An outcome in words, as the client and the trace see it.
pub fn outcome_words(outcome: &str) -> String {
    match outcome {
        "ok" => "ok: the reply came back".into(),
        "lost_request" => "lost: the request never reached the server".into(),
        "lost_reply" => "lost: the server did the work, the reply was lost".into(),
        "timeout" => "timed out: the client stopped waiting (the server may go on)".into(),
        "cancelled" => "cancelled: the client stopped waiting".into(),
        "unanswered" => "still unanswered when the run ended".into(),
        "conflict" => "refused: the key is held with another payload".into(),
        "503" => "turned away: the server's line was full (503), no work done".into(),
        other => format!("failed: {other}"),
    }
}
