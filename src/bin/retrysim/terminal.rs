//! Every byte retrysim prints goes through here. A reader that goes away (`retrysim … | head`,
//! a closed log) is the end of that output, never a panic and never a hang: the run goes on,
//! writes its files, and exits with the code it would have had.

use std::io::{self, Write};

use annotate_snippets::Renderer;
use retrysim::Error;
use retrysim::config::ConfigError;

use crate::Failure;

/// Writes `text` to stdout; a closed pipe ends the output silently, any other failure is an
/// error.
pub fn out(text: &str) -> Result<(), Failure> {
    match io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Error::io("cannot write to stdout")(e).into())
        }
        _ => Ok(()),
    }
}

/// Writes `text` and a newline to stderr, where a failure has nowhere to be reported: it is
/// dropped.
pub fn err(text: &str) {
    let mut stderr = io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Whether stderr takes colour: a terminal, and `NO_COLOR` not set.
fn colour() -> bool {
    use std::io::IsTerminal;
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `error:` as it starts every error, red and bold where stderr takes colour, as cargo's and
/// clap's is.
fn label(colour: bool) -> String {
    let red = anstyle::Style::new()
        .fg_color(Some(anstyle::AnsiColor::Red.into()))
        .bold();
    match colour {
        true => format!("{red}error:{red:#}"),
        false => "error:".into(),
    }
}

/// Writes an error to stderr as `error: {text}`.
pub fn error(text: &str) {
    err(&format!("{} {text}", label(colour())));
}

/// Writes a config error to stderr as annotate-snippets lays it out (see
/// [`ConfigError::render`]): the gutter, the marks under the offending text, the guess and the
/// allowed values coloured where stderr takes colour, the same text without it.
pub fn config_error(e: &ConfigError) {
    let colour = colour();
    let renderer = match colour {
        true => Renderer::styled(),
        false => Renderer::plain(),
    };
    err(&format!("{} {}", label(colour), e.render(&renderer)));
}

/// `eprintln!` that a closed stderr cannot make panic.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::terminal::err(&format!($($arg)*))
    };
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;

    /// Styled, a config error is the plain text with escapes added, byte for byte.
    #[test]
    fn a_config_error_is_styled_in_its_parts_and_reads_the_same_without_them() {
        let source = retrysim::config::Source {
            name: "c.toml".into(),
            text: "reply_los = 0.2\n".into(),
            origin: retrysim::config::Origin::Text,
        };
        let e = ConfigError::at(
            &source,
            0..9,
            "tool[0].reply_los",
            "unknown field `reply_los`",
        )
        .allowed("`reply_loss`");
        let styled = e.render(&Renderer::styled());
        assert!(styled.contains('\u{1b}'), "{styled:?}");
        let mut plain = String::new();
        let mut chars = styled.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for e in chars.by_ref() {
                    if e == 'm' {
                        break;
                    }
                }
            } else {
                plain.push(c);
            }
        }
        assert_eq!(plain, e.to_string());
        assert!(
            plain.contains("1 | reply_los = 0.2\n  | ^^^^^^^^^"),
            "{plain}"
        );
    }
}
