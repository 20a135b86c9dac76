//! The layers of the library, held by a test: which top-level modules may reach which.
//!
//! Every `crate::<module>` a file of one top-level module names in its code (doc comments and
//! `#[cfg(test)]` modules left out) is an edge between modules. Modules that reach each other,
//! directly or round a circle, are a cycle: a change to one may need a change to every other.
//! `model/` names neither `policy/` nor `sim/`: the model of a tool knows nothing of clients or
//! of the run.
//!
//! The test fails on any cycle, naming every edge inside it and a line that makes each. Where a
//! circle cannot be broken at once, [`KNOWN`] may hold it as it stands, to be shrunk as it is
//! broken; it is empty.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The cycles still standing, each as the set of modules in it: none.
const KNOWN: [&[&str]; 0] = [];

/// Each top-level module's edges to the others, with one place that names each.
fn edges(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let modules: BTreeSet<String> = fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| !["bin", "lib", "main"].contains(&m.as_str()))
        .collect();
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let relative = path.strip_prefix(src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let from = first.trim_end_matches(".rs").to_string();
        if !modules.contains(&from) || path.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (n, line) in code_lines(&text) {
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let to: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if to != from && modules.contains(&to) {
                    out.entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_insert_with(|| format!("{}:{n}", relative.display()));
                }
            }
        }
    }
    out
}

/// The lines of code of a file, numbered from 1: comments and `#[cfg(test)]` items left out.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut depth: Option<i64> = None;
    let mut skipping = false;
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        if line.trim() == "#[cfg(test)]" {
            skipping = true;
            depth = None;
            continue;
        }
        if skipping {
            let opens = code.matches('{').count() as i64;
            let closes = code.matches('}').count() as i64;
            let d = depth.unwrap_or(0) + opens - closes;
            depth = Some(d);
            if d <= 0 && (opens > 0 || closes > 0 || code.trim_end().ends_with(';')) {
                skipping = false;
            }
            continue;
        }
        out.push((i + 1, code));
    }
    out
}

/// The sets of modules that reach each other (Tarjan's strongly connected components), those
/// of more than one module.
fn cycles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = edges
        .keys()
        .chain(edges.values().flat_map(|m| m.keys()))
        .collect();
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in edges.get(&m).into_iter().flat_map(|m| m.keys()) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for n in &nodes {
        let together: BTreeSet<String> = (nodes.iter())
            .filter(|m| reaches[*n].contains(**m) && reaches[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        if together.len() > 1 && !out.contains(&together) {
            out.push(together);
        }
    }
    out
}

#[test]
fn no_module_cycle_beyond_the_known_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    for cycle in cycles(&edges) {
        let known = KNOWN
            .iter()
            .any(|k| cycle.iter().all(|m| k.contains(&m.as_str())));
        let inside: Vec<String> = (cycle.iter())
            .flat_map(|a| {
                (edges[a].iter())
                    .filter(|(b, _)| cycle.contains(*b))
                    .map(move |(b, at)| format!("{a} → {b} ({at})"))
            })
            .collect();
        assert!(
            known,
            "a new cycle between modules {cycle:?}:\n{}",
            inside.join("\n")
        );
    }
    for forbidden in ["policy", "sim"] {
        let at = edges.get("model").and_then(|m| m.get(forbidden));
        assert!(at.is_none(), "model/ names {forbidden}/ at {at:?}");
    }
}

/// The simulation's shape, which each feature is built into rather than onto: no file of
/// `src/sim` over 500 lines, and the world at 15 fields or fewer (what a new concern needs is a
/// part of its own, which the world holds as one field).
#[test]
fn the_simulation_stays_in_parts_a_reader_can_hold() {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut files = vec![sim.clone()];
    let mut long = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|x| x == "rs") {
            let lines = fs::read_to_string(&path).unwrap().lines().count();
            if lines > 500 {
                long.push(format!("{} has {lines} lines", path.display()));
            }
        }
    }
    assert!(long.is_empty(), "{long:?}");
    let world = fs::read_to_string(sim.join("world/mod.rs")).unwrap();
    let body = world
        .split_once("pub struct World<")
        .and_then(|(_, rest)| rest.split_once("\n}\n"))
        .expect("the world's struct")
        .0;
    let fields = (body.lines())
        .filter(|l| l.starts_with("    ") && !l.trim_start().starts_with("//"))
        .filter(|l| l.trim_end().ends_with(','))
        .count();
    assert!((10..=15).contains(&fields), "the world has {fields} fields");
}

/// The check sees a circle: a → b → c → a, beside a d that only reaches in.
#[test]
fn the_cycle_check_sees_a_circle() {
    let edge = |pairs: &[(&str, &str)]| {
        let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (a, b) in pairs {
            out.entry((*a).into())
                .or_default()
                .insert((*b).into(), String::new());
        }
        out
    };
    let found = cycles(&edge(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]));
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0],
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    );
    assert!(cycles(&edge(&[("a", "b"), ("b", "c")])).is_empty());
    let lines = code_lines(
        "use crate::a;\n/// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\nuse crate::d;\n",
    );
    let kept: Vec<&str> = lines
        .iter()
        .map(|l| l.1.trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(kept, ["use crate::a;", "use crate::d;"]);
}
