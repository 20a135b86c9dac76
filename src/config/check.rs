//! The helpers validation reads values with: each turns a problem into a located error.

use toml::{Spanned, Value};

use super::{ConfigError, Source};
use crate::time::{DURATION_HELP, Tick, parse_duration};

pub(crate) type Result<T> = std::result::Result<T, ConfigError>;

/// The longest name: an experiment's names its output folder, and the staging folder beside it
/// adds a prefix and a suffix, all within the 255 bytes most file systems allow.
pub const MAX_NAME: usize = 100;

/// What is wrong with `s` as a name (of an experiment, a tool, a policy), and what would do;
/// `None` if nothing is.
pub fn name_problem(s: &str) -> Option<(String, String)> {
    let ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !ok {
        return Some((
            format!("\"{s}\" cannot be used as a name"),
            "lowercase letters, digits, '-' and '_', starting with a letter or digit".into(),
        ));
    }
    if s.len() > MAX_NAME {
        return Some((
            format!(
                "a name of {} characters is too long for a folder name",
                s.len()
            ),
            format!("at most {MAX_NAME} characters"),
        ));
    }
    None
}

/// A key of a raw table: its value, its name and its path, the name taken from the raw
/// struct's field (see [`key!`]) so that no key's name is typed beside its field.
pub(crate) struct Key<'a, T> {
    pub value: &'a T,
    pub name: &'static str,
    pub path: String,
}

/// `key!(path, raw.deadline)`: the [`Key`] `deadline` of the table at `path`.
macro_rules! key {
    ($path:expr, $raw:ident . $field:ident) => {
        $crate::config::check::Key {
            value: &$raw.$field,
            name: stringify!($field),
            path: format!("{}.{}", $path, stringify!($field)),
        }
    };
}
pub(crate) use key;

/// Reads values out of the raw config, turning each problem into a located error.
pub(crate) struct Check<'a> {
    pub source: &'a Source,
}

