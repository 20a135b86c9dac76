//! What the endpoint does with one request: its fate drawn as the simulator draws an attempt's,
//! from a stream of the endpoint's own keyed by the config's seed and the tool, a request's
//! number its place in the stream — so a rerun with the same client meets the same faults in
//! the same order — and the fate turned into what happens on the wire.

use crate::engine::rng::{Source, Streams};
use crate::experiment::Experiment;
use crate::model::fault::WORDS_PER_ATTEMPT;
use crate::model::provider::Generation;
use crate::model::{AttemptDraw, FailureClass, Fate, Tool};
use crate::time::Tick;

/// The endpoint's streams: the config's seed, as its one replication of its one point.
fn streams(exp: &Experiment) -> Streams {
    Streams {
        seed: exp.seed,
        point: 0,
        replication: 0,
    }
}

/// The fate and latencies of request `n` (0 the first) to tool `tool` of `exp`, drawn from the
/// tool's faults and latencies as the simulator draws an attempt's — from its burst's bad-state
/// faults where the tool is `bad`, or from its recorded health's stretch at `now` — a scripted
/// tool's from its script, the requests its steps.
pub fn draw(exp: &Experiment, tool: usize, n: u64, (bad, now): (bool, Tick)) -> AttemptDraw {
    if let Some(script) = &exp.tools[tool].script {
        return script.draw(u32::try_from(n).unwrap_or(u32::MAX));
    }
    let streams = streams(exp);
    // Two attempts' words to a block.
    let per_block = (crate::engine::rng::WORDS_PER_BLOCK / WORDS_PER_ATTEMPT) as u64;
    let block = streams.block(Source::Endpoint, tool as u64, n / per_block);
    let at = (n % per_block) as usize * WORDS_PER_ATTEMPT;
    let words: [u64; WORDS_PER_ATTEMPT] = std::array::from_fn(|i| block[at + i]);
    exp.tools[tool].draw(&words, 0, (bad, now))
}

/// At a model tool, request `n`'s prompt and what its attempt generates: the prompt's tokens
/// and the generation, drawn from the provider as the simulator draws a call's sizes and an
/// attempt's stream (from streams of the endpoint's own: a request is a call of its own), the
/// answer capped at the request's `max_tokens`. `None` at a tool that is no model.
pub fn generation(
    exp: &Experiment,
    tool: usize,
    n: u64,
    max_tokens: Option<u64>,
) -> Option<(u64, Generation)> {
    let provider = exp.tools[tool].provider.as_ref()?;
    let streams = streams(exp);
    // Three words a request (two for the sizes, one for the attempt), two requests a block.
    let block = streams.block(Source::Endpoint, tool as u64 | 1 << 32, n / 2);
    let at = (n % 2) as usize * 4;
    let mut sizes = provider.sizes([block[at], block[at + 1]]);
    if let Some(cap) = max_tokens {
        sizes.output = sizes.output.min(cap);
    }
    Some((sizes.input, provider.attempt(block[at + 2], &sizes, false)))
}

/// Whether lookup `n` (0 the first) of a key at tool `tool` fails, as the tool's
/// `lookup_failure` draws it, from a stream of the endpoint's own for the tool's lookups.
pub fn lookup_fails(exp: &Experiment, tool: usize, n: u64) -> bool {
    let streams = streams(exp);
    let word = streams.word_at(Source::Endpoint, tool as u64 | 2 << 32, n);
    crate::variate::unit_open_low(word) <= exp.tools[tool].lookup.failure
}

/// The `x-should-retry` header an answer of fate `fate` at `tool` carries, where the tool's
/// server advises (`should_retry_header`): as the simulator's server advises its clients.
pub fn should_retry(tool: &Tool, fate: Fate) -> Option<bool> {
    let class = match fate {
        Fate::ServerError | Fate::ErrorAfterCommit => FailureClass::ServerError,
        Fate::Throttled => FailureClass::Throttled,
        Fate::Overloaded => FailureClass::Overloaded,
        Fate::Forbidden => FailureClass::Forbidden,
        Fate::Invalid => FailureClass::Invalid,
        Fate::VersionConflict => FailureClass::VersionConflict,
        _ => return None,
    };
    tool.server.advice(class, fate)
}

