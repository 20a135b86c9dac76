//! The pages, as HTML text: the index of experiments and one experiment's page with its
//! controls. The charts and table are not here: the page's script asks for a run and draws
//! what comes back, so the first view and every change take the same road.

use std::fmt::Write;

use super::catalog::{Catalog, Experiment};
use super::controls::{Control, Input};

/// `/`: every experiment, the reader's own first, then the shipped ones in the book's order,
/// under the chapter that first uses each, and last those no chapter uses.
pub fn index(catalog: &Catalog) -> String {
    let mut groups: Vec<(String, Vec<&Experiment>)> = Vec::new();
    let own: Vec<&Experiment> = catalog.experiments.iter().filter(|e| e.own).collect();
    groups.push(("Your config".into(), own));
    let mut placed: Vec<&str> = Vec::new();
    for (chapter, used) in super::course::chapters() {
        let items: Vec<&Experiment> = (used.iter())
            .filter_map(|id| catalog.find(id).filter(|e| !e.own))
            .collect();
        placed.extend(items.iter().map(|e| e.id.as_str()));
        groups.push((chapter, items));
    }
    let rest = (catalog.experiments.iter())
        .filter(|e| !e.own && !placed.contains(&e.id.as_str()))
        .collect();
    groups.push(("More experiments".into(), rest));
    let mut list = String::new();
    for (heading, items) in groups {
        if items.is_empty() {
            continue;
        }
        let heading = escape(&heading);
        let _ = write!(list, "<h2>{heading}</h2>\n<ul class=\"experiments\">\n");
        for e in items {
            let _ = writeln!(
                list,
                "<li><a href=\"/x/{id}\">{name}</a> <code>{path}</code><br><span>{desc}</span></li>",
                id = escape(&e.id),
                name = escape(&e.name),
                path = escape(&e.source.name),
                desc = escape(&e.description),
            );
        }
        list.push_str("</ul>\n");
    }
    frame(
        "retrysim: experiments",
        &format!(
            "<h1>retrysim experiments</h1>\n<p>Pick an experiment: its page runs it at a teaching \
             size and redraws its charts and table each time you move a control. They are listed \
             in the order the book teaches them, under the chapter that uses each.</p>\n{list}"
        ),
    )
}

/// `/x/<id>`: the controls, and the place the script draws each run.
pub fn experiment(e: &Experiment) -> String {
    let mut form = String::new();
    for c in &e.controls {
        form.push_str(&control(c));
    }
    if e.controls.is_empty() {
        form.push_str(
            "<p>This config sets none of the keys the page offers; it runs as written.</p>\n",
        );
    }
    for path in &e.swept {
        let _ = writeln!(
            form,
            "<p class=\"swept\">Swept by the config: <code>{}</code></p>",
            escape(path)
        );
    }
    let body = format!(
        "<nav><a href=\"/\">All experiments</a></nav>\n\
         <h1>{name}</h1>\n<p class=\"desc\">{desc} <code>{path}</code></p>\n\
         <details><summary>What the experiment shows</summary><pre class=\"about\">{about}</pre></details>\n\
         <div class=\"layout\">\n\
         <form id=\"controls\" data-run=\"/x/{id}/run\" autocomplete=\"off\">\n{form}\
         <button type=\"button\" id=\"restart\">Back to the start</button>\n\
         <p class=\"limits\">{limits}</p>\n</form>\n\
         <section id=\"result\" data-runs=\"0\">\n\
         <p id=\"status\" role=\"status\">Running…</p>\n\
         <div id=\"error\" role=\"alert\" hidden></div>\n<div id=\"charts\"></div>\n<pre id=\"table\"></pre>\n\
         </section>\n</div>\n<script src=\"/assets/serve.js\"></script>\n",
        name = escape(&e.name),
        desc = escape(&e.description),
        path = escape(&e.source.name),
        about = escape(&e.about),
        id = escape(&e.id),
        limits = limits(e),
    );
    frame(&format!("retrysim: {}", e.name), &body)
}

