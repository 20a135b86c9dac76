//! The head of an HTTP/1.1 request as the classroom server (`retrysim serve`) reads one: its
//! method, its path and the length of its body, each bounded. A pure function of the bytes
//! come so far, so that the server's reading (with its timeouts) stays apart from what it
//! accepts, and the parsing has a fuzz target of its own.

/// The most bytes of a request's head (its line and headers).
pub const MOST_HEAD: usize = 16 * 1024;
/// The most bytes of a request's body: a page sends a few dozen short flags.
pub const MOST_BODY: usize = 64 * 1024;

/// A request's head, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    /// The path, without its query.
    pub path: String,
    /// The body's length (`Content-Length`; 0 without one).
    pub length: usize,
    /// Where the body starts in the bytes read.
    pub body_at: usize,
}

/// Why a head is refused: the status to answer with, and why in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused(pub u16, pub &'static str);

/// The head in `raw`, the bytes come so far: `Ok(None)` while it is not whole.
pub fn read(raw: &[u8]) -> Result<Option<Head>, Refused> {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return match raw.len() > MOST_HEAD {
            true => Err(Refused(431, "the request's head is larger than 16 KiB")),
            false => Ok(None),
        };
    };
    if end > MOST_HEAD {
        return Err(Refused(431, "the request's head is larger than 16 KiB"));
    }
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let mut words = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return Err(Refused(400, "not an HTTP request"));
    };
    let mut length = None;
    for (name, value) in lines.filter_map(|l| l.split_once(':')) {
        if !name.trim().eq_ignore_ascii_case("content-length") {
            continue;
        }
        let n = match value.trim().parse::<usize>() {
            Ok(n) if n <= MOST_BODY => n,
            Ok(_) => return Err(Refused(413, "the request is larger than 64 KiB")),
            Err(_) => return Err(Refused(400, "a Content-Length that is no number")),
        };
        if length.is_some_and(|l| l != n) {
            return Err(Refused(400, "two Content-Lengths that differ"));
        }
        length = Some(n);
    }
    Ok(Some(Head {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or("/").to_string(),
        length: length.unwrap_or(0),
        body_at: end + 4,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_read_when_whole_and_refused_past_its_bounds() {
        assert_eq!(read(b"POST /x/a/run HTTP/1.1\r\nContent-Le"), Ok(None));
        let head = read(b"POST /x/a/run?q=1 HTTP/1.1\r\nContent-Length: 12\r\n\r\n{}").unwrap();
        assert_eq!(
            head,
            Some(Head {
                method: "POST".into(),
                path: "/x/a/run".into(),
                length: 12,
                body_at: 50,
            })
        );
        assert_eq!(read(&[b'a'; MOST_HEAD + 1]).unwrap_err().0, 431);
        assert_eq!(
            read(b"POST / HTTP/1.1\r\ncontent-length: 65537\r\n\r\n")
                .unwrap_err()
                .0,
            413
        );
        assert_eq!(
            read(b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n")
                .unwrap_err()
                .0,
            400
        );
        assert_eq!(read(b"\r\n\r\n").unwrap_err().0, 400);
    }
}
