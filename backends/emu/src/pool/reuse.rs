//! The reuse decision (contract §4): which block serves an allocation of `len` bytes on
//! stream B, in the contract's order. Rules a and b are always on; c, d and e each need
//! their flag ([`ReuseFlags`]); f takes fresh address space. Among the blocks a rule
//! allows, the best fit wins: the smallest block, then the lowest address.
//!
//! The profile (contract §12) decides here too: on `cann-open` rules a-e are off, so every
//! allocation takes fresh address space (rule f) and cached blocks come back only through
//! `trim_to`. [`Rules`] folds the profile and the flags into one mask, set when the pool
//! is created and when a flag changes, so the hot path tests one bit per rule.
//!
//! [`choose`] reads the rules top to bottom. It runs under the pool state lock and takes
//! the allocating stream's state lock for rules b-e (they read its clock, and rule e
//! extends it and inserts a wait): the lock order is pool state, then stream state.

use super::blocks::{BlockId, Blocks, Pick};
use crate::stream::StreamShared;
use mempool_hal::{Profile, Result, ReuseFlags};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Which rule of [contract §4](mempool_hal::contract::allocation) served an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReuseRule {
    /// a. A block freed on the same stream.
    SameStream,
    /// b. A block whose free the host has observed complete.
    KnownComplete,
    /// c. A block whose free is ordered before this stream through events
    ///    (`ReuseFollowEventDependencies`).
    EventDependency,
    /// d. A block whose free had already executed (`ReuseAllowOpportunistic`).
    Opportunistic,
    /// e. Any cached block, with a wait inserted (`ReuseAllowInternalDependencies`).
    InternalDependency,
    /// f. Fresh address space.
    Fresh,
}

impl ReuseRule {
    /// Whether a pool with the reuse flags `flags` may serve an allocation by this rule:
    /// rules a, b and f always, c, d and e only with their flag.
    pub fn allowed_by(self, flags: ReuseFlags) -> bool {
        match self {
            ReuseRule::SameStream | ReuseRule::KnownComplete | ReuseRule::Fresh => true,
            ReuseRule::EventDependency => flags.follow_event_dependencies,
            ReuseRule::Opportunistic => flags.opportunistic,
            ReuseRule::InternalDependency => flags.internal_dependencies,
        }
    }
}

impl fmt::Display for ReuseRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReuseRule::SameStream => "same stream",
            ReuseRule::KnownComplete => "known complete",
            ReuseRule::EventDependency => "event dependency",
            ReuseRule::Opportunistic => "opportunistic",
            ReuseRule::InternalDependency => "internal dependency",
            ReuseRule::Fresh => "fresh",
        })
    }
}

/// How many allocations each reuse rule served, in rule order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReuseCounts {
    /// Rule a: same stream.
    pub same_stream: u64,
    /// Rule b: free observed complete by the host.
    pub known_complete: u64,
    /// Rule c: free ordered before through events.
    pub event_dependency: u64,
    /// Rule d: free already executed.
    pub opportunistic: u64,
    /// Rule e: the pool inserted a wait.
    pub internal_dependency: u64,
    /// Rule f: fresh address space.
    pub fresh: u64,
}

impl ReuseCounts {
    pub(crate) fn bump(&mut self, rule: ReuseRule) {
        match rule {
            ReuseRule::SameStream => self.same_stream += 1,
            ReuseRule::KnownComplete => self.known_complete += 1,
            ReuseRule::EventDependency => self.event_dependency += 1,
            ReuseRule::Opportunistic => self.opportunistic += 1,
            ReuseRule::InternalDependency => self.internal_dependency += 1,
            ReuseRule::Fresh => self.fresh += 1,
        }
    }
}

/// Which of rules a-e a pool may use: its profile and reuse flags folded into one mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rules(u8);

impl Rules {
    const SAME_STREAM: u8 = 1 << 0;
    const KNOWN_COMPLETE: u8 = 1 << 1;
    const EVENT_DEPENDENCY: u8 = 1 << 2;
    const OPPORTUNISTIC: u8 = 1 << 3;
    const INTERNAL_DEPENDENCY: u8 = 1 << 4;