/// What happens on the wire to a request of a given fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// The connection is closed before any work: a lost request, a failed connection. Nothing
    /// is committed.
    Drop,
    /// The work is done and committed, then the connection is closed before any answer: a lost
    /// reply, the client left not knowing.
    CommitThenDrop,
    /// An answer of `status`, after a commit where `commit` says so; a 429's `retry_after`.
    Answer {
        status: u16,
        commit: bool,
        retry_after: Option<Tick>,
    },
}

/// The act for a request drawn as `draw`. A 5xx is a 502: retrysim's server error is a 502, 503
/// or 504 without saying which (as the presets read a status list), and a 503 is the
/// overloaded server's own.
pub fn act(draw: &AttemptDraw) -> Act {
    let answer = |status, commit| Act::Answer {
        status,
        commit,
        retry_after: None,
    };
    match draw.fate {
        Fate::LostRequest | Fate::ConnectFailed => Act::Drop,
        Fate::LostReply | Fate::StreamBroken => Act::CommitThenDrop,
        Fate::Delivered => answer(200, true),
        Fate::ServerError => answer(502, false),
        Fate::ErrorAfterCommit => answer(502, true),
        Fate::Throttled => Act::Answer {
            status: 429,
            commit: false,
            retry_after: draw.retry_after,
        },
        Fate::Forbidden => answer(403, false),
        Fate::Invalid => answer(400, false),
        Fate::Overloaded => answer(503, false),
        Fate::VersionConflict => answer(409, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The endpoint's fates come at the configured rates: over 20 000 requests to a tool that
    /// loses 20 % of replies and 5 % of requests, and 20 000 lookups that fail 30 % of the time,
    /// each rate lies within its 99.9 % binomial interval (3.29 standard errors).
    #[test]
    fn requests_meet_their_fates_at_the_configured_rates() {
        let text = "name = \"e\"\nseed = 5\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n\
                    reply_loss = 0.2\nrequest_loss = 0.05\n[[policy]]\nname = \"p\"\n";
        let exp = crate::config::Source::from_text("e.toml", text)
            .sweep()
            .unwrap()
            .base;
        let n = 20_000u64;
        let count = |fate| {
            (0..n)
                .filter(|&k| draw(&exp, 0, k, (false, Tick::ZERO)).fate == fate)
                .count() as f64
        };
        for (fate, p) in [(Fate::LostReply, 0.2), (Fate::LostRequest, 0.05)] {
            let seen = count(fate) / n as f64;
            let bound = 3.29 * (p * (1.0 - p) / n as f64).sqrt();
            assert!((seen - p).abs() <= bound, "{fate:?}: {seen} against {p}");
        }
        // Lookups fail at the tool's `lookup_failure`, from a stream of their own.
        let mut exp = exp;
        exp.tools[0].lookup.failure = 0.3;
        let seen = (0..n).filter(|&k| lookup_fails(&exp, 0, k)).count() as f64 / n as f64;
        assert!(
            (seen - 0.3).abs() <= 3.29 * (0.21 / n as f64).sqrt(),
            "{seen}"
        );
    }

    /// Each fate does on the wire what the model says of it: the commit where the server
    /// committed, silence where the client hears nothing.
    #[test]
    fn each_fate_is_its_act() {
        let d = |fate| AttemptDraw::new(fate, Tick::ZERO, Tick::ZERO, Tick::ZERO, None);
        assert_eq!(act(&d(Fate::LostRequest)), Act::Drop);
        assert_eq!(act(&d(Fate::LostReply)), Act::CommitThenDrop);
        let status = |fate| match act(&d(fate)) {
            Act::Answer { status, commit, .. } => (status, commit),
            other => panic!("{other:?}"),
        };
        assert_eq!(status(Fate::Delivered), (200, true));
        assert_eq!(status(Fate::ServerError), (502, false));
        assert_eq!(status(Fate::ErrorAfterCommit), (502, true));
        assert_eq!(status(Fate::Overloaded), (503, false));
    }
}
