//! A tool's server: what it is ([`ServerSpec`], fixed at validation) and what it holds while a
//! run goes on ([`Server`]: its workers and line, its rate limiter's buckets, its versioned
//! record, its calls in flight). The world hands it an attempt at three moments — it arrives,
//! a worker takes it up, the work is done — and carries out what the server says; every rule
//! of the server side is here, in the order a real request meets it: the rate limiter in front,
//! an outage, the record's version check, the line, the commit.

mod keys;

pub use keys::{KeyStore, Processed};

use super::capacity::{self, CapacityWindow};
use super::foresight::Foresight;
use super::limiter::{Bucket, LimitScope, RateLimit, Refusal};
use super::outage::{self, Outage, OutageMode};
use super::record::{Record, VersionCheck};
use super::station::{Door, Line, Station};
use super::tokens::{TokenBucket, TokenLimit};
use super::{FailureClass, Fate, Key};
use crate::time::Tick;

/// What a tool's server is and does, as a config describes it.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSpec {
    pub kind: ToolKind,
    /// The receiver honours idempotency keys: a key it has committed replays its receipt.
    pub idempotent: bool,
    /// How long the receiver keeps an idempotency key after its commit; `None`, longer than
    /// any intent.
    pub key_retention: Option<Tick>,
    /// Requests the server works on at once; the rest wait in line. `None`: as many as arrive.
    pub workers: Option<u32>,
    /// The line in front of the workers: its limit and the order it is served in.
    pub line: Line,
    /// Windows in which the server is down.
    pub outages: Vec<Outage>,
    /// Windows in which the server has only part of its workers and its rate limit's rate.
    pub capacity: Vec<CapacityWindow>,
    /// A token bucket in front of the server: a request that finds it empty gets a 429 at
    /// once, with a Retry-After for the next token.
    pub rate_limit: Option<RateLimit>,
    /// A tokens-per-minute bucket beside it (a model's): a request is admitted only with room
    /// for its input and `max_tokens`, else a 429 with the wait until there is.
    pub token_limit: Option<TokenLimit>,
    /// Latency that grows with load: added to the service time of a request once for every
    /// request already in service when a worker takes it up (base + k × n, the model of
    /// published studies of congestive collapse). Zero: load changes nothing.
    pub slowdown: Tick,
    /// The server discards, without commit, a request whose client stopped waiting before a
    /// worker took it up (the client's deadline travels with the request, as gRPC's does).
    pub drop_expired: bool,
    /// The server abandons, without commit, work still in service when its request's deadline
    /// passes (the moment its client stops waiting for it, which the request carries): a
    /// gRPC handler that checks its context. Off, work goes on for a client that is gone.
    pub abandon_at_deadline: bool,
    /// For a versioned record: when a conditional write's version is checked.
    pub version_check: VersionCheck,
    /// Every failed response says whether to retry, as Stripe's `Stripe-Should-Retry` and the
    /// `x-should-retry` of OpenAI's and Anthropic's APIs do (see [`ServerSpec::advice`]).
    pub should_retry_header: bool,
    /// A rate limit's 429 carries `retry-after-ms`, its wait to the millisecond, beside the
    /// `Retry-After` in the limit's unit (the Stainless SDKs read the first where it is there).
    pub retry_after_ms: bool,
    /// Each request carries the lease token of the worker that sent it, and the server refuses
    /// a write whose token is below the work item's current lease, as the work queue that
    /// grants the leases says: a stale worker's late write commits nothing (a fencing token,
    /// as a lock service's sequencer).
    pub fencing: bool,
}

/// What a call does at the server.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKind {
    /// A side effect: an order, a charge.
    Write,
    /// A lookup: it commits nothing, and can be repeated freely.
    ReadOnly,
    /// A versioned record updated by read-modify-write: each attempt reads the version, then
    /// writes conditionally on it (see [`super::record`]).
    Record,
    /// A model provider: a completion commits nothing (so keys have nothing to guard and a
    /// hedge is safe), but every attempt that reaches the model is billed for its tokens (see
    /// [`super::provider`]).
    Model,
}

