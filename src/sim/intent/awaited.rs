//! The attempts a client still waits on, as a bit set over a window of attempt numbers.

/// The attempts a client is waiting on: a primary and its hedge, or under staggered hedging
/// every attempt out; as bits from the oldest awaited, which a later attempt never precedes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Awaited {
    base: u32,
    bits: u64,
}

const _: () = assert!(Awaited::MAX == u64::BITS);

impl Awaited {
    /// The most attempts awaited at once.
    const MAX: u32 = crate::policy::hedge::MOST_OUT;

    pub fn contains(&self, attempt: u32) -> bool {
        attempt >= self.base
            && attempt - self.base < Self::MAX
            && self.bits >> (attempt - self.base) & 1 == 1
    }

    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The attempts awaited, oldest first.
    pub fn attempts(self) -> impl Iterator<Item = u32> {
        let mut bits = self.bits;
        std::iter::from_fn(move || {
            let offset = (bits != 0).then(|| bits.trailing_zeros())?;
            bits &= bits - 1;
            Some(self.base + offset)
        })
    }

    pub(super) fn add(&mut self, attempt: u32) {
        if self.bits == 0 {
            self.base = attempt;
        }
        let offset = attempt - self.base;
        assert!(
            offset < Self::MAX,
            "at most {} attempts awaited at once",
            Self::MAX
        );
        self.bits |= 1 << offset;
    }

    pub(super) fn remove(&mut self, attempt: u32) {
        if self.contains(attempt) {
            self.bits &= !(1 << (attempt - self.base));
            if self.bits != 0 {
                let skip = self.bits.trailing_zeros();
                self.bits >>= skip;
                self.base += skip;
            }
        }
    }
}
