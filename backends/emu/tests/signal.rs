//! Notifications, value waits, task failures, the failure mode and aborts (contract §1):
//! what a wait whose end comes from outside its stream orders, and what the checker
//! accepts because of it.

use mempool_emu::{Emulator, TaskFailure, ValueCompare};
use mempool_hal::{Device, ErrorKind, HostBuffer, MemPool, PoolProps, Result};
use rstest::rstest;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const G: u64 = 64 << 10;

fn emu(delay: bool) -> Emulator {
    let b = Emulator::builder().granularity(G).device_memory(256 * G);
    let b = if delay { b.worker_delay_for_tests(Duration::from_micros(300), 11) } else { b };
    b.build().expect("valid config")
}

fn props() -> PoolProps {
    PoolProps::builder().max_size(16 * G).build()
}

/// A block allocated and written on stream `a` is read on stream `b`: refused unless a
/// notification recorded on `a` after the write orders `b` (recorded before or after the
/// wait is enqueued).
#[rstest]
fn a_notification_orders_what_its_record_follows(
    #[values(false, true)] record_first: bool,
    #[values(false, true)] delay: bool,
) -> Result<()> {
    let emu = emu(delay);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props())?;
    let x = pool.malloc_async(G, &a)?;
    emu.memset_async(x, 7, G, &a)?;
    // Without anything ordering b after a, the read is refused at once.
    let e = emu.memcpy_d2h_async(&HostBuffer::new(16), x, &b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamOrderViolation, "{e}");

    let n = emu.create_notify();
    if record_first {
        emu.record_notify(&n, &a)?;
        emu.wait_notify(&n, &b, None)?;
    } else {
        emu.wait_notify(&n, &b, None)?;
    }
    let out = HostBuffer::new(16);
    // Behind an open wait the read is checked when it runs; behind a known one, now.
    emu.memcpy_d2h_async(&out, x, &b)?;
    if !record_first {
        // The record comes later, from another thread.
        let (emu2, n2, a2) = (emu.clone(), n.clone(), a.clone());
        std::thread::spawn(move || emu2.record_notify(&n2, &a2)).join().expect("no panic")?;
    }
    emu.synchronize_stream(&b)?;
    assert!(out.lock().iter().all(|&v| v == 7));
    // The order is b's now: a free on b of a's block is accepted.
    pool.free(x, &b)?;
    emu.synchronize_stream(&a)?;
    Ok(())
}

/// The same program without the record's order: the read behind an open wait that another
/// notification satisfies is refused when it runs, and the task fails.
#[test]
fn an_open_wait_satisfied_out_of_order_fails_the_read() -> Result<()> {
    let emu = emu(false);
    let (a, b, c) = (emu.create_stream()?, emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props())?;
    let x = pool.malloc_async(G, &a)?;
    emu.memset_async(x, 7, G, &a)?;
    let n = emu.create_notify();
    emu.wait_notify(&n, &b, None)?;
    emu.memcpy_d2h_async(&HostBuffer::new(16), x, &b)?;
    // Recorded on c, which is not ordered after a's work.
    emu.record_notify(&n, &c)?;
    let e = emu.synchronize_stream(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamOrderViolation, "{e}");
    emu.synchronize_stream(&a)?;
    Ok(())
}

/// Waits take records in order: the second wait needs a second record.
#[test]
fn a_notification_counts_its_records() -> Result<()> {
    let emu = emu(false);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let n = emu.create_notify();
    emu.record_notify(&n, &a)?;
    emu.wait_notify(&n, &b, None)?;
    emu.wait_notify(&n, &b, Some(Duration::from_millis(30)))?;
    let e = emu.synchronize_stream(&b).unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::AsyncFailure, 107_020), "{e}");
    // Taken: b runs again.
    emu.record_notify(&n, &a)?;
    emu.wait_notify(&n, &b, Some(Duration::from_secs(5)))?;
    emu.synchronize_stream(&b)?;
    emu.destroy_notify(&n)?;
    assert_eq!(emu.record_notify(&n, &a).unwrap_err().kind(), ErrorKind::InvalidHandle);
    Ok(())
}

/// A value wait enqueued and synchronized before the write exists ends when another
/// thread writes the word, and orders its stream after the write.
#[rstest]
fn a_value_wait_ends_with_the_write_it_waits_for(
    #[values(ValueCompare::Eq, ValueCompare::Geq, ValueCompare::And)] cmp: ValueCompare,
    #[values(false, true)] delay: bool,
) -> Result<()> {
    let emu = emu(delay);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props())?;
    let word = pool.malloc_async(G, &a)?;
    let data = pool.malloc_async(G, &a)?;
    emu.memset_async(word, 0, 8, &a)?;
    emu.synchronize_stream(&a)?;
    let data_b = pool.malloc_async(G, &b)?;
    emu.memset_async(data_b, 9, G, &b)?;
    emu.value_wait(word, 100, cmp, &a)?;
    // Ordered after b's memset only through the write that ends the wait.
    emu.memcpy_d2d_async(data, data_b, G, &a)?;
    let (emu2, b2) = (emu.clone(), b.clone());
    let writer = std::thread::spawn(move || -> Result<()> {
        std::thread::sleep(Duration::from_millis(20));
        emu2.value_write(word, 100, &b2)?;
        emu2.synchronize_stream(&b2)
    });
    emu.synchronize_stream(&a)?;
    writer.join().expect("no panic")?;
    let out = HostBuffer::new(G as usize);
    emu.memcpy_d2h_async(&out, data, &a)?;
    emu.synchronize_stream(&a)?;
    assert!(out.lock().iter().all(|&v| v == 9));
    assert!(!cmp.holds(0, 100) && cmp.holds(100, 100));
    Ok(())
}

