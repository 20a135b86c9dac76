//! A model's call as its intent keeps it: the prompt's and answer's sizes, drawn once; each
//! attempt's generation, a step after its fate; the tokens each attempt sent and reserved; and
//! the bill.

use super::{Intent, Sent};
use crate::engine::rng::{Source, Streams};
use crate::model::{AttemptDraw, FailureClass, Fate, IntentBill, Provider, Sizes, Tool};

impl Intent {
    /// A model's generation, a step after the fate: the service time and the answer's size it
    /// streams, and a delivered attempt whose stream broke (`word`, the attempt's third).
    pub(super) fn generate(
        &mut self,
        streams: &Streams,
        provider: &Provider,
        (attempt, fated): (u32, AttemptDraw),
        word: u64,
        resume: bool,
    ) -> AttemptDraw {
        let mut draw = fated;
        let sizes = self.sizes(streams, provider);
        let generation = provider.attempt(word, &sizes, resume);
        // At most the call's answer, and so at most its `max_tokens`, a u32.
        let output = u32::try_from(generation.output).expect("at most max_tokens");
        (draw.service, draw.output) = (generation.service, output);
        if generation.broken && draw.fate == Fate::Delivered {
            draw.fate = Fate::StreamBroken;
        }
        let held = (attempt - self.attempts.base) as usize;
        let sent = &mut self.far().sent;
        sent.resize(held, Sent::default());
        sent.push(Sent {
            input: generation.input,
            reserved: false,
        });
        draw
    }

    /// The sizes of its call at a model `provider`, drawn from the run's `streams` when first
    /// asked for.
    pub fn sizes(&mut self, streams: &Streams, provider: &Provider) -> Sizes {
        let id = self.id;
        *self.far().sizes.get_or_insert_with(|| {
            let block = streams.block(Source::Sizes, id, 0);
            provider.sizes([block[0], block[1]])
        })
    }

    /// It does again what an earlier call of its task did.
    pub fn redo(&mut self) {
        self.far().redo = true;
    }

    /// The sizes of its call at a model, if drawn.
    pub fn sizes_drawn(&self) -> Option<Sizes> {
        self.far.as_ref().and_then(|f| f.sizes)
    }

    /// Its call is an agent loop's turn: at a model, its input is its own prompt and the
    /// `context` earlier turns built (at another tool, nothing is read).
    pub fn read_context(&mut self, streams: &Streams, tool: &Tool, context: u64) {
        let Some(provider) = &tool.provider else {
            return;
        };
        self.sizes(streams, provider);
        if let Some(sizes) = &mut self.far().sizes {
            sizes.input = sizes.input.saturating_add(context);
        }
    }

    /// The tokens a send to `tool` may use, as a client-side token bucket counts them: at a
    /// model, its input (with the tokens received, where a broken stream is `resume`d) and all
    /// its `max_tokens`; nothing at another tool.
    pub fn tokens_to_send(&mut self, streams: &Streams, tool: &Tool, resume: bool) -> u64 {
        let Some(provider) = &tool.provider else {
            return 0;
        };
        let sizes = self.sizes(streams, provider);
        let resent = if resume { sizes.received } else { 0 };
        provider.reservation(sizes.input + resent)
    }

    /// What attempt `attempt`, drawn as `draw`, leaves unused of what a client-side token
    /// bucket took for it, as the answer's usage reports: all of a send refused before any
    /// work (a 429, a 503, a failed connection), the `max_tokens` it did not generate after
    /// work, nothing where no answer says.
    pub fn tokens_unused(
        &self,
        tool: &Tool,
        (attempt, draw): (u32, AttemptDraw),
        failure: Option<FailureClass>,
    ) -> u64 {
        let Some(provider) = &tool.provider else {
            return 0;
        };
        match failure {
            _ if draw.fate.did_work() => u64::from(provider.max_tokens.saturating_sub(draw.output)),
            Some(FailureClass::Throttled | FailureClass::Overloaded | FailureClass::Connect) => {
                provider.reservation(self.sent(attempt).input)
            }
            _ => 0,
        }
    }

    /// What attempt `attempt` sends to a model (nothing at another tool).
    pub fn sent(&self, attempt: u32) -> Sent {
        let i = self.held(attempt);
        (self.far.as_ref()).map_or(Sent::default(), |f| {
            f.sent.get(i).copied().unwrap_or_default()
        })
    }

    /// Attempt `attempt` holds a reservation in its server's tokens-per-minute bucket.
    pub fn reserve(&mut self, attempt: u32) {
        self.mark_reserved(attempt, true);
    }

    /// Attempt `attempt`'s reservation is settled: nothing of it is held any more.
    pub fn settled(&mut self, attempt: u32) {
        self.mark_reserved(attempt, false);
    }

    fn mark_reserved(&mut self, attempt: u32, reserved: bool) {
        let i = self.held(attempt);
        if let Some(sent) = self.far().sent.get_mut(i) {
            sent.reserved = reserved;
        }
    }

    /// Bills attempt `attempt`, answered by a server of a tool priced as `tool`: an attempt
    /// that reached the server pays the tool's price per call, and one that reached a model
    /// pays for the tokens it sent and generated; one refused before (a 429, a 503, a server
    /// down, a lost request) pays nothing. `used` when the client takes its answer (a reply, or
    /// the tokens of a broken stream it resumes from); what it does not use is wasted.
    pub fn bill_attempt(&mut self, tool: &Tool, attempt: u32, used: bool) {
        if tool.price.is_free() {
            return;
        }
        let draw = self.draw(attempt);
        if !draw.fate.did_work() {
            return;
        }
        let tokens = (self.sent(attempt).input, u64::from(draw.output));
        let cost = tool.price.of(tokens.0, tokens.1);
        let redone = self.is_redone(attempt);
        let far = self.far();
        // What retries added: every billed attempt after the call's first billed one (a 429
        // bills nothing, so a retry after it adds nothing), and a re-planned call's all.
        let again = far.bill.cost > 0 || far.redo;
        let bill = &mut far.bill;
        bill.charge(cost, tokens, again);
        if redone {
            bill.redid(cost, u128::from(tokens.0) + u128::from(tokens.1));
        }
        if !used {
            bill.wasted = bill.wasted.saturating_add(cost);
        } else if draw.fate == Fate::StreamBroken {
            // The tokens received are the answer's start; the prompt sent for them is spent.
            bill.wasted = bill.wasted.saturating_add(tool.price.of(tokens.0, 0));
        }
    }

    /// A broken stream delivered `tokens` more of the call's answer, which a resumed attempt
    /// sends back rather than generating again.
    pub fn received(&mut self, tokens: u64) {
        if let Some(sizes) = &mut self.far().sizes {
            sizes.received = sizes.received.saturating_add(tokens).min(sizes.output);
        }
    }

    /// What its attempts were billed.
    pub fn bill(&self) -> IntentBill {
        self.far.as_ref().map_or(IntentBill::default(), |f| f.bill)
    }
}
