//! The policy a trace's client is claimed to have had: `calibrate --incident --claimed FILE`
//! writes it into the incident's config in place of `as-observed`, replays the incident under
//! it and holds the replay to the trace (see [`super::replay`]).
//!
//! The file holds one `[[policy]]` table, as a config writes it (a preset's included). It is
//! checked as a config's policy is, before anything is written, and its errors name the file
//! and its lines.

use std::path::Path;

use crate::config::{ConfigError, Source};

/// What retrysim puts before the claim to check it as a config: a workload and a tool of the
/// least a config takes, so every error left is the claim's.
const HEAD: &str =
    "name = \"claimed\"\n[workload]\ncalls = [\"t\"]\ntasks = 1\n\n[[tool]]\nname = \"t\"\n\n";

/// A claimed policy: its name and its text, as the file has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub name: String,
    pub file: String,
    pub text: String,
}

/// The policy `file` holds, checked.
pub fn read(file: &Path) -> Result<Claimed, ConfigError> {
    of(Source::read(file)?)
}

/// The policy `source` holds, checked.
pub fn of(source: Source) -> Result<Claimed, ConfigError> {
    let text = &source.text;
    // Where each line starts, and the lines that open a table.
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let lines: Vec<(usize, &str)> = starts
        .iter()
        .map(|&s| (s, text[s..].lines().next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let span = |at: usize, line: &str| at..at + line.len();
    let allowed = "one [[policy]] table, as a config's: the policy the trace's client had";
    match lines.first() {
        None => {
            return Err(
                ConfigError::at(&source, 0..0, "", "the file holds no [[policy]]").allowed(allowed),
            );
        }
        Some(&(at, line)) if !line.starts_with("[[policy]]") => {
            return Err(ConfigError::at(
                &source,
                span(at, line),
                "",
                "a claim starts with its [[policy]]: this stands outside it",
            )
            .allowed(allowed));
        }
        Some(_) => {}
    }
    if let Some(&(at, line)) = (lines.iter().skip(1)).find(|(_, l)| l.starts_with("[[policy]]")) {
        return Err(ConfigError::at(
            &source,
            span(at, line),
            "",
            "a second [[policy]]: a claim is the one policy that was in effect",
        )
        .allowed(allowed));
    }
    let whole = Source::from_text(source.name.clone(), format!("{HEAD}{text}"));
    let head = HEAD.lines().count();
    let sweep = whole.sweep().map_err(|e| e.moved(&source.name, head))?;
    let policy = sweep.base.policies.first().expect("a checked [[policy]]");
    Ok(Claimed {
        name: policy.name.clone(),
        file: source.name,
        text: text.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(text: &str) -> Result<Claimed, String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("claim.toml");
        std::fs::write(&file, text).unwrap();
        read(&file).map_err(|e| {
            e.to_string()
                .replace(&file.display().to_string(), "claim.toml")
        })
    }

    /// A claim is read with its name and kept as written; its errors are placed in its own
    /// lines, and a file of two policies, or with keys outside its table, is refused.
    #[test]
    fn a_claim_is_one_policy_checked_in_its_own_lines() {
        let text = "# the client's\n[[policy]]\nname = \"sdk\"\nmax_attempts = 2\n";
        let c = claim(text).unwrap();
        assert_eq!((c.name.as_str(), c.text.as_str()), ("sdk", text));
        let bad = claim("[[policy]]\nname = \"sdk\"\nmax_attemps = 2\n").unwrap_err();
        assert!(
            bad.starts_with("claim.toml:3:1: policy[0].max_attemps: unknown field"),
            "{bad}"
        );
        let two = claim("[[policy]]\nname = \"a\"\n[[policy]]\nname = \"b\"\n").unwrap_err();
        assert!(
            two.starts_with("claim.toml:3:1: a second [[policy]]"),
            "{two}"
        );
        let outside = claim("name = \"x\"\n[[policy]]\nname = \"a\"\n").unwrap_err();
        assert!(
            outside.starts_with("claim.toml:1:1: a claim starts"),
            "{outside}"
        );
        assert!(
            claim("# nothing\n")
                .unwrap_err()
                .contains("holds no [[policy]]")
        );
    }
}
