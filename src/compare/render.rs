//! A comparison written out: the printed table, Markdown, and JSON (in the manner of
//! hyperfine's exporters; the JSON schema is in the book's reference, "Comparing two runs").

use std::fmt::Write;

use serde_json::{Value, json};

use super::{ALPHA, Comparison, Key, Row};

/// A configuration's label: its point's keys and values, then its name.
pub fn label((point, policy): &Key) -> String {
    let mut parts: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.push(policy.clone());
    parts.join(" · ")
}

/// A number to six significant digits, or to the nanodollar for money.
fn number(x: f64, money: bool) -> String {
    if money {
        return format!("{x:.9}");
    }
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (5 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{x:.digits$}")
}

/// A p-value as a reader takes it in: three decimals, or an upper bound below them.
fn p_value(p: f64) -> String {
    match p < 0.001 {
        true => "p < 0.001".into(),
        false => format!("p = {p:.3}"),
    }
}

impl Row {
    fn cells(&self) -> [String; 7] {
        let money = self.figure.is_money();
        let (lo, hi) = (
            self.difference - self.half_width,
            self.difference + self.half_width,
        );
        [
            label(&self.key),
            self.figure.column().to_string(),
            number(self.a, money),
            number(self.b, money),
            number(self.difference, money),
            format!("[{}, {}]", number(lo, money), number(hi, money)),
            format!(
                "{} ({}, {})",
                self.verdict.name(),
                self.method.name(),
                p_value(self.adjusted_p)
            ),
        ]
    }
}

const HEADER: [&str; 7] = [
    "configuration",
    "figure",
    "A",
    "B",
    "B − A",
    "95 % interval",
    "verdict (Holm p)",
];

impl Comparison {
    /// The table as printed: a line saying what was compared, then a row per figure.
    pub fn table(&self) -> String {
        let rows: Vec<[String; 7]> = self.rows.iter().map(Row::cells).collect();
        let mut widths = HEADER.map(|h| h.chars().count());
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = self.preamble();
        out.push('\n');
        let line = |out: &mut String, cells: &[&str]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
                .collect();
            let _ = writeln!(out, "{}", padded.join("  ").trim_end());
        };
        line(&mut out, &HEADER);
        for r in &rows {
            line(&mut out, &r.each_ref().map(String::as_str));
        }
        out.push_str(&self.tally());
        out
    }

    /// What was compared and how, in a sentence.
    fn preamble(&self) -> String {
        format!(
            "A = {}, B = {}: {} figures compared, B − A with its 95 % interval; verdicts \
             corrected over the table (Holm, family-wise {:.0} %)\n",
            self.a,
            self.b,
            self.rows.len(),
            ALPHA * 100.0
        )
    }

    /// How many figures got better, worse, or showed no difference, and how many were skipped.
    fn tally(&self) -> String {
        let count = |v: super::Verdict| self.rows.iter().filter(|r| r.verdict == v).count();
        let mut out = format!(
            "\n{} better, {} worse, {} no difference",
            count(super::Verdict::Better),
            count(super::Verdict::Worse),
            count(super::Verdict::NoDifference)
        );
        if !self.skipped.is_empty() {
            let _ = write!(
                out,
                "; {} figure(s) not compared (listed in the JSON: without an interval, or measured in one run only)",
                self.skipped.len()
            );
        }
        out.push('\n');
        if !self.unmatched.is_empty() {
            let listed: Vec<String> = (self.unmatched.iter())
                .map(|(key, side)| format!("{} ({side})", label(key)))
                .collect();
            let _ = writeln!(
                out,
                "not compared, in one folder only: {} (`--fail-if missing` fails on this)",
                listed.join(", ")
            );
        }
        out
    }

    /// The table in Markdown.
    pub fn markdown(&self) -> String {
        let mut out = self.preamble();
        out.push('\n');
        let _ = writeln!(out, "| {} |", HEADER.join(" | "));
        let _ = writeln!(out, "|{}", " --- |".repeat(HEADER.len()));
        for r in &self.rows {
            let cells = r.cells().map(|c| c.replace('|', "\\|"));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push_str(&self.tally());
        out
    }

    /// The comparison as one JSON document.
    pub fn json(&self) -> String {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let point: serde_json::Map<String, Value> = r
                    .key
                    .0
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                    .collect();
                json!({
                    "point": point,
                    "policy": r.key.1,
                    "figure": r.figure.column(),
                    "better": r.figure.better().name(),
                    "a": r.a,
                    "b": r.b,
                    "difference": r.difference,
                    "ci95": [r.difference - r.half_width, r.difference + r.half_width],
                    "method": r.method.name(),
                    "df": r.df,
                    "p_value": r.p,
                    "adjusted_p_value": r.adjusted_p,
                    "verdict": r.verdict.name(),
                })
            })
            .collect();
        let unmatched = (self.unmatched.iter())
            .map(|(key, side)| json!({ "configuration": label(key), "figure": null, "why": side }));
        let skipped: Vec<Value> = unmatched
            .chain((self.skipped.iter()).map(
                |(key, f, why)| json!({ "configuration": label(key), "figure": f.column(), "why": why }),
            ))
            .collect();
        let doc = json!({
            "a": self.a,
            "b": self.b,
            "correction": "holm",
            "family_wise_alpha": ALPHA,
            "comparisons": rows,
            "not_compared": skipped,
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value serializes");
        text.push('\n');
        text
    }
}
