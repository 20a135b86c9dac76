//! A call to a model tool in OpenAI's or Anthropic's wire format (see
//! [`retrysim::endpoint::wire`]): its fate drawn as any tool's, and where it is answered, the
//! answer's size, its time to the first token, its rate and where its stream breaks drawn from
//! the tool's provider. A refusal comes before any work: a 429 with `Retry-After`,
//! `retry-after-ms` and the dialect's rate-limit headers, an overloaded model's 503 (OpenAI) or
//! 529 (Anthropic), a 502. An answer not streamed comes whole at its end, or — its generation
//! broken — the connection closes without one. A streamed answer sends its headers and first
//! event with the first token, then a block about every 50 ms of the config's time; a broken one
//! is cut mid-body, which the SDKs read as an incomplete chunked body and never retry.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use retrysim::endpoint::ledger::{Ended, Served};
use retrysim::endpoint::wire::{self, Dialect, ModelRequest};
use retrysim::endpoint::{Act, act, generation};
use retrysim::model::Fate;
use retrysim::time::{TICKS_PER_SECOND, Tick};
use tokio::sync::mpsc;

use super::door::{self, Slot, Turned};
use super::{Answer, Body, Closed, Shared, whole};

/// A stream that broke part-way.
const BROKEN: Ended = Ended::Fate(Fate::StreamBroken);

/// A streamed body, its blocks sent by the task that times them; an `Err` cuts it.
struct Streamed(mpsc::Receiver<Result<Bytes, Closed>>);

