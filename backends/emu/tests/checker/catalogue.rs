//! The checker's catalogue (contract §11): buggy programs refused at the faulty call and
//! correct programs refused nowhere, each run in deferred mode, threaded mode and threaded
//! mode with random worker delays, with identical verdicts.

use super::harness::{Case, Ctx, Expect, G, run_catalogue};
use mempool_emu::{CopySide, KernelAccess};
use mempool_hal::{Device, DevicePtr, ErrorKind, EventStatus, HostBuffer, MemPool, MemPoolExt, attr};

const SOV: ErrorKind = ErrorKind::StreamOrderViolation;

fn bug(name: &'static str, label: &'static str, run: fn(&Ctx)) -> Case {
    Case { name, expect: Expect::Refused(label, SOV), run }
}

fn ok(name: &'static str, run: fn(&Ctx)) -> Case {
    Case { name, expect: Expect::Correct, run }
}

fn malloc(c: &Ctx, s: usize) -> DevicePtr {
    c.call(&format!("malloc on s{s}"), || c.pool.malloc_async(G, &c.s[s])).expect("the allocation succeeds")
}

/// A synchronous allocation (as `aclrtMalloc` makes), on the allocator's stream s3.
fn malloc_sync(c: &Ctx) -> DevicePtr {
    c.call("malloc_sync", || c.pool.malloc_sync(G, &c.s[3])).expect("the allocation succeeds")
}

fn memset(c: &Ctx, x: DevicePtr, s: usize, label: &str) {
    c.call(label, || c.emu.memset_async(x, 1, G, &c.s[s]));
}

fn free(c: &Ctx, x: DevicePtr, s: usize, label: &str) {
    c.call(label, || c.pool.free(x, &c.s[s]));
}

