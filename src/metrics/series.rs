//! What happened at each tool over time, in bins of a fixed width: counts of what happened in
//! each bin (the load offered, first tries and retries, goodput, timeouts, refusals) and the
//! average level over each bin of what the server and the client's gates hold (requests in
//! flight, the line, busy workers, the breaker, the budget). Kept as the events happen, so a run
//! keeps one bin per width of time and tool, whatever the number of intents. A tool with
//! replicas has a track per replica too, of what reached that server (see [`Tracks`]).

use super::Moments;
use crate::time::Tick;
use serde::{Deserialize, Serialize};

/// What an event adds one to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// An intent began: the load the clients offer.
    Offered,
    /// An intent's first attempt went out.
    FirstTry,
    /// A later attempt went out: a retry or a hedge.
    Retry,
    /// An intent succeeded.
    Goodput,
    /// An attempt was abandoned at its timeout.
    Timeout,
    /// A reply refused the attempt for load: a 429 or a 503.
    Rejected,
    /// An attempt reached the tool during one of its outages.
    CallWhileDown,
    /// The breaker refused a call.
    ShortCircuited,
    /// An attempt was answered with a receipt, counted when it was sent: what a trace's
    /// successful calls are, binned by their start (see [`crate::calibrate::replay`]).
    AnsweredBySend,
}

impl Count {
    pub const ALL: [Count; 9] = [
        Count::Offered,
        Count::FirstTry,
        Count::Retry,
        Count::Goodput,
        Count::Timeout,
        Count::Rejected,
        Count::CallWhileDown,
        Count::ShortCircuited,
        Count::AnsweredBySend,
    ];
}

/// A level that holds between events, averaged over each bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Attempts sent whose server has not answered: on the way, in line, in service.
    InFlight,
    /// Requests waiting in the server's line.
    QueueLength,
    /// Requests being worked on.
    BusyWorkers,
    /// 1 while the breaker is open (refusing), else 0; the share of callers' breakers open where
    /// each keeps its own. Set by [`Series::breaker`].
    BreakerOpen,
    /// The retry budget's tokens; the mean over callers where each keeps its own.
    BudgetTokens,
}

impl Level {
    pub const ALL: [Level; 5] = [
        Level::InFlight,
        Level::QueueLength,
        Level::BusyWorkers,
        Level::BreakerOpen,
        Level::BudgetTokens,
    ];
}

/// One bin of one tool in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    pub counts: [u64; Count::ALL.len()],
    /// Each level integrated over the bin: level × ticks.
    areas: [f64; Level::ALL.len()],
}

/// One tool's bins, and each level with the tick it was last set at.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Track {
    bins: Vec<Bin>,
    levels: [(f64, Tick); Level::ALL.len()],
    /// Each breaker's current opening (one per caller where each keeps its own): from when,
    /// until when.
    open: Vec<Option<(Tick, Tick)>>,
    /// Each budget's tokens, and their sum.
    tokens: Vec<f64>,
    token_sum: f64,
}

/// Which track holds what: one per tool, by the tool's index, then one per replica of each
/// tool with replicas, tool by tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tracks {
    /// Per tool, the track of its replica 0 and how many replicas it has (0: one server).
    replicas: Vec<(usize, usize)>,
    len: usize,
}

impl Tracks {
    /// The tracks of tools with `replicas[t]` replicas each (0 for a tool with one server).
    pub fn new(replicas: &[usize]) -> Tracks {
        let mut len = replicas.len();
        let firsts = (replicas.iter())
            .map(|&n| {
                let first = len;
                len += n;
                (first, n)
            })
            .collect();
        Tracks {
            replicas: firsts,
            len,
        }
    }

    /// One track per tool, none per replica.
    pub fn tools(tools: usize) -> Tracks {
        Tracks::new(&vec![0; tools])
    }

    /// The track of `replica` of `tool`; none for a tool with one server.
    pub fn replica(&self, tool: usize, replica: usize) -> Option<usize> {
        let (first, n) = self.replicas[tool];
        (replica < n).then_some(first + replica)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Per track (a tool, or a replica), the bins of `width` ticks from tick 0, as far as anything
/// happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    width: Tick,
    layout: Tracks,
    tools: Vec<Track>,
}

impl Series {
    pub fn new(width: Tick, layout: Tracks) -> Self {
        assert!(width > Tick::ZERO, "validated: a positive width");
        Series {
            width,
            tools: vec![Track::default(); layout.len()],
            layout,
        }
    }

    /// Counts one event of kind `count` at `replica` of `tool`, where the tool has replicas.
    pub fn replica_count(&mut self, tool: usize, replica: usize, at: Tick, count: Count) {
        if let Some(track) = self.layout.replica(tool, replica) {
            self.count(track, at, count);
        }
    }

    /// `level` at `replica` of `tool` is `value` from `at` on, where the tool has replicas.
    pub fn replica_level(
        &mut self,
        (tool, replica): (usize, usize),
        at: Tick,
        level: Level,
        value: f64,
    ) {
        if let Some(track) = self.layout.replica(tool, replica) {
            self.level(track, at, level, value);
        }
    }

