//! Every chart of every shipped output, drawn afresh, read back from its SVG: no two text labels
//! overlap. A label's box is measured with the embedded DejaVu Sans, as the SVG places it.

#[path = "shipped/mod.rs"]
mod shipped;

use std::fs;
use std::path::{Path, PathBuf};

use ab_glyph::{Font, FontRef};
use retrysim::chart;
use retrysim::experiment::ChartFormat;

/// A label as the SVG places it: its text and its box (left, top, right, bottom) in pixels.
#[derive(Debug)]
struct Label {
    text: String,
    bounds: [f64; 4],
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = start + tag[start..].find('"')?;
    Some(tag[start..end].to_string())
}

/// Every `<text>` element of `svg` with its box.
fn labels(svg: &str) -> Vec<Label> {
    let regular = FontRef::try_from_slice(dejavu::sans::regular()).unwrap();
    let bold = FontRef::try_from_slice(dejavu::sans::bold()).unwrap();
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find("<text ") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap();
        let tag = &rest[..tag_end];
        let close = rest.find("</text>").unwrap();
        let text = rest[tag_end + 1..close]
            .trim()
            .replace("&amp;", "&")
            .replace("&lt;", "<");
        rest = &rest[close..];
        if text.is_empty() {
            continue;
        }
        let number = |n: &str| attribute(tag, n).map_or(0.0, |v| v.parse::<f64>().unwrap());
        let (x, y, size) = (number("x"), number("y"), number("font-size"));
        let font = if attribute(tag, "font-weight").as_deref() == Some("bold") {
            &bold
        } else {
            &regular
        };
        let units = f64::from(font.units_per_em().unwrap());
        let width: f64 = text
            .chars()
            .map(|c| f64::from(font.h_advance_unscaled(font.glyph_id(c))) / units * size)
            .sum();
        // The baseline, from `dy`: 0.76em puts the top at y, ±0.5ex centres the x-height.
        let dy = match attribute(tag, "dy").as_deref() {
            Some("0.76em") => 0.76 * size,
            Some("0.5ex") => 0.27 * size,
            Some("-0.5ex") => -0.27 * size,
            None => 0.0,
            Some(other) => panic!("a dy of {other}"),
        };
        let left = match attribute(tag, "text-anchor").as_deref() {
            Some("middle") => x - width / 2.0,
            Some("end") => x - width,
            _ => x,
        };
        let (top, bottom) = (y + dy - 0.76 * size, y + dy + 0.24 * size);
        let mut corners = [
            (left, top),
            (left + width, top),
            (left, bottom),
            (left + width, bottom),
        ];
        if let Some(t) = attribute(tag, "transform") {
            let angle: f64 = t
                .trim_start_matches("rotate(")
                .split(',')
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let (sin, cos) = angle.to_radians().sin_cos();
            for c in &mut corners {
                let (dx, dy) = (c.0 - x, c.1 - y);
                *c = (x + dx * cos - dy * sin, y + dx * sin + dy * cos);
            }
        }
        let xs = corners.map(|c| c.0);
        let ys = corners.map(|c| c.1);
        let min = |v: [f64; 4]| v.into_iter().fold(f64::INFINITY, f64::min);
        let max = |v: [f64; 4]| v.into_iter().fold(f64::NEG_INFINITY, f64::max);
        out.push(Label {
            text,
            bounds: [min(xs), min(ys), max(xs), max(ys)],
        });
    }
    out
}

/// The pairs of labels whose boxes overlap by more than a pixel both ways.
fn overlaps(labels: &[Label]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            let w = a.bounds[2].min(b.bounds[2]) - a.bounds[0].max(b.bounds[0]);
            let h = a.bounds[3].min(b.bounds[3]) - a.bounds[1].max(b.bounds[1]);
            if w > 1.0 && h > 1.0 {
                out.push(format!("\"{}\" and \"{}\"", a.text, b.text));
            }
        }
    }
    out
}

/// Copies each shipped output folder's data (not its charts) into `to`.
fn copy_outputs(to: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for from in shipped::outputs() {
        let dir = to.join(from.file_name().unwrap());
        fs::create_dir_all(&dir).unwrap();
        for file in fs::read_dir(&from).unwrap() {
            let file = file.unwrap().path();
            if file.is_file() {
                fs::copy(&file, dir.join(file.file_name().unwrap())).unwrap();
            }
        }
        dirs.push(dir);
    }
    dirs.sort();
    dirs
}

