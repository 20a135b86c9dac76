//! What calls cost: a tool's prices, and the bill an intent runs up.
//!
//! Money is kept in whole picodollars (10⁻¹² $), so every sum is exact and the same in any
//! order: a price of $2.50 per million tokens is 2 500 000 pd a token, and any price quoted to
//! the sixth decimal of a dollar per million tokens is a whole number of them.

/// Picodollars in a dollar.
pub const PICO: f64 = 1e12;

/// A tool's prices, in picodollars.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Price {
    /// Per input token a model reads.
    pub input: u64,
    /// Per output token a model generates.
    pub output: u64,
    /// Per attempt that reaches the server: a plain tool's price per call.
    pub call: u64,
}

impl Price {
    /// Prices quoted as dollars per million input and output tokens and dollars per call.
    pub fn quoted(input_per_million: f64, output_per_million: f64, per_call: f64) -> Price {
        let pd = |dollars: f64| libm::round(dollars * PICO) as u64;
        Price {
            input: pd(input_per_million / 1e6),
            output: pd(output_per_million / 1e6),
            call: pd(per_call),
        }
    }

    /// Whether anything is priced.
    pub fn is_free(&self) -> bool {
        *self == Price::default()
    }

    /// An attempt that reached the server and read `input` tokens and generated `output`:
    /// exact, in u128 (a price is at most 10¹⁸ pd, a token count at most 2⁶⁴).
    pub fn of(&self, input: u64, output: u64) -> u128 {
        u128::from(self.call)
            + u128::from(input) * u128::from(self.input)
            + u128::from(output) * u128::from(self.output)
    }

    /// The price of one attempt with `input` and `output` tokens, in dollars.
    pub fn dollars(&self, input: f64, output: f64) -> f64 {
        (self.call as f64 + input * self.input as f64 + output * self.output as f64) / PICO
    }
}

/// What one intent (or a tool's intents together) was billed, in picodollars and tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bill<T> {
    /// Everything billed.
    pub cost: T,
    /// Billed to attempts after a call's first billed one: what retries added to the bill.
    pub retries: T,
    /// Billed to work whose result the client never used: a completion or an effect beyond
    /// the one it got (a lost reply, a reply after its timeout, a broken stream started over).
    pub wasted: T,
    /// Tokens read and generated, over every billed attempt.
    pub input_tokens: T,
    pub output_tokens: T,
    /// Billed to attempts a replacement sent after its worker crashed or its lease lapsed, and
    /// their tokens read and generated: the work a takeover made the agent redo.
    pub redone: T,
    pub redone_tokens: T,
}

/// One intent's bill, in u128: one call's bill can pass 2⁶⁴ picodollars ($1.8·10⁷).
pub type IntentBill = Bill<u128>;

/// The bills of many intents. Every sum is exact below 2¹²⁸ picodollars ($3.4·10²⁶) and
/// tokens, and stops there (saturates) rather than wrap: no run a machine can finish comes near.
pub type BillTotals = Bill<u128>;

impl IntentBill {
    /// Adds an attempt's charge: `input` and `output` tokens for `cost`, `retry` where an
    /// attempt of the call was billed before.
    pub fn charge(&mut self, cost: u128, (input, output): (u64, u64), retry: bool) {
        self.cost = self.cost.saturating_add(cost);
        if retry {
            self.retries = self.retries.saturating_add(cost);
        }
        self.input_tokens = self.input_tokens.saturating_add(u128::from(input));
        self.output_tokens = self.output_tokens.saturating_add(u128::from(output));
    }

    /// Marks the charge just added, `cost` for `tokens` read and generated, as a replacement's:
    /// work redone after a takeover.
    pub fn redid(&mut self, cost: u128, tokens: u128) {
        self.redone = self.redone.saturating_add(cost);
        self.redone_tokens = self.redone_tokens.saturating_add(tokens);
    }

    /// This bill and `later`'s, as one call's.
    pub fn then(&self, later: &IntentBill) -> IntentBill {
        let mut both = *self;
        both.add(later);
        both
    }
}

impl BillTotals {
    /// Adds an intent's bill, or another total's.
    pub fn add(&mut self, other: &Bill<u128>) {
        self.cost = self.cost.saturating_add(other.cost);
        self.retries = self.retries.saturating_add(other.retries);
        self.wasted = self.wasted.saturating_add(other.wasted);
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.redone = self.redone.saturating_add(other.redone);
        self.redone_tokens = self.redone_tokens.saturating_add(other.redone_tokens);
    }

    /// Picodollars as dollars.
    pub fn dollars(pd: u128) -> f64 {
        pd as f64 / PICO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_per_million_tokens_are_whole_picodollars_a_token() {
        let p = Price::quoted(2.5, 10.0, 0.0);
        assert_eq!((p.input, p.output), (2_500_000, 10_000_000));
        // 1 200 tokens in and 300 out: $0.003 + $0.003.
        assert_eq!(p.of(1_200, 300), 6_000_000_000);
        assert!((p.dollars(1_200.0, 300.0) - 0.006).abs() < 1e-15);
        let cheap = Price::quoted(0.075, 0.3, 0.0);
        assert_eq!(cheap.input, 75_000);
        assert_eq!(Price::quoted(0.0, 0.0, 0.01).call, 10_000_000_000);
        assert!(Price::default().is_free() && !cheap.is_free());
    }

    #[test]
    fn a_bill_sums_its_charges_and_a_total_sums_bills_exactly() {
        let mut bill = IntentBill::default();
        bill.charge(100, (10, 5), false);
        bill.charge(40, (10, 2), true);
        assert_eq!((bill.cost, bill.retries), (140, 40));
        assert_eq!((bill.input_tokens, bill.output_tokens), (20, 7));
        assert_eq!(bill.then(&bill).cost, 280);
        let mut total = BillTotals::default();
        for _ in 0..3 {
            total.add(&bill);
        }
        let mut twice = total;
        twice.add(&total);
        assert_eq!(twice.cost, 840);
        assert_eq!(twice.output_tokens, 42);
    }
}
