//! The client's state for one live intent, made of parts; the slab that holds the live ones is
//! beside it ([`super::slab`]).

use smallvec::SmallVec;

mod awaited;
mod crash;
mod far;
mod hop;
mod model;
mod record;

pub use awaited::Awaited;
pub use hop::Hop;

use crate::engine::rng::{Source, Streams, WORDS_PER_BLOCK};
use crate::metrics::{AttemptRecord, Lookup, Outcome, Status, StopReason};
use crate::model::fault::WORDS_PER_ATTEMPT;
use crate::model::server::KeyStore;
use crate::model::{AttemptDraw, Fate, IntentBill, Sizes, Tool};
use crate::policy::{Limits, RetryState};
use crate::sim::fate;
use crate::time::Tick;

/// One intent in progress: the client's side of it and its attempts the server still holds.
/// It stays in the slab until both are over, so a commit by an abandoned attempt after the
/// client gave up still counts as an effect of this intent. Its parts are built in one place
/// each, and a reused slot is reset part by part to what a fresh one holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Intent {
    /// task × calls per task + the call's position in the task.
    pub id: u64,
    pub tool: usize,
    /// The caller its task belongs to, from 0: whose breaker, budget and rate-limit bucket it
    /// uses where those are kept per caller.
    pub caller: u32,
    pub start: Tick,
    /// What the client saw and did.
    pub client: Client,
    /// Where its retry policy stands.
    pub retry: RetryState,
    /// What the server did with its attempts.
    pub server: ServerSide,
    /// The edge of the call graph it goes over, which every event reads for its policy.
    pub edge: u16,
    /// Every attempt so far: its draws, its payload, its record, and the ones awaited.
    attempts: Attempts,
    /// What only some configurations need; none until one does (see [`Far`]).
    far: Option<Box<Far>>,
}

/// The parts of an intent only some configurations use: where it stands in a call graph
/// beyond its edge, the replicas it has tried, a versioned record's reads and writes. They
/// stand behind a pointer, made when the intent first needs them and dropped with it, so an
/// intent of a configuration without them is smaller, and its hot words closer together, and
/// its events do no work for them.
#[derive(Clone, Debug, PartialEq)]
struct Far {
    hop: Hop,
    /// The replicas it has sent to, as a bit set (a tool has at most 128).
    tried: u128,
    /// The replica its first attempt went to.
    first_replica: Option<u16>,
    /// The record version each held attempt's read returned.
    versions: PerAttempt<u64>,
    /// Reads of a versioned record that reached it, and conditional writes that reached it.
    reads: u32,
    writes: u32,
    /// At a model: the call's sizes, drawn at its first attempt.
    sizes: Option<Sizes>,
    /// At a model: what each held attempt sends, in step with the held draws.
    sent: PerAttempt<Sent>,
    /// What its attempts were billed, at a priced tool.
    bill: IntentBill,
    /// It does again what an earlier call of its task did (an agent's re-plan): all it is
    /// billed is what retries added.
    redo: bool,
    /// Its workers' crashes and the takeovers that followed.
    takeovers: crash::Takeovers,
}

/// What an attempt at a model sends: its input tokens, and whether it holds a reservation in
/// its server's tokens-per-minute bucket, settled when it is answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    pub input: u64,
    pub reserved: bool,
}

/// The client's view of an intent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Client {
    /// Attempts abandoned at their timeout.
    pub timeouts: u32,
    /// Time spent waiting between attempts.
    pub backoff: Tick,
    /// Calls the circuit breaker refused.
    pub short_circuited: u32,
    /// Reconciliation lookups made.
    pub lookups: u32,
    /// Hedges sent.
    pub hedges: u32,
    /// A receipt came back after the deadline: late evidence that the effect happened.
    pub late_receipt: bool,
    /// Some attempt went unanswered, so it may have committed.
    pub ambiguous: bool,
    /// How and when the client finished with the intent.
    pub ended: Option<(Status, Tick)>,
}

/// What the server did with an intent's attempts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerSide {
    /// Side effects committed.
    pub effects: u32,
    /// Attempts that reached the server while it was down.
    pub calls_while_down: u32,
    /// Attempts on their way to the server or at it.
    pub at_server: u32,
    /// The server's idempotency record for this intent's key.
    pub keys: KeyStore,
}

/// One value per attempt, the first two inside the intent itself: most intents make one or two
/// attempts, and with 10⁵ intents live an attempt's data beside its intent is one cache miss
/// fewer per event than data behind a pointer.
type PerAttempt<T> = SmallVec<[T; 2]>;

