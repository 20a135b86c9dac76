//! Every byte retrysim prints goes through here. A reader that goes away (`retrysim … | head`,
//! a closed log) is the end of that output, never a panic and never a hang: the run goes on,
//! writes its files, and exits with the code it would have had.

use std::io::{self, Write};

use retrysim::Error;

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

/// Writes an error to stderr as `error: {text}`, in colour where stderr is a terminal (and
/// `NO_COLOR` is not set), as cargo's and clap's are: the word `error` red, the gutter and the
/// marks under the offending text blue and red, a guess green.
pub fn error(text: &str) {
    use std::io::IsTerminal;
    let plain = format!("error: {text}");
    let colour = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    err(&if colour { styled(&plain) } else { plain });
}

/// `text`, an error as [`error`] writes it, with its parts styled.
fn styled(text: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let red = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
    let blue = Style::new().fg_color(Some(AnsiColor::Blue.into())).bold();
    let green = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let paint = |style: Style, s: &str| format!("{style}{s}{style:#}");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let gutter = line
            .find(" | ")
            .filter(|&at| line[..at].trim().chars().all(|c| c.is_ascii_digit()));
        out.push(match (i, gutter) {
            (0, _) => match line.strip_prefix("error:") {
                Some(rest) => format!("{}{rest}", paint(red, "error:")),
                None => line.to_string(),
            },
            (_, Some(at)) => {
                let (number, rest) = line.split_at(at + 3);
                let marks =
                    rest.trim_start().starts_with('^') && rest.trim().chars().all(|c| c == '^');
                let rest = if marks {
                    paint(red, rest)
                } else {
                    rest.to_string()
                };
                format!("{}{rest}", paint(blue, number))
            }
            _ if line.trim_start().starts_with("= did you mean") => paint(green, line),
            _ => line.to_string(),
        });
    }
    out.join("\n")
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

    #[test]
    fn an_error_is_styled_in_its_parts_and_reads_the_same_without_them() {
        let text = "error: c.toml:9:1: tool[0].reply_los: unknown field `reply_los`\n 9 | reply_los = 0.2\n   | ^^^^^^^^^\n  = did you mean `reply_loss`?\n  = allowed: `name`";
        let styled = styled(text);
        assert!(styled.starts_with("\u{1b}["), "{styled:?}");
        assert!(styled.contains("\u{1b}[32m  = did you mean"), "{styled:?}");
        // Without its escapes it is the plain text, byte for byte.
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
        assert_eq!(plain, text);
    }
}
