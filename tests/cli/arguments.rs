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
