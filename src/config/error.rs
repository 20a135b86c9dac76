//! Config errors that say where and what: file, line, column, key path, the offending line, and
//! what would be allowed.

use std::fmt;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::{Origin, Source};

/// A config that cannot be used. Displayed (and printed after `error: `) as
///
/// ```text
/// configs/x.toml:7:14: tool[0].reply_loss: 1.5 is not a probability
///   |
/// 7 | reply_loss = 1.5
///   |              ^^^
///   |
///   = allowed: a number from 0 to 1
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(Box<Details>);

/// Where and what a config error is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Details {
    pub file: String,
    /// 1-based line and column, when the error has a place in the file.
    pub location: Option<(usize, usize)>,
    /// The key path, such as `policy[1].backoff.multiplier`; empty for the whole file.
    pub path: String,
    pub message: String,
    /// What would be accepted instead.
    pub allowed: Option<String>,
    /// What the user probably meant: "did you mean `reply_loss`?".
    pub suggestion: Option<String>,
    /// The line of the file the error points at, and the columns to underline.
    snippet: Option<(String, Range<usize>)>,
}

impl ConfigError {
    /// An error at `span` (byte offsets) of the source.
    pub fn at(source: &Source, span: Range<usize>, path: &str, message: impl Into<String>) -> Self {
        let text = &source.text;
        let mut start = span.start.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let mut end = span.end.clamp(start, line_end);
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let width = text[start..end].chars().count().max(1);
        ConfigError::new(Details {
            file: source.name.clone(),
            location: Some((line, column)),
            path: path.to_string(),
            message: message.into(),
            allowed: None,
            suggestion: None,
            snippet: Some(excerpt(
                &text[line_start..line_end],
                column - 1..column - 1 + width,
            )),
        })
    }

    fn new(mut details: Details) -> Self {
        details.message = shortened(&details.message, MAX_MESSAGE);
        ConfigError(Box::new(details))
    }

    /// A file that is not UTF-8 text: placed at its first bad byte.
    pub fn not_utf8(file: &str, e: &std::string::FromUtf8Error) -> Self {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let source = Source {
            name: file.to_string(),
            text: String::from_utf8_lossy(bytes).into_owned(),
            origin: Origin::Text,
        };
        ConfigError::at(
            &source,
            at..at + 1,
            "",
            format!(
                "byte 0x{:02X} is not UTF-8 (a Latin-1 or other legacy encoding?)",
                bytes[at]
            ),
        )
        .allowed("UTF-8 text: save the file as UTF-8")
    }

    /// Adds what would have been accepted.
    pub fn allowed(mut self, allowed: impl Into<String>) -> Self {
        self.0.allowed = Some(allowed.into());
        self
    }

    /// A file that could not be read at all.
    pub fn unreadable(file: &str, why: &str) -> Self {
        ConfigError::new(Details {
            file: file.to_string(),
            location: None,
            path: String::new(),
            message: format!("cannot read the config: {why}"),
            allowed: None,
            suggestion: None,
            snippet: None,
        })
    }

    /// A syntax, type or unknown-key error found while deserializing.
    pub fn from_toml(source: &Source, path: &str, e: &toml::de::Error) -> Self {
        // `Spanned` wraps a value in a private marker field; it is no key of the user's.
        let path: Vec<&str> = path
            .split('.')
            .filter(|segment| !segment.is_empty() && !segment.starts_with("$__"))
            .collect();
        let path = &path.join(".");
        let message = in_words(e.message().trim_end());
        let suggestion = crate::suggest::for_serde_message(&message);
        // An unknown key's guess comes first, the keys allowed after it.
        let (message, allowed) = match crate::suggest::in_serde_message(&message) {
            Some((typed, expected)) => {
                let what = message.split('`').next().unwrap_or("unknown ").trim_end();
                let listed: Vec<String> = expected.iter().map(|k| format!("`{k}`")).collect();
                (format!("{what} `{typed}`"), Some(listed.join(", ")))
            }
            None => (message, None),
        };
        let error = match e.span() {
            Some(span) => ConfigError::at(source, span, path, message),
            None => ConfigError::new(Details {
                file: source.name.clone(),
                location: None,
                path: path.to_string(),
                message,
                allowed: None,
                suggestion: None,
                snippet: None,
            }),
        };
        let error = error.suggesting(suggestion);
        match allowed {
            Some(a) => error.allowed(a),
            None => error,
        }
    }

