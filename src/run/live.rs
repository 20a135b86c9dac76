//! The points a run holds: each made from the config when a job first needs it, shared by the
//! workers running its jobs, and dropped once a job of a later point is handed on, so a sweep
//! of any number of points holds only the few its running jobs are at. One worker or many,
//! and a merge of shards, all take their points from here.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::sweep::{Point, Sweep};

pub struct Live<'a> {
    sweep: &'a Sweep,
    made: Mutex<BTreeMap<usize, Arc<Point>>>,
}

impl<'a> Live<'a> {
    pub fn new(sweep: &'a Sweep) -> Self {
        Live {
            sweep,
            made: Mutex::new(BTreeMap::new()),
        }
    }

    /// Point `index`, made now if no job has needed it yet. The lock is not held while it is
    /// made: two workers may both make it, and the first to finish is kept (they are equal).
    pub fn get(&self, index: usize) -> Arc<Point> {
        if let Some(point) = self.lock().get(&index) {
            return Arc::clone(point);
        }
        let point = Arc::new(self.sweep.point(index));
        Arc::clone(self.lock().entry(index).or_insert(point))
    }

    /// Drops every point before `index`: jobs are handed on in order, so once one of point
    /// `index` is, none before it is needed again.
    pub fn release_before(&self, index: usize) {
        let mut made = self.lock();
        *made = made.split_off(&index);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, Arc<Point>>> {
        self.made
            .lock()
            .expect("no worker panics holding the points")
    }
}
