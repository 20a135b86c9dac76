//! A server's capacity: how many requests it works on at once, and the line the rest wait in —
//! served first come first served or last come first served, and bounded or not. A retry sent
//! the moment its attempt timed out can wait here behind the very work it abandoned; a request
//! that finds the line full is turned away at the door.

use std::collections::VecDeque;

/// Which request in line a freed worker takes up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineOrder {
    /// The one that has waited longest.
    Fifo,
    /// The one that arrived last: fresh work first, so a request whose client has given up
    /// waits behind the ones still wanted (the discipline studies of overload recommend).
    Lifo,
}

impl LineOrder {
    pub const ALL: [LineOrder; 2] = [LineOrder::Fifo, LineOrder::Lifo];

    pub fn name(self) -> &'static str {
        match self {
            LineOrder::Fifo => "fifo",
            LineOrder::Lifo => "lifo",
        }
    }
}

/// The line in front of a server's workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    /// The most requests that may wait; `None`: no limit.
    pub limit: Option<u32>,
    pub order: LineOrder,
}

impl Line {
    /// Today's line: unbounded, first come first served.
    pub const UNBOUNDED: Line = Line {
        limit: None,
        order: LineOrder::Fifo,
    };
}

/// What became of a request at the door.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door<T> {
    /// A worker took it up at once.
    Served(T),
    /// It waits in line.
    Waiting,
    /// The line was full: turned away.
    Refused(T),
}

/// One tool's server during a run, holding tickets of type `T` for the requests in line.
#[derive(Clone, Debug)]
pub struct Station<T> {
    /// `None`: every request is served at once.
    workers: Option<u32>,
    line: Line,
    busy: u32,
    waiting: VecDeque<T>,
}

impl<T> Station<T> {
    pub fn new(workers: Option<u32>, line: Line) -> Self {
        Station {
            workers,
            line,
            busy: 0,
            waiting: VecDeque::new(),
        }
    }

    /// A request arrives: a worker takes it, it joins the line, or the line is full.
    pub fn arrive(&mut self, ticket: T) -> Door<T> {
        if self.workers.is_none_or(|w| self.busy < w) {
            self.busy += 1;
            return Door::Served(ticket);
        }
        if self
            .line
            .limit
            .is_some_and(|limit| self.waiting.len() >= limit as usize)
        {
            return Door::Refused(ticket);
        }
        self.waiting.push_back(ticket);
        Door::Waiting
    }

    /// Requests being worked on now.
    pub fn in_service(&self) -> u32 {
        self.busy
    }

    /// Requests waiting in line now.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// A worker finishes: the next request in line, which it takes up at once — unless the
    /// workers were cut below the number busy, when the worker leaves instead.
    pub fn finish(&mut self) -> Option<T> {
        let over = self.workers.is_some_and(|w| self.busy > w);
        let next = if over { None } else { self.next_in_line() };
        if next.is_none() {
            self.busy -= 1;
        }
        next
    }

    /// The workers become `workers`: the requests in line that new workers take up at once.
    /// Fewer workers stop no request in service; they take up no more until below the count.
    pub fn set_workers(&mut self, workers: u32) -> Vec<T> {
        self.workers = Some(workers);
        let mut started = Vec::new();
        while self.busy < workers {
            let Some(next) = self.next_in_line() else {
                break;
            };
            self.busy += 1;
            started.push(next);
        }
        started
    }

    fn next_in_line(&mut self) -> Option<T> {
        match self.line.order {
            LineOrder::Fifo => self.waiting.pop_front(),
            LineOrder::Lifo => self.waiting.pop_back(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worker_serves_in_arrival_order() {
        let mut s = Station::new(Some(1), Line::UNBOUNDED);
        assert_eq!(s.arrive('a'), Door::Served('a'));
        assert_eq!(s.arrive('b'), Door::Waiting);
        assert_eq!(s.arrive('c'), Door::Waiting);
        assert_eq!(s.finish(), Some('b'));
        assert_eq!(s.finish(), Some('c'));
        assert_eq!(s.finish(), None);
        assert_eq!(s.arrive('d'), Door::Served('d'));
    }

    #[test]
    fn a_cut_lets_work_in_service_finish_and_a_return_takes_up_the_line() {
        let mut s = Station::new(Some(2), Line::UNBOUNDED);
        assert_eq!(s.arrive('a'), Door::Served('a'));
        assert_eq!(s.arrive('b'), Door::Served('b'));
        assert_eq!(s.arrive('c'), Door::Waiting);
        assert_eq!(s.set_workers(1), Vec::<char>::new());
        // Two busy, one worker: the first to finish leaves; the second takes up the line.
        assert_eq!(s.finish(), None);
        assert_eq!(s.finish(), Some('c'));
        assert_eq!(s.arrive('d'), Door::Waiting);
        assert_eq!(s.arrive('e'), Door::Waiting);
        assert_eq!(s.set_workers(3), vec!['d', 'e']);
        assert_eq!(s.in_service(), 3);
    }

    #[test]
    fn without_a_limit_nothing_waits() {
        let mut s = Station::new(None, Line::UNBOUNDED);
        for t in 0..100 {
            assert_eq!(s.arrive(t), Door::Served(t));
        }
    }

    #[test]
    fn a_full_line_turns_requests_away_and_lifo_serves_the_newest() {
        let line = Line {
            limit: Some(2),
            order: LineOrder::Lifo,
        };
        let mut s = Station::new(Some(1), line);
        assert_eq!(s.arrive('a'), Door::Served('a'));
        assert_eq!(s.arrive('b'), Door::Waiting);
        assert_eq!(s.arrive('c'), Door::Waiting);
        assert_eq!(s.arrive('d'), Door::Refused('d'));
        assert_eq!(s.finish(), Some('c'));
        assert_eq!(s.arrive('e'), Door::Waiting);
        assert_eq!(s.finish(), Some('e'));
        assert_eq!(s.finish(), Some('b'));
        assert_eq!(s.finish(), None);
    }
}