impl ToolKind {
    pub const ALL: [ToolKind; 4] = [
        ToolKind::Write,
        ToolKind::ReadOnly,
        ToolKind::Record,
        ToolKind::Model,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ToolKind::Write => "write",
            ToolKind::ReadOnly => "read_only",
            ToolKind::Record => "record",
            ToolKind::Model => "model",
        }
    }
}

impl ServerSpec {
    /// A server of `kind` with every key at its config default: as many workers as arrive,
    /// nothing at its door, an idempotent receiver that keeps keys for ever.
    pub fn new(kind: ToolKind) -> Self {
        ServerSpec {
            kind,
            idempotent: true,
            key_retention: None,
            workers: None,
            line: Line::UNBOUNDED,
            outages: Vec::new(),
            capacity: Vec::new(),
            rate_limit: None,
            token_limit: None,
            slowdown: Tick::ZERO,
            drop_expired: false,
            abandon_at_deadline: false,
            version_check: VersionCheck::Arrival,
            should_retry_header: false,
            retry_after_ms: false,
            fencing: false,
        }
    }

    /// A read or a model's completion: no side effect, so always safe to send again.
    pub fn reads_only(&self) -> bool {
        matches!(self.kind, ToolKind::ReadOnly | ToolKind::Model)
    }

    /// A plain write: each attempt that commits is a side effect (a charge, an order) that a
    /// lookup can confirm.
    pub fn writes(&self) -> bool {
        self.kind == ToolKind::Write
    }

    /// A versioned record: reads, and writes conditional on the version read.
    pub fn versioned(&self) -> bool {
        self.kind == ToolKind::Record
    }

    /// Whether nothing at its door can touch an attempt: no outage, capacity window, rate
    /// limit, slowdown, dropping or abandoning of expired work, no versioned record. What
    /// becomes of an attempt then depends only on the workers and the line.
    fn plain(&self) -> bool {
        self.outages.is_empty()
            && self.capacity.is_empty()
            && self.rate_limit.is_none()
            && self.token_limit.is_none()
            && self.slowdown == Tick::ZERO
            && !self.drop_expired
            && !self.abandon_at_deadline
            && self.kind != ToolKind::Record
    }

    /// Whether an attempt that reaches this server is taken up at once and nothing at its door
    /// can touch it (`plain`): a worker is always free. Its arrival and the end of its service
    /// are then one event, at the end of the service, since nothing could happen between.
    pub fn serves_at_once(&self) -> bool {
        self.workers.is_none() && self.plain()
    }

    /// Whether, for attempts that arrive in the order they were sent, each one's end of
    /// service is known when it is sent: workers, an unbounded first-come-first-served line,
    /// and nothing at its door (`plain`; see [`Foresight`]).
    pub fn foreseeable(&self) -> bool {
        self.workers.is_some() && self.line == Line::UNBOUNDED && self.plain()
    }

    /// What the server's `should-retry` header says with a failure of `class` on an attempt of
    /// fate `fate`: "retry" where the failure left nothing done and may pass, "don't" where the
    /// work was done (a 5xx after the commit) or the request can never succeed (403, 4xx, a
    /// key bound to other arguments); no header where no response came (a reset, a timeout,
    /// a failed connection), or where the server sends none.
    pub fn advice(&self, class: FailureClass, fate: Fate) -> Option<bool> {
        if !self.should_retry_header {
            return None;
        }
        match class {
            // A stream that broke carried no header at its end.
            FailureClass::Reset
            | FailureClass::Timeout
            | FailureClass::Connect
            | FailureClass::StreamBroken => None,
            FailureClass::ServerError if fate == Fate::ErrorAfterCommit => Some(false),
            c => Some(!c.is_permanent()),
        }
    }
}

/// A write to a versioned record at the door: who holds it and the version it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub holder: (u64, u32),
    pub read: u64,
}

/// What the server does with a request at its door.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival<T> {
    /// Its rate limiter refused it: a 429 at once, saying when to come back and when the
    /// limits are full again.
    Throttled(Refusal),
    /// The server is down.
    Down(OutageMode),
    /// The record's version moved on, or another write holds its lock: refused at the door.
    VersionMoved,
    /// A worker took it up.
    Served(T),
    /// It waits in line.
    Waiting,
    /// The line was full: a 503 at once.
    Full(T),
}

