//! OpenTelemetry traces as the collector's file exporter writes them: one OTLP JSON
//! `TracesData` object per line. Client spans are read, and of server spans only which call
//! they served and whether they ended well; fields retrysim does not use are read past, as
//! OTLP readers do.
//!
//! Read: the span's name, kind, ids, start and end; `http.response.status_code` (or the older
//! `http.status_code`), `rpc.grpc.status_code`; where no code was recorded, the span's status,
//! `error.type`, and the `exception` events' type and message; the Retry-After header under
//! both spellings (`http.response.header.retry-after`, and `retry_after` as Python's
//! instrumentations write it); and `http.request.resend_count`.

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
    #[serde(default)]
    trace_id: String,
    #[serde(default)]
    span_id: String,
    #[serde(default)]
    parent_span_id: String,
    name: String,
    #[serde(default)]
    kind: Number,
    start_time_unix_nano: Number,
    end_time_unix_nano: Number,
    #[serde(default)]
    attributes: Vec<KeyValue>,
    #[serde(default)]
    status: Status,
    #[serde(default)]
    events: Vec<Event>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    name: String,
    #[serde(default)]
    attributes: Vec<KeyValue>,
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

/// SPAN_KIND_SERVER and SPAN_KIND_CLIENT.
const SERVER: i64 = 2;
const CLIENT: i64 = 3;
/// STATUS_CODE_ERROR.
const ERROR: i64 = 2;

/// What one line holds: its client spans, the calls its server spans served, and how many
/// spans of other kinds it held.
#[derive(Default)]
pub struct Line {
    pub clients: Vec<Span>,
    pub served: Vec<Served>,
    pub skipped: u64,
}

/// A server span: the client span it served (trace id and parent span id), and whether it
/// ended without an error, the work done.
pub struct Served {
    pub call: String,
    pub completed: bool,
}

/// The spans of one line; a line that is not a `TracesData` object is an error naming the
/// JSON path.
pub fn read_line(line: &[u8]) -> Result<Line, String> {
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
    let mut out = Line::default();
    for (r, resource) in data.resource_spans.iter().enumerate() {
        for (s, scope) in resource.scope_spans.iter().enumerate() {
            for (k, raw) in scope.spans.iter().enumerate() {
                let at = format!("resourceSpans[{r}].scopeSpans[{s}].spans[{k}]");
                let kind = match &raw.kind {
                    Number::Text(t) if t == "SPAN_KIND_CLIENT" => CLIENT,
                    Number::Text(t) if t == "SPAN_KIND_SERVER" => SERVER,
                    n => n.int().unwrap_or(0),
                };
                match kind {
                    CLIENT => out
                        .clients
                        .push(span(raw).map_err(|why| format!("{at}.{why}"))?),
                    SERVER if !raw.parent_span_id.is_empty() => out.served.push(Served {
                        call: call(&raw.trace_id, &raw.parent_span_id),
                        completed: status(raw) != ERROR,
                    }),
                    _ => out.skipped += 1,
                }
            }
        }
    }
    Ok(out)
}

/// A client call's key, as a server span names its parent: trace id and span id.
fn call(trace: &str, span: &str) -> String {
    format!("{trace}/{span}")
}

fn status(raw: &RawSpan) -> i64 {
    match &raw.status.code {
        Number::Text(t) if t == "STATUS_CODE_ERROR" => ERROR,
        n => n.int().unwrap_or(0),
    }
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
        if status(raw) == ERROR {
            fn text(v: &AnyValue) -> Option<&str> {
                v.string_value.as_deref()
            }
            let events = raw.events.iter().filter(|e| e.name == "exception");
            let said = events
                .flat_map(|e| &e.attributes)
                .filter(|a| a.key == "exception.type" || a.key == "exception.message");
            let evidence = ["error.type", "exception.type"]
                .into_iter()
                .filter_map(|k| attribute(k).and_then(text))
                .chain(said.filter_map(|a| text(&a.value)))
                .chain([raw.status.message.as_str()]);
            Outcome::of_error(evidence)
        } else {
            Outcome::Ok
        }
    };
    let header = attribute("http.response.header.retry-after")
        .or_else(|| attribute("http.response.header.retry_after"));
    let retry_after = header.and_then(|v| {
        let first = match &v.array_value {
            Some(list) => list.values.first()?.string_value.as_deref(),
            None => v.string_value.as_deref(),
        };
        retry_after(first?)
    });
    let resend = int("http.request.resend_count")?.is_some_and(|n| n > 0);
    Ok(Span {
        call: (!raw.span_id.is_empty()).then(|| call(&raw.trace_id, &raw.span_id)),
        operation: raw.name.clone(),
        start: start / 1000,
        duration: Tick(((end - start) as u64 + 500) / 1000),
        outcome,
        retry_after,
        resend,
    })
}
