//! The policy a trace's client is claimed to have had: `calibrate --incident --claimed FILE`
//! writes it into the incident's config in place of `as-observed`, replays the incident under
//! it and holds the replay to the trace (see [`super::replay`]).
//!
//! The file holds one `[[policy]]` table and nothing else, as a config writes a policy (a
//! preset's included). Its shape is checked here, before the trace is read; what the policy
//! says is checked as part of the config it goes into, against the trace's own tools, before
//! anything is written ([`Claimed::placed`] puts those errors back in the file's own lines).

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::config::{ConfigError, Source};

/// A claimed policy: its name, the file it came from (as shown) and its text, as the file has
/// them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub name: String,
    pub file: String,
    pub text: String,
}

/// What the file may hold: the `policy` array of tables, nothing beside it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Shape {
    policy: Spanned<Vec<Spanned<toml::Table>>>,
}

/// What the file is: one `[[policy]]`, the policy the trace's client had.
const ALLOWED: &str = "one [[policy]] table and nothing beside it: the policy the trace's \
                       client had, as a config writes it";

/// The policy `file` holds, its shape checked.
pub fn read(file: &Path) -> Result<Claimed, ConfigError> {
    of(Source::read(file)?)
}

/// The policy `source` holds, its shape checked.
pub fn of(source: Source) -> Result<Claimed, ConfigError> {
    let shape: Shape = toml::from_str(&source.text)
        .map_err(|e| ConfigError::from_toml(&source, "", &e).allowed(ALLOWED))?;
    let policies = shape.policy.get_ref();
    let refused = |span: std::ops::Range<usize>, why: &str| {
        Err(ConfigError::at(&source, span, "policy", why).allowed(ALLOWED))
    };
    let [only] = &policies[..] else {
        return match policies.get(1) {
            Some(second) => refused(
                second.span(),
                "a second policy: a claim is the one in effect",
            ),
            None => refused(shape.policy.span(), "no policy in the list"),
        };
    };
    let Some(toml::Value::String(name)) = only.get_ref().get("name") else {
        return refused(only.span(), "the policy has no name = \"…\"");
    };
    Ok(Claimed {
        name: name.clone(),
        file: source.name.clone(),
        text: source.text.clone(),
    })
}

impl Claimed {
    /// `error`, found in a config whose text holds this claim from byte `at`, placed in the
    /// claim's file where it lies in the claim's lines. An error of the whole config is the
    /// claim's too: the rest is retrysim's own, written to hold.
    pub fn placed(&self, error: ConfigError, config: &str, at: usize) -> ConfigError {
        let before = config[..at].matches('\n').count();
        let lines = before + 1..=before + self.text.lines().count();
        error.moved(&self.file, lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(text: &str) -> Result<Claimed, String> {
        of(Source::from_text("claim.toml", text)).map_err(|e| e.to_string())
    }

    /// A claim is read with its name and kept as written; a file of two policies, with a table
    /// or a key beside its policy, or with a nameless one is refused at the place that is wrong.
    #[test]
    fn a_claim_is_one_named_policy_and_nothing_else() {
        let text = "# the client's\n[[ policy ]]\nname = \"sdk\"\nmax_attempts = 2\n";
        let c = claim(text).unwrap();
        assert_eq!((c.name.as_str(), c.text.as_str()), ("sdk", text));
        let two = claim("[[policy]]\nname = \"a\"\n[[policy]]\nname = \"b\"\n").unwrap_err();
        assert!(
            two.starts_with("claim.toml:3:1: policy: a second policy"),
            "{two}"
        );
        let beside = claim("[[policy]]\nname = \"a\"\n[[tool]]\nname = \"t\"\n").unwrap_err();
        assert!(
            beside.starts_with("claim.toml:3:3: unknown field `tool`"),
            "{beside}"
        );
        let key = claim("name = \"x\"\n[[policy]]\nname = \"a\"\n").unwrap_err();
        assert!(
            key.starts_with("claim.toml:1:1: unknown field `name`"),
            "{key}"
        );
        let nameless = claim("[[policy]]\nmax_attempts = 2\n").unwrap_err();
        assert!(nameless.contains("the policy has no name"), "{nameless}");
        assert!(
            claim("# nothing\n")
                .unwrap_err()
                .contains("missing field `policy`")
        );
    }
}
