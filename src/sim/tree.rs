//! What one call of a task set going down the call graph: the calls its services made, their
//! retries and fallbacks, as one tree. A tree lives while any intent in it does — a service's
//! call can only start from an attempt of a live intent of the same tree, so nothing joins a
//! tree once it is empty — and holds what its intents share:
//!
//! - the effects committed at each call site, so that a callee that commits again for a call
//!   its caller made again (the caller's retry) is a duplicate at that layer, not only a
//!   repeat within one intent;
//! - the callee's record of each forwarded idempotency key at each call site, which every
//!   intent carrying that key there meets, whichever attempt above made it (a service that
//!   forwards its request's key makes one per call it makes, as the key joined with the call:
//!   three calls of a fan-out are three operations, not one);
//! - the records of a top-level call that fell back, made one when the tree is done.

use crate::metrics::{IntentRecord, Outcome};
use crate::model::Key;
use crate::model::server::KeyStore;

/// How each attempt of an intent ended, by [`Outcome::index`].
pub type Outcomes = [u32; Outcome::NAMES.len()];

/// The trees of the calls under way, by number; an empty tree's number is used again.
#[derive(Default)]
pub struct Trees {
    trees: Vec<Tree>,
    free: Vec<u32>,
}

#[derive(Default)]
struct Tree {
    /// Intents in the tree that are not yet recorded.
    live: u32,
    /// Effects committed per call site: its edge, its number, the count.
    sites: Vec<(u16, u64, u32)>,
    /// The callee's record of each forwarded key: the tool, the call site, the key, the record.
    keys: Vec<(usize, u64, Key, KeyStore)>,
    /// The top-level intents of a call that fell back: each one's place in the chain, its
    /// record and its attempts' outcomes.
    chain: Vec<(u8, IntentRecord, Outcomes)>,
}

impl Trees {
    /// A new, empty tree.
    pub fn plant(&mut self) -> u32 {
        match self.free.pop() {
            Some(t) => t,
            None => {
                self.trees.push(Tree::default());
                (self.trees.len() - 1) as u32
            }
        }
    }

    /// An intent of tree `t` has started.
    pub fn join(&mut self, t: u32) {
        self.trees[t as usize].live += 1;
    }

    /// An intent of tree `t` is recorded; once none is left, the chain of records of a call
    /// that fell back (empty for one that did not), and the tree is let go.
    pub fn leave(&mut self, t: u32) -> Option<Vec<(u8, IntentRecord, Outcomes)>> {
        let tree = &mut self.trees[t as usize];
        tree.live -= 1;
        if tree.live > 0 {
            return None;
        }
        tree.sites.clear();
        tree.keys.clear();
        let chain = std::mem::take(&mut tree.chain);
        self.free.push(t);
        Some(chain)
    }

    /// An intent at call site `site` of `edge` in tree `t` committed an effect, its first if
    /// `first`: whether another intent at that site had committed before it (a duplicate
    /// that no one intent's count shows).
    pub fn commit(&mut self, t: u32, edge: u16, site: u64, first: bool) -> bool {
        let sites = &mut self.trees[t as usize].sites;
        match sites.iter_mut().find(|s| s.0 == edge && s.1 == site) {
            Some(s) => {
                s.2 += 1;
                first
            }
            None => {
                sites.push((edge, site, 1));
                false
            }
        }
    }

    /// `tool`'s record of the forwarded `key` at call site `site` in tree `t`.
    pub fn store(&mut self, t: u32, tool: usize, site: u64, key: Key) -> &mut KeyStore {
        let keys = &mut self.trees[t as usize].keys;
        let i = match (keys.iter()).position(|k| k.0 == tool && k.1 == site && k.2 == key) {
            Some(i) => i,
            None => {
                keys.push((tool, site, key, KeyStore::default()));
                keys.len() - 1
            }
        };
        &mut keys[i].3
    }

    /// Keeps the record of a top-level intent of tree `t` that fell back, or is a fallback,
    /// at place `tier` in its chain.
    pub fn chain(&mut self, t: u32, tier: u8, record: IntentRecord, outcomes: Outcomes) {
        self.trees[t as usize].chain.push((tier, record, outcomes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_repeats_only_when_another_intent_committed_there_first() {
        let mut trees = Trees::default();
        let t = trees.plant();
        trees.join(t);
        // One intent commits twice: its own count shows the second.
        assert!(!trees.commit(t, 2, 7, true));
        assert!(!trees.commit(t, 2, 7, false));
        // Another intent's first effect at the same site: a duplicate across intents.
        assert!(trees.commit(t, 2, 7, true));
        // Another site, or the same number on another edge, is new.
        assert!(!trees.commit(t, 2, 8, true));
        assert!(!trees.commit(t, 3, 7, true));
    }

    #[test]
    fn an_empty_tree_forgets_and_is_used_again() {
        let mut trees = Trees::default();
        let t = trees.plant();
        trees.join(t);
        trees.join(t);
        trees.commit(t, 0, 1, true);
        let key = Key {
            intent: 1,
            nonce: 0,
        };
        trees.store(t, 0, 5, key);
        assert!(trees.leave(t).is_none());
        assert_eq!(trees.leave(t), Some(Vec::new()));
        let again = trees.plant();
        assert_eq!(again, t);
        trees.join(again);
        assert!(!trees.commit(again, 0, 1, true), "the old site is gone");
        assert_eq!(*trees.store(again, 0, 5, key), KeyStore::default());
    }
}
