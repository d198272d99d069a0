//! Quickstart: a pool on the CPU emulator, two streams with an event between them, data
//! copied through pool memory, the statistics, and which reuse rule served each
//! allocation.
//!
//! Run with `cargo run --example quickstart`.

use mempool::backend::Emulator;
use mempool::prelude::*;
use mempool::{HostBuffer, PoolProps, Result, attr};

fn main() -> Result<()> {
    let emu = Emulator::new(); // one 16 GiB device, 2 MiB granularity, threaded streams
    let producer = emu.create_stream()?;
    let consumer = emu.create_stream()?;
    let handoff = emu.create_event()?;
    let handback = emu.create_event()?;

    let pool = emu.create_pool(&PoolProps::builder().device(0).max_size(1 << 30).build())?;
    pool.set(attr::ReleaseThreshold, 64 << 20)?; // keep 64 MiB cached at synchronization
    pool.set(attr::ReuseFollowEventDependencies, true)?;
    println!("pool: {} MiB, threshold 64 MiB, event-dependency reuse on", pool.size() >> 20);

    const MIB: u64 = 1 << 20;
    let mut results = Vec::new();
    for step in 1..=3 {
        // The producer fills a fresh tensor...
        let (x, rule) = pool.malloc_async_traced(8 * MIB, &producer)?;
        println!("step {step}: producer alloc 8 MiB at {x} <- {rule}");
        let data: Vec<u8> = (0..4096u32).map(|i| (i * step) as u8).collect();
        emu.memcpy_h2d_async(x, &data, &producer)?;

        // ...the consumer copies it out once the producer's work is ordered before it...
        let (y, rule) = pool.malloc_async_traced(8 * MIB, &consumer)?;
        println!("step {step}: consumer alloc 8 MiB at {y} <- {rule}");
        emu.record_event(&handoff, &producer)?;
        emu.stream_wait_event(&consumer, &handoff)?;
        emu.memcpy_d2d_async(y, x, data.len() as u64, &consumer)?;
        let out = HostBuffer::new(data.len());
        emu.memcpy_d2h_async(&out, y, &consumer)?;

        // ...both are freed in stream order on the consumer (after its reads), and the
        // producer's next step is ordered after those frees through an event.
        pool.free(x, &consumer)?;
        pool.free(y, &consumer)?;
        emu.record_event(&handback, &consumer)?;
        emu.stream_wait_event(&producer, &handback)?;
        results.push((out, data));
    }
    emu.synchronize_device()?;
    for (step, (out, data)) in results.iter().enumerate() {
        assert_eq!(&out.to_vec(), data, "data survived the trip through pool memory");
        println!("step {}: {} bytes round-tripped intact", step + 1, data.len());
    }

    let s = pool.stats()?;
    println!(
        "stats: used {} MiB (high {} MiB), reserved {} MiB (high {} MiB)",
        s.used_current >> 20,
        s.used_high >> 20,
        s.reserved_current >> 20,
        s.reserved_high >> 20
    );
    let c = pool.reuse_counts();
    println!(
        "reuse: same stream {}, known complete {}, event dependency {}, opportunistic {}, internal {}, fresh {}",
        c.same_stream, c.known_complete, c.event_dependency, c.opportunistic, c.internal_dependency, c.fresh
    );
    pool.trim_to(0)?;
    println!("after trim_to(0): reserved {} MiB", pool.stats()?.reserved_current >> 20);
    emu.destroy_pool(&pool)?;
    Ok(())
}
