//! Running a plan: rounds of pools and workers under a deadline, then the checks.

use super::*;

/// Runs `f` on a thread of its own and fails if it does not end within `limit`.
pub(crate) fn with_deadline<T: Send + 'static>(
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name(what.to_string())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("spawn the workload thread");
    match rx.recv_timeout(limit) {
        Ok(v) => {
            handle.join().expect("the workload thread ended after sending");
            v
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {limit:?}: something deadlocked")
        }
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => panic!("{what} ended without a result"),
        },
    }
}

/// One round: two pools (flag combinations `bits` and its complement), the shared
/// streams, every worker; then the checks.
pub(crate) fn round(emu: &Emulator, plan: &Plan, shared: &Arc<Shared>, r: usize) -> R<Ops> {
    let g = shared.gran;
    let bits = plan.rounds[r];
    let size = plan.pool_granules * g;
    let mut slots = Vec::new();
    for (p, bits) in [bits, !bits & 7].into_iter().enumerate() {
        let pool = emu.create_pool(&PoolProps::builder().max_size(size).build()).ctx(|| "create_pool".into())?;
        let flags = ReuseFlags::from_bits(bits);
        flags.apply(&pool).ctx(|| format!("set the reuse flags {flags}"))?;
        // The first pool's threshold climbs from 0 to the pool size over the rounds; the
        // second's falls. Workers change both now and then.
        let step = plan.pool_granules * r as u64 / (plan.rounds.len() as u64 - 1).max(1);
        let t = if p == 0 { step * g } else { size - step * g };
        pool.set(attr::ReleaseThreshold, t).ctx(|| "set threshold".into())?;
        slots.push(PoolSlot {
            pool,
            flags,
            host_used: AtomicU64::new(0),
            host_used_max: AtomicU64::new(0),
            rules: Mutex::new([0; 6]),
        });
    }
    let pools: [PoolSlot; 2] = slots.try_into().expect("two pools");
    let common: Vec<EmuStream> = (0..plan.shared_streams)
        .map(|_| emu.create_stream())
        .collect::<mempool_hal::Result<_>>()
        .ctx(|| "create a shared stream".into())?;
    let verified_before = shared.verified.load(Ordering::SeqCst);

    let stop = AtomicBool::new(false);
    let (results, snapshots): (Vec<R<Ops>>, R<u64>) = std::thread::scope(|sc| {
        let reader = {
            let (pools, shared, stop) = (&pools, Arc::clone(shared), &stop);
            std::thread::Builder::new()
                .name("stress-snapshots".into())
                .spawn_scoped(sc, move || {
                    let res = read_snapshots(pools, stop);
                    if res.is_err() {
                        shared.abort.store(true, Ordering::Relaxed);
                    }
                    res
                })
                .expect("spawn the snapshot reader")
        };
        let handles: Vec<_> = (0..plan.threads)
            .map(|id| {
                let (pools, common, shared) = (&pools, &common, Arc::clone(shared));
                std::thread::Builder::new()
                    .name(format!("stress-worker-{id}"))
                    .spawn_scoped(sc, move || -> R<Ops> {
                        let own = 2 + id % 2;
                        let mut streams = Vec::new();
                        for _ in 0..own {
                            streams.push(emu.create_stream().ctx(|| "create_stream".into())?);
                        }
                        streams.extend(common.iter().cloned());
                        let events = (0..4)
                            .map(|_| emu.create_event())
                            .collect::<mempool_hal::Result<Vec<_>>>()
                            .ctx(|| "create_event".into())?;
                        let seed = plan.seed ^ ((r as u64) << 32) ^ id as u64;
                        Worker {
                            id,
                            emu,
                            plan,
                            pools,
                            shared,
                            streams,
                            own,
                            events,
                            next_event: 0,
                            last_event: None,
                            rng: Rng::new(seed),
                            live: Vec::new(),
                            ops: Ops::default(),
                            panic_pending: None,
                        }
                        .run()
                    })
                    .expect("spawn a worker")
            })
            .collect();
        let results = handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect();
        stop.store(true, Ordering::Relaxed);
        (results, reader.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    let mut ops = Ops::default();
    let mut errors = Vec::new();
    match snapshots {
        Ok(n) => ops.snapshots = n,
        Err(e) => errors.push(format!("snapshot reader: {e}")),
    }
    for res in results {
        match res {
            Ok(o) => ops.add(&o),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(format!("round {r} (flags {bits:03b}): {}", errors.join("; ")));
    }

    // Every worker has freed its blocks: bookkeeping is done at call time.
    let before: Vec<_> = pools
        .iter()
        .map(|s| s.pool.stats())
        .collect::<mempool_hal::Result<_>>()
        .ctx(|| "stats before the final sync".into())?;
    emu.synchronize_device().ctx(|| "final synchronize_device".into())?;
    let mismatches = lock(&shared.mismatches);
    if !mismatches.is_empty() {
        return Err(format!("{} signature mismatches, first: {}", mismatches.len(), mismatches[0]));
    }
    drop(mismatches);
    let verified = shared.verified.load(Ordering::SeqCst) - verified_before;
    if verified != ops.verifies {
        return Err(format!("{} signature checks launched, {verified} ran", ops.verifies));
    }
    if !lock(&shared.live).is_empty() {
        return Err("blocks left in the live map".into());
    }
    let mut reserved_sum = 0;
    for (p, (slot, before)) in pools.iter().zip(&before).enumerate() {
        let pool = &slot.pool;
        let what = format!("round {r}, pool {p} (flags {})", slot.flags);
        let after = pool.stats().ctx(|| "stats".into())?;
        let t = pool.get(attr::ReleaseThreshold).ctx(|| "threshold".into())?;
        if before.used_current != 0 || after.used_current != 0 || pool.live_allocations() != 0 {
            return Err(format!("{what}: USED is not 0 with every block freed: {before:?}, {after:?}"));
        }
        if slot.host_used.load(Ordering::SeqCst) != 0 {
            return Err(format!("{what}: host-side accounting does not balance"));
        }
        if pool.pending_cached_bytes() != 0 {
            return Err(format!("{what}: frees still pending after a device sync"));
        }
        // With USED 0 everything reserved is cached, and every free has run: the sync
        // released down to the threshold (rounded up to a granule), or kept everything;
        // on cann-open it released nothing (contract §12).
        let want = if plan.profile.releases_at_sync() {
            before.reserved_current.min(round_up(t, g).expect("small"))
        } else {
            before.reserved_current
        };
        if after.reserved_current != want {
            return Err(format!(
                "{what}: RESERVED after the device sync is {}, expected {want} ({} before it, threshold {t}, {})",
                after.reserved_current, before.reserved_current, plan.profile
            ));
        }
        reserved_sum += after.reserved_current;
        let host_max = slot.host_used_max.load(Ordering::SeqCst);
        if after.used_high < host_max || after.used_high > after.reserved_high || after.reserved_high > pool.size() {
            return Err(format!("{what}: high marks off (blocks held at once up to {host_max}): {after:?}"));
        }
        let counted = counts_array(pool.reuse_counts());
        let reported = *lock(&slot.rules);
        if counted != reported {
            return Err(format!("{what}: reuse counters {counted:?}, allocations reported {reported:?}"));
        }
        for rule in [ReuseRule::EventDependency, ReuseRule::Opportunistic, ReuseRule::InternalDependency] {
            if !rule.allowed_by(slot.flags) && counted[rule_index(rule)] != 0 {
                return Err(format!("{what}: the {rule} rule served {} allocations", counted[rule_index(rule)]));
            }
        }
    }
    let info = emu.mem_info().ctx(|| "mem_info".into())?;
    if info.total - info.free != reserved_sum {
        return Err(format!("mem_info {info:?} does not match the pools' RESERVED {reserved_sum}"));
    }
    if plan.profile.releases_at_sync() {
        for slot in &pools {
            slot.pool.set(attr::ReleaseThreshold, 0).ctx(|| "threshold 0".into())?;
        }
        emu.synchronize_device().ctx(|| "synchronize_device".into())?;
        for (p, slot) in pools.iter().enumerate() {
            let s = slot.pool.stats().ctx(|| "stats".into())?;
            if s.reserved_current != 0 {
                return Err(format!(
                    "round {r}, pool {p}: RESERVED {} after a device sync with threshold 0",
                    s.reserved_current
                ));
            }
        }
    }
    for (p, slot) in pools.iter().enumerate() {
        slot.pool.trim_to(0).ctx(|| "trim_to(0)".into())?;
        let s = slot.pool.stats().ctx(|| "stats".into())?;
        if s.reserved_current != 0 || s.used_current != 0 {
            return Err(format!("round {r}, pool {p}: {s:?} after trim_to(0) with every block freed"));
        }
        emu.destroy_pool(&slot.pool).ctx(|| "destroy_pool".into())?;
    }
    let info = emu.mem_info().ctx(|| "mem_info".into())?;
    if info.free != info.total {
        return Err(format!("device memory not all free at the end of the round: {info:?}"));
    }
    for s in &common {
        emu.destroy_stream(s).ctx(|| "destroy_stream".into())?;
    }
    Ok(ops)
}

/// Reads every pool's statistics snapshot in a loop until `stop`: RESERVED is never
/// below USED and no high mark is below its current value (contract §7). Returns how
/// many snapshots it read.
pub(crate) fn read_snapshots(pools: &[PoolSlot; 2], stop: &AtomicBool) -> R<u64> {
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        for (p, slot) in pools.iter().enumerate() {
            let s = slot.pool.stats().ctx(|| format!("stats of pool {p}"))?;
            n += 1;
            if s.reserved_current < s.used_current
                || s.used_high < s.used_current
                || s.reserved_high < s.reserved_current
            {
                return Err(format!("pool {p} (flags {}): inconsistent snapshot {s:?}", slot.flags));
            }
        }
        std::thread::yield_now();
    }
    Ok(n)
}

/// Runs every round of `plan` under the deadline; returns the summed counters.
pub(crate) fn stress(plan: Plan) -> Ops {
    let name = format!("{} ({})", plan.name, plan.profile);
    let started = Instant::now();
    let outcome = with_deadline(&name, DEADLINE, move || -> R<Ops> {
        let g = gran();
        let emu = Emulator::builder()
            .granularity(g)
            .device_memory(4 * plan.pool_granules * g)
            .mode(plan.mode)
            .profile(plan.profile)
            .checker(true)
            .build()
            .ctx(|| "build the emulator".into())?;
        let shared = Shared::new();
        let mut ops = Ops::default();
        for r in 0..plan.rounds.len() {
            ops.add(&round(&emu, &plan, &shared, r)?);
        }
        Ok(ops)
    });
    let ops = outcome.unwrap_or_else(|e| panic!("{name}: {e}"));
    println!("{name}: {:.2} s, {ops}", started.elapsed().as_secs_f64());
    ops
}
