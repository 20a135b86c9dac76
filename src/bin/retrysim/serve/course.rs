//! The order of the course: the book's chapters, as its `SUMMARY.md` lists them, each with the
//! shipped experiments it uses in the order it first names them. The index lists the
//! experiments so, grouped by chapter, so a class meets them in the order the book teaches them.
//! The book is compiled in, so the order cannot drift from it.

/// The book's table of contents.
const SUMMARY: &str = include_str!("../../../../docs/book/src/SUMMARY.md");

/// Every chapter the table of contents may name, by file.
const CHAPTERS: [(&str, &str); 17] = [
    (
        "introduction.md",
        include_str!("../../../../docs/book/src/introduction.md"),
    ),
    (
        "charges-twice.md",
        include_str!("../../../../docs/book/src/charges-twice.md"),
    ),
    (
        "attempts.md",
        include_str!("../../../../docs/book/src/attempts.md"),
    ),
    ("keys.md", include_str!("../../../../docs/book/src/keys.md")),
    (
        "agents-that-crash.md",
        include_str!("../../../../docs/book/src/agents-that-crash.md"),
    ),
    (
        "timeouts.md",
        include_str!("../../../../docs/book/src/timeouts.md"),
    ),
    (
        "reliability-layer.md",
        include_str!("../../../../docs/book/src/reliability-layer.md"),
    ),
    (
        "jitter.md",
        include_str!("../../../../docs/book/src/jitter.md"),
    ),
    (
        "storms.md",
        include_str!("../../../../docs/book/src/storms.md"),
    ),
    (
        "replicas.md",
        include_str!("../../../../docs/book/src/replicas.md"),
    ),
    (
        "call-graphs.md",
        include_str!("../../../../docs/book/src/call-graphs.md"),
    ),
    (
        "providers.md",
        include_str!("../../../../docs/book/src/providers.md"),
    ),
    (
        "deciding.md",
        include_str!("../../../../docs/book/src/deciding.md"),
    ),
    (
        "every-schedule.md",
        include_str!("../../../../docs/book/src/every-schedule.md"),
    ),
    (
        "your-own-client.md",
        include_str!("../../../../docs/book/src/your-own-client.md"),
    ),
    (
        "your-own-loop.md",
        include_str!("../../../../docs/book/src/your-own-loop.md"),
    ),
    (
        "classroom.md",
        include_str!("../../../../docs/book/src/classroom.md"),
    ),
];

/// The chapters in the book's order, each with its title and the experiments (config stems)
/// it uses that no earlier chapter did.
pub fn chapters() -> Vec<(String, Vec<String>)> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in SUMMARY.lines() {
        let Some((title, file)) = link(line) else {
            continue;
        };
        let Some((_, text)) = CHAPTERS.iter().find(|(f, _)| *f == file) else {
            continue;
        };
        let mut used = Vec::new();
        for stem in named_configs(text) {
            if !seen.contains(&stem) {
                seen.push(stem.clone());
                used.push(stem);
            }
        }
        out.push((title.to_string(), used));
    }
    out
}

/// A `[Title](file.md)` line of the table of contents: its title and file.
fn link(line: &str) -> Option<(&str, &str)> {
    let rest = line
        .trim_start()
        .trim_start_matches("- ")
        .strip_prefix('[')?;
    let (title, rest) = rest.split_once("](")?;
    let (file, _) = rest.split_once(')')?;
    Some((title, file))
}

/// The stems of the configs a chapter names (`configs/duplicate-curve.toml`,
/// `configs/scenarios/reconciliation.toml`), in the order it first names them.
fn named_configs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("configs/") {
        let rest = &text[at + "configs/".len()..];
        let end = rest.find(".toml").unwrap_or(0);
        let path = &rest[..end];
        let stem = path.rsplit('/').next().unwrap_or(path);
        let plain = !stem.is_empty()
            && path
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_/".contains(&b));
        if plain && !out.iter().any(|s| s == stem) {
            out.push(stem.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_course_follows_the_book() {
        let course = chapters();
        assert_eq!(course[0].0, "Introduction");
        assert_eq!(course[1].0, "A retry that charges twice");
        assert_eq!(course[0].1[0], "lost-reply");
        assert!(course[1].1.contains(&"duplicate-curve".to_string()));
        assert!(
            !course[1].1.contains(&"lost-reply".to_string()),
            "the introduction's"
        );
        assert!(course.iter().any(|(t, used)| t
            == "Keys, reconciliation and the bugs between them"
            && used.first().is_some_and(|u| u == "reconciliation")));
        // Every chapter file the table of contents names is compiled in.
        for line in SUMMARY.lines() {
            let course = |f: &&str| !f.starts_with("notebooks") && !f.starts_with("reference/");
            if let Some((_, file)) = link(line).filter(|(_, f)| course(f)) {
                assert!(CHAPTERS.iter().any(|(f, _)| *f == file), "{file}");
            }
        }
    }
}
