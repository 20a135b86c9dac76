//! Status codes, HTTP's and gRPC's, read as the failures retrysim's servers send.

use serde_json::Value as Json;
use toml::Spanned;

use crate::config::check::{Check, Result};
use crate::grpc;
use crate::model::FailureClass;

/// The retrysim classes for the HTTP status codes a library lists, or a located refusal.
/// retrysim's `5xx` is a transient 502, 503 or 504 (which the server sends is not modelled), so
/// it is retried only where all three are; its `503` is a server whose line was full. Codes no
/// retrysim server sends (a 500, a 408) change nothing; a 409 is either of retrysim's conflicts.
pub(super) fn http_classes(
    check: &Check,
    codes: &[Spanned<u16>],
    path: &str,
) -> Result<Vec<FailureClass>> {
    let has = |code: u16| codes.iter().any(|c| *c.get_ref() == code);
    let mut out = Vec::new();
    let gateway = [502, 503, 504];
    let listed: Vec<u16> = gateway.into_iter().filter(|&c| has(c)).collect();
    match listed.len() {
        0 => {}
        3 => out.push(FailureClass::ServerError),
        _ if listed == [503] => {}
        _ => {
            let missing: Vec<String> = gateway
                .iter()
                .filter(|c| !listed.contains(c))
                .map(u16::to_string)
                .collect();
            let first = codes
                .iter()
                .find(|c| listed.contains(c.get_ref()))
                .expect("listed");
            return check.error_allowing(
                first.span(),
                path,
                format!(
                    "retrysim's 5xx is a 502, 503 or 504 without saying which, and {} is not listed",
                    missing.join(" nor ")
                ),
                "all of 502, 503 and 504, or none of 502 and 504",
            );
        }
    }
    for (code, class) in [
        (503, FailureClass::Overloaded),
        (429, FailureClass::Throttled),
        (403, FailureClass::Forbidden),
        (409, FailureClass::VersionConflict),
        (409, FailureClass::Conflict),
    ] {
        if has(code) {
            out.push(class);
        }
    }
    for code in codes {
        let c = *code.get_ref();
        if !(100..=599).contains(&c) {
            return check.error_allowing(
                code.span(),
                path,
                format!("{c} is not an HTTP status code"),
                "a status code from 100 to 599",
            );
        }
        if (400..500).contains(&c) && ![403, 408, 409, 413, 429].contains(&c) {
            return check.error_allowing(
                code.span(),
                path,
                format!(
                    "retrysim's 4xx stands for every other 4xx at once, so retrying a {c} alone cannot be expressed"
                ),
                "403, 408, 409, 413, 429 and 5xx codes",
            );
        }
    }
    Ok(out)
}

/// The retrysim failures that arrive as gRPC status `code` (a name or a number); `None` for
/// no status code at all.
pub(super) fn grpc_status(code: &Json) -> Option<&'static [FailureClass]> {
    use FailureClass::*;
    let number = match code {
        Json::String(s) => grpc::code(s)? as usize,
        Json::Number(n) => usize::try_from(n.as_u64()?)
            .ok()
            .filter(|&n| n < grpc::STATUS.len())?,
        _ => return None,
    };
    Some(match grpc::STATUS[number] {
        "UNAVAILABLE" => &[Connect, Reset, ServerError, Overloaded],
        "RESOURCE_EXHAUSTED" => &[Throttled],
        "DEADLINE_EXCEEDED" => &[Timeout],
        "ABORTED" => &[VersionConflict],
        "PERMISSION_DENIED" => &[Forbidden],
        "ALREADY_EXISTS" => &[Conflict],
        "INVALID_ARGUMENT" => &[Invalid],
        _ => &[],
    })
}