/// What a run on the page may do: the server's limits, said where the reader moves the
/// controls (as HTML: nothing in it comes from the reader).
fn limits(e: &Experiment) -> String {
    let calls = e.most_calls().max(super::TEACHING_CALLS);
    format!(
        "A run here may make up to {calls} calls and take up to {} s; the server runs one \
         reader's run at a time. <code>retrysim run</code> on the command line has no such \
         limits.",
        super::RUN_TIME.as_secs()
    )
}

/// A page not found, with the way back.
pub fn not_found(path: &str) -> String {
    frame(
        "retrysim: not found",
        &format!(
            "<h1>Not found</h1>\n<p>Nothing is served at <code>{}</code>. <a href=\"/\">The \
             experiments</a> are listed on the index.</p>\n",
            escape(path)
        ),
    )
}

/// One control: its label, its input starting at the page's start, and what the config writes.
fn control(c: &Control) -> String {
    let attrs = format!(
        "name=\"{p}\" data-path=\"{p}\" data-written=\"{w}\" data-start=\"{s}\"",
        p = escape(&c.path),
        w = escape(&c.written),
        s = escape(&c.start),
    );
    let start = escape(&c.start);
    let input = match &c.input {
        Input::Share(most) => format!(
            "<input type=\"range\" min=\"0\" max=\"{most}\" step=\"0.01\" value=\"{start}\" {attrs}>\
             <output>{start}</output>"
        ),
        Input::Factor => format!(
            "<input type=\"range\" min=\"0.1\" max=\"2\" step=\"0.05\" value=\"{start}\" {attrs}>\
             <output>{start}</output>"
        ),
        Input::Attempts if c.start != "unlimited" => format!(
            "<input type=\"range\" min=\"1\" max=\"10\" step=\"1\" value=\"{start}\" {attrs}>\
             <output>{start}</output>"
        ),
        Input::Attempts => {
            let words: Vec<String> = std::iter::once("unlimited".to_string())
                .chain((1..=10).map(|n| n.to_string()))
                .collect();
            select(&attrs, &words, &c.start)
        }
        Input::Choice(words) => {
            let words: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
            select(&attrs, &words, &c.start)
        }
        Input::Count => {
            format!("<input type=\"number\" min=\"1\" step=\"1\" value=\"{start}\" {attrs}>")
        }
        Input::Number(least) => format!(
            "<input type=\"number\" min=\"{least}\" step=\"any\" value=\"{start}\" {attrs}>"
        ),
        Input::Duration => format!(
            "<input type=\"text\" size=\"8\" value=\"{start}\" {attrs} \
             title=\"a duration: 200ms, 1.5s, 2m\">"
        ),
    };
    let written = if c.start == c.written {
        String::new()
    } else {
        format!(
            "<small>the config runs {}; a smaller run redraws faster</small>",
            escape(&c.written)
        )
    };
    format!(
        "<label><span>{label}</span>{input}{written}</label>\n",
        label = escape(&c.label)
    )
}

fn select(attrs: &str, words: &[String], chosen: &str) -> String {
    let mut options = String::new();
    for w in words {
        let selected = if w == chosen { " selected" } else { "" };
        let _ = write!(options, "<option{selected}>{}</option>", escape(w));
    }
    format!("<select {attrs}>{options}</select>")
}

/// The page around a body: its style sheet is served by retrysim itself, like every asset.
fn frame(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<link rel=\"stylesheet\" href=\"/assets/serve.css\">\n</head>\n\
         <body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// Text made safe inside HTML, attribute values included.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_html_reads_as_markup() {
        assert_eq!(
            escape(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn a_control_starts_at_its_start_and_says_what_the_config_runs() {
        let c = Control {
            path: "workload.tasks".into(),
            label: "tasks".into(),
            written: "10000".into(),
            start: "2000".into(),
            input: Input::Count,
        };
        let html = control(&c);
        assert!(html.contains("value=\"2000\""), "{html}");
        assert!(html.contains("data-written=\"10000\""), "{html}");
        assert!(html.contains("the config runs 10000"), "{html}");
    }
}
