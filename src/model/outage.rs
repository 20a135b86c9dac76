//! A tool's outages: windows of simulated time in which its server fails every request that
//! arrives at once, or swallows it without a word.

use crate::time::Tick;

/// One outage: from `from` (included) until `until` (excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    pub from: Tick,
    pub until: Tick,
    pub mode: OutageMode,
    /// The zone whose replicas it takes down together, by index into the tool's zones; `None`:
    /// every server of the tool.
    pub zone: Option<usize>,
}

/// How a server that is down treats a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutageMode {
    /// Answers with a 5xx at once, committing nothing.
    FailFast,
    /// Never answers: the client hears nothing, and learns of it only from a timeout.
    Hang,
}

impl OutageMode {
    pub const ALL: [OutageMode; 2] = [OutageMode::FailFast, OutageMode::Hang];

    pub fn name(self) -> &'static str {
        match self {
            OutageMode::FailFast => "fail_fast",
            OutageMode::Hang => "hang",
        }
    }
}

/// How a request arriving at `now` at a server in `zone` is treated, if it is down then.
pub fn down_at(outages: &[Outage], zone: Option<usize>, now: Tick) -> Option<OutageMode> {
    outages
        .iter()
        .find(|o| o.zone.is_none_or(|z| Some(z) == zone) && o.from <= now && now < o.until)
        .map(|o| o.mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_includes_its_start_and_not_its_end() {
        let outages = [Outage {
            from: Tick(10),
            until: Tick(20),
            mode: OutageMode::Hang,
            zone: None,
        }];
        assert_eq!(down_at(&outages, None, Tick(9)), None);
        assert_eq!(down_at(&outages, None, Tick(10)), Some(OutageMode::Hang));
        assert_eq!(down_at(&outages, Some(1), Tick(19)), Some(OutageMode::Hang));
        assert_eq!(down_at(&outages, None, Tick(20)), None);
    }

    #[test]
    fn a_zone_outage_takes_down_its_zone_only() {
        let outages = [Outage {
            from: Tick(10),
            until: Tick(20),
            mode: OutageMode::FailFast,
            zone: Some(0),
        }];
        assert_eq!(
            down_at(&outages, Some(0), Tick(15)),
            Some(OutageMode::FailFast)
        );
        assert_eq!(down_at(&outages, Some(1), Tick(15)), None);
    }
}