/// What a request that reached the commit point carries there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Its key, where the policy sends one.
    pub key: Option<Key>,
    /// The version of its arguments.
    pub payload: u32,
    /// The version a record's write read, and who holds the record.
    pub write: Option<Write>,
}

/// The server's answer to an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// What it says: a receipt, or the failure the client will see (a lost reply is a reset).
    pub reply: Result<(), FailureClass>,
    /// It committed a new side effect.
    pub committed: bool,
}

/// What a server does with an attempt a worker is free to take up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TakeUp {
    /// Its client stopped waiting before it got a worker: dropped, unserved, uncommitted.
    Drop,
    /// Served for `service`, and abandoned at `abandon_at` if that comes first.
    Work {
        service: Tick,
        abandon_at: Option<Tick>,
    },
}

/// One tool's server as a run goes on.
#[derive(Clone, Debug)]
pub struct Server<T> {
    station: Station<T>,
    /// The rate limiter's buckets: one, or one per caller.
    buckets: Vec<Bucket>,
    /// The tokens-per-minute buckets: one, or one per caller.
    token_buckets: Vec<TokenBucket>,
    /// The versioned record (a record's server only).
    record: Record,
    /// Attempts sent that it has not answered yet.
    in_flight: u32,
    /// An attempt's arrival and the end of its service are one event.
    at_once: bool,
    /// Where each attempt's end of service is known when it is sent, when its workers free.
    foresight: Option<Foresight>,
    /// The zone it stands in, whose outages and capacity windows it shares.
    zone: Option<usize>,
}

impl<T: Copy> Server<T> {
    /// The server of `spec` for `callers` callers; `watched` when a time series watches its
    /// workers, which then need their own events; `in_order` when attempts arrive in the order
    /// they were sent.
    pub fn new(spec: &ServerSpec, callers: u32, watched: bool, in_order: bool) -> Self {
        Server {
            station: Station::new(spec.workers, spec.line),
            buckets: match spec.rate_limit.map(|l| l.scope) {
                None => Vec::new(),
                Some(LimitScope::Tool) => vec![Bucket::default()],
                Some(LimitScope::Caller) => vec![Bucket::default(); callers as usize],
            },
            token_buckets: match spec.token_limit.map(|l| l.scope) {
                None => Vec::new(),
                Some(LimitScope::Tool) => vec![TokenBucket::default()],
                Some(LimitScope::Caller) => vec![TokenBucket::default(); callers as usize],
            },
            record: Record::default(),
            in_flight: 0,
            at_once: spec.serves_at_once() && !watched,
            foresight: (spec.workers)
                .filter(|_| spec.foreseeable() && in_order && !watched)
                .map(Foresight::new),
            zone: None,
        }
    }

    /// The same server, standing in zone `zone`.
    pub fn in_zone(self, zone: Option<usize>) -> Self {
        Server { zone, ..self }
    }

    /// Whether an attempt's arrival and the end of its service are one event here.
    pub fn serves_at_once(&self) -> bool {
        self.at_once
    }

    /// Whether an attempt's end of service is known when it is sent, its line foreseeing it.
    pub fn foresees(&self) -> bool {
        self.foresight.is_some()
    }

    /// Where an attempt's end of service is known when it is sent: the line that tells it.
    pub fn foresight(&mut self) -> Option<&mut Foresight> {
        self.foresight.as_mut()
    }

    /// An attempt is on its way here.
    pub fn sent(&mut self) {
        self.in_flight += 1;
    }

    /// An attempt of `caller` is done here: answered, dropped, swallowed by an outage, or never
    /// sent on after its read. `generated` where it held a tokens-per-minute reservation: the
    /// part of its `max_tokens` it did not generate goes back to the bucket (all of it where it
    /// generated nothing).
    pub fn left(&mut self, spec: &ServerSpec, caller: u32, generated: Option<u32>) {
        self.in_flight -= 1;
        if let (Some(limit), Some(generated)) = (spec.token_limit, generated) {
            let unused = limit.max_tokens.saturating_sub(generated);
            self.token_buckets[limit.scope.bucket(caller)].give_back(u64::from(unused));
        }
    }

