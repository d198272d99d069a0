//! Race mode (contract §11): two accesses to overlapping device memory on different
//! streams, at least one a write, neither ordered after the other, are refused at the
//! second one; the same verdicts in every execution mode.

use super::harness::{Case, Ctx, Expect, G, run_catalogue};
use mempool_emu::{Emulator, KernelAccess};
use mempool_hal::{Device, DevicePtr, ErrorKind, HostBuffer, MemPool, PoolProps};

fn racy(name: &'static str, label: &'static str, run: fn(&Ctx)) -> Case {
    Case { name, expect: Expect::Refused(label, ErrorKind::StreamOrderViolation), run }
}

fn free_of_races(name: &'static str, run: fn(&Ctx)) -> Case {
    Case { name, expect: Expect::Correct, run }
}

/// An allocation on s0 that s1 and s2 are ordered after.
fn shared(c: &Ctx) -> DevicePtr {
    let x = c.call("malloc", || c.pool.malloc_async(G, &c.s[0])).expect("allocation");
    c.order(0, 1);
    c.order(0, 2);
    x
}

/// Frees `x` on s0 after joining s1 and s2 back.
fn join_and_free(c: &Ctx, x: DevicePtr) {
    c.order(1, 0);
    c.order(2, 0);
    c.call("free", || c.pool.free(x, &c.s[0]));
}

fn cases() -> Vec<Case> {
    vec![
        racy("write, then an unordered write", "write s1", |c| {
            let x = shared(c);
            c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
            c.call("write s1", || c.emu.memset_async(x, 2, G, &c.s[1]));
        }),
        racy("write, then an unordered read", "read s1", |c| {
            let x = shared(c);
            c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
            c.call("read s1", || {
                c.emu.launch_kernel(&c.s[1], &[KernelAccess::Read(x, 8)], move |m| m.read(x, 8).map(drop))
            });
        }),
        racy("read, then an unordered write", "write s2", |c| {
            let x = shared(c);
            c.call("read s1", || c.emu.memcpy_d2h_async(&HostBuffer::new(64), x, &c.s[1]));
            c.call("write s2", || c.emu.memcpy_h2d_async(x, &[7; 64], &c.s[2]));
        }),
        racy("partly overlapping ranges", "read s1", |c| {
            let x = shared(c);
            c.call("write s0", || c.emu.memcpy_h2d_async(x, &[1; 16], &c.s[0]));
            let y = DevicePtr::from_addr(x.addr() + 8);
            c.call("read s1", || {
                c.emu.launch_kernel(&c.s[1], &[KernelAccess::Read(y, 16)], move |m| m.read(y, 16).map(drop))
            });
        }),
        racy("device copy reading what another stream writes", "copy s1", |c| {
            let x = shared(c);
            let y = c.call("malloc y", || c.pool.malloc_async(G, &c.s[1])).expect("allocation");
            c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
            c.call("copy s1", || c.emu.memcpy_d2d_async(y, x, G, &c.s[1]));
        }),
        racy("host access racing an unsynchronized write", "memset_now", |c| {
            let x = c.call("malloc", || c.pool.malloc_async(G, &c.s[0])).expect("allocation");
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            c.call("write s1", || c.emu.memset_async(x, 1, G, &c.s[1]));
            c.call("memset_now", || c.emu.memset_now(x, 0, G));
        }),
        free_of_races("two unordered reads", |c| {
            let x = shared(c);
            c.call("read s1", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[1]));
            c.call("read s2", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[2]));
            join_and_free(c, x);
        }),
        free_of_races("unordered writes to disjoint ranges", |c| {
            let x = shared(c);
            let y = DevicePtr::from_addr(x.addr() + G / 2);
            c.call("write s1", || c.emu.memset_async(x, 1, G / 2, &c.s[1]));
            c.call("write s2", || c.emu.memset_async(y, 2, G / 2, &c.s[2]));
            join_and_free(c, x);
        }),
        free_of_races("writes ordered by an event", |c| {
            let x = shared(c);
            c.call("write s1", || c.emu.memset_async(x, 1, G, &c.s[1]));
            c.order(1, 2);
            c.call("write s2", || c.emu.memset_async(x, 2, G, &c.s[2]));
            join_and_free(c, x);
        }),
        free_of_races("writes ordered by a host synchronization", |c| {
            let x = shared(c);
            c.call("write s1", || c.emu.memset_async(x, 1, G, &c.s[1]));
            c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
            c.call("memset_now", || c.emu.memset_now(x, 3, G));
            c.call("read s2", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[2]));
            join_and_free(c, x);
        }),
        free_of_races("ping-pong between two streams", |c| {
            let x = shared(c);
            c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
            c.order(0, 1);
            c.call("write s1", || c.emu.memset_async(x, 2, G, &c.s[1]));
            c.order(1, 0);
            c.call("write s0 again", || c.emu.memset_async(x, 3, G, &c.s[0]));
            join_and_free(c, x);
        }),
        free_of_races("writes on one stream", |c| {
            let x = shared(c);
            c.call("write 1", || c.emu.memset_async(x, 1, G, &c.s[0]));
            c.call("write 2", || c.emu.memcpy_h2d_async(x, &[2; 8], &c.s[0]));
            join_and_free(c, x);
        }),
    ]
}

#[test]
fn race_mode_verdicts_do_not_depend_on_timing() {
    let cases = cases();
    let racy = cases.iter().filter(|c| c.expect != Expect::Correct).count();
    assert!(racy >= 5 && cases.len() - racy >= 5);
    run_catalogue("race catalogue", &cases, true);
}

#[test]
fn race_mode_is_off_by_default() -> mempool_hal::Result<()> {
    let emu = Emulator::builder().granularity(G).device_memory(64 * G).build()?;
    assert!(!emu.config().races);
    let pool = emu.create_pool(&PoolProps::builder().max_size(16 * G).build())?;
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let x = pool.malloc_async(G, &a)?;
    let e = emu.create_event()?;
    emu.record_event(&e, &a)?;
    emu.stream_wait_event(&b, &e)?;
    emu.memset_async(x, 1, G, &a)?;
    emu.memset_async(x, 2, G, &b)?; // a race, not checked without race mode
    emu.synchronize_device()?;
    pool.free(x, &a)?;
    Ok(())
}
