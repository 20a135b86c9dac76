//! Just enough HTTP/1.1 for one classroom, every part of it bounded: at most
//! [`MOST_CONNECTIONS`] open at once (one more is told 503 and closed), a request's head and body
//! read within [`READ_TIME`] and at most [`MOST_HEAD`] and [`MOST_BODY`] bytes, one request a
//! connection, each answer closing it. Kept this small so that the server holds every socket
//! it reads: it can see a reader who went away mid-run, and close every connection when it
//! stops.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// The most connections open at once: a classroom's readers, each with a page and a run.
pub const MOST_CONNECTIONS: usize = 64;
/// The most bytes of a request's head (its line and headers).
const MOST_HEAD: usize = 16 * 1024;
/// The most bytes of a request's body: a page sends a few dozen short flags.
pub const MOST_BODY: usize = 64 * 1024;
/// How long a request may take to arrive, head and body together.
pub const READ_TIME: Duration = Duration::from_secs(10);

/// A request read whole.
pub struct Request {
    pub method: String,
    /// The path, without its query.
    pub path: String,
    pub body: Vec<u8>,
}

/// Why a request could not be read: the status to answer with and why, or nothing to answer
/// (the reader went away, or the time ran out before a whole head came).
pub enum Unread {
    Answer(u16, &'static str),
    Silent,
}

/// Reads one request from `stream` within [`READ_TIME`].
pub fn read(stream: &mut TcpStream) -> Result<Request, Unread> {
    let deadline = Instant::now() + READ_TIME;
    let mut raw = Vec::new();
    let end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if raw.len() > MOST_HEAD {
            return Err(Unread::Answer(
                431,
                "the request's head is larger than 16 KiB",
            ));
        }
        if fill(stream, &mut raw, deadline)? == 0 {
            return Err(Unread::Silent);
        }
    };
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.lines();
    let mut words = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return Err(Unread::Answer(400, "not an HTTP request"));
    };
    let length = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .map(|(_, n)| n.trim().parse::<usize>());
    let length = match length {
        None => 0,
        Some(Ok(n)) if n <= MOST_BODY => n,
        Some(Ok(_)) => return Err(Unread::Answer(413, "the request is larger than 64 KiB")),
        Some(Err(_)) => return Err(Unread::Answer(400, "a Content-Length that is no number")),
    };
    let mut body = raw.split_off(end + 4);
    while body.len() < length {
        if fill(stream, &mut body, deadline)? == 0 {
            return Err(Unread::Silent);
        }
    }
    body.truncate(length);
    Ok(Request {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("/").to_string(),
        body,
    })
}

/// Reads what has come into `into`, waiting no later than `deadline`: the bytes read, 0 at the
/// end of the stream.
fn fill(stream: &mut TcpStream, into: &mut Vec<u8>, deadline: Instant) -> Result<usize, Unread> {
    let mut buf = [0u8; 8 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Unread::Answer(408, "the request did not arrive in time"));
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(|_| Unread::Silent)?;
        match stream.read(&mut buf) {
            Ok(n) => {
                into.extend_from_slice(&buf[..n]);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Unread::Answer(408, "the request did not arrive in time"));
            }
            Err(_) => return Err(Unread::Silent),
        }
    }
}

/// Answers with `status` and `body` of `content_type`, and closes the connection.
pub fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    };
    stream.set_write_timeout(Some(READ_TIME))?;
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()?;
    let _ = stream.shutdown(Shutdown::Write);
    Ok(())
}

/// Whether the reader at the other end of `stream` has gone away: it closed the connection, or
/// it was reset. Sends nothing and takes nothing.
pub fn gone(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let gone = match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ),
    };
    let _ = stream.set_nonblocking(false);
    gone
}