    /// A worker is free to take up an attempt whose service was drawn at `drawn`, which carries
    /// the client's deadline `carried` where the client shares it: dropped unserved if this
    /// server drops expired work and the deadline has passed; else its service, slowed by the
    /// others in service, and the deadline at which this server abandons it, if it does.
    pub fn take_up(
        &self,
        spec: &ServerSpec,
        now: Tick,
        carried: Option<Tick>,
        drawn: Tick,
    ) -> TakeUp {
        if spec.drop_expired && carried.is_some_and(|t| t <= now) {
            return TakeUp::Drop;
        }
        let others = u64::from(self.station.in_service().saturating_sub(1));
        TakeUp::Work {
            service: drawn.after(Tick(spec.slowdown.0.saturating_mul(others))),
            abandon_at: carried.filter(|_| spec.abandon_at_deadline),
        }
    }

    /// A request from `caller` sending `input` tokens reaches the door at `now`: the rate
    /// limiters first (a gateway in front of the server; a tokens-per-minute limit reserves the
    /// input and all the request may generate), then an outage, then a record's version check,
    /// then the line.
    pub fn arrive(
        &mut self,
        spec: &ServerSpec,
        now: Tick,
        (caller, input): (u32, u64),
        write: Option<Write>,
        ticket: T,
    ) -> Arrival<T> {
        let tokens = spec
            .token_limit
            .map_or(0, |l| input.saturating_add(l.max_tokens.into()));
        if let Err(refusal) = self.admit(spec, now, caller, tokens) {
            return Arrival::Throttled(refusal);
        }
        if let Some(mode) = outage::down_at(&spec.outages, self.zone, now) {
            return Arrival::Down(mode);
        }
        if let Some(write) = write {
            let refused = match spec.version_check {
                VersionCheck::Arrival => !self.record.write(write.read),
                VersionCheck::Commit => false,
                VersionCheck::Lock => !self.record.lock(write.holder),
            };
            if refused {
                return Arrival::VersionMoved;
            }
        }
        match self.station.arrive(ticket) {
            Door::Served(t) => Arrival::Served(t),
            Door::Waiting => Arrival::Waiting,
            Door::Refused(t) => Arrival::Full(t),
        }
    }

    /// The rate limiters' say on a request: it passes only if every limit has room for it, and
    /// then takes from each; refused, it takes from none, and waits for the limit that frees
    /// last (the reset, for the refusing limit that fills last). A capacity window scales the
    /// requests' rate (see [`capacity::rate_limit`]).
    fn admit(
        &mut self,
        spec: &ServerSpec,
        now: Tick,
        caller: u32,
        tokens: u64,
    ) -> Result<(), Refusal> {
        if spec.rate_limit.is_none() && spec.token_limit.is_none() {
            return Ok(());
        }
        let requests = spec.rate_limit.map(|limit| {
            let i = limit.scope.bucket(caller);
            let mut bucket = self.buckets[i];
            let windows = &spec.capacity;
            let taken = match capacity::rate_limit(
                &limit,
                capacity::fraction_at(windows, self.zone, now),
            ) {
                Some(limit) => bucket.take(&limit, now),
                // No token comes before the window ends: come back then.
                None => {
                    let until =
                        capacity::window_at(windows, self.zone, now).map_or(now, |w| w.until);
                    Err(limit.closed_for(until.since(now)))
                }
            };
            (i, bucket, taken)
        });
        let token_room = spec.token_limit.map(|limit| {
            let i = limit.scope.bucket(caller);
            let mut bucket = self.token_buckets[i];
            let taken = bucket.take(&limit, now, tokens);
            (i, bucket, taken)
        });
        let refusal = [requests.map(|r| r.2), token_room.map(|r| r.2)]
            .into_iter()
            .flatten()
            .filter_map(Result::err)
            .reduce(Refusal::and);
        if let Some(refusal) = refusal {
            return Err(refusal);
        }
        if let Some((i, bucket, _)) = requests {
            self.buckets[i] = bucket;
        }
        if let Some((i, bucket, _)) = token_room {
            self.token_buckets[i] = bucket;
        }
        Ok(())
    }

    /// A worker is free: the next in line, if any, is taken up.
    pub fn finish(&mut self) -> Option<T> {
        self.station.finish()
    }

