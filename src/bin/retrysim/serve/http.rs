//! Just enough HTTP/1.1 for one classroom, every part of it bounded: at most
//! [`MOST_CONNECTIONS`] open at once (one more is told 503 and closed), a request's head and body
//! read within [`READ_TIME`] and at most 16 and 64 KiB ([`request_head`]), one request a
//! connection, each answer closing it. Kept this small so that the server holds every socket
//! it reads: it can see a reader who went away mid-run, and close every connection when it
//! stops.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use retrysim::request_head;

/// The most connections open at once: a classroom's readers, each with a page and a run.
pub const MOST_CONNECTIONS: usize = 64;
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

/// Reads one request from `stream` within [`READ_TIME`]; its head as [`request_head::read`]
/// takes it.
pub fn read(stream: &mut TcpStream) -> Result<Request, Unread> {
    let deadline = Instant::now() + READ_TIME;
    let mut raw = Vec::new();
    let head = loop {
        match request_head::read(&raw) {
            Ok(Some(head)) => break head,
            Ok(None) => {}
            Err(request_head::Refused(status, why)) => return Err(Unread::Answer(status, why)),
        }
        if fill(stream, &mut raw, deadline)? == 0 {
            return Err(Unread::Silent);
        }
    };
    let mut body = raw.split_off(head.body_at);
    while body.len() < head.length {
        if fill(stream, &mut body, deadline)? == 0 {
            return Err(Unread::Silent);
        }
    }
    body.truncate(head.length);
    Ok(Request {
        method: head.method,
        path: head.path,
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

/// Answers with `status` and `body` of `content_type` within `time` in all (a reader who
/// takes a byte now and then holds the connection no longer), and closes the connection.
pub fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
    time: Duration,
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
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let deadline = Instant::now() + time;
    for mut bytes in [head.as_bytes(), body] {
        while !bytes.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            stream.set_write_timeout(Some(left))?;
            match stream.write(bytes) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
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
