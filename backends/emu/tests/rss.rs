//! Host memory follows RESERVED: the process's resident memory rises when a pool
//! reserves touched memory and falls again after the release at synchronization.
//!
//! This file holds one test so no other test of the same process moves the numbers.
//!
//! The rules it checks: contract §6 (`mempool_hal::contract::release`).

use mempool_emu::Emulator;
use mempool_hal::{Device, MemPoolExt, PoolProps};

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm is readable on Linux");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("statm has a resident field");
    pages * rustix::param::page_size() as u64
}

#[test]
fn resident_memory_follows_reserved() -> mempool_hal::Result<()> {
    const MIB: u64 = 1 << 20;
    let emu = Emulator::new();
    let stream = emu.create_stream()?;
    let pool = emu.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;

    let before = resident_bytes();
    let p = pool.malloc_async_traced(256 * MIB, &stream)?.0;
    emu.memset_async(p, 0xA5, 256 * MIB, &stream)?; // touch every page
    emu.synchronize_stream(&stream)?; // still allocated: nothing to release
    let touched = resident_bytes();
    assert_eq!(pool.stats()?.reserved_current, 256 * MIB);
    assert!(
        touched >= before + 240 * MIB,
        "resident memory should rise by ~256 MiB: before {} MiB, after {} MiB",
        before / MIB,
        touched / MIB
    );

    pool.free(p, &stream)?;
    assert_eq!(pool.stats()?.reserved_current, 256 * MIB, "a free keeps the block cached");
    emu.synchronize_stream(&stream)?; // threshold 0: release everything completed
    let released = resident_bytes();
    assert_eq!(pool.stats()?.reserved_current, 0);
    assert!(
        released + 240 * MIB <= touched,
        "resident memory should fall by ~256 MiB after the release: touched {} MiB, released {} MiB",
        touched / MIB,
        released / MIB
    );
    println!("resident: before {} MiB, touched {} MiB, released {} MiB", before / MIB, touched / MIB, released / MIB);
    emu.destroy_pool(&pool)
}
