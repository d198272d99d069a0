//! Both sides of a case, the reference model and the emulator, driven call by call and
//! compared after each.

use super::*;

/// What a call returned, comparable across the two sides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Out {
    Unit,
    Alloc(u64, Rule),
    Count(usize),
    Attr(RawAttrValue),
}

pub(crate) fn fail_of(e: &Error) -> Fail {
    Fail { kind: e.kind(), code: e.code(), oom: e.oom().copied() }
}

pub(crate) fn real<T>(r: mempool_hal::Result<T>) -> Res<T> {
    r.map_err(|e| fail_of(&e))
}

/// The emulator side of a case, with handles in the model's index order.
pub(crate) struct Real {
    pub(crate) emu: Emulator,
    pub(crate) streams: Vec<EmuStream>,
    pub(crate) events: Vec<EmuEvent>,
    pub(crate) pools: Vec<EmuPool>,
    /// Keeps the platform of the foreign handles alive.
    pub(crate) _foreign: Emulator,
}

/// Both sides of a case, the addresses handed out so far, and how often each kind of
/// call gave each kind of result.
pub(crate) struct Pair {
    pub(crate) model: Model,
    pub(crate) real: Real,
    pub(crate) handed: Vec<(usize, u64)>,
    /// The allocations not freed yet, of pools not destroyed.
    pub(crate) live: Vec<(usize, u64)>,
    pub(crate) outcomes: BTreeMap<String, u32>,
}

/// A short label for an operation's kind and its result, e.g. `Malloc: SameStream` or
/// `Free: InvalidPointer 100000`.
pub(crate) fn label(op: &Op, out: &Res<Out>) -> String {
    let name = format!("{op:?}");
    let name = name.split([' ', '(']).next().unwrap_or_default();
    let what = match out {
        Ok(Out::Alloc(_, rule)) => format!("{rule:?}"),
        Ok(Out::Count(0)) => "ran nothing".into(),
        Ok(Out::Count(_)) => "ran".into(),
        Ok(_) => "ok".into(),
        Err(f) => format!("{:?} {}", f.kind, f.code),
    };
    format!("{name}: {what}")
}

pub(crate) fn props_of(p: NewPool) -> (Props, PoolProps) {
    let mut m =
        Props { alloc_type: 0, handle_type: 0, device: 0, location_type: 1, max_size: 16 * G, reserved_dirty: false };
    match p {
        NewPool::MaxSize(s) => m.max_size = s,
        NewPool::AllocType(t) => m.alloc_type = t,
        NewPool::HandleType(t) => m.handle_type = t,
        NewPool::LocationHost => m.location_type = 0,
        NewPool::Device(d) => m.device = d,
        NewPool::ReservedByte => m.reserved_dirty = true,
    }
    let mut reserved = [0u8; 32];
    if m.reserved_dirty {
        reserved[17] = 1;
    }
    let r = PoolProps::builder()
        .alloc_type(AllocationType(m.alloc_type))
        .handle_type(HandleType(m.handle_type))
        .location(Location { id: m.device, kind: LocationType(m.location_type) })
        .max_size(m.max_size)
        .reserved(reserved)
        .build();
    (m, r)
}

impl Pair {
    pub(crate) fn new(setup: Setup, dev: Deviations) -> Result<Pair, String> {
        let build = || Emulator::builder().granularity(G).device_memory(DEVICE).deferred().build();
        let emu = build().map_err(|e| e.to_string())?;
        let foreign = build().map_err(|e| e.to_string())?;
        let mut model = Model::new(G, 1, DEVICE, dev);
        let mut real = Real { emu, streams: Vec::new(), events: Vec::new(), pools: Vec::new(), _foreign: foreign };
        // Slot 0 of streams and events: handles of the other instance, which the model
        // answers as destroyed ones.
        model.foreign_stream();
        real.streams.push(real._foreign.create_stream().map_err(|e| e.to_string())?);
        model.foreign_event();
        real.events.push(real._foreign.create_event().map_err(|e| e.to_string())?);
        let mut pair = Pair { model, real, handed: Vec::new(), live: Vec::new(), outcomes: BTreeMap::new() };
        let mut ops = vec![Op::CreateStream, Op::CreateStream, Op::CreateEvent, Op::CreateEvent];
        ops.push(Op::CreatePool(NewPool::MaxSize(setup.max_size)));
        // The flags go through the raw attribute path on both sides, like any other call.
        for id in ReuseFlags::IDS {
            let on = setup.flags.get(id).expect("a reuse flag");
            ops.push(Op::SetAttr { pool: 0, id: id.0, value: Val::U32(u32::from(on)) });
        }
        ops.push(Op::SetAttr { pool: 0, id: 4, value: Val::U64(setup.threshold) });
        for op in ops {
            pair.apply(&op).map_err(|e| format!("setup: {e}"))?;
        }
        Ok(pair)
    }

