//! Race mode (contract §11): two accesses to overlapping device memory on different
//! streams, at least one a write, neither ordered after the other, are refused at the
//! second one; the same verdicts in every execution mode.

use super::harness::{Case, Ctx, Expect, G, Mode, catalogue, check_case};
use mempool_emu::{Emulator, KernelAccess};
use mempool_hal::{Device, DevicePtr, ErrorKind, HostBuffer, MemPool, PoolProps};

/// A racy program: refused at the call labelled `label`, as a stream-order violation.
const fn racy(label: &'static str) -> Expect {
    Expect::Refused(label, ErrorKind::StreamOrderViolation)
}

/// A program free of races: refused nowhere.
const FREE_OF_RACES: Expect = Expect::Correct;

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

catalogue! {
    verdicts, races: true;
    /// Write, then an unordered write.
    write_then_an_unordered_write (racy("write s1")) |c| {
        let x = shared(c);
        c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
        c.call("write s1", || c.emu.memset_async(x, 2, G, &c.s[1]));
    }

    /// Write, then an unordered read.
    write_then_an_unordered_read (racy("read s1")) |c| {
        let x = shared(c);
        c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
        c.call("read s1", || {
            c.emu.launch_kernel(&c.s[1], &[KernelAccess::Read(x, 8)], move |m| m.read(x, 8).map(drop))
        });
    }

    /// Read, then an unordered write.
    read_then_an_unordered_write (racy("write s2")) |c| {
        let x = shared(c);
        c.call("read s1", || c.emu.memcpy_d2h_async(&HostBuffer::new(64), x, &c.s[1]));
        c.call("write s2", || c.emu.memcpy_h2d_async(x, &[7; 64], &c.s[2]));
    }

    /// Partly overlapping ranges.
    partly_overlapping_ranges (racy("read s1")) |c| {
        let x = shared(c);
        c.call("write s0", || c.emu.memcpy_h2d_async(x, &[1; 16], &c.s[0]));
        let y = DevicePtr::from_addr(x.addr() + 8);
        c.call("read s1", || {
            c.emu.launch_kernel(&c.s[1], &[KernelAccess::Read(y, 16)], move |m| m.read(y, 16).map(drop))
        });
    }

    /// Device copy reading what another stream writes.
    device_copy_reading_what_another_stream_writes (racy("copy s1")) |c| {
        let x = shared(c);
        let y = c.call("malloc y", || c.pool.malloc_async(G, &c.s[1])).expect("allocation");
        c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
        c.call("copy s1", || c.emu.memcpy_d2d_async(y, x, G, &c.s[1]));
    }

    /// Host access racing an unsynchronized write.
    host_access_racing_an_unsynchronized_write (racy("memset_now")) |c| {
        let x = c.call("malloc", || c.pool.malloc_async(G, &c.s[0])).expect("allocation");
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        c.call("write s1", || c.emu.memset_async(x, 1, G, &c.s[1]));
        c.call("memset_now", || c.emu.memset_now(x, 0, G));
    }

    /// Two unordered reads.
    two_unordered_reads (FREE_OF_RACES) |c| {
        let x = shared(c);
        c.call("read s1", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[1]));
        c.call("read s2", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[2]));
        join_and_free(c, x);
    }

    /// Unordered writes to disjoint ranges.
    unordered_writes_to_disjoint_ranges (FREE_OF_RACES) |c| {
        let x = shared(c);
        let y = DevicePtr::from_addr(x.addr() + G / 2);
        c.call("write s1", || c.emu.memset_async(x, 1, G / 2, &c.s[1]));
        c.call("write s2", || c.emu.memset_async(y, 2, G / 2, &c.s[2]));
        join_and_free(c, x);
    }

    /// Writes ordered by an event.
    writes_ordered_by_an_event (FREE_OF_RACES) |c| {
        let x = shared(c);
        c.call("write s1", || c.emu.memset_async(x, 1, G, &c.s[1]));
        c.order(1, 2);
        c.call("write s2", || c.emu.memset_async(x, 2, G, &c.s[2]));
        join_and_free(c, x);
    }

    /// Writes ordered by a host synchronization.
    writes_ordered_by_a_host_synchronization (FREE_OF_RACES) |c| {
        let x = shared(c);
        c.call("write s1", || c.emu.memset_async(x, 1, G, &c.s[1]));
        c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
        c.call("memset_now", || c.emu.memset_now(x, 3, G));
        c.call("read s2", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[2]));
        join_and_free(c, x);
    }

    /// Ping-pong between two streams.
    ping_pong_between_two_streams (FREE_OF_RACES) |c| {
        let x = shared(c);
        c.call("write s0", || c.emu.memset_async(x, 1, G, &c.s[0]));
        c.order(0, 1);
        c.call("write s1", || c.emu.memset_async(x, 2, G, &c.s[1]));
        c.order(1, 0);
        c.call("write s0 again", || c.emu.memset_async(x, 3, G, &c.s[0]));
        join_and_free(c, x);
    }

    /// Writes on one stream.
    writes_on_one_stream (FREE_OF_RACES) |c| {
        let x = shared(c);
        c.call("write 1", || c.emu.memset_async(x, 1, G, &c.s[0]));
        c.call("write 2", || c.emu.memcpy_h2d_async(x, &[2; 8], &c.s[0]));
        join_and_free(c, x);
    }
}

#[test]
fn the_race_catalogue_has_five_racy_and_five_race_free_programs_or_more() {
    let racy = CATALOGUE.iter().filter(|c| c.expect != Expect::Correct).count();
    assert!(racy >= 5 && CATALOGUE.len() - racy >= 5, "{racy} racy, {} free of races", CATALOGUE.len() - racy);
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
