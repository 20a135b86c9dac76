//! The manifest's resolved config against the config it came from.

use retrysim::config::Source;

/// The manifest's `[resolved]` table is the config with every default filled in, and it reads
/// back to the very same experiment, sweep and all, for every shipped config; read as the
/// charts and stories read it (its files not read) it writes back the same table.
#[test]
fn the_resolved_config_reads_back_to_the_same_sweep() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for dir in ["configs", "configs/scenarios"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let source = Source::read(&path).unwrap();
            let sweep = source.sweep().unwrap();
            let text = toml::to_string(&retrysim::config::resolved(&sweep)).unwrap();
            let again = Source {
                name: format!("{} (resolved)", source.name),
                text,
                origin: source.origin.clone(),
            }
            .sweep()
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(again, sweep, "{}", path.display());
            // Read back as a manifest is, its files named and not read: what ran, the same.
            let table = retrysim::config::resolved(&sweep);
            let manifest = Source::resolved("manifest.toml [resolved]", &table).sweep();
            let manifest = manifest.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                retrysim::config::resolved(&manifest),
                table,
                "{}",
                path.display()
            );
            assert_eq!(manifest.len(), sweep.len());
            checked += 1;
        }
    }
    assert!(checked >= 17, "{checked} configs");
}

/// A range is written back as its `start`, `stop` and `step`, not as the values it makes: a
/// sweep of ten thousand points is three numbers in its manifest, and reads back to the same
/// ten thousand points.
#[test]
fn a_range_is_written_back_as_a_range() {
    let text = "name = \"ranged\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"charge\"\n[[policy]]\nname = \"p\"\n\
                [[sweep.axis]]\npath = \"tool.charge.reply_loss\"\n\
                start = 0.00005\nstop = 0.5\nstep = 0.00005\n";
    let sweep = Source::from_text("ranged.toml", text).sweep().unwrap();
    assert_eq!(sweep.len(), 10_000);
    let table = retrysim::config::resolved(&sweep);
    let written = toml::to_string(&table).unwrap();
    let axis = &written[written.find("[[sweep.axis]]").expect("an axis")..];
    assert_eq!(
        axis,
        "[[sweep.axis]]\npath = \"tool.charge.reply_loss\"\nstart = 0.00005\nstop = 0.5\nstep = 0.00005\n"
    );
    let again = Source::resolved("manifest.toml [resolved]", &table).sweep();
    assert_eq!(again.unwrap_or_else(|e| panic!("{e}")), sweep);
}

/// A task's calls in stages — a list made together, an optional call, a fan-out written with
/// `times` — and an edge that falls back with a cooldown, written back and read again: the
/// same sweep.
#[test]
fn stages_and_fallbacks_read_back_the_same() {
    let text = r#"
        name = "staged"
        [workload]
        tasks = 3
        calls = ["a", ["b", { call = "c", optional = true }], { call = "leaf", times = 3 }]
        [[tool]]
        name = "a"
        [[tool]]
        name = "b"
        [[tool]]
        name = "c"
        [[tool]]
        name = "leaf"
        [[tool]]
        name = "spare"
        [[policy]]
        name = "p"
        edge."task->b" = { max_attempts = 2, fallback = ["spare"], cooldown_after = 2, cooldown = "1s" }
    "#;
    let source = Source {
        name: "staged.toml".into(),
        text: text.into(),
        origin: retrysim::config::Origin::Text,
    };
    let sweep = source.sweep().unwrap();
    let stages = sweep.base.workload.stages.as_ref().expect("stages");
    assert_eq!(stages.len(), 3);
    assert_eq!(stages[1], vec![(1, false), (2, true)]);
    assert_eq!(stages[2], vec![(3, false); 3]);
    let written = toml::to_string(&retrysim::config::resolved(&sweep)).unwrap();
    let again = Source {
        name: "staged.toml (resolved)".into(),
        text: written,
        origin: retrysim::config::Origin::Text,
    }
    .sweep()
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, sweep);
}
