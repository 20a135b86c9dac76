//! A CSV access log: a header, then one call per row.
//!
//! Columns, by header name, in any order (others are read past):
//! - `timestamp`: RFC 3339 (`2026-11-30T12:00:00.250Z`) or seconds since the epoch;
//! - `operation`: the operation's name;
//! - `duration` (with a unit: `85ms`), `duration_ms` or `duration_s` (numbers);
//! - `status`: an HTTP status code, a gRPC status name (`UNAVAILABLE`), or `timeout`,
//!   `connect`, `reset` for a call that got no reply;
//! - optional: `retry_after` (seconds, or a duration) and `resend` (`true` or a count above 0
//!   for a call that resent an earlier one).

use super::span::{Outcome, Span, retry_after};
use crate::time::{TICKS_PER_SECOND, Tick, parse_duration};

/// Where each column is, found from the header.
pub struct Columns {
    timestamp: usize,
    operation: usize,
    duration: (usize, Unit),
    status: usize,
    retry_after: Option<usize>,
    resend: Option<usize>,
}

#[derive(Clone, Copy)]
enum Unit {
    Written,
    Millis,
    Seconds,
}

impl Columns {
    pub fn from_header(header: &csv::StringRecord) -> Result<Columns, String> {
        let find = |name: &str| header.iter().position(|h| h.trim() == name);
        let need = |name: &str| {
            find(name).ok_or_else(|| {
                format!("no `{name}` column in the header (timestamp, operation, duration, status)")
            })
        };
        let duration = [
            ("duration", Unit::Written),
            ("duration_ms", Unit::Millis),
            ("duration_s", Unit::Seconds),
        ]
        .into_iter()
        .find_map(|(name, unit)| Some((find(name)?, unit)))
        .ok_or("no `duration`, `duration_ms` or `duration_s` column in the header")?;
        Ok(Columns {
            timestamp: need("timestamp")?,
            operation: need("operation")?,
            duration,
            status: need("status")?,
            retry_after: find("retry_after"),
            resend: find("resend"),
        })
    }

    /// One row as a call; an error names the column.
    pub fn span(&self, row: &csv::StringRecord) -> Result<Span, String> {
        let cell = |i: usize| row.get(i).unwrap_or("").trim();
        let start = timestamp(cell(self.timestamp)).map_err(|why| format!("timestamp: {why}"))?;
        let operation = cell(self.operation);
        if operation.is_empty() {
            return Err("operation: empty".into());
        }
        let (i, unit) = self.duration;
        let duration = duration(cell(i), unit).map_err(|why| format!("duration: {why}"))?;
        let status = cell(self.status);
        let outcome = match status {
            "timeout" => Outcome::Timeout,
            "connect" => Outcome::Connect,
            "reset" => Outcome::Reset,
            s => match (s.parse::<i64>(), crate::grpc::code(s)) {
                (Ok(code), _) => Outcome::of_http(code),
                (_, Some(code)) => Outcome::of_grpc(code.into()),
                _ => None,
            }
            .ok_or_else(|| {
                format!(
                    "status: `{s}` is neither an HTTP status, a gRPC status name, nor timeout, connect or reset"
                )
            })?,
        };
        let retry_after = match self.retry_after.map(cell).filter(|c| !c.is_empty()) {
            None => None,
            Some(c) => Some(
                retry_after(c)
                    .ok_or_else(|| format!("retry_after: `{c}` is not seconds or a duration"))?,
            ),
        };
        let resend = match self.resend.map(cell).filter(|c| !c.is_empty()) {
            None | Some("false") | Some("0") => false,
            Some("true") => true,
            Some(c) => {
                c.parse::<u64>()
                    .map_err(|_| format!("resend: `{c}` is not true, false or a count"))?
                    > 0
            }
        };
        Ok(Span {
            operation: operation.to_string(),
            start,
            duration,
            outcome,
            retry_after,
            resend,
            call: None,
        })
    }
}

fn duration(text: &str, unit: Unit) -> Result<Tick, String> {
    let scale = match unit {
        Unit::Written => return parse_duration(text).map_err(|e| e.to_string()),
        Unit::Millis => 1e3,
        Unit::Seconds => 1e6,
    };
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Tick(libm::round(x * scale) as u64)),
        _ => Err(format!("`{text}` is not a number ≥ 0")),
    }
}

/// Microseconds since the epoch, from RFC 3339 or from seconds.
fn timestamp(text: &str) -> Result<i64, String> {
    if let Ok(s) = text.parse::<f64>() {
        return if s.is_finite() && s.abs() < 1e12 {
            Ok(libm::round(s * TICKS_PER_SECOND as f64) as i64)
        } else {
            Err(format!("`{text}` is no time"))
        };
    }
    rfc3339(text).ok_or_else(|| {
        format!("`{text}` is neither RFC 3339 (2026-11-30T12:00:00Z) nor seconds since the epoch")
    })
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` in microseconds since the epoch.
fn rfc3339(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &t[19..];
    let mut micros = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &frac[..digits.min(6)];
        micros = kept.parse::<i64>().ok()? * 10i64.pow(6 - kept.len() as u32);
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om) = (
                rest.get(1..3)?.parse::<i64>().ok()?,
                rest.get(4..6)?.parse::<i64>().ok()?,
            );
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (oh * 3600 + om * 60)
        }
    };
    let seconds = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset;
    Some(seconds * TICKS_PER_SECOND as i64 + micros)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_are_read_to_the_microsecond() {
        assert_eq!(rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            rfc3339("2026-11-30T12:00:00.25Z"),
            Some(1_796_040_000_250_000)
        );
        assert_eq!(
            rfc3339("2026-11-30T13:00:00.25+01:00"),
            rfc3339("2026-11-30T12:00:00.25Z")
        );
        assert_eq!(rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400_000_000));
        assert_eq!(rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(rfc3339("2026-11-30 12:00"), None);
    }
}