impl Check<'_> {
    pub fn error<T>(&self, span: std::ops::Range<usize>, path: &str, message: String) -> Result<T> {
        Err(ConfigError::at(self.source, span, path, message))
    }

    pub fn error_allowing<T>(
        &self,
        span: std::ops::Range<usize>,
        path: &str,
        message: String,
        allowed: &str,
    ) -> Result<T> {
        Err(ConfigError::at(self.source, span, path, message).allowed(allowed))
    }

    /// Refuses the first of `keys` (name, span if set) that is set: they do not apply here,
    /// and `why` says so for the key found.
    pub fn none_set(
        &self,
        keys: &[(&str, Option<std::ops::Range<usize>>)],
        path: &str,
        why: impl Fn(&str) -> String,
        allowed: &str,
    ) -> Result<()> {
        match keys.iter().find(|(_, span)| span.is_some()) {
            Some((key, Some(span))) => {
                self.error_allowing(span.clone(), &format!("{path}.{key}"), why(key), allowed)
            }
            _ => Ok(()),
        }
    }

    pub fn probability(&self, value: &Option<Spanned<f64>>, path: &str) -> Result<f64> {
        let Some(p) = value else { return Ok(0.0) };
        let v = *p.get_ref();
        if !(0.0..=1.0).contains(&v) {
            return self.error_allowing(
                p.span(),
                path,
                format!("{v} is not a probability"),
                "a number from 0 to 1",
            );
        }
        Ok(v)
    }

    pub fn duration(&self, value: &Spanned<Value>, path: &str) -> Result<Tick> {
        match value.get_ref() {
            Value::Integer(t) if *t >= 0 => Ok(Tick(*t as u64)),
            Value::Integer(t) => self.error_allowing(
                value.span(),
                path,
                format!("{t} is negative; durations are zero or more"),
                DURATION_HELP,
            ),
            Value::String(s) => match parse_duration(s) {
                Ok(t) => Ok(t),
                Err(why) => self.error_allowing(value.span(), path, why.to_string(), DURATION_HELP),
            },
            other => self.error_allowing(
                value.span(),
                path,
                format!("expected a duration, found {}", other.type_str()),
                DURATION_HELP,
            ),
        }
    }

    /// A window of time from `from` until `until`, which must come later; `what` names it in
    /// the message ("the outage").
    pub fn window(
        &self,
        from: &Spanned<Value>,
        until: &Spanned<Value>,
        path: &str,
        what: &str,
    ) -> Result<(Tick, Tick)> {
        let start = self.duration(from, &format!("{path}.from"))?;
        let end = self.duration(until, &format!("{path}.until"))?;
        if end <= start {
            return self.error_allowing(
                until.span(),
                &format!("{path}.until"),
                format!("{what} ends ({end}) no later than it starts ({start})"),
                "until > from",
            );
        }
        Ok((start, end))
    }

    pub fn duration_or(
        &self,
        value: &Option<Spanned<Value>>,
        path: &str,
        default: &str,
    ) -> Result<Tick> {
        match value {
            Some(v) => self.duration(v, path),
            None => Ok(parse_duration(default).expect("defaults are valid durations")),
        }
    }

    /// One of `all`, written by its name; `default` when absent.
    pub fn named<T: Copy>(
        &self,
        value: Option<&Spanned<String>>,
        path: &str,
        all: &[T],
        name: fn(T) -> &'static str,
        default: T,
    ) -> Result<T> {
        let Some(value) = value else {
            return Ok(default);
        };
        let options: Vec<(&str, T)> = all.iter().map(|&v| (name(v), v)).collect();
        self.choice(value, path, &options)
    }

    /// One of a fixed set of words.
    pub fn choice<T: Copy>(
        &self,
        value: &Spanned<String>,
        path: &str,
        options: &[(&str, T)],
    ) -> Result<T> {
        match options.iter().find(|(name, _)| name == value.get_ref()) {
            Some(&(_, v)) => Ok(v),
            None => {
                let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
                let meant = crate::suggest::closest(value.get_ref(), options.iter().map(|o| o.0));
                let message = format!("unknown value \"{}\"", value.get_ref());
                Err(ConfigError::at(self.source, value.span(), path, message)
                    .allowed(names.join(", "))
                    .suggesting(meant.map(|m| format!("did you mean \"{m}\"?"))))
            }
        }
    }

    /// A name that can be a folder and a CSV cell: lowercase letters, digits, `-` and `_`.
    pub fn name(&self, value: &Spanned<String>, path: &str) -> Result<String> {
        match name_problem(value.get_ref()) {
            Some((why, allowed)) => self.error_allowing(value.span(), path, why, &allowed),
            None => Ok(value.get_ref().clone()),
        }
    }

    /// A count that must be at least 1; `zero` says what 0 would mean.
    pub fn count<T: Copy + Default + PartialEq>(
        &self,
        value: Option<&Spanned<T>>,
        path: &str,
        default: T,
        zero: &str,
    ) -> Result<T> {
        match value {
            Some(v) if *v.get_ref() == T::default() => {
                self.error_allowing(v.span(), path, zero.into(), "1 or more")
            }
            Some(v) => Ok(*v.get_ref()),
            None => Ok(default),
        }
    }

    /// A count from 1 to `most`, for a count that sizes memory or work up front; `default` when
    /// absent. `bound` says what the most stands for.
    pub fn count_to<T: Copy + Default + PartialEq + Into<u64>>(
        &self,
        value: Option<&Spanned<T>>,
        path: &str,
        (default, zero): (T, &str),
        most: u64,
        bound: &str,
    ) -> Result<T> {
        let n = self.count(value, path, default, zero)?;
        match value {
            Some(v) if n.into() > most => self.error_allowing(
                v.span(),
                path,
                format!("{} is more than {bound}", n.into()),
                &format!("1 to {most}"),
            ),
            _ => Ok(n),
        }
    }

    /// A number that must pass `valid`; `default` when absent. `what` ends the message "x is
    /// not …" and `allowed` says what would do.
    pub fn number(
        &self,
        value: Option<&Spanned<f64>>,
        path: &str,
        default: f64,
        valid: fn(f64) -> bool,
        what: &str,
        allowed: &str,
    ) -> Result<f64> {
        match value {
            None => Ok(default),
            Some(v) if valid(*v.get_ref()) => Ok(*v.get_ref()),
            Some(v) => self.error_allowing(
                v.span(),
                path,
                format!("{} is not {what}", shown(*v.get_ref())),
                allowed,
            ),
        }
    }

    /// A whole number of at least 1 that fits a `u32`, or `"unlimited"` (`None`).
    pub fn count_or_unlimited(
        &self,
        value: &Spanned<Value>,
        path: &str,
        what: &str,
        allowed: &str,
    ) -> Result<Option<u32>> {
        match value.get_ref() {
            Value::Integer(n) if *n >= 1 && *n <= i64::from(u32::MAX) => Ok(Some(*n as u32)),
            Value::String(s) if s == "unlimited" => Ok(None),
            other => {
                let meant = match other {
                    Value::String(s) => crate::suggest::closest(s, ["unlimited"]),
                    _ => None,
                };
                let e = ConfigError::at(
                    self.source,
                    value.span(),
                    path,
                    format!("{other} is not a number of {what}"),
                );
                Err(e
                    .allowed(allowed)
                    .suggesting(meant.map(|m| format!("did you mean \"{m}\"?"))))
            }
        }
    }

    /// A list of distinct names, each one of `all`.
    pub fn names<T: Copy>(
        &self,
        list: &Spanned<Vec<Spanned<String>>>,
        path: &str,
        all: &[T],
        name: fn(T) -> &'static str,
    ) -> Result<Vec<T>> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for (i, item) in list.get_ref().iter().enumerate() {
            let path = format!("{path}[{i}]");
            self.unique(&seen, item, &path)?;
            seen.push(item.get_ref().clone());
            out.push(self.named(Some(item), &path, all, name, all[0])?);
        }
        Ok(out)
    }

    /// Refuses a second item of the same name.
    pub fn unique(&self, seen: &[String], value: &Spanned<String>, path: &str) -> Result<()> {
        if seen.contains(value.get_ref()) {
            return self.error(
                value.span(),
                path,
                format!("\"{}\" is named twice", value.get_ref()),
            );
        }
        Ok(())
    }
}

/// A number as an error quotes it: as written for an ordinary size, in scientific notation for
/// a very large or very small one (1e300 is not three hundred digits).
pub fn shown(x: f64) -> String {
    let size = x.abs();
    if size != 0.0 && size.is_finite() && !(1e-4..1e15).contains(&size) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}
