//! `retrysim endpoint CONFIG`: the config's tools served over HTTP/1.1 in real time, each at
//! `<url><tool>`, acting as the tool is configured (see [`retrysim::endpoint`]); on stop, what
//! it counted written whole to `<out>/<name>.endpoint/`.
//!
//! Every part is bounded: at most [`MOST_CONNECTIONS`] connections at once (one more is closed
//! at once), a request's head within [`HEAD_TIME`] and 16 KiB, its body within
//! [`retrysim::endpoint::MOST_BODY_BYTES`] (else 413), an idempotency key within 255 bytes
//! (else 400), and a run within [`retrysim::endpoint::MOST_REQUESTS`] requests.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use retrysim::config::Source;
use retrysim::endpoint::door::Doors;
use retrysim::endpoint::keys::{self, Stored};
use retrysim::endpoint::ledger::{Ended, Served};
use retrysim::endpoint::{
    Act, Admit, Keys, Ledger, MOST_BODY_BYTES, MOST_REQUESTS, act, draw, lookup_fails,
    should_retry, wire,
};
use retrysim::error::Error;
use retrysim::experiment::Experiment;
use retrysim::model::{Fate, ToolKind};
use retrysim::output::{Mark, Staging};
use retrysim::time::{TICKS_PER_SECOND, Tick};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};

mod door;
mod model;
mod predict;
mod write;

use door::Turned;

use crate::args::EndpointArgs;
use crate::terminal::say;
use crate::{CANCEL, Failure, print};

/// The most connections open at once.
pub const MOST_CONNECTIONS: usize = 256;
/// How long a request's head may take to arrive.
pub const HEAD_TIME: Duration = Duration::from_secs(10);
/// The largest request head read, in bytes.
const MOST_HEAD_BYTES: usize = 16 * 1024;

/// What every connection shares: the config, the clock, and what was counted.
struct Shared {
    exp: Experiment,
    start: Instant,
    /// Config seconds per wall second.
    scale: f64,
    from: retrysim::endpoint::OperationFrom,
    /// The header that names a request's client (lower case).
    client: String,
    /// The requests after which the run ends.
    most: u64,
    state: Mutex<State>,
}

struct State {
    /// Each tool's next request number, and its lookups so far.
    next: Vec<u64>,
    lookups: Vec<u64>,
    keys: Vec<Keys>,
    /// Every tool's server at its door, and the requests waiting in its line, by ticket.
    doors: Doors,
    waiting: BTreeMap<u64, oneshot::Sender<()>>,
    ledger: Ledger,
}

/// The error that makes hyper close a connection without an answer.
#[derive(Debug)]
struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed without an answer, as configured")
    }
}

impl std::error::Error for Closed {}

/// A response's body: whole, or a stream that may be cut.
type Body = http_body_util::combinators::BoxBody<Bytes, Closed>;

type Answer = Result<Response<Body>, Closed>;

