//! OpenTelemetry traces as the collector's file exporter writes them: one OTLP JSON
//! `TracesData` object per line. Only client spans are read; fields retrysim does not use are
//! read past, as OTLP readers do.
//!
//! Read: the span's name, kind, start and end; `http.response.status_code` (or the older
//! `http.status_code`), `rpc.grpc.status_code`, the span's status and `error.type` where no
//! code was recorded, `http.response.header.retry-after`, and `http.request.resend_count`.

use serde::Deserialize;

use super::span::{Outcome, Span, retry_after};
use crate::time::Tick;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TracesData {
    #[serde(default)]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans {
    #[serde(default)]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    spans: Vec<RawSpan>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpan {
    name: String,
    #[serde(default)]
    kind: Number,
    start_time_unix_nano: Number,
    end_time_unix_nano: Number,
    #[serde(default)]
    attributes: Vec<KeyValue>,
    #[serde(default)]
    status: Status,
}

/// OTLP JSON writes 64-bit integers as strings, and enums as numbers or names.
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum Number {
    #[default]
    Absent,
    Int(i64),
    Text(String),
}

impl Number {
    fn int(&self) -> Option<i64> {
        match self {
            Number::Absent => None,
            Number::Int(n) => Some(*n),
            Number::Text(t) => t.parse().ok(),
        }
    }
}

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    #[serde(default)]
    value: AnyValue,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AnyValue {
    string_value: Option<String>,
    int_value: Option<Number>,
    array_value: Option<ArrayValue>,
}

#[derive(Deserialize)]
struct ArrayValue {
    #[serde(default)]
    values: Vec<AnyValue>,
}

#[derive(Deserialize, Default)]
struct Status {
    #[serde(default)]
    code: Number,
    #[serde(default)]
    message: String,
}

/// SPAN_KIND_CLIENT.
const CLIENT: i64 = 3;
/// STATUS_CODE_ERROR.
const ERROR: i64 = 2;

/// The client spans of one line, and how many spans of other kinds it held; a line that is
/// not a `TracesData` object is an error naming the JSON path.
pub fn read_line(line: &[u8]) -> Result<(Vec<Span>, u64), String> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let data: TracesData = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = if path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        format!("{at}{inner}")
    })?;
    let (mut spans, mut skipped) = (Vec::new(), 0);
    for (r, resource) in data.resource_spans.iter().enumerate() {
        for (s, scope) in resource.scope_spans.iter().enumerate() {
            for (k, raw) in scope.spans.iter().enumerate() {
                let at = format!("resourceSpans[{r}].scopeSpans[{s}].spans[{k}]");
                let kind = match &raw.kind {
                    Number::Text(t) if t == "SPAN_KIND_CLIENT" => CLIENT,
                    n => n.int().unwrap_or(0),
                };
                if kind != CLIENT {
                    skipped += 1;
                    continue;
                }
                spans.push(span(raw).map_err(|why| format!("{at}.{why}"))?);
            }
        }
    }
    Ok((spans, skipped))
}

fn span(raw: &RawSpan) -> Result<Span, String> {
    let time = |n: &Number, key: &str| {
        n.int()
            .filter(|&t| t > 0)
            .ok_or_else(|| format!("{key}: not a time in nanoseconds since the epoch"))
    };
    let start = time(&raw.start_time_unix_nano, "startTimeUnixNano")?;
    let end = time(&raw.end_time_unix_nano, "endTimeUnixNano")?;
    if end < start {
        return Err(format!(
            "endTimeUnixNano: the span ends {} ns before it starts",
            start - end
        ));
    }
    let attribute = |key: &str| {
        raw.attributes
            .iter()
            .find(|a| a.key == key)
            .map(|a| &a.value)
    };
    let int = |key: &str| -> Result<Option<i64>, String> {
        match attribute(key) {
            None => Ok(None),
            Some(v) => match v.int_value.as_ref().and_then(Number::int) {
                Some(n) => Ok(Some(n)),
                None => Err(format!("attributes[{key}]: not an intValue")),
            },
        }
    };
    let http = match int("http.response.status_code")? {
        Some(code) => Some(code),
        None => int("http.status_code")?,
    };
    let outcome = if let Some(code) = http {
        Outcome::of_http(code).ok_or_else(|| {
            format!("attributes[http.response.status_code]: {code} is no HTTP status")
        })?
    } else if let Some(code) = int("rpc.grpc.status_code")? {
        Outcome::of_grpc(code)
            .ok_or_else(|| format!("attributes[rpc.grpc.status_code]: {code} is no gRPC status"))?
    } else {
        let status = match &raw.status.code {
            Number::Text(t) if t == "STATUS_CODE_ERROR" => ERROR,
            n => n.int().unwrap_or(0),
        };
        if status == ERROR {
            let text = |v: &AnyValue| v.string_value.clone();
            let kind = attribute("error.type")
                .or_else(|| attribute("exception.type"))
                .and_then(text)
                .unwrap_or_else(|| raw.status.message.clone());
            Outcome::of_error(&kind)
        } else {
            Outcome::Ok
        }
    };
    let retry_after = attribute("http.response.header.retry-after").and_then(|v| {
        let first = match &v.array_value {
            Some(list) => list.values.first()?.string_value.as_deref(),
            None => v.string_value.as_deref(),
        };
        retry_after(first?)
    });
    let resend = int("http.request.resend_count")?.is_some_and(|n| n > 0);
    Ok(Span {
        operation: raw.name.clone(),
        start: start / 1000,
        duration: Tick(((end - start) as u64 + 500) / 1000),
        outcome,
        retry_after,
        resend,
    })
}