#[test]
fn no_two_labels_overlap_on_any_shipped_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let mut charts = 0;
    let mut found = Vec::new();
    for dir in copy_outputs(tmp.path()) {
        for path in chart::draw_all(&dir, Some(&[ChartFormat::Svg])).unwrap() {
            let svg = fs::read_to_string(&path).unwrap();
            let labels = labels(&svg);
            assert!(
                labels.len() > 3,
                "{}: {} labels",
                path.display(),
                labels.len()
            );
            for pair in overlaps(&labels) {
                found.push(format!(
                    "{}: {pair}",
                    path.strip_prefix(tmp.path()).unwrap().display()
                ));
            }
            charts += 1;
        }
    }
    assert!(charts >= 25, "{charts} charts");
    assert!(
        found.is_empty(),
        "{} overlaps:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The check itself sees an overlap: two labels drawn at one place.
#[test]
fn the_overlap_check_sees_two_labels_in_one_place() {
    let svg = r#"<text x="10" y="10" dy="0.76em" text-anchor="start" font-size="20">1.000</text>
<text x="40" y="12" dy="0.76em" text-anchor="start" font-size="20">1.000</text>
<text x="400" y="12" dy="0.76em" text-anchor="start" font-size="20">far</text>"#;
    let labels = labels(svg);
    assert_eq!(overlaps(&labels).len(), 1, "{labels:?}");
}

/// The y-axis tick labels of a chart's stacked panels, panel by panel from the top: each label's
/// value and its vertical middle. Within a panel the values fall down the page, so a value
/// higher than the one above it starts the next panel.
fn stacked_ticks(svg: &str) -> Vec<Vec<(f64, f64)>> {
    let mut ticks: Vec<(f64, f64)> = (labels(svg).iter())
        .filter(|l| l.bounds[2] < 130.0)
        .filter_map(|l| {
            Some((
                l.text.parse::<f64>().ok()?,
                (l.bounds[1] + l.bounds[3]) / 2.0,
            ))
        })
        .collect();
    ticks.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut panels: Vec<Vec<(f64, f64)>> = Vec::new();
    for tick in ticks {
        match panels.last_mut() {
            Some(panel) if panel.last().is_some_and(|last| tick.0 < last.0) => panel.push(tick),
            _ => panels.push(vec![tick]),
        }
    }
    panels
}

/// A sweep's comparison, tasks and latency charts stack one panel per figure, and each reads:
/// at least four tick labels on its axis, the top and bottom ones at least 100 pixels apart
/// (the plot is taller still: its top tick stands below the plot's top).
#[test]
fn a_sweeps_stacked_panels_are_tall_enough_to_read() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for dir in copy_outputs(tmp.path()) {
        let manifest = fs::read_to_string(dir.join("manifest.toml")).unwrap();
        if !manifest.contains("[resolved.sweep]") {
            continue;
        }
        for path in chart::draw_all(&dir, Some(&[ChartFormat::Svg])).unwrap() {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if !["comparison", "tasks", "latency"].contains(&name.as_str()) {
                continue;
            }
            let panels = stacked_ticks(&fs::read_to_string(&path).unwrap());
            assert!(!panels.is_empty(), "{}: no panel", path.display());
            for (i, ticks) in panels.iter().enumerate() {
                let span = ticks.last().unwrap().1 - ticks[0].1;
                assert!(
                    ticks.len() >= 4 && span >= 100.0,
                    "{} panel {i}: {} ticks over {span:.0} px: {ticks:?}",
                    path.display(),
                    ticks.len()
                );
            }
            seen += 1;
        }
    }
    assert!(seen >= 5, "only {seen} stacked charts");
}

/// The panel check sees a short panel: two ticks 60 pixels apart, as sweeps were drawn before.
#[test]
fn the_panel_check_sees_a_short_panel() {
    let svg = r#"<text x="74" y="100" dy="0.5ex" text-anchor="end" font-size="18">100</text>
<text x="74" y="160" dy="0.5ex" text-anchor="end" font-size="18">0</text>
<text x="74" y="300" dy="0.5ex" text-anchor="end" font-size="18">2</text>
<text x="74" y="340" dy="0.5ex" text-anchor="end" font-size="18">0</text>"#;
    let panels = stacked_ticks(svg);
    assert_eq!(panels.len(), 2, "{panels:?}");
    assert!(panels.iter().all(|p| p.len() == 2));
}