/// A value write enqueued before the wait gives its order at once.
#[test]
fn a_value_write_enqueued_first_orders_the_wait_at_once() -> Result<()> {
    let emu = emu(false);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props())?;
    let word = pool.malloc_async(G, &a)?;
    emu.memset_async(word, 0, 8, &a)?;
    emu.synchronize_stream(&a)?;
    let x = pool.malloc_async(G, &b)?;
    emu.memset_async(x, 3, G, &b)?;
    let e = emu.memcpy_d2h_async(&HostBuffer::new(8), x, &a).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamOrderViolation);
    emu.value_write(word, 5, &b)?;
    emu.value_wait(word, 5, ValueCompare::Eq, &a)?;
    let out = HostBuffer::new(8);
    emu.memcpy_d2h_async(&out, x, &a)?;
    emu.synchronize_stream(&a)?;
    assert_eq!(&*out.lock(), &[3; 8]);
    assert!(
        ValueCompare::Nor.holds(1, 0)
            && !ValueCompare::Nor.holds(u64::MAX, 0)
            && !ValueCompare::Nor.holds(1, u64::MAX - 1)
    );
    Ok(())
}

/// A failing task reaches the hook with its stream, device and number; with the failure
/// mode set to stop, the stream's later work is dropped until a synchronization takes the
/// failure.
#[rstest]
fn a_failing_task_stops_its_stream_only_in_stop_mode(#[values(false, true)] stop: bool) -> Result<()> {
    let emu = emu(false);
    let s = emu.create_stream()?;
    let seen: Arc<Mutex<Vec<TaskFailure>>> = Arc::default();
    let sink = Arc::clone(&seen);
    emu.set_failure_hook(Some(Arc::new(move |f: &TaskFailure| sink.lock().expect("lock").push(f.clone()))));
    emu.set_stop_on_failure(&s, stop)?;
    let n = emu.create_notify();
    emu.wait_notify(&n, &s, Some(Duration::from_millis(5)))?;
    let task = emu.last_task(&s)?;
    let ran = Arc::new(Mutex::new(false));
    let r = Arc::clone(&ran);
    emu.launch_host_func(&s, Box::new(move || *r.lock().expect("lock") = true))?;
    let e = emu.synchronize_stream(&s).unwrap_err();
    assert_eq!(e.code(), 107_020);
    assert_eq!(*ran.lock().expect("lock"), !stop, "stop mode drops the work after the failure");
    let f = seen.lock().expect("lock").clone();
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].stream, f[0].device, f[0].task, f[0].error.code()), (s.id(), 0, task, 107_020));
    // The failure was taken: the stream runs again.
    let r = Arc::clone(&ran);
    *ran.lock().expect("lock") = false;
    emu.launch_host_func(&s, Box::new(move || *r.lock().expect("lock") = true))?;
    emu.synchronize_stream(&s)?;
    assert!(*ran.lock().expect("lock"));
    emu.set_failure_hook(None);
    Ok(())
}

/// An abort drops the queued work (never run) and the next synchronization reports it.
#[test]
fn a_cut_drops_the_queued_work() -> Result<()> {
    let emu = emu(false);
    let s = emu.create_stream()?;
    let gate = Arc::new(std::sync::Barrier::new(2));
    let (g, (started_tx, started)) = (Arc::clone(&gate), std::sync::mpsc::channel());
    emu.launch_host_func(
        &s,
        Box::new(move || {
            let _ = started_tx.send(());
            g.wait();
        }),
    )?;
    let ran = Arc::new(Mutex::new(false));
    let r = Arc::clone(&ran);
    emu.launch_host_func(&s, Box::new(move || *r.lock().expect("lock") = true))?;
    // The first host function runs when the cut comes: it completes, the second never runs.
    started.recv().expect("the first host function starts");
    emu.cut_stream(&s, mempool_hal::Error::new(ErrorKind::AsyncFailure, 107_023, "abort", "aborted"))?;
    gate.wait();
    assert_eq!(emu.synchronize_stream(&s).unwrap_err().code(), 107_023);
    assert!(!*ran.lock().expect("lock"));
    emu.synchronize_stream(&s)?;
    Ok(())
}

/// A free behind an open wait is done when the stream reaches it, with the wait's order.
#[test]
fn a_free_behind_an_open_wait_takes_its_order() -> Result<()> {
    let emu = emu(false);
    let (a, b) = (emu.create_stream()?, emu.create_stream()?);
    let pool = emu.create_pool(&props())?;
    let x = pool.malloc_async(G, &a)?;
    emu.memset_async(x, 7, G, &a)?;
    let n = emu.create_notify();
    emu.wait_notify(&n, &b, None)?;
    pool.free(x, &b)?;
    emu.record_notify(&n, &a)?;
    emu.synchronize_stream(&b)?;
    emu.synchronize_stream(&a)?;
    assert_eq!(pool.live_allocations(), 0);
    // Without the record's order, the same free fails when it runs.
    let c = emu.create_stream()?;
    let y = pool.malloc_async(G, &a)?;
    emu.wait_notify(&n, &b, None)?;
    pool.free(y, &b)?;
    emu.record_notify(&n, &c)?;
    assert_eq!(emu.synchronize_stream(&b).unwrap_err().kind(), ErrorKind::StreamOrderViolation);
    Ok(())
}