    pub(crate) fn stream(&self, s: S) -> usize {
        match s {
            S::Foreign => 0,
            S::Idx(i) => 1 + usize::from(i) % (self.model.stream_count() - 1),
        }
    }

    pub(crate) fn event(&self, e: E) -> usize {
        match e {
            E::Foreign => 0,
            E::Idx(i) => 1 + usize::from(i) % (self.model.event_count() - 1),
        }
    }

    pub(crate) fn pool(&self, p: u8) -> usize {
        usize::from(p) % self.model.pool_count()
    }

    pub(crate) fn ptr(&self, p: Ptr) -> Addr {
        let handed = |i: u8| self.handed.get(usize::from(i) % self.handed.len().max(1)).copied();
        match p {
            Ptr::Live(i) => match self.live.get(usize::from(i) % self.live.len().max(1)) {
                Some(&(pool, offset)) => Addr::Pool { pool, offset },
                None => self.ptr(Ptr::Handed(i)),
            },
            Ptr::Handed(i) => handed(i).map_or(Addr::Unknown, |(pool, offset)| Addr::Pool { pool, offset }),
            Ptr::Offset(i, d) => {
                handed(i).map_or(Addr::Unknown, |(pool, offset)| Addr::Pool { pool, offset: offset + d })
            }
            Ptr::PastEnd(p) => {
                let pool = self.pool(p);
                Addr::Pool { pool, offset: self.model.pool_size(pool) }
            }
            Ptr::Null => Addr::Null,
            Ptr::Unknown => Addr::Unknown,
        }
    }

    /// The emulator's address for `a`, or `None` when it falls inside the range of a live
    /// pool other than its own (a destroyed pool's range can be mapped again): such a call
    /// is skipped on both sides.
    pub(crate) fn real_addr(&self, a: Addr) -> Option<DevicePtr> {
        match a {
            Addr::Null => Some(DevicePtr::NULL),
            Addr::Unknown => Some(DevicePtr::from_addr(0x10)),
            Addr::Pool { pool, offset } => {
                let addr = self.real.pools[pool].base().addr() + offset;
                let aliased = self.real.pools.iter().enumerate().any(|(q, rp)| {
                    q != pool && !self.model.pool_destroyed(q) && {
                        let base = rp.base().addr();
                        addr >= base && addr - base < rp.size()
                    }
                });
                (!aliased).then_some(DevicePtr::from_addr(addr))
            }
        }
    }