fn buggy() -> Vec<Case> {
    vec![
        bug("use after free on the same stream", "use", |c| {
            let x = malloc(c, 0);
            free(c, x, 0, "free");
            memset(c, x, 0, "use");
        }),
        bug("use after free on an ordered stream", "use", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            free(c, x, 0, "free");
            c.call("use", || c.emu.memcpy_h2d_async(x, &[1, 2, 3], &c.s[1]));
        }),
        bug("use on a stream not ordered after the allocation", "use", |c| {
            let x = malloc(c, 0);
            memset(c, x, 1, "use");
        }),
        bug("event recorded before the allocation", "use", |c| {
            let e = c.emu.create_event().unwrap();
            c.emu.record_event(&e, &c.s[0]).unwrap();
            let x = malloc(c, 0);
            c.emu.stream_wait_event(&c.s[1], &e).unwrap();
            memset(c, x, 1, "use");
        }),
        bug("event recorded on the wrong stream", "use", |c| {
            let x = malloc(c, 0);
            c.order(2, 1);
            memset(c, x, 1, "use");
        }),
        bug("free racing a pending access on another stream", "free", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "access");
            free(c, x, 0, "free");
        }),
        bug("free on an unordered stream after the access executed", "free", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "access");
            c.emu.run_pending(&c.s[1]).unwrap();
            free(c, x, 0, "free");
        }),
        bug("free after synchronizing the wrong stream", "free", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "access");
            c.call("sync s2", || c.emu.synchronize_stream(&c.s[2]));
            free(c, x, 0, "free");
        }),
        bug("free not ordered after its allocation", "free", |c| {
            let x = malloc(c, 0);
            free(c, x, 1, "free");
        }),
        bug("free not ordered after a reused allocation whose earlier user is pending", "free y", |c| {
            let x = malloc(c, 0);
            c.call("kernel", || c.emu.launch_kernel(&c.s[0], &[KernelAccess::Write(x, G)], move |m| m.write(x, &[1])));
            free(c, x, 0, "free x");
            let y = malloc(c, 0);
            free(c, y, 1, "free y");
        }),
        bug("free on a third stream racing a kernel", "free", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            c.order(0, 2);
            c.call("kernel", || {
                c.emu.launch_kernel(&c.s[1], &[KernelAccess::Read(x, G)], move |m| m.read(x, G).map(drop))
            });
            free(c, x, 2, "free");
        }),
        bug("device-to-host copy of freed memory", "copy", |c| {
            let x = malloc(c, 0);
            free(c, x, 0, "free");
            c.call("copy", || c.emu.memcpy_d2h_async(&HostBuffer::new(16), x, &c.s[0]));
        }),
        bug("device copy from a freed source", "copy", |c| {
            let x = malloc(c, 0);
            let y = malloc(c, 0);
            free(c, x, 0, "free");
            c.call("copy", || c.emu.memcpy_d2d_async(y, x, G, &c.s[0]));
        }),
        bug("device copy into memory of an unordered stream", "copy", |c| {
            let x = malloc(c, 0);
            let y = malloc(c, 1);
            c.call("copy", || c.emu.memcpy_d2d_async(y, x, G, &c.s[0]));
        }),
        bug("kernel writing freed memory", "kernel", |c| {
            let x = malloc(c, 0);
            free(c, x, 0, "free");
            c.call("kernel", || c.emu.launch_kernel(&c.s[0], &[KernelAccess::Write(x, G)], move |m| m.write(x, &[1])));
        }),
        bug("kernel reading on an unordered stream", "kernel", |c| {
            let x = malloc(c, 0);
            c.call("kernel", || {
                c.emu.launch_kernel(&c.s[2], &[KernelAccess::Read(x, 8)], move |m| m.read(x, 8).map(drop))
            });
        }),
        bug("access to a destroyed pool's memory", "use", |c| {
            let x = malloc(c, 0);
            c.call("destroy", || c.emu.destroy_pool(&c.pool));
            c.call("use", || c.emu.memset_async(x, 0, G, &c.s[0]));
        }),
        bug("use after free once the memory was released", "use", |c| {
            let x = malloc(c, 0);
            memset(c, x, 0, "access");
            free(c, x, 0, "free");
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            memset(c, x, 0, "use");
        }),
        bug("host access before the allocating stream is synchronized", "memset_now", |c| {
            let x = malloc(c, 0);
            c.call("memset_now", || c.emu.memset_now(x, 0, G));
        }),
        bug("host access under internal-dependency reuse before synchronizing", "memset_now", |c| {
            c.pool.set(attr::ReuseAllowInternalDependencies, true).unwrap();
            let x = malloc(c, 0);
            memset(c, x, 0, "access");
            free(c, x, 0, "free");
            let y = malloc(c, 1);
            assert_eq!(y, x, "reused with an internal dependency");
            c.call("memset_now", || c.emu.memset_now(y, 0, G));
        }),
        bug("host copy from freed memory", "memcpy_raw", |c| {
            let x = malloc(c, 0);
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            free(c, x, 0, "free");
            let mut host = [0u8; 8];
            c.call("memcpy_raw", || {
                // SAFETY: `host` outlives the call.
                unsafe { c.emu.memcpy_raw(CopySide::Host(host.as_mut_ptr()), CopySide::Device(x), 8) }
            });
        }),
        bug("allocation made after the synchronization used on another stream", "use", |c| {
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            let x = malloc(c, 0);
            memset(c, x, 1, "use");
        }),
        bug("synchronous allocation used after its free", "use", |c| {
            let x = malloc_sync(c);
            free(c, x, 3, "free");
            memset(c, x, 0, "use");
        }),
        bug("synchronous allocation freed before its async user is synchronized", "free", |c| {
            let x = malloc_sync(c);
            memset(c, x, 0, "access");
            free(c, x, 3, "free");
        }),
    ]
}