/// An intent's attempts, held from the oldest one not yet folded: the buffers keep their
/// capacity when the slot is reused.
///
/// An attempt the client is done with, that the server no longer holds and that is not the
/// latest, can change no more: it is folded into counts and let go, so an intent that makes ten
/// million attempts holds a handful. Where a trace is kept, every attempt is held until the
/// intent is recorded, since the trace writes them all.
#[derive(Clone, Debug, PartialEq)]
struct Attempts {
    /// The first attempt still held; the ones before it are folded.
    base: u32,
    /// Attempts dispatched so far.
    count: u32,
    /// The draws of every attempt held, in order.
    draws: PerAttempt<AttemptDraw>,
    /// The payload version of every attempt held, in order.
    payloads: PerAttempt<u32>,
    /// What became of every attempt held, in order.
    log: PerAttempt<AttemptRecord>,
    /// Whether each attempt held is on its way to the server or at it.
    at_server: PerAttempt<bool>,
    /// How the folded attempts ended, by [`Outcome::index`].
    folded: [u32; Outcome::NAMES.len()],
    /// The attempts the client is waiting on: none between attempts and after the end, two
    /// while a hedge races its primary.
    awaiting: Awaited,
    /// The second half of the fault stream's latest block, which the next (odd) attempt reads:
    /// attempt k reads words 4k … 4k + 3, so a block serves two attempts, and the intent keeps
    /// 32 bytes of its stream rather than the 120 a [`Stream`](crate::engine::rng::Stream)
    /// holds (the key is the run's, the place is the attempt count).
    spare: [u64; WORDS_PER_ATTEMPT],
}

const _: () = assert!(WORDS_PER_BLOCK == 2 * WORDS_PER_ATTEMPT);

impl Intent {
    pub(super) fn new(id: u64, tool: usize, now: Tick) -> Self {
        Intent {
            id,
            tool,
            caller: 0,
            start: now,
            client: Client::default(),
            retry: RetryState::new(now),
            server: ServerSide::default(),
            edge: 0,
            attempts: Attempts {
                base: 0,
                count: 0,
                draws: PerAttempt::new(),
                payloads: PerAttempt::new(),
                log: PerAttempt::new(),
                at_server: PerAttempt::new(),
                folded: [0; Outcome::NAMES.len()],
                awaiting: Awaited::default(),
                spare: [0; WORDS_PER_ATTEMPT],
            },
            far: None,
        }
    }

    /// Makes this the new intent `id`, in place: each part as [`Intent::new`] builds it, the
    /// attempt buffers cleared but keeping their capacity.
    pub(super) fn reset(&mut self, id: u64, tool: usize, now: Tick) {
        let a = &mut self.attempts;
        (a.base, a.count) = (0, 0);
        a.draws.clear();
        a.payloads.clear();
        a.log.clear();
        a.at_server.clear();
        a.folded = [0; Outcome::NAMES.len()];
        a.awaiting = Awaited::default();
        a.spare = [0; WORDS_PER_ATTEMPT];
        (self.id, self.tool, self.caller, self.start) = (id, tool, 0, now);
        self.client = Client::default();
        self.retry.reset(now);
        self.server = ServerSide::default();
        self.edge = 0;
        self.far = None;
    }

    /// What became of every attempt held, in order: every attempt so far where none is folded.
    pub fn log(&self) -> &[AttemptRecord] {
        &self.attempts.log
    }

    /// How every attempt so far ended, by [`Outcome::index`]: the folded ones and those held.
    pub fn outcomes(&self) -> [u32; Outcome::NAMES.len()] {
        let mut counts = self.attempts.folded;
        for a in &self.attempts.log {
            counts[a.outcome.index()] += 1;
        }
        counts
    }

    /// Folds the oldest attempts that can change no more (see [`Attempts`]).
    pub fn fold_finished(&mut self) {
        let a = &mut self.attempts;
        let mut done = 0;
        while (a.base + done + 1 < a.count)
            && !a.at_server[done as usize]
            && !a.awaiting.contains(a.base + done)
        {
            a.folded[a.log[done as usize].outcome.index()] += 1;
            done += 1;
        }
        if done > 0 {
            let n = done as usize;
            a.draws.drain(..n);
            a.payloads.drain(..n);
            a.log.drain(..n);
            a.at_server.drain(..n);
            a.base += done;
            if let Some(far) = &mut self.far {
                far.versions.drain(..n.min(far.versions.len()));
                far.sent.drain(..n.min(far.sent.len()));
            }
        }
    }

