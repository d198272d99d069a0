//! The small-block layer against a simple model, for random programs on two streams of the
//! emulator with its stream-order checker on: every program is correct (memsets on the
//! allocating stream, cross-stream frees ordered through an event), so the checker must
//! refuse nothing; live ranges never overlap, are aligned and lie in pool memory; the
//! layer's counters match the model's, the pool's USED is exactly what the layer holds; and
//! after every range is freed and the device synchronized, every byte goes back.
//!
//! The fast slice uses a fixed seed; `PROPTEST_CASES` (as `cargo xtask soak` sets it) asks
//! for more cases with a random seed.

use mempool_emu::{EmuStream, Emulator, ExecutionMode};
use mempool_hal::{Device, DevicePtr, ErrorKind, MemPool, MemPoolExt, PoolProps, Result};
use mempool_small::{ALIGN, SmallBlocks};
use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestRunner};
use std::collections::BTreeMap;

const MIB: u64 = 1 << 20;
const POOL: u64 = 256 * MIB;

#[derive(Debug, Clone)]
enum Op {
    Alloc {
        stream: usize,
        size: u64,
    },
    /// Frees the `idx % live`-th live allocation, on its own stream or on the other one.
    Free {
        idx: usize,
        other_stream: bool,
    },
    Memset {
        idx: usize,
    },
    Sync,
    Release,
}

/// Operations for a layer with `threshold`; sizes reach `max`.
fn op(threshold: u64, max: u64) -> impl Strategy<Value = Op> {
    let size = prop_oneof![
        4 => 1u64..=4096,
        3 => 4097u64..=MIB,
        2 => MIB + 1..=threshold.min(max),
        1 => threshold.min(max - 1) + 1..=max,
    ];
    prop_oneof![
        5 => (0usize..2, size).prop_map(|(stream, size)| Op::Alloc { stream, size }),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(idx, other_stream)| Op::Free { idx, other_stream }),
        1 => any::<usize>().prop_map(|idx| Op::Memset { idx }),
        1 => Just(Op::Sync),
        1 => Just(Op::Release),
    ]
}

#[derive(Debug, Clone, Copy)]
struct Live {
    size: u64,
    stream: usize,
}

fn free_on(l: &SmallBlocks<'_, Emulator>, p: DevicePtr, s: &EmuStream) -> Result<()> {
    // SAFETY: every use of `p` (memsets on its allocating stream) is ordered before this
    // free: on the same stream, or through the event the caller recorded and waited on.
    unsafe { l.free_async(p, s) }
}

fn check(l: &SmallBlocks<'_, Emulator>, live: &BTreeMap<u64, Live>, high: u64) -> std::result::Result<(), String> {
    let mut end = 0;
    for (&addr, v) in live {
        if addr < end {
            return Err(format!("ranges overlap at {addr:#x}"));
        }
        end = addr + v.size;
    }
    let st = l.small_stats();
    let requested: u64 = live.values().map(|v| v.size).sum();
    if (st.requested_current, st.requested_high) != (requested, high) {
        return Err(format!("requested {st:?} against model {requested}, high {high}"));
    }
    let used = l.pool().stats().map_err(|e| e.to_string())?.used_current;
    if used != st.held_current || st.held_current < st.requested_current || st.held_high < st.held_current {
        return Err(format!("pool USED {used} against {st:?}"));
    }
    Ok(())
}

