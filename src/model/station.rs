//! A server's capacity: how many requests it works on at once, and the line the rest wait in,
//! first come first served. A retry sent the moment its attempt timed out can wait here behind
//! the very work it abandoned.

use std::collections::VecDeque;

/// One tool's server during a run, holding tickets of type `T` for the requests in line.
#[derive(Clone, Debug)]
pub struct Station<T> {
    /// `None`: every request is served at once.
    workers: Option<u32>,
    busy: u32,
    line: VecDeque<T>,
}

impl<T> Station<T> {
    pub fn new(workers: Option<u32>) -> Self {
        Station {
            workers,
            busy: 0,
            line: VecDeque::new(),
        }
    }

    /// A request arrives: `Some` if a worker takes it now, else it joins the line.
    pub fn arrive(&mut self, ticket: T) -> Option<T> {
        if self.workers.is_some_and(|w| self.busy >= w) {
            self.line.push_back(ticket);
            return None;
        }
        self.busy += 1;
        Some(ticket)
    }

    /// A worker finishes: the next request in line, which it takes up at once.
    pub fn finish(&mut self) -> Option<T> {
        match self.line.pop_front() {
            Some(next) => Some(next),
            None => {
                self.busy -= 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worker_serves_in_arrival_order() {
        let mut s = Station::new(Some(1));
        assert_eq!(s.arrive('a'), Some('a'));
        assert_eq!(s.arrive('b'), None);
        assert_eq!(s.arrive('c'), None);
        assert_eq!(s.finish(), Some('b'));
        assert_eq!(s.finish(), Some('c'));
        assert_eq!(s.finish(), None);
        assert_eq!(s.arrive('d'), Some('d'));
    }

    #[test]
    fn without_a_limit_nothing_waits() {
        let mut s = Station::new(None);
        for t in 0..100 {
            assert_eq!(s.arrive(t), Some(t));
        }
    }
}
