//! Reliability of the emulator at its edges: statistics read while another thread changes
//! the pool.

use mempool_emu::Emulator;
use mempool_hal::{Device, MemPool, MemPoolExt, PoolProps, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const G: u64 = 64 << 10;

/// An emulator whose host waits give up after `wait`.
fn emu(wait: Duration) -> Emulator {
    Emulator::builder().granularity(G).device_memory(256 * G).wait_timeout(wait).build().expect("valid config")
}

/// contract::statistics: the four counters are one snapshot, so RESERVED ≥ USED in every
/// answer, also while another thread allocates fresh memory, frees it and trims.
#[test]
fn stats_are_one_snapshot_while_another_thread_allocates_frees_and_trims() -> Result<()> {
    let emu = emu(Duration::from_secs(60));
    let s = emu.create_stream()?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(8 * G).build())?;
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (pool, s, stop) = (pool.clone(), s.clone(), Arc::clone(&stop));
        std::thread::spawn(move || -> Result<u64> {
            let mut rounds = 0;
            while !stop.load(Ordering::Relaxed) {
                let p = pool.malloc_async(1, &s)?; // fresh: the trim below left nothing cached
                pool.free(p, &s)?;
                pool.trim_to(0)?;
                rounds += 1;
            }
            Ok(rounds)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut reads = 0u64;
    let mut bad = None;
    while Instant::now() < deadline && bad.is_none() {
        let st = pool.stats()?;
        if st.reserved_current < st.used_current {
            bad = Some(st);
        }
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.join().unwrap()?;
    assert_eq!(bad, None, "a snapshot with RESERVED < USED after {reads} reads ({rounds} rounds)");
    assert!(rounds > 0 && reads > 0);
    Ok(())
}