/// A whole body.
fn whole(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .expect("no request panics holding the state")
    }

    /// Now in the config's time.
    fn now(&self) -> Tick {
        let config_s = self.start.elapsed().as_secs_f64() * self.scale;
        Tick((config_s * TICKS_PER_SECOND as f64) as u64)
    }

    /// A wait of `t` in the config's time as the client's clock reads it, for the headers that
    /// tell it: `--time-scale 10` makes a configured 1 s Retry-After 100 ms of wall time.
    fn told(&self, t: Tick) -> Tick {
        Tick((t.0 as f64 / self.scale).round() as u64)
    }

    /// `t` of the config's time, as wall time.
    async fn sleep(&self, t: Tick) {
        if t > Tick::ZERO {
            let wall = t.0 as f64 / TICKS_PER_SECOND as f64 / self.scale;
            tokio::time::sleep(Duration::from_secs_f64(wall)).await;
        }
    }

    /// A request to `tool` as it arrives, before anything is done with it: now, its client and
    /// its operation, read where the user said.
    fn arrival(&self, tool: usize, headers: &HeaderMap, key: Option<&str>, body: &[u8]) -> Served {
        Served {
            at: self.now(),
            client: header(headers, &self.client)
                .unwrap_or_default()
                .to_string(),
            tool,
            operation: self.from.read(key, |n| header(headers, n), body),
            outcome: Ended::Fate(Fate::Delivered),
            status: None,
            committed: false,
            generated: 0,
            took: Tick::ZERO,
        }
    }

    /// The number of the next request to `tool` and its draw, in the state its bursts are in
    /// now; `None` past the run's bound.
    fn next_request(&self, tool: usize) -> Option<(u64, retrysim::model::AttemptDraw)> {
        let now = self.now();
        let mut state = self.lock();
        if state.ledger.served.len() as u64 >= MOST_REQUESTS {
            return None;
        }
        let n = state.next[tool];
        state.next[tool] += 1;
        let bad = state.doors.bad(&self.exp, tool, now);
        Some((n, draw(&self.exp, tool, n, (bad, now))))
    }

    /// The caller number of `client`, for limits per caller; `None` past the clients the
    /// endpoint tells apart.
    fn caller(&self, client: &str) -> Option<u32> {
        self.lock().doors.caller(client)
    }

    /// The service of a request of `tool` a worker takes up now, drawn as `drawn`.
    fn service(&self, tool: usize, drawn: Tick) -> Tick {
        let now = self.now();
        self.lock().doors.service(&self.exp, tool, now, drawn)
    }

    fn served(&self) -> u64 {
        self.lock().ledger.served.len() as u64
    }

    /// Counts a request served, which took from its arrival to now.
    fn record(&self, mut served: Served) {
        served.took = Tick(self.now().0.saturating_sub(served.at.0));
        self.lock().ledger.add(served);
    }
}