    /// Runs `op` on both sides; `Err` describes the first difference.
    pub(crate) fn apply(&mut self, op: &Op) -> Result<(), String> {
        let (m, r): (Res<Out>, Res<Out>) = match *op {
            Op::CreateStream => {
                if self.model.stream_count() >= MAX_STREAMS {
                    return Ok(());
                }
                self.model.create_stream();
                self.real.streams.push(self.real.emu.create_stream().map_err(|e| format!("create_stream: {e}"))?);
                (Ok(Out::Unit), Ok(Out::Unit))
            }
            Op::CreateEvent => {
                if self.model.event_count() >= MAX_EVENTS {
                    return Ok(());
                }
                self.model.create_event();
                self.real.events.push(self.real.emu.create_event().map_err(|e| format!("create_event: {e}"))?);
                (Ok(Out::Unit), Ok(Out::Unit))
            }
            Op::DestroyStream(s) => {
                let s = self.stream(s);
                let m = self.model.destroy_stream(s).map(|()| Out::Unit);
                if m.is_ok() {
                    // `destroy_real_stream` waits by querying an event recorded at the
                    // stream's end, which the host then has observed (contract §1).
                    self.model.observe_end(s);
                }
                (m, self.destroy_real_stream(s)?.map(|()| Out::Unit))
            }
            Op::DestroyEvent(e) => {
                let e = self.event(e);
                let m = self.model.destroy_event(e).map(|()| Out::Unit);
                (m, real(self.real.emu.destroy_event(&self.real.events[e])).map(|()| Out::Unit))
            }
            Op::CreatePool(p) => {
                if self.model.pool_count() >= MAX_POOLS {
                    return Ok(());
                }
                let (mp, rp) = props_of(p);
                let m = self.model.create_pool(&mp).map(|_| Out::Unit);
                let r = real(self.real.emu.create_pool(&rp)).map(|pool| {
                    self.real.pools.push(pool);
                    Out::Unit
                });
                (m, r)
            }
            Op::DestroyPool(p) => {
                let p = self.pool(p);
                let m = self.model.destroy_pool(p).map(|()| Out::Unit);
                self.live.retain(|&(q, _)| q != p);
                (m, real(self.real.emu.destroy_pool(&self.real.pools[p])).map(|()| Out::Unit))
            }
            Op::Malloc { pool, size, stream } => {
                let (p, s) = (self.pool(pool), self.stream(stream));
                let m = self.model.malloc(p, size, s);
                let r = real(self.real.pools[p].malloc_async_traced(size, &self.real.streams[s]))
                    .map(|(ptr, rule)| (ptr.addr().wrapping_sub(self.real.pools[p].base().addr()), (rule)));
                if let Ok((off, _)) = m {
                    self.handed.push((p, off));
                    self.live.push((p, off));
                }
                (m.map(|(o, rl)| Out::Alloc(o, rl)), r.map(|(o, rl)| Out::Alloc(o, rl)))
            }
            Op::Free { ptr, stream, via_pool } => {
                let (a, s) = (self.ptr(ptr), self.stream(stream));
                let Some(addr) = self.real_addr(a) else { return Ok(()) };
                let m = self.model.free(a, s).map(|()| Out::Unit);
                if let (Ok(_), Addr::Pool { pool, offset }) = (&m, a) {
                    self.live.retain(|&l| l != (pool, offset));
                }
                let rs = &self.real.streams[s];
                let r = if via_pool {
                    let p = if let Addr::Pool { pool, .. } = a { pool } else { 0 };
                    self.real.pools[p].free(addr, rs)
                } else {
                    self.real.emu.free(addr, rs)
                };
                (m, real(r).map(|()| Out::Unit))
            }
            Op::HostFn(s) => {
                let s = self.stream(s);
                let m = self.model.launch_host_func(s).map(|()| Out::Unit);
                (m, real(self.real.emu.launch_host_func(&self.real.streams[s], Box::new(|| {}))).map(|()| Out::Unit))
            }
            Op::Record { event, stream } => {
                let (e, s) = (self.event(event), self.stream(stream));
                let m = self.model.record_event(e, s).map(|()| Out::Unit);
                (m, real(self.real.emu.record_event(&self.real.events[e], &self.real.streams[s])).map(|()| Out::Unit))
            }
            Op::Wait { stream, event } => {
                let (s, e) = (self.stream(stream), self.event(event));
                let m = self.model.stream_wait_event(s, e).map(|()| Out::Unit);
                let r = self.real.emu.stream_wait_event(&self.real.streams[s], &self.real.events[e]);
                (m, real(r).map(|()| Out::Unit))
            }
            Op::Handoff { from, to, event } => {
                self.apply(&Op::Record { event, stream: from })?;
                return self.apply(&Op::Wait { stream: to, event });
            }
            Op::SyncStream(s) => {
                let s = self.stream(s);
                let m = self.model.synchronize_stream(s).map(|()| Out::Unit);
                (m, real(self.real.emu.synchronize_stream(&self.real.streams[s])).map(|()| Out::Unit))
            }
            Op::SyncEvent(e) => {
                let e = self.event(e);
                let m = self.model.synchronize_event(e).map(|()| Out::Unit);
                (m, real(self.real.emu.synchronize_event(&self.real.events[e])).map(|()| Out::Unit))
            }
            Op::SyncDevice => {
                let m = self.model.synchronize_device().map(|()| Out::Unit);
                (m, real(self.real.emu.synchronize_device()).map(|()| Out::Unit))
            }
            Op::Elapsed(a, b) => {
                let (a, b) = (self.event(a), self.event(b));
                let m = self.model.event_elapsed(a, b).map(|()| Out::Unit);
                let r = self.real.emu.event_elapsed_ms(&self.real.events[a], &self.real.events[b]);
                (m, real(r).map(|_| Out::Unit))
            }
            Op::Step { stream, n } => {
                let s = self.stream(stream);
                let m = self.model.step(s, usize::from(n)).map(Out::Count);
                (m, real(self.real.emu.step(&self.real.streams[s], usize::from(n))).map(Out::Count))
            }
            Op::RunPending(s) => {
                let s = self.stream(s);
                let m = self.model.run_pending(s).map(|()| Out::Unit);
                (m, real(self.real.emu.run_pending(&self.real.streams[s])).map(|()| Out::Unit))
            }
            Op::Trim { pool, keep } => {
                let p = self.pool(pool);
                let st = self.model.stats(p).unwrap_or_default();
                let size = self.model.pool_size(p);
                let keep = match keep {
                    Keep::Bytes(b) => b,
                    Keep::Used => st.used_current,
                    Keep::UsedMinus1 => st.used_current.saturating_sub(1),
                    Keep::Reserved => st.reserved_current,
                    Keep::Size => size,
                    Keep::SizePlus1 => size + 1,
                };
                let m = self.model.trim_to(p, keep).map(|()| Out::Unit);
                (m, real(self.real.pools[p].trim_to(keep)).map(|()| Out::Unit))
            }
            Op::SetAttr { pool, id, value } => {
                let p = self.pool(pool);
                let size = self.model.pool_size(p);
                let v = match value {
                    Val::U32(v) => RawAttrValue::U32(v),
                    Val::U64(v) => RawAttrValue::U64(v),
                    Val::Size => RawAttrValue::U64(size),
                    Val::SizePlus1 => RawAttrValue::U64(size + 1),
                };
                let m = self.model.set_attr(p, id, v).map(|()| Out::Unit);
                (m, real(self.real.pools[p].set_attr_raw(AttrId(id), v)).map(|()| Out::Unit))
            }
            Op::GetAttr { pool, id } => {
                let p = self.pool(pool);
                let m = self.model.get_attr(p, id).map(Out::Attr);
                (m, real(self.real.pools[p].get_attr_raw(AttrId(id))).map(Out::Attr))
            }
        };
        if m != r {
            return Err(format!("{op:?}: the model gives {m:?}, the emulator {r:?}"));
        }
        *self.outcomes.entry(label(op, &m)).or_default() += 1;
        self.compare_state().map_err(|e| format!("after {op:?}: {e}"))
    }

