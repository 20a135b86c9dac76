//! A model provider behind a tool (`kind = "model"`): how big each request and its answer are,
//! how long the answer takes to stream, and where a stream breaks.
//!
//! A call's prompt and the length of its answer are the call's own — the same question asked
//! again has the same size — so they are drawn once per intent; each attempt draws its time to
//! the first token and where, if anywhere, its stream is cut. An attempt's service time is the
//! time to the first token (and, where `prefill` is set, its input at the prefill rate) plus its
//! output tokens at the decode rate. A stream is cut after a
//! time drawn from an exponential distribution of rate `stream_break` a second of streaming:
//! the tokens streamed by then are billed, and the client sees the connection drop. Started
//! over, the next attempt pays the prompt and generates the whole answer again; resumed, it
//! sends the prompt and the tokens received so far, and generates only the rest.

use super::latency::Latency;
use crate::time::{TICKS_PER_SECOND, Tick};
use crate::variate::{splitmix, unit_open_low};

/// What a model tool's provider does with a request, as a config describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    /// Input tokens of a call's request (a distribution read as a count of tokens).
    pub input_tokens: Latency,
    /// Output tokens of its answer, at most `max_tokens`.
    pub output_tokens: Latency,
    /// The request's `max_tokens`: the most it may generate, reserved against a
    /// tokens-per-minute limit at admission.
    pub max_tokens: u32,
    /// Time to the first token: queueing inside the provider, and the prompt's prefill where
    /// `prefill` leaves it out.
    pub first_token: Latency,
    /// Input tokens read a second before the first token, where the prefill is apart from
    /// `first_token`: a longer prompt (a resumed stream's, an agent's late turn) waits longer.
    pub prefill: Option<f64>,
    /// Output tokens streamed a second once the first has come.
    pub tokens_per_second: f64,
    /// Breaks a second of streaming: the rate of the exponential time to a cut (0: never).
    pub stream_break: f64,
}

/// The sizes of one call: its prompt, its answer, and how much of the answer a broken stream
/// has delivered that a resumed attempt need not generate again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    pub input: u64,
    pub output: u64,
    pub received: u64,
}

/// What one attempt at the model reads, generates and takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generation {
    /// Input tokens it sends: the prompt, and for a resumed stream what was received before.
    pub input: u64,
    /// Output tokens it generates before it ends or breaks.
    pub output: u64,
    /// From the request's arrival to its last token (or the break).
    pub service: Tick,
    /// The stream broke before the answer was whole.
    pub broken: bool,
}

impl Provider {
    /// A call's sizes, from two words of its own stream.
    pub fn sizes(&self, words: [u64; 2]) -> Sizes {
        Sizes {
            input: self.input_tokens.sample(words[0]).0,
            output: (self.output_tokens.sample(words[1]).0).min(u64::from(self.max_tokens)),
            received: 0,
        }
    }

    /// Ticks to read `input` tokens before the first comes out, rounded up: none where the
    /// first token's latency stands for the prefill too.
    pub fn prefilling(&self, input: u64) -> Tick {
        self.prefill.map_or(Tick::ZERO, |rate| {
            Tick(libm::ceil(input as f64 * TICKS_PER_SECOND as f64 / rate) as u64)
        })
    }

    /// Ticks to stream `tokens` at the decode rate, rounded up.
    pub fn streaming(&self, tokens: u64) -> Tick {
        let ticks = tokens as f64 * TICKS_PER_SECOND as f64 / self.tokens_per_second;
        Tick(libm::ceil(ticks) as u64)
    }

    /// The attempt of a call of `sizes`, from one word of its attempt's stream: the time to its
    /// first token, then (from the word mixed by [`splitmix`]) where its stream breaks, if it
    /// does. A client that `resume`s sends what it received and asks for the rest.
    pub fn attempt(&self, word: u64, sizes: &Sizes, resume: bool) -> Generation {
        let resumed = if resume { sizes.received } else { 0 };
        let (input, wanted) = (
            sizes.input.saturating_add(resumed),
            sizes.output - resumed.min(sizes.output),
        );
        let first = self.first_token.sample(word).after(self.prefilling(input));
        let whole = self.streaming(wanted);
        let cut = (self.stream_break > 0.0).then(|| {
            let seconds = -libm::log(unit_open_low(splitmix(word))) / self.stream_break;
            Tick(libm::floor(seconds * TICKS_PER_SECOND as f64) as u64)
        });
        match cut.filter(|&c| c < whole) {
            Some(c) => Generation {
                input,
                output: (libm::floor(c.seconds() * self.tokens_per_second) as u64).min(wanted),
                service: first.after(c),
                broken: true,
            },
            None => Generation {
                input,
                output: wanted,
                service: first.after(whole),
                broken: false,
            },
        }
    }

    /// The tokens a request reserves against a tokens-per-minute limit: what it sends and all it
    /// may generate.
    pub fn reservation(&self, input: u64) -> u64 {
        input.saturating_add(u64::from(self.max_tokens))
    }
}

/// The closed forms of a broken stream, for an answer that streams for `seconds` whole and is
/// cut at rate `rate` a second of streaming, with unlimited attempts: started over, the
/// attempts are geometric with success e^(−rate·seconds); resumed, the cuts are a Poisson
/// process over the answer, and each attempt streams only the rest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BrokenStream {
    /// Expected attempts.
    pub attempts: f64,
    /// Expected seconds spent streaming, over every attempt.
    pub streaming: f64,
    /// Expected output tokens billed, as a share of the answer's.
    pub output_share: f64,
    /// Expected input tokens billed, in prompts; plus, resumed, the received tokens sent back,
    /// in answers (`resent`).
    pub prompts: f64,
    pub resent: f64,
}

