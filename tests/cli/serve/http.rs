//! Just enough HTTP/1.1 for the tests to talk to `retrysim serve` and to ChromeDriver: one
//! request per connection, the answer read to its end.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Sends `method` to `url` (`http://127.0.0.1:PORT/path`) with an optional JSON body; the
/// status and the body. Panics, naming the request, where it cannot be made.
pub fn request(method: &str, url: &str, body: Option<&str>) -> (u16, String) {
    try_request(method, url, body).unwrap_or_else(|e| panic!("{method} {url}: {e}"))
}

/// [`request`], with what went wrong as an error: for a caller that must not panic (a `Drop`).
/// A read or write a signal interrupts is made again, as `read` and `write` must be.
pub fn try_request(method: &str, url: &str, body: Option<&str>) -> io::Result<(u16, String)> {
    let rest = url.strip_prefix("http://").expect("an http:// address");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let mut stream = TcpStream::connect(host)?;
    stream.set_read_timeout(Some(Duration::from_secs(180)))?;
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    answer(&mut stream)
}

/// Reads an answer from `stream`. A WebDriver server may keep the connection open whatever the
/// request says: the body is read to its length, or to its last chunk.
fn answer(stream: &mut impl Read) -> io::Result<(u16, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        raw.extend_from_slice(&buf[..n]);
        if n == 0 || complete(&raw) {
            break;
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{what}: {text:?}"));
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| bad("no HTTP answer"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let body = if chunked(head) {
        unchunk(body)
    } else {
        body.to_string()
    };
    Ok((status, body))
}

/// Whether `raw` holds a whole answer: its head, and its body to the length the head gives.
fn complete(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let body = &raw[end + 4..];
    if chunked(&head) {
        return body.ends_with(b"0\r\n\r\n");
    }
    head.lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .is_some_and(|n| body.len() >= n)
}

fn chunked(head: &str) -> bool {
    head.to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
}

/// A chunked body joined.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// A stream that answers in pieces, each read but the last interrupted first, as a signal
/// interrupts a read on a busy machine.
struct Interrupting {
    pieces: Vec<&'static [u8]>,
    interrupt: bool,
}

impl Read for Interrupting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
        match self.pieces.is_empty() {
            true => Ok(0),
            false => {
                let piece = self.pieces.remove(0);
                buf[..piece.len()].copy_from_slice(piece);
                Ok(piece.len())
            }
        }
    }
}

#[test]
fn an_interrupted_read_is_made_again() {
    let mut stream = Interrupting {
        pieces: vec![
            b"HTTP/1.1 200 OK\r\nContent-Le",
            b"ngth: 5\r\n\r\nhel",
            b"lo",
        ],
        interrupt: false,
    };
    assert_eq!(answer(&mut stream).unwrap(), (200, "hello".to_string()));
}