    /// Destroys stream `s` in the emulator and waits until the work it had queued (which
    /// still runs, on its own) has finished, so both sides are in the same state.
    pub(crate) fn destroy_real_stream(&self, s: usize) -> Result<Res<()>, String> {
        let rs = &self.real.streams[s];
        let marker = self.real.emu.create_event().map_err(|e| format!("create_event: {e}"))?;
        let recorded = self.real.emu.record_event(&marker, rs).is_ok();
        let r = real(self.real.emu.destroy_stream(rs));
        if recorded {
            let deadline = Instant::now() + Duration::from_secs(30);
            while self.real.emu.query_event(&marker).map_err(|e| e.to_string())? != EventStatus::Complete {
                if Instant::now() > deadline {
                    return Err(format!("stream slot {s}: its queued work did not finish after destroy_stream"));
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        let _ = self.real.emu.destroy_event(&marker);
        Ok(r)
    }

    /// Compares everything observable without side effects.
    pub(crate) fn compare_state(&mut self) -> Result<(), String> {
        for (p, rp) in self.real.pools.iter().enumerate() {
            let (m, r) = (self.model.stats(p), real(rp.stats()));
            if m != r {
                return Err(format!("pool {p} statistics: the model has {m:?}, the emulator {r:?}"));
            }
            let (m, r) = (self.model.live_allocations(p), rp.live_allocations());
            if m != r {
                return Err(format!("pool {p} live allocations: the model has {m}, the emulator {r}"));
            }
            let (m, r) = (self.model.pending_cached_bytes(p), rp.pending_cached_bytes());
            if m != r {
                return Err(format!("pool {p} cached bytes not yet executed: the model has {m}, the emulator {r}"));
            }
        }
        let r = self.real.emu.mem_info().map_err(|e| e.to_string())?.free;
        if self.model.mem_free() != r {
            return Err(format!("free device memory: the model has {}, the emulator {r}", self.model.mem_free()));
        }
        for (s, rs) in self.real.streams.iter().enumerate() {
            let (m, r) = (self.model.is_idle(s), real(self.real.emu.is_idle(rs)));
            if m != r {
                return Err(format!("stream slot {s} idle: the model has {m:?}, the emulator {r:?}"));
            }
        }
        for (e, re) in self.real.events.iter().enumerate() {
            let (m, r) = (self.model.query_event(e), real(self.real.emu.query_event(re)));
            if m != r {
                return Err(format!("event slot {e} status: the model has {m:?}, the emulator {r:?}"));
            }
        }
        Ok(())
    }
}

/// Runs `ops` after `setup` on both sides; `Err` names the first difference.
pub(crate) fn replay(setup: Setup, ops: &[Op], dev: Deviations) -> Result<Pair, String> {
    let mut pair = Pair::new(setup, dev)?;
    for (i, op) in ops.iter().enumerate() {
        pair.apply(op).map_err(|e| format!("operation {i}: {e}"))?;
    }
    Ok(pair)
}
