//! A story as a Mermaid `sequenceDiagram`: the client and each tool called as participants, in
//! the order they were first called, every request, reply, loss, commit, lookup and limit in
//! time order. Across a call graph, a service's calls come from the service, not the client.
//! GitHub renders it in a Markdown file inside a ```` ```mermaid ```` block.

use std::fmt::Write;

use super::{MomentKind, Story};
use crate::time::Tick;

/// Who stands in a story: each tool called, in the order it was first called, and who sends
/// each its requests.
struct Cast<'a> {
    story: &'a Story<'a>,
    tools: Vec<&'a str>,
}

impl<'a> Cast<'a> {
    fn of(story: &'a Story<'a>) -> Self {
        let mut by_start: Vec<_> = story.intents.iter().collect();
        by_start.sort_by_key(|i| i.attempts.first().map_or(i.end, |a| a.dispatch));
        let mut tools: Vec<&str> = Vec::new();
        for i in by_start {
            if !tools.contains(&i.tool.as_str()) {
                tools.push(&i.tool);
            }
        }
        Cast { story, tools }
    }

    /// The participant standing for `tool`.
    fn server(&self, tool: &str) -> String {
        let k = self.tools.iter().position(|t| *t == tool).unwrap_or(0);
        format!("S{k}")
    }

    /// Who sends `tool` its requests: the service that calls it, where the story has it, or
    /// else the client.
    fn sender(&self, tool: &str) -> String {
        (self.story.marks.callers.iter())
            .find(|(callee, caller)| callee == tool && self.tools.contains(&caller.as_str()))
            .map_or_else(|| "C".to_string(), |(_, caller)| self.server(caller))
    }
}

/// The diagram's text, ending in a newline.
pub fn render(story: &Story) -> String {
    let cast = Cast::of(story);
    let mut steps: Vec<(Tick, usize, String)> = Vec::new();
    let mut add = |at: Tick, line: String| {
        let n = steps.len();
        steps.push((at, n, line));
    };
    // The limits first: at a shared tick they are what cut the attempt short.
    for m in story.moments() {
        let what = match m.what {
            MomentKind::Deadline => "deadline",
            MomentKind::Cancelled => "cancelled",
            MomentKind::BreakerRefused => continue,
        };
        add(m.at, format!("Note over C: {what} at tick {}", m.at.0));
    }
    for i in &story.intents {
        let (s, c) = (cast.server(&i.tool), cast.sender(&i.tool));
        for a in &i.attempts {
            let layer = a.layer_path();
            let send = if a.outcome == "lost_request" {
                "-x"
            } else {
                "->>"
            };
            let key = if a.key.is_empty() {
                String::new()
            } else {
                format!(" key {}", a.key)
            };
            add(
                a.dispatch,
                format!(
                    "{c}{send}{s}: attempt {} layer {layer}{key} at tick {}",
                    a.number, a.dispatch.0
                ),
            );
            if a.committed {
                add(a.end, format!("Note over {s}: commits the side effect"));
            }
            let end = a.end.0;
            add(
                a.end,
                match a.outcome.as_str() {
                    "lost_request" => {
                        format!("Note over {c}: request lost, no reply by tick {end}")
                    }
                    "lost_reply" => format!("{s}--x{c}: reply lost at tick {end}"),
                    "timeout" => format!("Note over {c}: timeout at tick {end}, stops waiting"),
                    "cancelled" => {
                        format!("Note over {c}: cancelled at tick {end}, stops waiting")
                    }
                    "unanswered" => {
                        format!("Note over {c}: still waiting when the run ends at tick {end}")
                    }
                    outcome => format!("{s}-->>{c}: {outcome} at tick {end}"),
                },
            );
            if let Some((answer, at)) = &a.lookup {
                add(a.end, format!("{c}->>{s}: lookup{key} at tick {end}"));
                let words = answer.replace('_', " ");
                add(*at, format!("{s}-->>{c}: {words} at tick {}", at.0));
            }
        }
        if i.short_circuited > 0 {
            add(
                i.end,
                format!(
                    "Note over {c}: the breaker refuses the call at tick {}",
                    i.end.0
                ),
            );
        }
        let ending = if i.status == "succeeded" {
            format!("succeeded, {}", i.business_state.replace('_', " "))
        } else {
            format!("stopped, {}", i.stop_reason.replace('_', " "))
        };
        add(
            i.end,
            format!("Note over {c}: {ending} at tick {}", i.end.0),
        );
    }
    steps.sort_by_key(|(at, n, _)| (*at, *n));

    let mut out = String::from("sequenceDiagram\n");
    let _ = writeln!(
        out,
        "    participant C as client ({})",
        plain(&story.marks.policy)
    );
    for (k, tool) in cast.tools.iter().enumerate() {
        let _ = writeln!(out, "    participant S{k} as {}", plain(tool));
    }
    for (_, _, line) in steps {
        let _ = writeln!(out, "    {line}");
    }
    out
}

/// A name with the characters Mermaid reads as syntax (`;`, `#`, `:`) made plain.
fn plain(name: &str) -> String {
    name.replace([';', '#', ':'], " ")
}
