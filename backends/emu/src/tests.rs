//! Tests of the whole emulator that read its internal state (the block structure's
//! invariants); the public behaviour is tested in `tests/`.

use crate::config::ExecutionMode;
use crate::device::Emulator;
use mempool_hal::{Device, MemPool, MemPoolExt, PoolProps, attr};

/// Random allocate/free/sync/trim sequences over three streams keep the block
/// structure exact: live, cached and free ranges tile the pool, free neighbours are
/// merged, and the counters match the blocks.
#[test]
fn random_sequences_keep_the_invariants() {
    const G: u64 = 64 << 10;
    for seed in 1..=20u64 {
        let emu = Emulator::builder()
            .granularity(G)
            .device_memory(64 * G)
            .mode(if seed % 2 == 0 { ExecutionMode::Deferred } else { ExecutionMode::Threaded })
            // Frees land on random streams, unordered after their allocations: the
            // checker would refuse them, and the structure must stay exact regardless.
            .checker(false)
            .build()
            .unwrap();
        let streams: Vec<_> = (0..3).map(|_| emu.create_stream().unwrap()).collect();
        let pool = emu.create_pool(&PoolProps::builder().max_size(48 * G).build()).unwrap();
        pool.set(attr::ReuseAllowOpportunistic, seed % 3 == 0).unwrap();
        pool.set(attr::ReuseAllowInternalDependencies, seed % 5 == 0).unwrap();
        pool.set(attr::ReleaseThreshold, (seed % 4) * 8 * G).unwrap();
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut live = Vec::new();
        for _ in 0..400 {
            let s = &streams[(next() % 3) as usize];
            match next() % 10 {
                0..=4 => {
                    if let Ok(p) = pool.malloc_async((next() % (4 * G)) + 1, s) {
                        live.push(p);
                    }
                }
                5..=7 if !live.is_empty() => {
                    let p = live.swap_remove((next() as usize) % live.len());
                    pool.free(p, s).unwrap();
                }
                8 => emu.synchronize_stream(s).unwrap(),
                _ => {
                    let used = pool.stats().unwrap().used_current;
                    pool.trim_to(used).unwrap();
                }
            }
            pool.shared.check_invariants();
            assert_eq!(emu.mem_info().unwrap().free, 64 * G - pool.shared.reserved(), "the device counts RESERVED");
        }
        for p in live.drain(..) {
            pool.free(p, &streams[0]).unwrap();
        }
        emu.synchronize_device().unwrap();
        pool.shared.check_invariants();
        let s = pool.stats().unwrap();
        assert_eq!(s.used_current, 0);
        let c = pool.reuse_counts();
        assert!(c.fresh > 10 && c.same_stream + c.known_complete > 10, "the sequence exercised reuse: {c:?}");
        assert!(s.reserved_current <= (seed % 4) * 8 * G, "release at device sync honours the threshold");
    }
}