    pub fn width(&self) -> Tick {
        self.width
    }

    fn bin(&mut self, tool: usize, i: usize) -> &mut Bin {
        let bins = &mut self.tools[tool].bins;
        if bins.len() <= i {
            bins.resize(i + 1, Bin::default());
        }
        &mut bins[i]
    }

    /// Counts one event of kind `count` at `tool` at tick `at`.
    pub fn count(&mut self, tool: usize, at: Tick, count: Count) {
        let i = (at.0 / self.width.0) as usize;
        self.bin(tool, i).counts[count as usize] += 1;
    }

    /// `level` at `tool` is `value` from tick `at` on.
    pub fn level(&mut self, tool: usize, at: Tick, level: Level, value: f64) {
        let (old, since) = self.tools[tool].levels[level as usize];
        if old == value {
            return;
        }
        self.integrate(tool, level, old, since, at);
        self.tools[tool].levels[level as usize] = (value, at);
    }

    /// Breaker `index` of `shares` at `tool` is open until `until` (`None`: not open) as of
    /// `at`. An opening is known in full when it starts, so its end needs no event of its own.
    pub fn breaker(
        &mut self,
        tool: usize,
        (index, shares): (usize, usize),
        at: Tick,
        until: Option<Tick>,
    ) {
        let open = &mut self.tools[tool].open;
        if open.len() < shares {
            open.resize(shares, None);
        }
        let was = open[index];
        if was.map(|o| o.1) == until {
            return;
        }
        open[index] = until.map(|u| (at, u));
        if let Some((from, to)) = was {
            let weight = 1.0 / shares as f64;
            self.integrate(tool, Level::BreakerOpen, weight, from, to.min(at));
        }
    }

    /// Budget `index` of `shares` at `tool` holds `tokens` from `at` on; the level is their mean.
    pub fn share(&mut self, tool: usize, (index, shares): (usize, usize), at: Tick, tokens: f64) {
        let track = &mut self.tools[tool];
        if track.tokens.len() < shares {
            track.tokens.resize(shares, 0.0);
        }
        track.token_sum += tokens - track.tokens[index];
        track.tokens[index] = tokens;
        let mean = track.token_sum / shares as f64;
        self.level(tool, at, Level::BudgetTokens, mean);
    }

    /// Ends the run at `end`: every level is integrated up to it.
    pub fn close(&mut self, end: Tick) {
        for tool in 0..self.tools.len() {
            let shares = self.tools[tool].open.len();
            for index in 0..shares {
                self.breaker(tool, (index, shares), end, None);
            }
            for level in Level::ALL {
                let (value, since) = self.tools[tool].levels[level as usize];
                self.integrate(tool, level, value, since, end);
                self.tools[tool].levels[level as usize] = (0.0, end);
            }
        }
    }

    /// Adds `value` held from `from` to `to` into the bins it spans.
    fn integrate(&mut self, tool: usize, level: Level, value: f64, from: Tick, to: Tick) {
        if value == 0.0 || to <= from {
            return;
        }
        let w = self.width.0;
        let mut t = from.0;
        while t < to.0 {
            let i = t / w;
            let end = ((i + 1) * w).min(to.0);
            self.bin(tool, i as usize).areas[level as usize] += value * (end - t) as f64;
            t = end;
        }
    }

    /// The bins of `tool`, from tick 0 to the last one anything happened in.
    pub fn bins(&self, tool: usize) -> &[Bin] {
        &self.tools[tool].bins
    }
}

impl Bin {
    /// The average of `level` over a bin of `width` ticks.
    pub fn mean_level(&self, level: Level, width: Tick) -> f64 {
        self.areas[level as usize] / width.0 as f64
    }
}

/// The bins of many runs of one configuration, each value's mean and spread across the runs.
/// Folded in replication order, so the result never depends on the thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesStats {
    width: Tick,
    runs: u64,
    /// Per tool, per bin: each count, then each level's mean over the bin, then the attempts
    /// sent ([`SENT`]).
    tools: Vec<Vec<[Moments; SLOTS]>>,
}

/// The slot of a bin's attempts sent, first tries and later ones together: their spread is the
/// sum's, which the two counts' spreads are not where one moves with the other (a policy that
/// retries sends more retries in a bin of more first tries).
const SENT: usize = Count::ALL.len() + Level::ALL.len();
const SLOTS: usize = SENT + 1;

impl SeriesStats {
    pub fn new(width: Tick) -> Self {
        SeriesStats {
            width,
            runs: 0,
            tools: Vec::new(),
        }
    }

    pub fn width(&self) -> Tick {
        self.width
    }

