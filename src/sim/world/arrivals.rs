//! The workload's arrivals: their random streams, and the tasks that came and wait for a
//! client.

use super::{Event, World};
use crate::engine::Scheduler;
use crate::engine::rng::{Source, Stream, Streams, word};
use crate::metrics::{AttemptRecord, IntentRecord};
use crate::variate::integer_in;

/// The workload's arrivals: their streams, and the tasks that came and wait for a client.
pub(super) struct Arrivals {
    pub(super) stream: Stream,
    /// The exact time of the last arrival of a scheduled stream, before rounding to a tick.
    pub(super) clock: f64,
    /// Which caller each task comes from, drawn as tasks start (only with several callers).
    pub(super) callers: Stream,
    /// Tasks arrived so far; tasks `started..arrived` wait for a client.
    pub(super) arrived: u64,
    pub(super) started: u64,
    pub(super) idle_clients: u32,
}

impl Arrivals {
    pub(super) fn new(streams: Streams, clients: u32) -> Self {
        Arrivals {
            stream: streams.stream(Source::Arrivals, 0),
            clock: 0.0,
            callers: streams.stream(Source::Callers, 0),
            arrived: 0,
            started: 0,
            idle_clients: clients,
        }
    }
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Schedules the next task, unless the stream has ended: its rate fell to zero for good,
    /// or the next would come after the workload's duration.
    pub(super) fn schedule_arrival(&mut self, sched: &mut Scheduler<Event>) {
        let w = word(&mut self.arrivals.stream);
        let next = self.workload.arrival.next(
            (sched.now(), self.arrivals.arrived),
            &mut self.arrivals.clock,
            w,
        );
        if let Some(at) = next.filter(|&at| self.workload.duration.is_none_or(|d| at < d)) {
            sched.schedule_at(at, Event::Arrival);
        }
    }

    pub(super) fn on_arrival(&mut self, sched: &mut Scheduler<Event>) {
        self.arrivals.arrived += 1;
        if self
            .workload
            .tasks
            .is_none_or(|n| self.arrivals.arrived < n)
        {
            self.schedule_arrival(sched);
        }
        self.start_waiting_tasks(sched);
    }

    /// Starts waiting tasks while a client is idle. A task that ends at once (a call refused
    /// without being sent) frees its client inside this loop, so however many end in one tick
    /// the stack stays flat: what would be a call one frame deeper is the loop's next turn, in
    /// the same order.
    pub(super) fn start_waiting_tasks(&mut self, sched: &mut Scheduler<Event>) {
        while self.arrivals.idle_clients > 0 && self.arrivals.started < self.arrivals.arrived {
            self.arrivals.idle_clients -= 1;
            self.arrivals.started += 1;
            let caller = match self.workload.callers {
                1 => 0,
                n => integer_in(word(&mut self.arrivals.callers), 0, u64::from(n) - 1) as u32,
            };
            let task = self.arrivals.started - 1;
            let next = match (self.plan.stages, &self.workload.agent) {
                (Some(_), _) => self.start_task_stage(task, 0, caller, sched),
                (None, Some(_)) => self.start_loop(task, caller, sched),
                (None, None) => self.start_intent(task, 0, caller, sched),
            };
            if self.follow(next, sched) {
                self.arrivals.idle_clients += 1;
            }
        }
    }
}
