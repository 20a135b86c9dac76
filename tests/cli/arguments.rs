//! Bad command-line arguments, each refused as a bad config is: its exit code, what it names,
//! no panic and nothing written.

use crate::refusals::{Case, GOOD, refused};

fn argument_cases() -> Vec<Case> {
    let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let good = || vec![("c.toml", GOOD.as_bytes().to_vec())];
    vec![
        Case {
            name: "no such config",
            files: vec![],
            args: args(&["run", "nope.toml"]),
            code: 2,
            says: vec!["nope.toml: cannot read the config"],
        },
        Case {
            name: "a folder as the config",
            files: good(),
            args: args(&["run", "."]),
            code: 2,
            says: vec![".: cannot read the config", "not a regular file"],
        },
        Case {
            name: "a device as the config",
            files: vec![],
            args: args(&["run", "/dev/zero"]),
            code: 2,
            says: vec!["/dev/zero: cannot read the config", "not a regular file"],
        },
        Case {
            name: "zero threads",
            files: good(),
            args: args(&["run", "c.toml", "--threads", "0"]),
            code: 2,
            says: vec!["--threads", "from 1 to"],
        },
        Case {
            name: "65535 threads",
            files: good(),
            args: args(&["run", "c.toml", "--threads", "65535"]),
            code: 2,
            says: vec!["--threads", "per core"],
        },
        Case {
            name: "a negative seed",
            files: good(),
            args: args(&["run", "c.toml", "--seed", "-1"]),
            code: 2,
            says: vec!["'-1'"],
        },
        Case {
            name: "an unknown flag",
            files: good(),
            args: args(&["run", "c.toml", "--fast"]),
            code: 2,
            says: vec!["--fast"],
        },
        Case {
            name: "an unknown progress mode",
            files: good(),
            args: args(&["run", "c.toml", "--progress", "loud"]),
            code: 2,
            says: vec!["--progress", "loud"],
        },
        Case {
            name: "a loss above 1 in theory",
            files: vec![],
            args: args(&["theory", "--request-loss", "1.5", "--reply-loss", "0"]),
            code: 2,
            says: vec!["--request-loss", "not a probability"],
        },
        Case {
            name: "losses over 1 in theory",
            files: vec![],
            args: args(&[
                "theory",
                "--request-loss",
                "0.6",
                "--reply-loss",
                "0.6",
                "--max-attempts",
                "2",
            ]),
            code: 2,
            says: vec!["more than 1"],
        },
        Case {
            name: "a misspelt command with a config after it",
            files: good(),
            args: args(&["chek", "c.toml"]),
            code: 2,
            says: vec![
                "`chek` is neither a command nor a config file",
                "retrysim check",
            ],
        },
        Case {
            name: "plot of no folder",
            files: vec![],
            args: args(&["plot", "nowhere"]),
            code: 2,
            says: vec!["nowhere/manifest.toml: cannot read"],
        },
    ]
}

#[test]
fn bad_arguments_are_refused() {
    for case in argument_cases() {
        let tmp = tempfile::tempdir().unwrap();
        refused(&case, tmp.path());
    }
}

/// The flags every command shares may come before the command's name, and the common ones have
/// short forms: `retrysim -q -j 1 run c.toml -o elsewhere` runs as `retrysim run c.toml --quiet
/// --threads 1 --out elsewhere` does.
#[test]
fn shared_flags_come_anywhere_and_have_short_forms() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("c.toml"), GOOD).unwrap();
    for args in [
        vec!["-q", "-j", "1", "run", "c.toml", "-o", "a"],
        vec!["--quiet", "run", "c.toml", "--out", "b"],
        vec!["run", "c.toml", "-q", "-j1", "-o", "c"],
    ] {
        let out = crate::binary::retrysim(&args, tmp.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            crate::binary::text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}: quiet");
        let folder = args[args.len() - 1];
        assert!(
            tmp.path().join(folder).join("good/summary.csv").is_file(),
            "{args:?}"
        );
    }
}

/// `--help` and the manual page end with examples and what each exit code means.
#[test]
fn help_and_the_manual_give_examples_and_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let help = crate::binary::text(&crate::binary::retrysim(&["--help"], tmp.path()).stdout);
    assert!(help.contains("Examples:\n  retrysim "), "{help}");
    assert!(help.contains("Exit status:\n  0    done"), "{help}");
    let man = crate::binary::text(&crate::binary::retrysim(&["man"], tmp.path()).stdout);
    assert!(man.contains(".SH \"EXAMPLES\"") && man.contains(".SH \"EXIT STATUS\""));
    assert!(man.contains("130  interrupted by Ctrl-C or SIGTERM"));
}