    /// A write that held the record's lock lets go of it, answered or dropped.
    pub fn release(&mut self, holder: (u64, u32)) {
        self.record.unlock(holder);
    }

    /// A capacity window opens or closes at `now`: the workers become the share it leaves,
    /// and those the change frees take up the line.
    pub fn capacity_changed(&mut self, spec: &ServerSpec, now: Tick) -> Vec<T> {
        let Some(all) = spec.workers else {
            return Vec::new();
        };
        let fraction = capacity::fraction_at(&spec.capacity, self.zone, now);
        self.station.set_workers(capacity::workers(all, fraction))
    }

    /// The record's version, as a read finds it.
    pub fn version(&self) -> u64 {
        self.record.version()
    }

    /// The server answers an attempt of fate `fate` at `now`: it commits or fails it, under
    /// the intent's key store `keys`.
    pub fn answer(
        &mut self,
        spec: &ServerSpec,
        now: Tick,
        fate: Fate,
        request: Request,
        keys: &mut KeyStore,
    ) -> Answer {
        // Whatever its answer, a write holding a record's lock lets go of it now.
        if let Some(write) = request.write {
            self.record.unlock(write.holder);
        }
        let refused = |class| Answer {
            reply: Err(class),
            committed: false,
        };
        match fate {
            Fate::ServerError => refused(FailureClass::ServerError),
            Fate::Throttled => refused(FailureClass::Throttled),
            Fate::Overloaded => refused(FailureClass::Overloaded),
            Fate::VersionConflict => refused(FailureClass::VersionConflict),
            Fate::Forbidden => refused(FailureClass::Forbidden),
            Fate::Invalid => refused(FailureClass::Invalid),
            Fate::LostRequest | Fate::ConnectFailed => {
                unreachable!("a request that never left never reaches the server")
            }
            Fate::LostReply | Fate::Delivered | Fate::ErrorAfterCommit | Fate::StreamBroken => {
                // A receiver that does not honour keys commits whatever key comes.
                let key = request.key.filter(|_| spec.idempotent);
                // A read-only call commits nothing; a record's write commits as its version
                // check says, on arrival (already done) or now.
                let processed = match (spec.kind, request.write) {
                    (ToolKind::Write, _) => {
                        Some(keys.process(key, request.payload, now, spec.key_retention))
                    }
                    (ToolKind::ReadOnly | ToolKind::Model, _) => None,
                    (ToolKind::Record, write) => {
                        let read = write.map_or(0, |w| w.read);
                        let committed =
                            spec.version_check == VersionCheck::Arrival || self.record.write(read);
                        Some(match committed {
                            true => Processed::Committed,
                            false => Processed::VersionConflict,
                        })
                    }
                };
                let reply = match (fate, processed) {
                    (Fate::LostReply, _) => Err(FailureClass::Reset),
                    (Fate::StreamBroken, _) => Err(FailureClass::StreamBroken),
                    (_, Some(Processed::VersionConflict)) => Err(FailureClass::VersionConflict),
                    (_, Some(Processed::Conflict)) => Err(FailureClass::Conflict),
                    // The work is done, or its receipt replayed, and the response says 5xx.
                    (Fate::ErrorAfterCommit, _) => Err(FailureClass::ServerError),
                    _ => Ok(()),
                };
                Answer {
                    reply,
                    committed: processed == Some(Processed::Committed),
                }
            }
        }
    }