fn run(threshold: u64, internal: bool, ops: &[Op]) -> std::result::Result<(), String> {
    let fail = |e: mempool_hal::Error| e.to_string();
    let emu = Emulator::builder().mode(ExecutionMode::Deferred).device_memory(POOL).build().map_err(fail)?;
    let streams = [emu.create_stream().map_err(fail)?, emu.create_stream().map_err(fail)?];
    let ev = emu.create_event().map_err(fail)?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(POOL).build()).map_err(fail)?;
    pool.set(mempool_hal::attr::ReuseAllowInternalDependencies, internal).map_err(fail)?;
    let l = SmallBlocks::new(&emu, &pool, threshold).map_err(fail)?;
    let mut live: BTreeMap<u64, Live> = BTreeMap::new();
    let mut high = 0;
    let nth = |live: &BTreeMap<u64, Live>, idx: usize| live.iter().nth(idx % live.len().max(1)).map(|(&a, &v)| (a, v));
    for op in ops {
        match *op {
            Op::Alloc { stream, size } => match l.malloc_async(size, &streams[stream]) {
                Ok(p) => {
                    if size <= threshold && p.addr() % ALIGN != 0 {
                        return Err(format!("{p} is not aligned"));
                    }
                    emu.memset_async(p, 0xa5, size.min(64 << 10), &streams[stream]).map_err(fail)?;
                    live.insert(p.addr(), Live { size, stream });
                    high = high.max(live.values().map(|v| v.size).sum());
                }
                Err(e) if e.kind() == ErrorKind::OutOfMemory => {
                    // The retry came after giving back every empty block and trimming the
                    // pool to USED: nothing is left cached.
                    let st = pool.stats().map_err(fail)?;
                    if st.reserved_current != st.used_current {
                        return Err(format!("out of memory for {size} bytes with cached memory left: {st:?}"));
                    }
                    let held = l.small_stats().held_current;
                    if held + size <= POOL / 4 {
                        return Err(format!("out of memory for {size} bytes with {held} held: {e}"));
                    }
                }
                Err(e) => return Err(format!("alloc {size}: {e}")),
            },
            Op::Free { idx, other_stream } => {
                let Some((addr, v)) = nth(&live, idx) else { continue };
                let s = if other_stream { 1 - v.stream } else { v.stream };
                if other_stream {
                    emu.record_event(&ev, &streams[v.stream]).map_err(fail)?;
                    emu.stream_wait_event(&streams[s], &ev).map_err(fail)?;
                }
                free_on(&l, DevicePtr::from_addr(addr), &streams[s]).map_err(fail)?;
                live.remove(&addr);
                // A second free is always refused.
                let again = free_on(&l, DevicePtr::from_addr(addr), &streams[s]);
                if again.as_ref().map_err(mempool_hal::Error::kind) != Err(ErrorKind::InvalidPointer) {
                    return Err(format!("double free answered {again:?}"));
                }
            }
            Op::Memset { idx } => {
                let Some((addr, v)) = nth(&live, idx) else { continue };
                emu.memset_async(DevicePtr::from_addr(addr), 1, v.size.min(64 << 10), &streams[v.stream])
                    .map_err(fail)?;
            }
            Op::Sync => emu.synchronize_device().map_err(fail)?,
            Op::Release => {
                l.release_empty().map_err(fail)?;
            }
        }
        check(&l, &live, high)?;
    }
    for (addr, v) in std::mem::take(&mut live) {
        free_on(&l, DevicePtr::from_addr(addr), &streams[v.stream]).map_err(fail)?;
    }
    check(&l, &live, high)?;
    emu.synchronize_device().map_err(fail)?;
    l.release_empty().map_err(fail)?;
    let st = l.small_stats();
    if (st.held_current, st.blocks, st.pending_frees, st.live_ranges) != (0, 0, 0, 0) {
        return Err(format!("not everything went back: {st:?}"));
    }
    drop(l);
    if pool.stats().map_err(fail)?.used_current != 0 {
        return Err("the pool still has USED".into());
    }
    emu.destroy_pool(&pool).map_err(fail)?;
    Ok(())
}

fn agree(threshold: u64, max: u64, internal: bool) {
    let env_cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok());
    let config = ProptestConfig {
        cases: env_cases.unwrap_or(256),
        failure_persistence: None,
        rng_seed: if env_cases.is_none() { RngSeed::Fixed(0x736d_616c_6c21) } else { RngSeed::Random },
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(&prop::collection::vec(op(threshold, max), 1..80), |ops| {
            run(threshold, internal, &ops).map_err(TestCaseError::fail)?;
            Ok(())
        })
        .unwrap();
}

/// Small and medium requests carved, larger ones passed through.
#[test]
fn layer_agrees_with_the_model() {
    agree(8 * MIB, 24 * MIB, false);
}

/// The same with the pool's internal-dependencies flag on: the layer makes streams wait for
/// pending cross-stream frees instead of taking new blocks.
#[test]
fn layer_agrees_with_the_model_with_internal_dependencies() {
    agree(8 * MIB, 24 * MIB, true);
}

/// Every request carved, up to 100 MiB: large blocks, parking, and out of memory.
#[test]
fn layer_agrees_with_the_model_when_it_carves_everything() {
    agree(POOL, 100 * MIB, false);
}
