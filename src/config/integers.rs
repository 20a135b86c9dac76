//! TOML's integers are signed 64-bit: the config is passed through that type (a sweep's points,
//! `tune`'s candidates, the manifest written back), so an integer outside it is refused where
//! it is written, whatever key it is for, rather than accepted by one reader and lost by the
//! next.

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{ConfigError, Source};

/// The largest integer a config holds: TOML's own largest, 2⁶³ − 1.
pub const LARGEST: u64 = i64::MAX as u64;

/// What a config's integers may be, for an error's "allowed" line.
pub const ALLOWED: &str =
    "a whole number from -9223372036854775808 to 9223372036854775807 (2⁶³ − 1), TOML's integers";

/// What an integer outside TOML's range is called.
pub fn outside(written: &str) -> String {
    format!("{written} is outside the integers a config holds")
}

/// Refuses the first integer of `source` outside TOML's range, at its key.
pub fn in_range(source: &Source) -> Result<(), ConfigError> {
    // A document that does not parse is reported by the typed reader, with its own words.
    let Ok(root) = DeTable::parse(&source.text) else {
        return Ok(());
    };
    let mut path = Vec::new();
    match table(root.get_ref(), &mut path) {
        None => Ok(()),
        Some((span, at, written)) => {
            Err(ConfigError::at(source, span, &at, outside(&written)).allowed(ALLOWED))
        }
    }
}

/// The first integer outside TOML's range in a value as written (`--set`'s), as written.
pub fn first_outside(value: &str) -> Option<String> {
    let parsed = DeValue::parse(value).ok()?;
    value_of(&parsed, &mut vec![String::new()]).map(|(_, _, written)| written)
}

type Found = (std::ops::Range<usize>, String, String);

fn table(t: &DeTable<'_>, path: &mut Vec<String>) -> Option<Found> {
    t.iter().find_map(|(key, value)| {
        path.push(key.get_ref().to_string());
        let found = value_of(value, path);
        path.pop();
        found
    })
}

fn value_of(v: &Spanned<DeValue<'_>>, path: &mut Vec<String>) -> Option<Found> {
    match v.get_ref() {
        DeValue::Integer(i) if i64::from_str_radix(i.as_str(), i.radix()).is_err() => {
            Some((v.span(), path.join("."), i.to_string()))
        }
        DeValue::Table(t) => table(t, path),
        DeValue::Array(items) => items.iter().enumerate().find_map(|(k, item)| {
            let last = path.pop().unwrap_or_default();
            path.push(format!("{last}[{k}]"));
            let found = value_of(item, path);
            path.pop();
            path.push(last);
            found
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Origin;

    fn check(text: &str) -> Result<(), ConfigError> {
        in_range(&Source {
            name: "c.toml".into(),
            text: text.into(),
            origin: Origin::Text,
        })
    }

    #[test]
    fn integers_past_i64_are_refused_at_their_key() {
        assert_eq!(check("seed = 9223372036854775807"), Ok(()));
        let e = check("seed = 9223372036854775808").unwrap_err();
        assert_eq!((e.path.as_str(), e.location), ("seed", Some((1, 8))));
        let e = check("[[policy]]\nname = \"p\"\nbackoff = { multiplier = 18446744073709551615 }")
            .unwrap_err();
        assert_eq!(e.path, "policy[0].backoff.multiplier");
        assert!(e.message.contains("18446744073709551615"), "{}", e.message);
        let e = check("x = [1, -9223372036854775809]").unwrap_err();
        assert_eq!(e.path, "x[1]");
        assert!(check("x = 0xffffffffffffffff").is_err());
    }
}