    /// Its levels, for the time series: calls in flight, the line's length, workers busy.
    pub fn levels(&self) -> (u32, usize, u32) {
        (
            self.in_flight,
            self.station.waiting(),
            self.station.in_service(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_says_retry_only_where_nothing_was_done_and_it_may_pass() {
        let advising = ServerSpec {
            should_retry_header: true,
            ..ServerSpec::new(ToolKind::Write)
        };
        let (fc, fate) = (FailureClass::ServerError, Fate::ServerError);
        // (class, fate, advice)
        let table = [
            (fc, fate, Some(true)),
            (fc, Fate::ErrorAfterCommit, Some(false)),
            (FailureClass::Throttled, Fate::Throttled, Some(true)),
            (FailureClass::Overloaded, Fate::Overloaded, Some(true)),
            (
                FailureClass::VersionConflict,
                Fate::VersionConflict,
                Some(true),
            ),
            (FailureClass::Forbidden, Fate::Forbidden, Some(false)),
            (FailureClass::Invalid, Fate::Invalid, Some(false)),
            (FailureClass::Conflict, Fate::Delivered, Some(false)),
            (FailureClass::Reset, Fate::LostReply, None),
            (FailureClass::Timeout, Fate::Delivered, None),
            (FailureClass::Connect, Fate::ConnectFailed, None),
        ];
        for (class, fate, advice) in table {
            assert_eq!(
                advising.advice(class, fate),
                advice,
                "{class:?} on {fate:?}"
            );
        }
        let silent = ServerSpec::new(ToolKind::Write);
        assert_eq!(silent.advice(fc, Fate::ErrorAfterCommit), None);
    }

    #[test]
    fn a_5xx_after_the_commit_commits_and_fails() {
        let spec = ServerSpec::new(ToolKind::Write);
        let mut server: Server<()> = Server::new(&spec, 1, false, true);
        let mut keys = KeyStore::default();
        let request = Request {
            key: Some(Key {
                intent: 1,
                nonce: 0,
            }),
            payload: 0,
            write: None,
        };
        let first = server.answer(&spec, Tick(5), Fate::ErrorAfterCommit, request, &mut keys);
        assert_eq!(first.reply, Err(FailureClass::ServerError));
        assert!(first.committed);
        // Its retry under the same key replays the receipt: no second effect.
        let retry = server.answer(&spec, Tick(9), Fate::Delivered, request, &mut keys);
        assert_eq!((retry.reply, retry.committed), (Ok(()), false));
    }

    #[test]
    fn expired_work_is_dropped_and_a_deadline_abandoned_only_where_the_server_says() {
        let (now, drawn, past, ahead) = (Tick(100), Tick(30), Some(Tick(90)), Some(Tick(110)));
        let work = |abandon_at| TakeUp::Work {
            service: drawn,
            abandon_at,
        };
        let plain = ServerSpec::new(ToolKind::Write);
        let dropping = ServerSpec {
            drop_expired: true,
            ..plain.clone()
        };
        let abandoning = ServerSpec {
            abandon_at_deadline: true,
            ..plain.clone()
        };
        // (server, deadline carried, what it does)
        let table = [
            (&plain, past, work(None)),
            (&dropping, past, TakeUp::Drop),
            (&dropping, Some(now), TakeUp::Drop),
            (&dropping, ahead, work(None)),
            (&dropping, None, work(None)),
            (&abandoning, ahead, work(ahead)),
            (&abandoning, past, work(past)),
            (&abandoning, None, work(None)),
        ];
        for (spec, carried, expected) in table {
            let server: Server<()> = Server::new(spec, 1, false, true);
            assert_eq!(
                server.take_up(spec, now, carried, drawn),
                expected,
                "{carried:?}"
            );
        }
    }

    #[test]
    fn a_reservation_is_the_input_and_max_tokens_and_what_was_not_generated_comes_back() {
        let limit = TokenLimit {
            per_minute: 600,
            burst: 600,
            scope: LimitScope::Tool,
            unit: Tick(1),
            max_tokens: 200,
        };
        let spec = ServerSpec {
            token_limit: Some(limit),
            ..ServerSpec::new(ToolKind::Model)
        };
        let mut server: Server<u32> = Server::new(&spec, 1, false, true);
        // 10 in and 200 reserved, twice: the bucket of 600 holds them both (420), not a third.
        for ticket in 0..2 {
            server.sent();
            assert!(matches!(
                server.arrive(&spec, Tick::ZERO, (0, 10), None, ticket),
                Arrival::Served(_) | Arrival::Waiting
            ));
        }
        let third = server.arrive(&spec, Tick::ZERO, (0, 10), None, 2);
        assert!(matches!(third, Arrival::Throttled(_)));
        // The first generated 50: its 150 unused come back (270), and the third now fits.
        server.left(&spec, 0, Some(50));
        assert!(!matches!(
            server.arrive(&spec, Tick::ZERO, (0, 10), None, 3),
            Arrival::Throttled(_)
        ));
    }
}