    /// The rules of a pool with `profile` and `flags`.
    pub(crate) fn new(profile: Profile, flags: ReuseFlags) -> Rules {
        // cann-open (contract §12): no reuse at all, whatever the flags say.
        if !profile.reuses() {
            return Rules(0);
        }
        let mut m = Rules::SAME_STREAM | Rules::KNOWN_COMPLETE;
        if flags.follow_event_dependencies {
            m |= Rules::EVENT_DEPENDENCY;
        }
        if flags.opportunistic {
            m |= Rules::OPPORTUNISTIC;
        }
        if flags.internal_dependencies {
            m |= Rules::INTERNAL_DEPENDENCY;
        }
        Rules(m)
    }

    /// Whether rule a is on (the same-stream fast path, `lanes.rs`).
    pub(crate) fn has_same_stream(self) -> bool {
        self.has(Rules::SAME_STREAM)
    }

    #[inline]
    fn has(self, rule: u8) -> bool {
        self.0 & rule != 0
    }
}

/// What serves an allocation.
pub(crate) enum Choice {
    /// A cached block, by rules a-e.
    Cached(ReuseRule, Pick),
    /// A free range of address space, by rule f (its memory is not committed yet).
    Fresh(BlockId),
    /// Nothing: the pool is out of memory.
    Exhausted,
}

/// Chooses the block for an allocation of `len` bytes (a multiple of the granularity) on
/// stream `b`, in the order of contract §4, by the `rules` the pool's profile and flags
/// allow. The caller holds the pool state lock and carves the chosen block. Rule e makes `b` wait for the
/// block's free when it has not executed yet (a wait that outlasts `wait_timeout` does not
/// end: `b`'s synchronizations time out meanwhile).
pub(crate) fn choose(
    blocks: &Blocks,
    len: u64,
    b: &Arc<StreamShared>,
    rules: Rules,
    wait_timeout: Duration,
) -> Result<Choice> {
    // a) A block freed on the same stream.
    if rules.has(Rules::SAME_STREAM) {
        if let Some(block) = blocks.same_stream(len, b.id) {
            return Ok(Choice::Cached(ReuseRule::SameStream, block));
        }
    }
    // Rule b is on whenever any of b-e is (it is off only on cann-open, with all of them).
    if rules.has(Rules::KNOWN_COMPLETE) && blocks.has_other_bins(b.id) {
        // Rules b-e read (and rule e extends) B's clock: the stream state lock, taken
        // under the pool state lock.
        let mut st = b.state();
        // b) A block whose free the host has observed complete.
        if let Some(block) = blocks.best_other(len, b.id, |f, n| f.host_known() >= n.free_pos()) {
            return Ok(Choice::Cached(ReuseRule::KnownComplete, block));
        }
        // c) A block whose free B is ordered after through events.
        if rules.has(Rules::EVENT_DEPENDENCY) {
            let clock = st.clock();
            if let Some(block) = blocks.best_other(len, b.id, |f, n| clock.get(f.id) >= n.free_pos()) {
                return Ok(Choice::Cached(ReuseRule::EventDependency, block));
            }
        }
        // d) A block whose free has already executed, ordered or not.
        if rules.has(Rules::OPPORTUNISTIC) {
            if let Some(block) = blocks.best_other(len, b.id, |f, n| n.executed(f)) {
                return Ok(Choice::Cached(ReuseRule::Opportunistic, block));
            }
        }
        // e) Any cached block: B is ordered after the free from now on, and waits for it
        //    when it has not executed yet.
        if rules.has(Rules::INTERNAL_DEPENDENCY) {
            if let Some(block) = blocks.best_other(len, b.id, |_, _| true) {
                let (src, tags) = blocks.cached_tags(block);
                if let Some(clock) = st.clock().merged(&tags.clock, (src.id, tags.pos)) {
                    b.set_clock_locked(&mut st, clock);
                }
                if src.completed() < tags.dep_real {
                    let target = tags.dep_real;
                    b.push_wait_locked(&mut st, src, target, wait_timeout)?;
                }
                return Ok(Choice::Cached(ReuseRule::InternalDependency, block));
            }
        }
    }
    // f) Fresh address space (on cann-open, the only rule).
    Ok(blocks.fresh(len).map_or(Choice::Exhausted, Choice::Fresh))
}