    /// The bounds of the intent whose policy's are `own` and whose scope starts at `start`
    /// (see [`Hop::limits`]): its own, unless it carries a deadline.
    pub fn limits(&self, own: Limits, start: Tick) -> Limits {
        match &self.far {
            Some(far) => far.hop.limits(own, start),
            None => own,
        }
    }

    /// Its far part, made now if it has none.
    fn far(&mut self) -> &mut Far {
        let hop = Hop::plain(self.edge, self.id);
        self.far.get_or_insert_with(|| {
            Box::new(Far {
                hop,
                tried: 0,
                first_replica: None,
                versions: PerAttempt::new(),
                reads: 0,
                writes: 0,
                sizes: None,
                sent: PerAttempt::new(),
                bill: IntentBill::default(),
                redo: false,
                takeovers: crash::Takeovers::default(),
            })
        })
    }

    /// Where attempt `attempt` is held.
    fn held(&self, attempt: u32) -> usize {
        assert!(attempt >= self.attempts.base, "attempt {attempt} is folded");
        (attempt - self.attempts.base) as usize
    }

    /// Attempt `attempt` is on its way to the server, or (`false`) done there.
    pub fn at_server(&mut self, attempt: u32, there: bool) {
        let i = self.held(attempt);
        self.attempts.at_server[i] = there;
        if there {
            self.server.at_server += 1;
        } else {
            self.server.at_server -= 1;
        }
    }

    /// The attempts the client is waiting on.
    pub fn awaiting(&self) -> Awaited {
        self.attempts.awaiting
    }

    /// Attempts dispatched so far.
    pub fn attempts(&self) -> u32 {
        self.attempts.count
    }

    /// Sends the next attempt: its fate and latencies decided by [`fate::decide`] from the
    /// run's `streams` (attempt k always reads words 4k … 4k + 3 of the intent's fault stream),
    /// then, at a model, its generation; records the wait the client `granted` it (`None`: no
    /// limit), whether or not a timer can cut it. `fates` holds the run's sources of fates beyond
    /// the tool's own. Returns the attempt's number and its draws.
    pub fn draw_attempt(
        &mut self,
        streams: &Streams,
        (tool, replica): ((usize, &Tool), usize),
        (now, granted): (Tick, Option<Tick>),
        resume: bool,
        fates: &mut fate::Fates,
    ) -> (u32, AttemptDraw) {
        let attempt = self.attempts();
        let words = if attempt.is_multiple_of(2) {
            let block = streams.block(Source::Faults, self.id, u64::from(attempt / 2));
            let (first, second) = block.split_at(WORDS_PER_ATTEMPT);
            self.attempts.spare.copy_from_slice(second);
            first.try_into().expect("half a block")
        } else {
            self.attempts.spare
        };
        let asked = fate::Asked {
            tool,
            replica,
            intent: self.id,
            attempt,
            now,
            wait: tool.1.timer(granted),
            streams,
            words: &words,
        };
        let mut draw = fate::decide(&asked, fates);
        if let Some(provider) = &tool.1.provider {
            draw = self.generate(streams, provider, (attempt, draw), words[2], resume);
        }
        let worker = u16::try_from(self.worker_of(attempt)).unwrap_or(u16::MAX);
        let a = &mut self.attempts;
        a.count += 1;
        a.draws.push(draw);
        a.payloads.push(self.retry.payload);
        a.at_server.push(false);
        a.log.push(AttemptRecord {
            layer: self.retry.next_layer as u8,
            dispatch: now,
            end: now,
            granted,
            outcome: Outcome::Unanswered,
            committed: false,
            lookup: None,
            replica: draw.replica,
            worker,
        });
        a.awaiting.add(attempt);
        (attempt, draw)
    }

    /// The client learns how attempt `attempt` ended, or stops waiting for it.
    pub fn settle(&mut self, attempt: u32, outcome: Outcome, now: Tick) {
        let i = self.held(attempt);
        let log = &mut self.attempts.log[i];
        log.outcome = outcome;
        log.end = now;
        self.attempts.awaiting.remove(attempt);
    }

    /// A lookup made after the latest attempt came back with `answer`.
    pub fn looked_up(&mut self, answer: Lookup) {
        if let Some(last) = self.attempts.log.last_mut() {
            last.lookup = Some(answer);
        }
    }