    /// The error of a text that holds the file `file` in its lines `lines`, placed in that
    /// file: its line counted from the file's start. An error of the whole text is the file's
    /// too; one in the other lines keeps its place.
    pub fn moved(mut self, file: &str, lines: std::ops::RangeInclusive<usize>) -> Self {
        match self.0.location {
            Some((line, column)) if lines.contains(&line) => {
                self.0.location = Some((line + 1 - lines.start(), column));
                self.0.file = file.to_string();
            }
            Some(_) => {}
            None => self.0.file = file.to_string(),
        }
        self
    }

    /// Adds what the user probably meant, if anything.
    pub fn suggesting(mut self, suggestion: Option<String>) -> Self {
        self.0.suggestion = suggestion;
        self
    }
}

/// A serde message with its Rust types in words: `expected f64` is `expected a number`.
fn in_words(message: &str) -> String {
    const WORDS: [(&str, &str); 10] = [
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 or more"),
        ("expected u8", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected a boolean", "expected true or false"),
    ];
    let mut out = message.to_string();
    for (rust, words) in WORDS {
        if let Some(at) = out.find(rust) {
            let end = at + rust.len();
            // `expected u8` is not the start of `expected u8x`: only a whole word.
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(at..end, words);
            }
        }
    }
    out
}

/// The most characters of a source line an error quotes: a longer line is cut to a window
/// around the offending token.
const MAX_EXCERPT: usize = 100;
/// The most characters of a message, which may quote a value from the file: room for the
/// longest list of allowed keys.
const MAX_MESSAGE: usize = 1000;

/// `line` with the columns `marked` (in characters), cut to a window of at most
/// [`MAX_EXCERPT`] characters that keeps the start of the mark, with `…` where it was cut.
fn excerpt(line: &str, marked: Range<usize>) -> (String, Range<usize>) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= MAX_EXCERPT {
        return (line.to_string(), marked);
    }
    let from = marked
        .start
        .saturating_sub(MAX_EXCERPT / 3)
        .min(chars.len());
    let to = (from + MAX_EXCERPT).min(chars.len());
    let mut text = String::new();
    let lead = usize::from(from > 0);
    if from > 0 {
        text.push('…');
    }
    text.extend(&chars[from..to]);
    if to < chars.len() {
        text.push('…');
    }
    let start = marked.start - from + lead;
    let end = (marked.end.min(to) - from + lead).max(start + 1);
    (text, start..end)
}

/// `text` cut to at most `max` characters, with `…` where it was cut.
fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

impl std::ops::Deref for ConfigError {
    type Target = Details;

    fn deref(&self) -> &Details {
        &self.0
    }
}

impl ConfigError {
    /// The error as a report, laid out by annotate-snippets as rustc and cargo lay theirs out:
    /// the header (where and what), the line with the offending span marked, the guess, then
    /// what is allowed. `renderer` is plain, or styled for a terminal.
    pub fn render(&self, renderer: &Renderer) -> String {
        let d = &self.0;
        let mut header = d.file.clone();
        if let Some((line, column)) = d.location {
            header.push_str(&format!(":{line}:{column}"));
        }
        if !d.path.is_empty() {
            header.push_str(&format!(": {}", d.path));
        }
        header.push_str(&format!(": {}", d.message));
        // The header stands alone: whoever prints the report says "error:" before it.
        let title = Level::ERROR.no_name().primary_title(header.as_str());
        let mut group = Group::with_title(title);
        if let (Some((text, cols)), Some((line, _))) = (&d.snippet, d.location) {
            // The span is kept in characters; the renderer takes bytes.
            let byte = |c: usize| text.char_indices().nth(c).map_or(text.len(), |(b, _)| b);
            let span = byte(cols.start)..byte(cols.end);
            group = group.element(
                Snippet::source(text.as_str())
                    .line_start(line)
                    .fold(false)
                    .annotation(AnnotationKind::Primary.span(span)),
            );
        }
        // The guess first: it is what the reader most likely meant; the list is the rest.
        if let Some(suggestion) = &d.suggestion {
            group = group.element(Level::HELP.no_name().message(suggestion.as_str()));
        }
        if let Some(allowed) = &d.allowed {
            group = group.element(Level::NOTE.with_name("allowed").message(allowed.as_str()));
        }
        renderer.render(&[group])
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&Renderer::plain()))
    }
}

impl std::error::Error for ConfigError {}
