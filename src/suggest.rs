//! "Did you mean": the known word closest to one a user typed, for a misspelt command, key,
//! value or name.

/// The candidate closest to `typed`, if one is close enough to be what was meant: at most a
/// third of its letters changed (one at least), and the closest by edit distance, the first
/// among equals.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let most = (typed.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != typed)
        .map(|c| (strsim::damerau_levenshtein(typed, c), c))
        .filter(|&(d, _)| d <= most)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The word serde names as unknown in `message` and the ones it expected, from its
/// "unknown field `x`, expected one of `a`, `b`" (or `variant`, or "expected `a` or `b`").
pub fn in_serde_message(message: &str) -> Option<(&str, Vec<&str>)> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let (typed, expected) = rest.split_once('`')?;
    let expected: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    Some((typed, expected))
}

/// "did you mean `x`?" for a word serde refused, if one it expected is close.
pub fn for_serde_message(message: &str) -> Option<String> {
    let (typed, expected) = in_serde_message(message)?;
    closest(typed, expected).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_word_is_suggested_when_close() {
        let keys = ["reply_loss", "request_loss", "server_error"];
        assert_eq!(closest("reply_los", keys), Some("reply_loss"));
        assert_eq!(closest("rpely_loss", keys), Some("reply_loss"));
        assert_eq!(closest("frobnicate", keys), None);
        assert_eq!(closest("rn", ["run", "merge", "plot"]), Some("run"));
        assert_eq!(
            closest("run", ["run"]),
            None,
            "a word is not its own suggestion"
        );
    }

    #[test]
    fn serde_messages_are_read_for_their_words() {
        let m = "unknown field `reply_los`, expected one of `name`, `reply_loss`, `kind`";
        assert_eq!(
            in_serde_message(m),
            Some(("reply_los", vec!["name", "reply_loss", "kind"]))
        );
        assert_eq!(
            for_serde_message(m).as_deref(),
            Some("did you mean `reply_loss`?")
        );
        let v = "unknown variant `exponental`, expected `constant` or `exponential`";
        assert_eq!(
            for_serde_message(v).as_deref(),
            Some("did you mean `exponential`?")
        );
        assert_eq!(for_serde_message("invalid type: string"), None);
    }
}