    /// When the client stops waiting for attempt `attempt`, as the request carries it: its
    /// dispatch plus the wait granted it; `None` without a timeout or deadline.
    pub fn expires(&self, attempt: u32) -> Option<Tick> {
        let a = &self.attempts.log[self.held(attempt)];
        a.granted.map(|g| a.dispatch.after(g))
    }

    /// The payload version attempt `attempt` carries.
    pub fn payload_of(&self, attempt: u32) -> u32 {
        self.attempts.payloads[self.held(attempt)]
    }

    /// When attempt `attempt` was sent.
    pub fn dispatched(&self, attempt: u32) -> Tick {
        self.attempts.log[self.held(attempt)].dispatch
    }

    /// The draws of attempt `attempt`.
    pub fn draw(&self, attempt: u32) -> AttemptDraw {
        self.attempts.draws[self.held(attempt)]
    }

    /// The horizon came while the client still waited: the intent is `hung`, and the attempts
    /// still awaited end there, the client never having learned how.
    pub fn hang(&mut self, horizon: Tick) {
        self.client.ended = Some((Status::Stopped(StopReason::Hung), horizon));
        for attempt in self.attempts.awaiting.attempts() {
            let i = self.held(attempt);
            self.attempts.log[i].end = horizon;
        }
    }

    /// Attempt `attempt` made a new side effect at the server.
    pub fn commit(&mut self, attempt: u32) {
        self.server.effects += 1;
        let i = self.held(attempt);
        self.attempts.log[i].committed = true;
        self.count_takeover_commit(attempt);
    }

    /// A server that is down fails attempt `attempt` at once, whatever was drawn for it.
    pub fn fail_fast(&mut self, attempt: u32) {
        let i = self.held(attempt);
        let draw = &mut self.attempts.draws[i];
        draw.fate = Fate::ServerError;
        draw.service = Tick::ZERO;
    }

    /// A server that fences refuses attempt `attempt`, sent under a stale lease token: a 4xx
    /// that can never succeed, no work.
    pub fn fence_off(&mut self, attempt: u32) {
        let i = self.held(attempt);
        let draw = &mut self.attempts.draws[i];
        draw.fate = Fate::Invalid;
        draw.service = Tick::ZERO;
    }

    /// A rate limiter with no token turns attempt `attempt` away at once: a 429, no work, and a
    /// Retry-After of `wait`.
    pub fn throttle(&mut self, attempt: u32, wait: Tick) {
        let i = self.held(attempt);
        let draw = &mut self.attempts.draws[i];
        draw.fate = Fate::Throttled;
        draw.service = Tick::ZERO;
        draw.retry_after = Some(wait);
    }

    /// A server whose line is full turns attempt `attempt` away at once: a 503, no work.
    pub fn overload(&mut self, attempt: u32) {
        let i = self.held(attempt);
        let draw = &mut self.attempts.draws[i];
        draw.fate = Fate::Overloaded;
        draw.service = Tick::ZERO;
    }

    /// Dispatches made in the current scope, which the dispatch cap counts.
    pub fn dispatches_in_scope(&self) -> u32 {
        self.attempts() - self.retry.scope.first
    }

    /// Whether the client is done, the server holds none of its attempts, and no stalled
    /// worker is still to wake and send.
    pub fn is_over(&self) -> bool {
        self.client.ended.is_some() && self.server.at_server == 0 && self.zombies().0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A configuration with no call graph, replicas or record makes no far part; the first
    /// thing that needs one makes it, holding the hop the intent had.
    #[test]
    fn the_far_part_is_made_only_when_needed() {
        let mut intent = Intent::new(9, 0, Tick(1));
        intent.set_hop(Hop::plain(3, 9));
        assert!(intent.far.is_none());
        assert_eq!(intent.hop(), Hop::plain(3, 9));
        assert_eq!(
            (intent.tried(), intent.reads_and_writes()),
            ((0, None), (0, 0))
        );
        intent.try_replica(2);
        assert!(intent.far.is_some());
        assert_eq!(intent.hop(), Hop::plain(3, 9), "made with the plain hop");
        assert_eq!(intent.tried(), (0b100, Some(2)));
        let mut graphed = Intent::new(9, 0, Tick(1));
        let hop = Hop {
            tree: 4,
            ..Hop::plain(3, 9)
        };
        graphed.set_hop(hop);
        assert_eq!(
            (graphed.far.is_some(), graphed.hop(), graphed.edge),
            (true, hop, 3)
        );
        graphed.reset(10, 0, Tick(2));
        assert_eq!(graphed, Intent::new(10, 0, Tick(2)), "a reset lets it go");
    }
}
