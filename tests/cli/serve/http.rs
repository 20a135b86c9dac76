//! Just enough HTTP/1.1 for the tests to talk to `retrysim serve` and to ChromeDriver: one
//! request per connection, the answer read to its end.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Sends `method` to `url` (`http://127.0.0.1:PORT/path`) with an optional JSON body; the
/// status and the body.
pub fn request(method: &str, url: &str, body: Option<&str>) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http:// address");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let mut stream = TcpStream::connect(host).expect("the server listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // A WebDriver server may keep the connection open whatever the request says: the body
    // is read to its length, or to its last chunk.
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = stream.read(&mut buf).unwrap();
        raw.extend_from_slice(&buf[..n]);
        if n == 0 || complete(&raw) {
            break;
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (
        status,
        if chunked(head) {
            unchunk(body)
        } else {
            body.to_string()
        },
    )
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
