//! The checker's catalogue (contract §11): buggy programs refused at the faulty call and
//! correct programs refused nowhere, each run in deferred mode, threaded mode and threaded
//! mode with random worker delays, with identical verdicts.

use super::harness::{Case, Ctx, Expect, G, Mode, catalogue, check_case};
use mempool_emu::{CopySide, KernelAccess};
use mempool_hal::{Device, DevicePtr, ErrorKind, EventStatus, HostBuffer, MemPool, MemPoolExt, attr};

const SOV: ErrorKind = ErrorKind::StreamOrderViolation;

/// A buggy program: refused at the call labelled `label`, as a stream-order violation.
const fn bug(label: &'static str) -> Expect {
    Expect::Refused(label, SOV)
}

/// A correct program: refused nowhere.
const OK: Expect = Expect::Correct;

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

catalogue! {
    verdicts, races: false;
    /// Use after free on the same stream.
    use_after_free_on_the_same_stream (bug("use")) |c| {
        let x = malloc(c, 0);
        free(c, x, 0, "free");
        memset(c, x, 0, "use");
    }

    /// Use after free on an ordered stream.
    use_after_free_on_an_ordered_stream (bug("use")) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        free(c, x, 0, "free");
        c.call("use", || c.emu.memcpy_h2d_async(x, &[1, 2, 3], &c.s[1]));
    }

    /// Use on a stream not ordered after the allocation.
    use_on_a_stream_not_ordered_after_the_allocation (bug("use")) |c| {
        let x = malloc(c, 0);
        memset(c, x, 1, "use");
    }

    /// Event recorded before the allocation.
    event_recorded_before_the_allocation (bug("use")) |c| {
        let e = c.emu.create_event().unwrap();
        c.emu.record_event(&e, &c.s[0]).unwrap();
        let x = malloc(c, 0);
        c.emu.stream_wait_event(&c.s[1], &e).unwrap();
        memset(c, x, 1, "use");
    }

    /// Event recorded on the wrong stream.
    event_recorded_on_the_wrong_stream (bug("use")) |c| {
        let x = malloc(c, 0);
        c.order(2, 1);
        memset(c, x, 1, "use");
    }

    /// Free racing a pending access on another stream.
    free_racing_a_pending_access_on_another_stream (bug("free")) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "access");
        free(c, x, 0, "free");
    }

    /// Free on an unordered stream after the access executed.
    free_on_an_unordered_stream_after_the_access_executed (bug("free")) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "access");
        c.emu.run_pending(&c.s[1]).unwrap();
        free(c, x, 0, "free");
    }

    /// Free after synchronizing the wrong stream.
    free_after_synchronizing_the_wrong_stream (bug("free")) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "access");
        c.call("sync s2", || c.emu.synchronize_stream(&c.s[2]));
        free(c, x, 0, "free");
    }

    /// Free not ordered after its allocation.
    free_not_ordered_after_its_allocation (bug("free")) |c| {
        let x = malloc(c, 0);
        free(c, x, 1, "free");
    }

    /// Free not ordered after a reused allocation whose earlier user is pending.
    free_not_ordered_after_a_reused_allocation_whose_earlier_user_is_pending (bug("free y")) |c| {
        let x = malloc(c, 0);
        c.call("kernel", || c.emu.launch_kernel(&c.s[0], &[KernelAccess::Write(x, G)], move |m| m.write(x, &[1])));
        free(c, x, 0, "free x");
        let y = malloc(c, 0);
        free(c, y, 1, "free y");
    }

    /// Free on a third stream racing a kernel.
    free_on_a_third_stream_racing_a_kernel (bug("free")) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        c.order(0, 2);
        c.call("kernel", || {
            c.emu.launch_kernel(&c.s[1], &[KernelAccess::Read(x, G)], move |m| m.read(x, G).map(drop))
        });
        free(c, x, 2, "free");
    }

    /// Device-to-host copy of freed memory.
    device_to_host_copy_of_freed_memory (bug("copy")) |c| {
        let x = malloc(c, 0);
        free(c, x, 0, "free");
        c.call("copy", || c.emu.memcpy_d2h_async(&HostBuffer::new(16), x, &c.s[0]));
    }

    /// Device copy from a freed source.
    device_copy_from_a_freed_source (bug("copy")) |c| {
        let x = malloc(c, 0);
        let y = malloc(c, 0);
        free(c, x, 0, "free");
        c.call("copy", || c.emu.memcpy_d2d_async(y, x, G, &c.s[0]));
    }

    /// Device copy into memory of an unordered stream.
    device_copy_into_memory_of_an_unordered_stream (bug("copy")) |c| {
        let x = malloc(c, 0);
        let y = malloc(c, 1);
        c.call("copy", || c.emu.memcpy_d2d_async(y, x, G, &c.s[0]));
    }

    /// Kernel writing freed memory.
    kernel_writing_freed_memory (bug("kernel")) |c| {
        let x = malloc(c, 0);
        free(c, x, 0, "free");
        c.call("kernel", || c.emu.launch_kernel(&c.s[0], &[KernelAccess::Write(x, G)], move |m| m.write(x, &[1])));
    }

    /// Kernel reading on an unordered stream.
    kernel_reading_on_an_unordered_stream (bug("kernel")) |c| {
        let x = malloc(c, 0);
        c.call("kernel", || {
            c.emu.launch_kernel(&c.s[2], &[KernelAccess::Read(x, 8)], move |m| m.read(x, 8).map(drop))
        });
    }

    /// Access to a destroyed pool's memory.
    access_to_a_destroyed_pool_s_memory (bug("use")) |c| {
        let x = malloc(c, 0);
        c.call("destroy", || c.emu.destroy_pool(&c.pool));
        c.call("use", || c.emu.memset_async(x, 0, G, &c.s[0]));
    }

    /// Use after free once the memory was released.
    use_after_free_once_the_memory_was_released (bug("use")) |c| {
        let x = malloc(c, 0);
        memset(c, x, 0, "access");
        free(c, x, 0, "free");
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        memset(c, x, 0, "use");
    }

    /// Host access before the allocating stream is synchronized.
    host_access_before_the_allocating_stream_is_synchronized (bug("memset_now")) |c| {
        let x = malloc(c, 0);
        c.call("memset_now", || c.emu.memset_now(x, 0, G));
    }

    /// Host access under internal-dependency reuse before synchronizing.
    host_access_under_internal_dependency_reuse_before_synchronizing (bug("memset_now")) |c| {
        c.pool.set(attr::ReuseAllowInternalDependencies, true).unwrap();
        let x = malloc(c, 0);
        memset(c, x, 0, "access");
        free(c, x, 0, "free");
        let y = malloc(c, 1);
        assert_eq!(y, x, "reused with an internal dependency");
        c.call("memset_now", || c.emu.memset_now(y, 0, G));
    }

    /// Host copy from freed memory.
    host_copy_from_freed_memory (bug("memcpy_raw")) |c| {
        let x = malloc(c, 0);
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        free(c, x, 0, "free");
        let mut host = [0u8; 8];
        c.call("memcpy_raw", || {
            // SAFETY: `host` outlives the call.
            unsafe { c.emu.memcpy_raw(CopySide::Host(host.as_mut_ptr()), CopySide::Device(x), 8) }
        });
    }

    /// Allocation made after the synchronization used on another stream.
    allocation_made_after_the_synchronization_used_on_another_stream (bug("use")) |c| {
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        let x = malloc(c, 0);
        memset(c, x, 1, "use");
    }

    /// Synchronous allocation used after its free.
    synchronous_allocation_used_after_its_free (bug("use")) |c| {
        let x = malloc_sync(c);
        free(c, x, 3, "free");
        memset(c, x, 0, "use");
    }

    /// Synchronous allocation freed before its async user is synchronized.
    synchronous_allocation_freed_before_its_async_user_is_synchronized (bug("free")) |c| {
        let x = malloc_sync(c);
        memset(c, x, 0, "access");
        free(c, x, 3, "free");
    }

    /// Same-stream lifecycle.
    same_stream_lifecycle (OK) |c| {
        let x = malloc(c, 0);
        memset(c, x, 0, "memset");
        c.call("copy back", || c.emu.memcpy_d2h_async(&HostBuffer::new(4), x, &c.s[0]));
        free(c, x, 0, "free");
    }

    /// Event-ordered hand-off, freed on the consumer.
    event_ordered_hand_off_freed_on_the_consumer (OK) |c| {
        let x = malloc(c, 0);
        memset(c, x, 0, "produce");
        c.order(0, 1);
        memset(c, x, 1, "consume");
        free(c, x, 1, "free");
    }

    /// Hand-off and back before the free.
    hand_off_and_back_before_the_free (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "use");
        c.order(1, 0);
        free(c, x, 0, "free");
    }

    /// Chain of three streams.
    chain_of_three_streams (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        c.order(1, 2);
        memset(c, x, 2, "use");
        free(c, x, 2, "free");
    }

    /// Internal-dependency reuse, then use.
    internal_dependency_reuse_then_use (OK) |c| {
        c.pool.set(attr::ReuseAllowInternalDependencies, true).unwrap();
        let x = malloc(c, 0);
        memset(c, x, 0, "use x");
        free(c, x, 0, "free x");
        let y = malloc(c, 1);
        assert_eq!(y, x);
        memset(c, y, 1, "use y");
        free(c, y, 1, "free y");
    }

    /// Event-dependency reuse, then use.
    event_dependency_reuse_then_use (OK) |c| {
        c.pool.set(attr::ReuseFollowEventDependencies, true).unwrap();
        let x = malloc(c, 0);
        memset(c, x, 0, "use x");
        free(c, x, 0, "free x");
        c.order(0, 1);
        let y = malloc(c, 1);
        assert_eq!(y, x);
        memset(c, y, 1, "use y");
        free(c, y, 1, "free y");
    }

    /// Known-complete reuse after a host synchronization.
    known_complete_reuse_after_a_host_synchronization (OK) |c| {
        c.pool.set(attr::ReleaseThreshold, c.pool.size()).unwrap();
        let x = malloc(c, 0);
        memset(c, x, 0, "use x");
        free(c, x, 0, "free x");
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        let y = malloc(c, 1);
        assert_eq!(y, x);
        memset(c, y, 1, "use y");
        free(c, y, 1, "free y");
    }

    /// Free after the accessing stream was synchronized.
    free_after_the_accessing_stream_was_synchronized (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "use");
        c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
        free(c, x, 0, "free");
    }

    /// Free ordered after an executed access by an event.
    free_ordered_after_an_executed_access_by_an_event (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "use");
        c.emu.run_pending(&c.s[1]).unwrap();
        c.order(1, 0);
        free(c, x, 0, "free");
    }

    /// Kernel with declared memory.
    kernel_with_declared_memory (OK) |c| {
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
    }

    /// Device copy across streams.
    device_copy_across_streams (OK) |c| {
        let x = malloc(c, 0);
        let y = malloc(c, 1);
        memset(c, x, 0, "fill");
        c.order(0, 1);
        c.call("copy", || c.emu.memcpy_d2d_async(y, x, G, &c.s[1]));
        c.order(1, 0);
        free(c, x, 0, "free x");
        free(c, y, 1, "free y");
    }

    /// Fan out and join.
    fan_out_and_join (OK) |c| {
        let xs: Vec<DevicePtr> = (0..3).map(|_| malloc(c, 0)).collect();
        for (i, &x) in xs.iter().enumerate() {
            c.order(0, i + 1);
            memset(c, x, i + 1, "use");
            c.order(i + 1, 0);
        }
        for &x in &xs {
            free(c, x, 0, "free");
        }
    }

    /// Same-stream reuse after a free.
    same_stream_reuse_after_a_free (OK) |c| {
        let x = malloc(c, 0);
        memset(c, x, 0, "use x");
        free(c, x, 0, "free x");
        let y = malloc(c, 0);
        assert_eq!(y, x);
        memset(c, y, 0, "use y");
        free(c, y, 0, "free y");
    }

    /// Synchronous allocation, then async use on a user stream.
    synchronous_allocation_then_async_use_on_a_user_stream (OK) |c| {
        let x = malloc_sync(c);
        c.call("copy in", || c.emu.memcpy_h2d_async(x, &[1; 16], &c.s[0]));
        memset(c, x, 0, "memset");
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        free(c, x, 3, "free");
    }

    /// Synchronous allocation read on two streams, freed after a device sync.
    synchronous_allocation_read_on_two_streams_freed_after_a_device_sync (OK) |c| {
        let x = malloc_sync(c);
        c.call("memset_now", || c.emu.memset_now(x, 5, G));
        c.call("read s0", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[0]));
        c.call("read s1", || c.emu.memcpy_d2h_async(&HostBuffer::new(8), x, &c.s[1]));
        c.call("sync device", || c.emu.synchronize_device());
        free(c, x, 3, "free");
    }

    /// Synchronize S, then use on T and free there.
    synchronize_s_then_use_on_t_and_free_there (OK) |c| {
        let x = malloc(c, 0);
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        memset(c, x, 1, "use");
        free(c, x, 1, "free");
    }

    /// Synchronize an event after the allocation, then use anywhere.
    synchronize_an_event_after_the_allocation_then_use_anywhere (OK) |c| {
        let x = malloc(c, 0);
        let e = c.emu.create_event().unwrap();
        c.emu.record_event(&e, &c.s[0]).unwrap();
        c.call("sync event", || c.emu.synchronize_event(&e));
        memset(c, x, 2, "use");
        free(c, x, 2, "free");
    }

    /// An event query answering complete orders later work.
    an_event_query_answering_complete_orders_later_work (OK) |c| {
        let x = malloc(c, 0);
        let e = c.emu.create_event().unwrap();
        c.emu.record_event(&e, &c.s[0]).unwrap();
        c.emu.run_pending(&c.s[0]).unwrap();
        let done = c.emu.query_event(&e).unwrap();
        assert_eq!(done, EventStatus::Complete);
        memset(c, x, 1, "use");
        free(c, x, 1, "free");
    }

    /// Synchronize the device, then use and free anywhere.
    synchronize_the_device_then_use_and_free_anywhere (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "use");
        c.call("sync device", || c.emu.synchronize_device());
        memset(c, x, 2, "use again");
        c.call("sync s2", || c.emu.synchronize_stream(&c.s[2]));
        free(c, x, 3, "free");
    }

    /// Host access after synchronizing the allocating stream.
    host_access_after_synchronizing_the_allocating_stream (OK) |c| {
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
    }

    /// Host access under internal-dependency reuse after synchronizing.
    host_access_under_internal_dependency_reuse_after_synchronizing (OK) |c| {
        c.pool.set(attr::ReuseAllowInternalDependencies, true).unwrap();
        let x = malloc(c, 0);
        memset(c, x, 0, "access");
        free(c, x, 0, "free x");
        let y = malloc(c, 1);
        assert_eq!(y, x);
        c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
        c.call("memset_now", || c.emu.memset_now(y, 0, G));
        free(c, y, 1, "free y");
    }

    /// A synchronization on another thread orders this thread's work.
    a_synchronization_on_another_thread_orders_this_thread_s_work (OK) |c| {
        let x = malloc(c, 0);
        let (emu, s0) = (c.emu.clone(), c.s[0].clone());
        std::thread::spawn(move || emu.synchronize_stream(&s0).unwrap()).join().unwrap();
        memset(c, x, 1, "use");
        free(c, x, 1, "free");
    }

    /// Free on a third stream after both streams were synchronized.
    free_on_a_third_stream_after_both_streams_were_synchronized (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "use");
        c.call("sync s1", || c.emu.synchronize_stream(&c.s[1]));
        free(c, x, 2, "free");
    }

    /// Join, synchronize, then free on a third stream.
    join_synchronize_then_free_on_a_third_stream (OK) |c| {
        let x = malloc(c, 0);
        c.order(0, 1);
        memset(c, x, 1, "use");
        c.order(1, 0);
        c.call("sync s0", || c.emu.synchronize_stream(&c.s[0]));
        free(c, x, 2, "free");
    }
}

#[test]
fn the_catalogue_has_twenty_buggy_and_twenty_correct_programs_or_more() {
    let bugs = CATALOGUE.iter().filter(|c| c.expect != Expect::Correct).count();
    let oks = CATALOGUE.len() - bugs;
    assert!(bugs >= 20 && oks >= 20, "{bugs} buggy, {oks} correct");
}