    /// Folds in the next run. A bin one run has and others lack counts zero in those.
    pub fn add(&mut self, run: &Series) {
        let zeros = [Moments::zeros(self.runs); SLOTS];
        if self.tools.len() < run.tools.len() {
            self.tools.resize(run.tools.len(), Vec::new());
        }
        let longest = run.tools.iter().map(|t| t.bins.len()).max().unwrap_or(0);
        for (t, stats) in self.tools.iter_mut().enumerate() {
            if stats.len() < longest {
                stats.resize(longest, zeros);
            }
            let bins = run.tools.get(t).map_or(&[][..], |track| &track.bins[..]);
            for (i, slot) in stats.iter_mut().enumerate() {
                let bin = bins.get(i).copied().unwrap_or_default();
                for (k, count) in bin.counts.iter().enumerate() {
                    slot[k].push(*count as f64);
                }
                for level in Level::ALL {
                    slot[Count::ALL.len() + level as usize].push(bin.mean_level(level, self.width));
                }
                let sent = bin.counts[Count::FirstTry as usize] + bin.counts[Count::Retry as usize];
                slot[SENT].push(sent as f64);
            }
        }
        self.runs += 1;
    }

    /// Bins kept for `tool`.
    pub fn len(&self, tool: usize) -> usize {
        self.tools.get(tool).map_or(0, Vec::len)
    }

    /// Across the runs, bin `i` of `tool`: count `c`'s values.
    pub fn count(&self, tool: usize, i: usize, c: Count) -> Moments {
        self.get(tool, i, c as usize)
    }

    /// Across the runs, bin `i` of `tool`: the attempts sent, first tries and later ones.
    pub fn sent(&self, tool: usize, i: usize) -> Moments {
        self.get(tool, i, SENT)
    }

    /// Across the runs, bin `i` of `tool`: the mean levels of `level`.
    pub fn level(&self, tool: usize, i: usize, level: Level) -> Moments {
        self.get(tool, i, Count::ALL.len() + level as usize)
    }

    fn get(&self, tool: usize, i: usize, k: usize) -> Moments {
        (self.tools.get(tool).and_then(|bins| bins.get(i)))
            .map_or(Moments::zeros(self.runs), |slot| slot[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Sample;

    #[test]
    fn each_tools_replicas_have_tracks_after_every_tool() {
        let tracks = Tracks::new(&[0, 3, 2]);
        assert_eq!(tracks.len(), 3 + 5);
        assert_eq!(tracks.replica(0, 0), None);
        let second: Vec<Option<usize>> = (0..4).map(|r| tracks.replica(1, r)).collect();
        assert_eq!(second, [Some(3), Some(4), Some(5), None]);
        assert_eq!(tracks.replica(2, 1), Some(7));
        let mut series = Series::new(Tick(10), tracks);
        series.replica_count(0, 0, Tick(1), Count::FirstTry);
        series.replica_count(2, 1, Tick(1), Count::FirstTry);
        assert!(
            series.bins(0).is_empty(),
            "a one-server tool has no replica track"
        );
        assert_eq!(series.bins(7)[0].counts[Count::FirstTry as usize], 1);
    }

    #[test]
    fn events_fall_in_their_bin_and_levels_average_over_it() {
        let mut one = Series::new(Tick(10), Tracks::tools(2));
        one.count(0, Tick(0), Count::FirstTry);
        one.count(0, Tick(9), Count::FirstTry);
        one.count(0, Tick(10), Count::Goodput);
        one.count(1, Tick(35), Count::ShortCircuited);
        // 4 requests in line from tick 5 to tick 25, then 2 until the end at 30.
        one.level(0, Tick(5), Level::QueueLength, 4.0);
        one.level(0, Tick(25), Level::QueueLength, 2.0);
        one.close(Tick(30));
        let bins = one.bins(0);
        assert_eq!(bins.len(), 3);
        assert_eq!(bins[0].counts[Count::FirstTry as usize], 2);
        assert_eq!(bins[1].counts[Count::Goodput as usize], 1);
        let line: Vec<f64> = bins
            .iter()
            .map(|b| b.mean_level(Level::QueueLength, Tick(10)))
            .collect();
        assert_eq!(line, [2.0, 4.0, 3.0]);
        assert_eq!(one.bins(1).len(), 4);
    }

    /// Two runs of different lengths: the shorter one counts zero in the bins it lacks, so the
    /// mean over runs is half the longer one's count there, with a spread to show for it.
    #[test]
    fn runs_fold_with_zeros_where_one_ended() {
        let mut short = Series::new(Tick(10), Tracks::tools(1));
        short.count(0, Tick(3), Count::Offered);
        let mut long = Series::new(Tick(10), Tracks::tools(1));
        long.count(0, Tick(3), Count::Offered);
        long.count(0, Tick(23), Count::Offered);
        for order in [[&short, &long], [&long, &short]] {
            let mut stats = SeriesStats::new(Tick(10));
            order.iter().for_each(|run| stats.add(run));
            assert_eq!(stats.count(0, 0, Count::Offered).count(), 2);
            assert_eq!(stats.len(0), 3);
            assert_eq!(stats.count(0, 0, Count::Offered).mean(), 1.0);
            assert_eq!(stats.count(0, 0, Count::Offered).variance(), 0.0);
            assert_eq!(stats.count(0, 2, Count::Offered).mean(), 0.5);
            assert_eq!(stats.count(0, 2, Count::Offered).variance(), 0.5);
        }
    }
}