/// A JSON answer of `status`.
fn json(status: u16, body: String) -> Response<Body> {
    let mut r = Response::new(whole(body));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// An error answer in the problem form the idempotency draft uses.
fn problem(status: u16, kind: &str, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": { "type": kind, "message": message } });
    json(status, body.to_string())
}

/// A header's value as text, if it is.
fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The request's idempotency key (see [`keys::from_header`]).
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, keys::TooLong> {
    header(headers, "idempotency-key").map_or(Ok(None), keys::from_header)
}

async fn serve(shared: Arc<Shared>, req: Request<Incoming>) -> Answer {
    let path = req.uri().path().trim_start_matches('/').to_string();
    let (tool_name, rest) = path.split_once('/').unwrap_or((path.as_str(), ""));
    let Some(tool) = shared.exp.tools.iter().position(|t| t.name == tool_name) else {
        let names: Vec<&str> = shared.exp.tools.iter().map(|t| t.name.as_str()).collect();
        let message = format!("no tool at /{path}: the tools are /{}", names.join(", /"));
        return Ok(problem(404, "not_found", &message));
    };
    if let Some(key) = rest.strip_prefix("operations/") {
        return Ok(look_up(&shared, tool, key).await);
    }
    let provider = shared.exp.tools[tool].provider.is_some();
    let dialect = wire::Dialect::of_path(rest).filter(|_| provider);
    // A plain tool answers at its own path, a model at its dialects' only.
    let plain = rest.is_empty() && !provider;
    if !plain && dialect.is_none() {
        let message = match provider {
            true => format!(
                "a model tool answers at /{tool_name}/v1/chat/completions and /{tool_name}/v1/messages"
            ),
            false => format!("a tool answers at /{tool_name}"),
        };
        return Ok(problem(404, "not_found", &message));
    }
    if req.method() != hyper::Method::POST {
        return Ok(problem(405, "method_not_allowed", "POST a call to a tool"));
    }
    let headers = req.headers().clone();
    let Ok(key) = idempotency_key(&headers) else {
        let message = "an Idempotency-Key of at most 255 bytes";
        return Ok(problem(400, "invalid_idempotency_key", message));
    };
    let body = match Limited::new(req.into_body(), MOST_BODY_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(problem(413, "too_large", "a body of at most 1 MiB")),
    };
    match dialect {
        Some(d) => model::call(&shared, tool, d, (&headers, key), &body).await,
        None => call(&shared, tool, (&headers, key), &body).await,
    }
}

/// A lookup of `key` at `tool`, answered after the tool's `lookup_time`: the stored receipt
/// once its commit is visible, else 404; a failed lookup, as the tool's `lookup_failure` draws
/// it, is a 503.
async fn look_up(shared: &Shared, tool: usize, key: &str) -> Response<Body> {
    let t = &shared.exp.tools[tool];
    let n = {
        let mut state = shared
            .state
            .lock()
            .expect("no request panics holding the state");
        state.lookups[tool] += 1;
        state.lookups[tool] - 1
    };
    shared.sleep(t.lookup.time).await;
    if lookup_fails(&shared.exp, tool, n) {
        return problem(
            503,
            "lookup_failed",
            "the lookup failed: the outcome is still unknown",
        );
    }
    let state = shared
        .state
        .lock()
        .expect("no request panics holding the state");
    match state.keys[tool].lookup(key, shared.now(), t.lookup.lag) {
        Some(stored) => json(200, String::from_utf8_lossy(&stored.body).into_owned()),
        None => problem(404, "not_found", "no commit under this key"),
    }
}

/// A call to `tool`: its fate drawn, the work done in the config's time, its key honoured where
/// the tool honours keys, and what happened counted. The fate decides the wire: a request lost
/// or refused before the commit point never meets the key store; one that reaches the commit
/// point under a committed key replays the stored receipt instead of committing again (its
/// reply still lost, where the fate loses it).
async fn call(
    shared: &Arc<Shared>,
    tool: usize,
    (headers, key): (&HeaderMap, Option<String>),
    body: &Bytes,
) -> Answer {
    let t = &shared.exp.tools[tool];
    let request = shared.arrival(tool, headers, key.as_deref(), body);
    let Some(caller) = shared.caller(&request.client) else {
        return Ok(problem(400, "too_many_clients", TOO_MANY_CLIENTS));
    };
    let Some((n, drawn)) = shared.next_request(tool) else {
        return Ok(problem(
            503,
            "overloaded",
            "this endpoint has served all it may",
        ));
    };
    let act = act(&drawn);
    let commits = match act {
        Act::Drop => {
            shared.sleep(drawn.request).await;
            shared.record(Served {
                outcome: Ended::Fate(drawn.fate),
                ..request
            });
            return Err(Closed);
        }
        Act::CommitThenDrop => true,
        Act::Answer { commit, .. } => commit,
    };
    shared.sleep(drawn.request).await;
    let slot = match door::enter(shared, tool, (caller, 0), ticket(tool, n)).await {
        Ok(slot) => slot,
        Err(turned) => {
            let (status, fate, wait) = turned_away(shared, request, turned).await?;
            let mut r = problem(status, fate.name(), "as the tool is configured");
            advise(r.headers_mut(), t, fate, wait);
            return Ok(r);
        }
    };
    shared.sleep(shared.service(tool, drawn.service)).await;
    let receipt = serde_json::json!({
        "operation": request.operation,
        "receipt": format!("{}-{n}", t.name),
        "status": "committed",
    })
    .to_string();
    let keyed = key.filter(|_| commits && t.server.idempotent);
    let admitted = keyed.map(|k| commit_point(shared, tool, &k, body, &receipt));
    // The work is done: its worker takes up the next in line.
    drop(slot);
    // A lost reply's answer is never sent: the client hears nothing.
    let lost = act == Act::CommitThenDrop;
    let (served, answer) = answer(admitted, (act, drawn.fate), receipt);
    let writes = t.server.kind == ToolKind::Write;
    shared.record(Served {
        outcome: served.outcome,
        status: served.status.filter(|_| !lost),
        committed: served.committed && writes,
        ..request
    });
    if lost {
        return Err(Closed);
    }
    shared.sleep(drawn.reply).await;
    let mut r = answer;
    let wait = drawn.retry_after.map(|w| shared.told(w)).map(|w| (w, w));
    advise(r.headers_mut(), t, drawn.fate, wait);
    Ok(r)
}

/// What a client past [`MOST_CALLERS`] is told.
const TOO_MANY_CLIENTS: &str = "this endpoint tells at most 256 clients apart";

/// Request `n` of `tool`'s ticket in its line: unique across tools.
fn ticket(tool: usize, n: u64) -> u64 {
    (tool as u64) << 40 | n
}

/// A request turned away at its tool's door, counted: the status it is answered with, the
/// fate it met, and the wait a throttle tells (said, then exact). One an outage swallows is
/// held unanswered until the outage ends and then closed (`Err`).
async fn turned_away(
    shared: &Shared,
    request: Served,
    turned: Turned,
) -> Result<(u16, Fate, Option<(Tick, Tick)>), Closed> {
    let (status, fate, wait) = match turned {
        Turned::Throttled(r) => {
            let wait = (shared.told(r.retry_after), shared.told(r.exact));
            (429, Fate::Throttled, Some(wait))
        }
        Turned::Down => (502, Fate::ServerError, None),
        Turned::Full => (503, Fate::Overloaded, None),
        Turned::Swallowed(until) => {
            shared.sleep(until).await;
            shared.record(Served {
                outcome: Ended::Swallowed,
                ..request
            });
            return Err(Closed);
        }
    };
    shared.record(Served {
        outcome: Ended::Fate(fate),
        status: Some(status),
        ..request
    });
    Ok((status, fate, wait))
}

/// The headers a refusal carries: where the server asks for a wait, `Retry-After` in whole
/// seconds (the wait it says, rounded up) and `retry-after-ms` (the exact wait) to the
/// millisecond; `x-should-retry` where the tool's server advises.
fn advise(h: &mut HeaderMap, t: &retrysim::model::Tool, fate: Fate, wait: Option<(Tick, Tick)>) {
    if let Some((said, exact)) = wait {
        h.insert("retry-after", said.0.div_ceil(TICKS_PER_SECOND).into());
        h.insert("retry-after-ms", (exact.0 / 1_000).into());
    }
    if let Some(advice) = should_retry(t, fate) {
        let value = if advice { "true" } else { "false" };
        h.insert(
            "x-should-retry",
            hyper::header::HeaderValue::from_static(value),
        );
    }
}

/// At the commit point, the key `key` of a request to `tool` with `body`: admitted by the tool's
/// store, and where it is new the receipt stored under it — before the client hears anything,
/// so a lost reply's retry is answered with it.
fn commit_point(shared: &Shared, tool: usize, key: &str, body: &[u8], receipt: &str) -> Admit {
    let mut state = shared
        .state
        .lock()
        .expect("no request panics holding the state");
    let admitted = state.keys[tool].admit(key, keys::fingerprint(body), shared.now());
    if admitted == Admit::New {
        let stored = Stored {
            status: 200,
            body: receipt.as_bytes().to_vec(),
        };
        state.keys[tool].commit(key, stored, shared.now());
    }
    admitted
}

/// What a request that reached the server is answered, and what is counted of it: as its key
/// was `admitted` (`None`: no key, or one the tool ignores), its `act` and its fate.
fn answer(
    admitted: Option<Admit>,
    (act, fate): (Act, Fate),
    receipt: String,
) -> (Outcome, Response<Body>) {
    match admitted {
        Some(Admit::Replay(stored)) => {
            let mut r = json(stored.status, String::from_utf8_lossy(&stored.body).into());
            r.headers_mut().insert(
                "idempotent-replayed",
                hyper::header::HeaderValue::from_static("true"),
            );
            (Outcome::new(Ended::Replayed, stored.status, false), r)
        }
        Some(Admit::InFlight) => {
            let message = "a request with this key is still being processed";
            let r = problem(409, "idempotency_key_in_use", message);
            (Outcome::new(Ended::InFlight, 409, false), r)
        }
        Some(Admit::Mismatch) => {
            let message = "this Idempotency-Key was used with another payload";
            let r = problem(422, "idempotency_error", message);
            (Outcome::new(Ended::Mismatch, 422, false), r)
        }
        Some(Admit::New) | None => {
            let (status, commit) = match act {
                Act::Answer { status, commit, .. } => (status, commit),
                _ => (200, true),
            };
            let r = match status {
                200 => json(200, receipt),
                _ => problem(status, fate.name(), "as the tool is configured"),
            };
            (Outcome::new(Ended::Fate(fate), status, commit), r)
        }
    }
}

/// What is counted of an answered request.
struct Outcome {
    outcome: Ended,
    status: Option<u16>,
    committed: bool,
}

impl Outcome {
    fn new(outcome: Ended, status: u16, committed: bool) -> Outcome {
        Outcome {
            outcome,
            status: Some(status),
            committed,
        }
    }
}

/// Refuses a config with a tool the endpoint does not serve: replicas, which a balancer in the
/// client chooses among (one replica's faults may be served as a tool of its own), and a
/// versioned record, whose writes carry the version they read.
fn unserved(exp: &Experiment) -> Result<(), Failure> {
    for t in &exp.tools {
        let found = [
            (
                !t.replicas.is_empty(),
                "replicas, among which a balancer in the client chooses",
            ),
            (
                t.server.versioned(),
                "a versioned record, whose writes carry the version they read",
            ),
        ];
        if let Some((_, what)) = found.iter().find(|(has, _)| *has) {
            return Err(Failure::Usage(format!(
                "tool \"{}\" has {what}, which retrysim endpoint does not serve: serve a config \
                 whose tools have neither (one replica's faults can be a tool of its own)",
                t.name
            )));
        }
    }
    Ok(())
}

/// Runs the endpoint until `--duration`, `--requests` or Ctrl-C, then writes what it counted.
pub fn command(args: &EndpointArgs) -> Result<(), Failure> {
    let source = Source::read(&args.config)?;
    let exp = source.sweep()?.base;
    unserved(&exp)?;
    let predicted = (args.predict.as_deref())
        .map(|name| predict::check(&exp, name))
        .transpose()?;
    let root = args.out.clone();
    let name = format!("{}.endpoint", exp.name);
    Staging::check_target(&root, &name, Mark::Output)?;
    let tools = exp.tools.len();
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            next: vec![0; tools],
            lookups: vec![0; tools],
            doors: Doors::new(&exp),
            waiting: BTreeMap::new(),
            keys: exp
                .tools
                .iter()
                .map(|t| Keys::new(t.server.key_retention))
                .collect(),
            ledger: Ledger::default(),
        }),
        exp,
        start: Instant::now(),
        scale: args.time_scale,
        from: args.operation_from.clone(),
        client: args.client_from.clone(),
        most: args.requests.unwrap_or(MOST_REQUESTS),
    });
    crate::catch_ctrl_c_to_stop();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::io("cannot start the server"))?;
    let addr = SocketAddr::new(args.bind, args.port);
    let deadline = args.duration.map(|d| Instant::now() + d);
    runtime.block_on(listen(shared.clone(), addr, deadline))?;
    let ledger = {
        let state = shared.state.lock().expect("the server has stopped");
        state.ledger.clone()
    };
    let staging = write::folder(&shared.exp, &source, &ledger, &root)?;
    let at = staging.commit()?;
    say!("wrote {} ({} requests)", at.display(), ledger.served.len());
    if let Some(predicted) = predicted {
        predict::print(&shared.exp, predicted, &ledger)?;
    }
    Ok(())
}

/// Serves on `addr` until a stop: its URL printed first.
async fn listen(
    shared: Arc<Shared>,
    addr: SocketAddr,
    deadline: Option<Instant>,
) -> Result<(), Failure> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(Error::io(format!("cannot listen on {addr}")))?;
    let local = listener
        .local_addr()
        .map_err(Error::io("cannot read the address"))?;
    print(&format!("http://{local}/\n"))?;
    for t in &shared.exp.tools {
        say!("serving {} at http://{local}/{}", t.name, t.name);
    }
    let slots = Arc::new(Semaphore::new(MOST_CONNECTIONS));
    loop {
        let stop = CANCEL.load(Ordering::SeqCst)
            || deadline.is_some_and(|d| Instant::now() >= d)
            || shared.served() >= shared.most;
        if stop {
            return Ok(());
        }
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let Ok(permit) = slots.clone().try_acquire_owned() else {
                    drop(stream);
                    continue;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| serve(shared.clone(), req));
                    let _ = http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(HEAD_TIME)
                        .max_buf_size(MOST_HEAD_BYTES)
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                    drop(permit);
                });
            }
            () = tokio::time::sleep(Duration::from_millis(50)) => door::tick(&shared),
        }
    }
}