fn correct() -> Vec<Case> {
    vec![
        ok("same-stream lifecycle", |c| {
            let x = malloc(c, 0);
            memset(c, x, 0, "memset");
            c.call("copy back", || c.emu.memcpy_d2h_async(&HostBuffer::new(4), x, &c.s[0]));
            free(c, x, 0, "free");
        }),
        ok("event-ordered hand-off, freed on the consumer", |c| {
            let x = malloc(c, 0);
            memset(c, x, 0, "produce");
            c.order(0, 1);
            memset(c, x, 1, "consume");
            free(c, x, 1, "free");
        }),
        ok("hand-off and back before the free", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "use");
            c.order(1, 0);
            free(c, x, 0, "free");
        }),
        ok("chain of three streams", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            c.order(1, 2);
            memset(c, x, 2, "use");
            free(c, x, 2, "free");
        }),
        ok("internal-dependency reuse, then use", |c| {
            c.pool.set(attr::ReuseAllowInternalDependencies, true).unwrap();
            let x = malloc(c, 0);
            memset(c, x, 0, "use x");
            free(c, x, 0, "free x");
            let y = malloc(c, 1);
            assert_eq!(y, x);
            memset(c, y, 1, "use y");
            free(c, y, 1, "free y");
        }),
        ok("event-dependency reuse, then use", |c| {
            c.pool.set(attr::ReuseFollowEventDependencies, true).unwrap();
            let x = malloc(c, 0);
            memset(c, x, 0, "use x");
            free(c, x, 0, "free x");
            c.order(0, 1);
            let y = malloc(c, 1);
            assert_eq!(y, x);
            memset(c, y, 1, "use y");
            free(c, y, 1, "free y");
        }),
        ok("known-complete reuse after a host synchronization", |c| {
            c.pool.set(attr::ReleaseThreshold, c.pool.size()).unwrap();
            let x = malloc(c, 0);
            memset(c, x, 0, "use x");
            free(c, x, 0, "free x");
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            let y = malloc(c, 1);
            assert_eq!(y, x);
            memset(c, y, 1, "use y");
            free(c, y, 1, "free y");
        }),
        ok("free after the accessing stream was synchronized", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "use");
            c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
            free(c, x, 0, "free");
        }),
        ok("free ordered after an executed access by an event", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "use");
            c.emu.run_pending(&c.s[1]).unwrap();
            c.order(1, 0);
            free(c, x, 0, "free");
        }),
        ok("kernel with declared memory", |c| {
            let x = malloc(c, 0);
            let y = malloc(c, 0);
            c.call("fill", || c.emu.memcpy_h2d_async(x, &[1, 2, 3, 4], &c.s[0]));
            c.call("kernel", || {
                c.emu.launch_kernel(&c.s[0], &[KernelAccess::Read(x, 4), KernelAccess::Write(y, 4)], move |m| {
                    let v: Vec<u8> = m.read(x, 4)?.iter().map(|b| b * 10).collect();
                    m.write(y, &v)
                })
            });
            free(c, x, 0, "free x");
            free(c, y, 0, "free y");
        }),
        ok("device copy across streams", |c| {
            let x = malloc(c, 0);
            let y = malloc(c, 1);
            memset(c, x, 0, "fill");
            c.order(0, 1);
            c.call("copy", || c.emu.memcpy_d2d_async(y, x, G, &c.s[1]));
            c.order(1, 0);
            free(c, x, 0, "free x");
            free(c, y, 1, "free y");
        }),
        ok("fan out and join", |c| {
            let xs: Vec<DevicePtr> = (0..3).map(|_| malloc(c, 0)).collect();
            for (i, &x) in xs.iter().enumerate() {
                c.order(0, i + 1);
                memset(c, x, i + 1, "use");
                c.order(i + 1, 0);
            }
            for &x in &xs {
                free(c, x, 0, "free");
            }
        }),
        ok("same-stream reuse after a free", |c| {
            let x = malloc(c, 0);
            memset(c, x, 0, "use x");
            free(c, x, 0, "free x");
            let y = malloc(c, 0);
            assert_eq!(y, x);
            memset(c, y, 0, "use y");
            free(c, y, 0, "free y");
        }),
        ok("synchronous allocation, then async use on a user stream", |c| {
            let x = malloc_sync(c);
            c.call("copy in", || c.emu.memcpy_h2d_async(x, &[1; 16], &c.s[0]));
            memset(c, x, 0, "memset");
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            free(c, x, 3, "free");
        }),
        ok("synchronous allocation read on two streams, freed after a device sync", |c| {
            let x = malloc_sync(c);
            c.call("memset_now", || c.emu.memset_now(x, 5, G));
            c.call("read s0", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[0]));
            c.call("read s1", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[1]));
            c.call("sync device", || c.emu.synchronize_device());
            free(c, x, 3, "free");
        }),
        ok("synchronize S, then use on T and free there", |c| {
            let x = malloc(c, 0);
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            memset(c, x, 1, "use");
            free(c, x, 1, "free");
        }),
        ok("synchronize an event after the allocation, then use anywhere", |c| {
            let x = malloc(c, 0);
            let e = c.emu.create_event().unwrap();
            c.emu.record_event(&e, &c.s[0]).unwrap();
            c.call("sync event", || c.emu.synchronize_event(&e));
            memset(c, x, 2, "use");
            free(c, x, 2, "free");
        }),
        ok("an event query answering complete orders later work", |c| {
            let x = malloc(c, 0);
            let e = c.emu.create_event().unwrap();
            c.emu.record_event(&e, &c.s[0]).unwrap();
            c.emu.run_pending(&c.s[0]).unwrap();
            let done = c.emu.query_event(&e).unwrap();
            assert_eq!(done, EventStatus::Complete);
            memset(c, x, 1, "use");
            free(c, x, 1, "free");
        }),
        ok("synchronize the device, then use and free anywhere", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "use");
            c.call("sync device", || c.emu.synchronize_device());
            memset(c, x, 2, "use again");
            c.call("sync s2", || c.emu.synchronize_stream(&c.s[2]));
            free(c, x, 3, "free");
        }),
        ok("host access after synchronizing the allocating stream", |c| {
            let x = malloc(c, 0);
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            c.call("memset_now", || c.emu.memset_now(x, 9, G));
            let mut host = [0u8; 8];
            c.call("memcpy_raw", || {
                // SAFETY: `host` outlives the call.
                unsafe { c.emu.memcpy_raw(CopySide::Host(host.as_mut_ptr()), CopySide::Device(x), 8) }
            });
            assert_eq!(host, [9; 8]);
            free(c, x, 0, "free");
        }),
        ok("host access under internal-dependency reuse after synchronizing", |c| {
            c.pool.set(attr::ReuseAllowInternalDependencies, true).unwrap();
            let x = malloc(c, 0);
            memset(c, x, 0, "access");
            free(c, x, 0, "free x");
            let y = malloc(c, 1);
            assert_eq!(y, x);
            c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
            c.call("memset_now", || c.emu.memset_now(y, 0, G));
            free(c, y, 1, "free y");
        }),
        ok("a synchronization on another thread orders this thread's work", |c| {
            let x = malloc(c, 0);
            let (emu, s0) = (c.emu.clone(), c.s[0].clone());
            std::thread::spawn(move || emu.synchronize_stream(&s0).unwrap()).join().unwrap();
            memset(c, x, 1, "use");
            free(c, x, 1, "free");
        }),
        ok("free on a third stream after both streams were synchronized", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "use");
            c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
            free(c, x, 2, "free");
        }),
        ok("join, synchronize, then free on a third stream", |c| {
            let x = malloc(c, 0);
            c.order(0, 1);
            memset(c, x, 1, "use");
            c.order(1, 0);
            c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
            free(c, x, 2, "free");
        }),
    ]
}

#[test]
fn catalogue_verdicts_do_not_depend_on_timing() {
    let bugs = buggy();
    let oks = correct();
    assert!(bugs.len() >= 20 && oks.len() >= 20, "{} buggy, {} correct", bugs.len(), oks.len());
    let all: Vec<Case> = bugs.into_iter().chain(oks).collect();
    run_catalogue("checker catalogue", &all, false);
}
