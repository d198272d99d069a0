//! What a run did, counted per operation and per reuse rule.

use super::*;

/// Operation counters of one worker (summed over workers and rounds).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Ops {
    pub(crate) allocs: u64,
    pub(crate) frees: u64,
    pub(crate) oom: u64,
    pub(crate) oom_skipped: u64,
    pub(crate) h2d: u64,
    pub(crate) memsets: u64,
    pub(crate) d2h: u64,
    pub(crate) host_fns: u64,
    pub(crate) verifies: u64,
    pub(crate) records: u64,
    pub(crate) waits: u64,
    pub(crate) stream_syncs: u64,
    pub(crate) event_syncs: u64,
    pub(crate) device_syncs: u64,
    pub(crate) queries: u64,
    pub(crate) stats_reads: u64,
    pub(crate) attr_sets: u64,
    pub(crate) trims: u64,
    pub(crate) trims_refused: u64,
    pub(crate) panics: u64,
    pub(crate) panics_reported: u64,
    /// Statistics snapshots read by the snapshot reader (not counted in `total`).
    pub(crate) snapshots: u64,
    /// Allocations per rule, in [`rule_index`] order.
    pub(crate) rules: [u64; 6],
}

impl Ops {
    pub(crate) fn add(&mut self, o: &Ops) {
        let fields = [
            (&mut self.allocs, o.allocs),
            (&mut self.frees, o.frees),
            (&mut self.oom, o.oom),
            (&mut self.oom_skipped, o.oom_skipped),
            (&mut self.h2d, o.h2d),
            (&mut self.memsets, o.memsets),
            (&mut self.d2h, o.d2h),
            (&mut self.host_fns, o.host_fns),
            (&mut self.verifies, o.verifies),
            (&mut self.records, o.records),
            (&mut self.waits, o.waits),
            (&mut self.stream_syncs, o.stream_syncs),
            (&mut self.event_syncs, o.event_syncs),
            (&mut self.device_syncs, o.device_syncs),
            (&mut self.queries, o.queries),
            (&mut self.stats_reads, o.stats_reads),
            (&mut self.attr_sets, o.attr_sets),
            (&mut self.trims, o.trims),
            (&mut self.trims_refused, o.trims_refused),
            (&mut self.panics, o.panics),
            (&mut self.panics_reported, o.panics_reported),
            (&mut self.snapshots, o.snapshots),
        ];
        for (mine, theirs) in fields {
            *mine += theirs;
        }
        for (mine, theirs) in self.rules.iter_mut().zip(o.rules) {
            *mine += theirs;
        }
    }

    /// Calls on a pool: allocations (failed ones included), frees, trims, attribute
    /// reads and writes.
    pub(crate) fn pool_ops(&self) -> u64 {
        self.allocs + self.oom + self.frees + self.trims + self.attr_sets + self.stats_reads
    }

    pub(crate) fn total(&self) -> u64 {
        self.pool_ops()
            + self.h2d
            + self.memsets
            + self.d2h
            + self.host_fns
            + self.records
            + self.waits
            + self.stream_syncs
            + self.event_syncs
            + self.device_syncs
            + self.queries
    }
}

impl fmt::Display for Ops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.rules;
        write!(
            f,
            "{} operations, {} on pools: {} allocs ({} out of memory, {} given up), {} frees, {} trims ({} refused), \
             {} attribute writes, {} statistics reads; copies: {} h2d, {} memsets, {} d2h; {} host functions \
             ({} signature checks, {} panics); {} event records, {} waits, {} queries; syncs: {} stream, {} event, \
             {} device; reuse: same stream {}, known complete {}, event dependency {}, opportunistic {}, \
             internal {}, fresh {}; {} statistics snapshots by the reader",
            self.total(),
            self.pool_ops(),
            self.allocs,
            self.oom,
            self.oom_skipped,
            self.frees,
            self.trims,
            self.trims_refused,
            self.attr_sets,
            self.stats_reads,
            self.h2d,
            self.memsets,
            self.d2h,
            self.host_fns,
            self.verifies,
            self.panics,
            self.records,
            self.waits,
            self.queries,
            self.stream_syncs,
            self.event_syncs,
            self.device_syncs,
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            self.snapshots,
        )
    }
}

pub(crate) fn rule_index(rule: ReuseRule) -> usize {
    match rule {
        ReuseRule::SameStream => 0,
        ReuseRule::KnownComplete => 1,
        ReuseRule::EventDependency => 2,
        ReuseRule::Opportunistic => 3,
        ReuseRule::InternalDependency => 4,
        ReuseRule::Fresh => 5,
    }
}

pub(crate) fn counts_array(c: ReuseCounts) -> [u64; 6] {
    [c.same_stream, c.known_complete, c.event_dependency, c.opportunistic, c.internal_dependency, c.fresh]
}