impl hyper::body::Body for Streamed {
    type Data = Bytes;
    type Error = Closed;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Closed>>> {
        self.0.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}

/// A response of `status` with `body` in the dialect's content type.
fn respond(status: u16, body: Body, streamed: bool) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let kind = match streamed {
        true => "text/event-stream",
        false => "application/json",
    };
    r.headers_mut()
        .insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

/// The status a refusal of fate `fate` is answered with in dialect `d`.
fn refusal(d: Dialect, fate: Fate, status: u16) -> u16 {
    match (fate, d) {
        (Fate::Overloaded, Dialect::Anthropic) => 529,
        _ => status,
    }
}

pub(super) async fn call(
    shared: &Arc<Shared>,
    tool: usize,
    d: Dialect,
    (headers, key): (&HeaderMap, Option<String>),
    body: &Bytes,
) -> Answer {
    let req = match wire::read_request(body) {
        Ok(req) => req,
        Err(why) => {
            let message = format!("a model request: {why}");
            return Ok(respond(400, whole(wire::error(d, 400, &message)), false));
        }
    };
    let request = shared.arrival(tool, headers, key.as_deref(), body);
    let Some(caller) = shared.caller(&request.client) else {
        let message = super::TOO_MANY_CLIENTS;
        return Ok(respond(400, whole(wire::error(d, 400, message)), false));
    };
    let Some((n, drawn)) = shared.next_request(tool) else {
        let message = "this endpoint has served all it may";
        return Ok(respond(503, whole(wire::error(d, 503, message)), false));
    };
    let (input, made) = generation(&shared.exp, tool, n, req.max_tokens).expect("a model tool");
    let fate = Ended::Fate(drawn.fate);
    let status = match act(&drawn) {
        Act::Drop => {
            shared.sleep(drawn.request).await;
            shared.record(Served {
                outcome: fate,
                ..request
            });
            return Err(Closed);
        }
        // A lost reply is a generation whose answer never reaches the client.
        Act::CommitThenDrop => None,
        Act::Answer { status, .. } => Some(refusal(d, drawn.fate, status)),
    };
    shared.sleep(drawn.request).await;
    let t = &shared.exp.tools[tool];
    let mut slot = match door::enter(shared, tool, (caller, input), super::ticket(tool, n)).await {
        Ok(slot) => slot,
        Err(turned) => {
            let reset = match &turned {
                Turned::Throttled(r) => Some(shared.told(r.reset)),
                _ => None,
            };
            let (status, fate, wait) = super::turned_away(shared, request, turned).await?;
            return Ok(refused(
                (d, t),
                (refusal(d, fate, status), fate),
                wait,
                reset,
            ));
        }
    };
    if let Some(status) = status.filter(|&s| s != 200) {
        drop(slot);
        shared.record(Served {
            outcome: fate,
            status: Some(status),
            ..request
        });
        let told = drawn.retry_after.map(|w| shared.told(w));
        let (status, fate) = (status, drawn.fate);
        return Ok(refused((d, t), (status, fate), told.map(|w| (w, w)), told));
    }
    let id = format!("{}-{n}", shared.exp.tools[tool].name);
    let lost = status.is_none();
    let service = shared.service(tool, made.service);
    if !req.stream || lost {
        shared.sleep(service).await;
        slot.generated = Some(generated(made.output));
        drop(slot);
        let cut = lost || made.broken;
        shared.record(Served {
            outcome: if made.broken { BROKEN } else { fate },
            status: (!cut).then_some(200),
            generated: made.output,
            ..request
        });
        if cut {
            return Err(Closed);
        }
        let answer = wire::completion(d, &req, &id, (input, made.output));
        return Ok(respond(200, whole(answer), false));
    }
    let provider = shared.exp.tools[tool].provider.as_ref().expect("a model");
    let stream = Stream {
        shared: shared.clone(),
        dialect: d,
        req,
        id,
        made,
        per_block: tokens_per_block(provider.tokens_per_second),
        rate: provider.tokens_per_second,
        slot,
    };
    let prefill = service.since(provider.streaming(made.output));
    stream.start(input, prefill, request).await
}

/// A refusal of `status` for `fate` in dialect `d` of tool `t`: its advice headers with the wait
/// (said, then exact), and the rate-limit headers with the `reset` where a limit refused it.
fn refused(
    (d, t): (Dialect, &retrysim::model::Tool),
    (status, fate): (u16, Fate),
    wait: Option<(Tick, Tick)>,
    reset: Option<Tick>,
) -> super::Response<Body> {
    let mut r = respond(status, whole(wire::error(d, status, fate.name())), false);
    super::advise(r.headers_mut(), t, fate, wait);
    if let Some(reset) = reset {
        rate_limited(r.headers_mut(), d, reset);
    }
    r
}

/// Tokens generated, as the door's tokens-per-minute bucket counts them.
fn generated(tokens: u64) -> u32 {
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// Tokens a block carries: about 50 ms of streaming at `rate` tokens a second, at least one.
fn tokens_per_block(rate: f64) -> u64 {
    (libm::ceil(rate * 0.05) as u64).max(1)
}

/// The 429's rate-limit headers in the dialect's names, with nothing remaining.
fn rate_limited(h: &mut HeaderMap, d: Dialect, wait: Tick) {
    let ms = wait.0 / 1_000;
    match d {
        Dialect::OpenAi => {
            h.insert("x-ratelimit-remaining-requests", 0.into());
            if let Ok(v) = HeaderValue::from_str(&format!("{ms}ms")) {
                h.insert("x-ratelimit-reset-requests", v);
            }
        }
        Dialect::Anthropic => {
            h.insert("anthropic-ratelimit-requests-remaining", 0.into());
        }
    }
}

/// A stream under way: its blocks timed at the provider's rate, whole or cut where its
/// generation broke.
struct Stream {
    shared: Arc<Shared>,
    dialect: Dialect,
    req: ModelRequest,
    id: String,
    made: retrysim::model::provider::Generation,
    per_block: u64,
    rate: f64,
    /// Its place at the door: the worker is busy until the last block.
    slot: Slot,
}

impl Stream {
    /// Answers 200 with the stream's first event once the `prefill` is done (the service less
    /// the streaming of its tokens), and streams the rest on a task of its own.
    async fn start(self, input: u64, prefill: Tick, request: Served) -> Answer {
        self.shared.sleep(prefill).await;
        let (tx, rx) = mpsc::channel(16);
        let first = wire::stream_start(self.dialect, &self.req, &self.id, input);
        let _ = tx.send(Ok(Bytes::from(first))).await;
        tokio::spawn(self.run(tx, request));
        Ok(respond(200, Streamed(rx).boxed(), true))
    }

    async fn run(mut self, tx: mpsc::Sender<Result<Bytes, Closed>>, request: Served) {
        let mut sent = 0;
        while sent < self.made.output {
            let n = self.per_block.min(self.made.output - sent);
            let ticks = n as f64 * TICKS_PER_SECOND as f64 / self.rate;
            self.shared.sleep(Tick(ticks as u64)).await;
            let block = wire::stream_tokens(self.dialect, &self.req, &self.id, n);
            if tx.send(Ok(Bytes::from(block))).await.is_err() {
                break;
            }
            sent += n;
        }
        let end = match self.made.broken {
            true => Err(Closed),
            false => Ok(Bytes::from(wire::stream_end(
                self.dialect,
                &self.req,
                &self.id,
                self.made.output,
            ))),
        };
        let _ = tx.send(end).await;
        self.slot.generated = Some(generated(sent));
        self.shared.record(Served {
            outcome: if self.made.broken {
                BROKEN
            } else {
                Ended::Fate(Fate::Delivered)
            },
            status: Some(200),
            generated: sent,
            ..request
        });
    }
}