impl BrokenStream {
    /// Started over at every break, with at most `cap` attempts (`None`: until it completes):
    /// each completes with p = e^(−λD), so E\[attempts\] = (1 − (1 − p)^cap)/p (1/p = e^(λD)
    /// uncapped), and each streams E\[min(C, D)\] = (1 − p)/λ, so by Wald's identity the time
    /// streamed is their product ((e^(λD) − 1)/λ uncapped).
    pub fn from_scratch(rate: f64, seconds: f64, cap: Option<u32>) -> BrokenStream {
        if rate <= 0.0 {
            return BrokenStream {
                attempts: 1.0,
                streaming: seconds,
                output_share: 1.0,
                prompts: 1.0,
                resent: 0.0,
            };
        }
        let p = libm::exp(-rate * seconds);
        let reached = cap.map_or(1.0, |n| 1.0 - libm::pow(1.0 - p, f64::from(n)));
        let attempts = reached / p;
        let streaming = attempts * (1.0 - p) / rate;
        BrokenStream {
            attempts,
            streaming,
            output_share: streaming / seconds,
            prompts: attempts,
            resent: 0.0,
        }
    }

    /// Resumed where it broke: 1 + λD attempts, the answer streamed once, and each resumed
    /// attempt sends back what came before it: λ∫₀ᴰ t/D dt = λD/2 answers in all.
    pub fn resumed(rate: f64, seconds: f64) -> BrokenStream {
        let x = rate * seconds;
        BrokenStream {
            attempts: 1.0 + x,
            streaming: seconds,
            output_share: 1.0,
            prompts: 1.0 + x,
            resent: x / 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams};

    fn provider(stream_break: f64) -> Provider {
        Provider {
            input_tokens: Latency::Constant(Tick(2_000)),
            output_tokens: Latency::Constant(Tick(1_000)),
            max_tokens: 4_096,
            first_token: Latency::Constant(Tick::from_millis(500)),
            prefill: None,
            tokens_per_second: 50.0,
            stream_break,
        }
    }

    #[test]
    fn an_unbroken_attempt_takes_the_first_token_then_the_answer_at_the_decode_rate() {
        let p = provider(0.0);
        let sizes = p.sizes([1, 2]);
        assert_eq!((sizes.input, sizes.output), (2_000, 1_000));
        let g = p.attempt(12_345, &sizes, false);
        assert_eq!(g.service, Tick(500_000 + 20_000_000));
        assert_eq!((g.input, g.output, g.broken), (2_000, 1_000, false));
        assert_eq!(p.reservation(2_000), 6_096);
        // The answer is never longer than max_tokens.
        let short = Provider {
            max_tokens: 300,
            ..provider(0.0)
        };
        assert_eq!(short.sizes([1, 2]).output, 300);
    }

    #[test]
    fn a_resumed_attempt_sends_what_came_and_generates_the_rest() {
        let sizes = Sizes {
            input: 2_000,
            output: 1_000,
            received: 400,
        };
        let resumed = provider(0.0).attempt(7, &sizes, true);
        assert_eq!((resumed.input, resumed.output), (2_400, 600));
        let over = provider(0.0).attempt(7, &sizes, false);
        assert_eq!((over.input, over.output), (2_000, 1_000));
    }

    /// Over many attempts the share of broken streams is 1 − e^(−λD) (a binomial proportion,
    /// held to its 99.9 % interval), and a broken one billed the tokens streamed before its cut.
    #[test]
    fn streams_break_as_often_as_the_rate_says() {
        let p = provider(0.05);
        let sizes = p.sizes([0, 0]);
        let streams = Streams {
            seed: 5,
            point: 0,
            replication: 0,
        };
        let n = 40_000;
        let mut broken = 0;
        for i in 0..n {
            let g = p.attempt(streams.word_at(Source::Faults, 1, i), &sizes, false);
            if g.broken {
                broken += 1;
                let streamed = g.service.since(Tick::from_millis(500));
                assert!(g.output < 1_000);
                assert_eq!(g.output, (streamed.seconds() * 50.0).floor() as u64);
            }
        }
        let expected = -libm::expm1(-0.05 * 20.0);
        let se = (expected * (1.0 - expected) / n as f64).sqrt();
        let share = broken as f64 / n as f64;
        assert!(
            (share - expected).abs() < 3.29 * se,
            "{share} vs {expected}"
        );
    }

    #[test]
    fn the_closed_forms_of_a_broken_stream() {
        // λD = 1: started over, e attempts and (e − 1)/λ seconds streamed; resumed, 2 and D.
        let over = BrokenStream::from_scratch(0.05, 20.0, None);
        assert!((over.attempts - std::f64::consts::E).abs() < 1e-12);
        assert!((over.streaming - 20.0 * (std::f64::consts::E - 1.0)).abs() < 1e-9);
        let resumed = BrokenStream::resumed(0.05, 20.0);
        assert_eq!((resumed.attempts, resumed.output_share), (2.0, 1.0));
        assert!((resumed.resent - 0.5).abs() < 1e-12);
        // With no breaks both are one attempt that streams once.
        let calm = BrokenStream::from_scratch(0.0, 20.0, None);
        assert_eq!(
            (calm.attempts, calm.streaming, calm.output_share),
            (1.0, 20.0, 1.0)
        );
    }
}
