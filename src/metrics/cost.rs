//! What a configuration's tasks cost, replication by replication: each replication's bill per
//! task is one observation, so the interval is across replications, as the makespan's is.

use super::{Moments, Totals};
use crate::model::price::{Bill, BillTotals};

/// Each replication's cost per task, per successful task, of retries and wasted, in dollars.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Costs {
    pub per_task: Moments,
    /// The whole bill over the tasks that succeeded: what each success costs, failures' spend
    /// included.
    pub per_success: Moments,
    pub retries: Moments,
    pub wasted: Moments,
    /// Tokens read and generated per task.
    pub input_tokens: Moments,
    pub output_tokens: Moments,
    /// Whether any replication billed anything.
    pub billed: bool,
}

/// What one run's calls were billed, over every tool.
pub fn bill(totals: &Totals) -> BillTotals {
    let mut bill = BillTotals::default();
    for tool in &totals.tools {
        bill.add(&tool.bill);
    }
    bill
}

impl Costs {
    /// Folds in one replication's totals.
    pub fn add(&mut self, totals: &Totals) {
        let bill = bill(totals);
        let tasks = totals.tasks.max(1) as f64;
        let per_task = |x: u128| BillTotals::dollars(x) / tasks;
        self.per_task.push(per_task(bill.cost));
        self.per_success.push(match totals.tasks_succeeded {
            0 => f64::INFINITY,
            n => BillTotals::dollars(bill.cost) / n as f64,
        });
        self.retries.push(per_task(bill.retries));
        self.wasted.push(per_task(bill.wasted));
        self.input_tokens.push(bill.input_tokens as f64 / tasks);
        self.output_tokens.push(bill.output_tokens as f64 / tasks);
        self.billed |= bill != Bill::default();
    }
}
