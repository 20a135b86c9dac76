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

/// `eprintln!` that a closed stderr cannot make panic.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::terminal::err(&format!($($arg)*))
    };
}
pub(crate) use say;
