//! Both sides of a case, the reference model and the emulator, driven call by call and
//! compared after each.
//!
//! **Execution modes.** In deferred mode nothing runs until the case steps, drains or
//! synchronizes, on both sides alike, so everything is compared after every call. In
//! threaded mode the emulator's workers run queued work whenever they get to it, so the
//! pair compares only what the contract makes independent of timing:
//!
//! - every call's result: addresses, reuse rules and errors, the checker's verdicts
//!   included (contract §11: they depend on the program, never on what has run);
//! - the statistics, live allocations and free device memory after every call: they change
//!   only at calls, and the two that release memory depend on what has run, so before
//!   them, and before every other call whose result depends on it (a synchronization, a
//!   trim, a destroy, `step`, `event_elapsed_ms`, a stream query), the pair *settles*: it waits until the
//!   emulator has run everything queued (`run_pending` of every stream, which observes
//!   nothing) and runs everything in the model;
//! - right after such a call, also the rest: idle streams, event status, pending cached
//!   bytes.
//!
//! Reuse rule d (opportunistic, flag 2) serves a block when its free *has executed*:
//! timing again, so threaded cases keep flag 2 off (the setup never sets it, and writes of
//! a non-zero value to attribute 2 are skipped). Whether rule e inserts a wait depends on
//! timing too, but not which block it serves.

use super::*;

/// How the emulator runs queued work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Nothing runs until the host steps, drains or synchronizes.
    Deferred,
    /// Each stream's worker thread runs its work as soon as it can.
    Threaded,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Deferred => "deferred",
            Mode::Threaded => "threaded",
        }
    }
}

/// What a call returned, comparable across the two sides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Out {
    Unit,
    Alloc(u64, Rule),
    Count(usize),
    Attr(RawAttrValue),
    Complete(bool),
}

pub(crate) fn fail_of(e: &Error) -> Fail {
    Fail { kind: e.kind(), code: e.code(), oom: e.oom().copied() }
}

pub(crate) fn real<T>(r: mempool_hal::Result<T>) -> Res<T> {
    r.map_err(|e| fail_of(&e))
}

/// The emulator side of a case, with handles in the model's index order.
pub(crate) struct Real {
    /// Device 0 and device 1 of one platform.
    pub(crate) devs: Vec<Emulator>,
    pub(crate) streams: Vec<EmuStream>,
    pub(crate) events: Vec<EmuEvent>,
    pub(crate) pools: Vec<EmuPool>,
    /// Keeps the platform of the foreign handles alive.
    pub(crate) _foreign: Emulator,
}

/// Both sides of a case, the addresses handed out so far, and how often each kind of
/// call gave each kind of result.
pub(crate) struct Pair {
    pub(crate) mode: Mode,
    pub(crate) model: Model,
    pub(crate) real: Real,
    pub(crate) handed: Vec<(usize, u64)>,
    /// The allocations not freed yet, of pools not destroyed.
    pub(crate) live: Vec<(usize, u64)>,
    pub(crate) outcomes: BTreeMap<String, u32>,
    /// The result of the last call both sides agreed on (replays assert it).
    pub(crate) last: Option<Res<Out>>,
}

/// A short label for an operation's kind and its result, e.g. `Malloc: SameStream` or
/// `Free: InvalidPointer 100000`; copies are named by direction (`CopyD2D`).
pub(crate) fn label(op: &Op, out: &Res<Out>) -> String {
    let name = match *op {
        Op::Copy { dst, src, .. } | Op::HostCopy { dst, src, .. } => {
            let host = if matches!(op, Op::HostCopy { .. }) { "Host" } else { "" };
            let dir = match (dst, src) {
                (Side::Dev(_), Side::Host) => "H2D",
                (Side::Host, Side::Dev(_)) => "D2H",
                (Side::Dev(_), Side::Dev(_)) => "D2D",
                (Side::Host, Side::Host) => "H2H",
            };
            format!("{host}Copy{dir}")
        }
        _ => {
            let name = format!("{op:?}");
            name.split([' ', '(']).next().unwrap_or_default().to_string()
        }
    };
    let what = match out {
        Ok(Out::Alloc(_, rule)) => format!("{rule:?}"),
        Ok(Out::Count(0)) => "ran nothing".into(),
        Ok(Out::Count(_)) => "ran".into(),
        Ok(Out::Complete(true)) => "complete".into(),
        Ok(Out::Complete(false)) => "not ready".into(),
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

/// The rule whose count rose from `before` to `after` (one allocation apart).
fn rule_counted(before: ReuseCounts, after: ReuseCounts) -> Rule {
    let rules = [
        (Rule::SameStream, before.same_stream, after.same_stream),
        (Rule::KnownComplete, before.known_complete, after.known_complete),
        (Rule::EventDependency, before.event_dependency, after.event_dependency),
        (Rule::Opportunistic, before.opportunistic, after.opportunistic),
        (Rule::InternalDependency, before.internal_dependency, after.internal_dependency),
        (Rule::Fresh, before.fresh, after.fresh),
    ];
    let rose: Vec<_> = rules.iter().filter(|(_, b, a)| a > b).map(|(r, _, _)| *r).collect();
    assert_eq!(rose.len(), 1, "one allocation raises one rule's count: {before:?} -> {after:?}");
    rose[0]
}

/// Fills a host buffer of `len` bytes for a copy (at most a few granules).
fn host_bytes(len: u64) -> Vec<u8> {
    vec![0x5a; usize::try_from(len).expect("a small length")]
}

impl Pair {
    pub(crate) fn new(setup: Setup, mode: Mode, dev: Deviations) -> Result<Pair, String> {
        let exec = match mode {
            Mode::Deferred => ExecutionMode::Deferred,
            Mode::Threaded => ExecutionMode::Threaded,
        };
        let build = || {
            Emulator::builder()
                .granularity(G)
                .device_memory(DEVICE)
                .devices(2)
                .profile(setup.profile)
                .race_check(setup.races)
                .mode(exec)
                .build()
        };
        let emu = build().map_err(|e| e.to_string())?;
        let foreign = build().map_err(|e| e.to_string())?;
        let second = emu.device(1).map_err(|e| e.to_string())?;
        let model = Model::new(G, 2, DEVICE, setup.profile, dev).with_races(setup.races);
        let real = Real {
            devs: vec![emu, second],
            streams: Vec::new(),
            events: Vec::new(),
            pools: Vec::new(),
            _foreign: foreign,
        };
        let mut pair =
            Pair { mode, model, real, handed: Vec::new(), live: Vec::new(), outcomes: BTreeMap::new(), last: None };
        // Slot 0 of streams and events: handles of the other instance, which the model
        // answers as destroyed ones.
        pair.model.foreign_stream();
        pair.real.streams.push(pair.real._foreign.create_stream().map_err(|e| e.to_string())?);
        pair.model.foreign_event();
        pair.real.events.push(pair.real._foreign.create_event().map_err(|e| e.to_string())?);
        let mut ops = vec![Op::CreateStream, Op::CreateStream, Op::CreateEvent, Op::CreateEvent];
        ops.push(Op::CreatePool(NewPool::MaxSize(setup.max_size)));
        // The flags go through the raw attribute path on both sides, like any other call.
        for id in ReuseFlags::IDS {
            let on = setup.flags.get(id).expect("a reuse flag");
            ops.push(Op::SetAttr { pool: 0, id: id.0, value: Val::U32(u32::from(on)) });
        }
        ops.push(Op::SetAttr { pool: 0, id: 4, value: Val::U64(setup.threshold) });
        if setup.second_device {
            ops.extend([Op::CreateStreamOn(1), Op::CreateEventOn(1), Op::CreatePool(NewPool::Device(1))]);
        }
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

    pub(crate) fn device(&self, d: u8) -> u32 {
        u32::from(d) % self.model.devices()
    }

    /// The emulator's handle of device `d`.
    pub(crate) fn dev(&self, d: u32) -> &Emulator {
        &self.real.devs[d as usize]
    }

    /// The emulator's handle of stream `s`'s device (device 0 for a foreign stream).
    pub(crate) fn dev_of_stream(&self, s: usize) -> &Emulator {
        self.dev(self.model.stream_device(s))
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
    /// is skipped on both sides. With `accesses`, also inside the range of another pool
    /// that was destroyed: a copy there is a use of a destroyed pool's memory, which the
    /// model, addressing by pool, cannot tell from no device memory.
    pub(crate) fn real_addr(&self, a: Addr, accesses: bool) -> Option<DevicePtr> {
        match a {
            Addr::Null => Some(DevicePtr::NULL),
            Addr::Unknown => Some(DevicePtr::from_addr(0x10)),
            Addr::Pool { pool, offset } => {
                let addr = self.real.pools[pool].base().addr() + offset;
                let aliased = self.real.pools.iter().enumerate().any(|(q, rp)| {
                    q != pool && (accesses || !self.model.pool_destroyed(q)) && {
                        let base = rp.base().addr();
                        addr >= base && addr - base < rp.size()
                    }
                });
                (!aliased).then_some(DevicePtr::from_addr(addr))
            }
        }
    }

    /// The model's and the emulator's view of a copy side: `None` for host memory.
    fn side(&self, side: Side) -> Option<Option<(Addr, DevicePtr)>> {
        match side {
            Side::Host => Some(None),
            Side::Dev(p) => {
                let a = self.ptr(p);
                self.real_addr(a, true).map(|r| Some((a, r)))
            }
        }
    }

    /// Threaded mode: waits until the emulator has run everything queued, and runs
    /// everything in the model, so that what has run is the same on both sides. Observes
    /// nothing. Deferred mode: nothing to do (nothing runs on its own).
    pub(crate) fn settle(&mut self) -> Result<(), String> {
        if self.mode == Mode::Deferred {
            return Ok(());
        }
        for (s, rs) in self.real.streams.iter().enumerate() {
            if !self.model.stream_destroyed(s) {
                self.dev_of_stream(s).run_pending(rs).map_err(|e| format!("settle: stream slot {s}: {e}"))?;
            }
        }
        self.model.settle();
        Ok(())
    }

    /// Runs `op` on both sides; `Err` describes the first difference.
    pub(crate) fn apply(&mut self, op: &Op) -> Result<(), String> {
        let threaded = self.mode == Mode::Threaded;
        // Threaded mode: the calls whose results depend on what has run come after a
        // settle, and then everything is compared.
        let settles = matches!(
            op,
            Op::SyncStream(_)
                | Op::SyncEvent(_)
                | Op::SyncDevice
                | Op::SyncDeviceOf(_)
                | Op::Trim { .. }
                | Op::DestroyPool(_)
                | Op::Step { .. }
                | Op::Elapsed(..)
                | Op::QueryStream(_)
        );
        if settles {
            self.settle()?;
        }
        let (m, r): (Res<Out>, Res<Out>) = match *op {
            Op::CreateStream => return self.apply(&Op::CreateStreamOn(0)),
            Op::CreateStreamOn(d) => {
                if self.model.stream_count() >= MAX_STREAMS {
                    return Ok(());
                }
                let d = self.device(d);
                self.model.create_stream_on(d);
                self.real.streams.push(self.dev(d).create_stream().map_err(|e| format!("create_stream: {e}"))?);
                (Ok(Out::Unit), Ok(Out::Unit))
            }
            Op::CreateEvent => return self.apply(&Op::CreateEventOn(0)),
            Op::CreateEventOn(d) => {
                if self.model.event_count() >= MAX_EVENTS {
                    return Ok(());
                }
                let d = self.device(d);
                self.model.create_event_on(d);
                self.real.events.push(self.dev(d).create_event().map_err(|e| format!("create_event: {e}"))?);
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
                (m, real(self.dev(0).destroy_event(&self.real.events[e])).map(|()| Out::Unit))
            }
            Op::CreatePool(p) => {
                if self.model.pool_count() >= MAX_POOLS {
                    return Ok(());
                }
                let (mp, rp) = props_of(p);
                let m = self.model.create_pool(&mp).map(|_| Out::Unit);
                let r = real(self.dev(0).create_pool(&rp)).map(|pool| {
                    self.real.pools.push(pool);
                    Out::Unit
                });
                (m, r)
            }
            Op::DestroyPool(p) => {
                let p = self.pool(p);
                let m = self.model.destroy_pool(p).map(|()| Out::Unit);
                self.live.retain(|&(q, _)| q != p);
                (m, real(self.dev(0).destroy_pool(&self.real.pools[p])).map(|()| Out::Unit))
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
            Op::MallocSync { pool, size, stream } => {
                let (p, s) = (self.pool(pool), self.stream(stream));
                let m = self.model.malloc_sync(p, size, s);
                // `malloc_sync` does not say which rule served it: the pool's counts do.
                let rp = &self.real.pools[p];
                let before = rp.reuse_counts();
                let r = real(rp.malloc_sync(size, &self.real.streams[s])).map(|ptr| {
                    let rule = rule_counted(before, rp.reuse_counts());
                    (ptr.addr().wrapping_sub(rp.base().addr()), rule)
                });
                if let Ok((off, _)) = m {
                    self.handed.push((p, off));
                    self.live.push((p, off));
                }
                (m.map(|(o, rl)| Out::Alloc(o, rl)), r.map(|(o, rl)| Out::Alloc(o, rl)))
            }
            Op::Free { ptr, stream, via_pool } => {
                let (a, s) = (self.ptr(ptr), self.stream(stream));
                let Some(addr) = self.real_addr(a, false) else { return Ok(()) };
                let m = self.model.free(a, s).map(|()| Out::Unit);
                if let (Ok(_), Addr::Pool { pool, offset }) = (&m, a) {
                    self.live.retain(|&l| l != (pool, offset));
                }
                let rs = &self.real.streams[s];
                let r = if via_pool {
                    let p = if let Addr::Pool { pool, .. } = a { pool } else { 0 };
                    self.real.pools[p].free(addr, rs)
                } else {
                    self.dev(0).free(addr, rs)
                };
                (m, real(r).map(|()| Out::Unit))
            }
            Op::HostFn(s) => {
                let s = self.stream(s);
                let m = self.model.launch_host_func(s).map(|()| Out::Unit);
                let r = self.dev_of_stream(s).launch_host_func(&self.real.streams[s], Box::new(|| {}));
                (m, real(r).map(|()| Out::Unit))
            }
            Op::Record { event, stream } => {
                let (e, s) = (self.event(event), self.stream(stream));
                let m = self.model.record_event(e, s).map(|()| Out::Unit);
                (m, real(self.dev(0).record_event(&self.real.events[e], &self.real.streams[s])).map(|()| Out::Unit))
            }
            Op::Wait { stream, event } => {
                let (s, e) = (self.stream(stream), self.event(event));
                let m = self.model.stream_wait_event(s, e).map(|()| Out::Unit);
                let r = self.dev(0).stream_wait_event(&self.real.streams[s], &self.real.events[e]);
                (m, real(r).map(|()| Out::Unit))
            }
            Op::Handoff { from, to, event } => {
                self.apply(&Op::Record { event, stream: from })?;
                return self.apply(&Op::Wait { stream: to, event });
            }
            Op::SyncStream(s) => {
                let s = self.stream(s);
                let m = self.model.synchronize_stream(s).map(|()| Out::Unit);
                (m, real(self.dev_of_stream(s).synchronize_stream(&self.real.streams[s])).map(|()| Out::Unit))
            }
            Op::QueryStream(s) => {
                let s = self.stream(s);
                let m = self.model.query_stream(s).map(Out::Complete);
                let r = self.dev(0).query_stream(&self.real.streams[s]);
                (m, real(r).map(|st| Out::Complete(st == StreamStatus::Complete)))
            }
            Op::SyncEvent(e) => {
                let e = self.event(e);
                let m = self.model.synchronize_event(e).map(|()| Out::Unit);
                let r = self.dev(self.model.event_device(e)).synchronize_event(&self.real.events[e]);
                (m, real(r).map(|()| Out::Unit))
            }
            Op::SyncDevice => return self.apply(&Op::SyncDeviceOf(0)),
            Op::SyncDeviceOf(d) => {
                let d = self.device(d);
                let m = self.model.synchronize_device(d).map(|()| Out::Unit);
                (m, real(self.dev(d).synchronize_device()).map(|()| Out::Unit))
            }
            Op::Elapsed(a, b) => {
                let (a, b) = (self.event(a), self.event(b));
                let m = self.model.event_elapsed(a, b).map(|()| Out::Unit);
                let r = self.dev(0).event_elapsed_ms(&self.real.events[a], &self.real.events[b]);
                (m, real(r).map(|_| Out::Unit))
            }
            Op::Step { stream, n } => {
                let s = self.stream(stream);
                let m = self.model.step(s, usize::from(n)).map(Out::Count);
                (m, real(self.dev(0).step(&self.real.streams[s], usize::from(n))).map(Out::Count))
            }
            Op::RunPending(s) => {
                let s = self.stream(s);
                let m = self.model.run_pending(s).map(|()| Out::Unit);
                (m, real(self.dev(0).run_pending(&self.real.streams[s])).map(|()| Out::Unit))
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
                if threaded && id == 2 && matches!(value, Val::U32(v) if v != 0) {
                    // Rule d depends on timing: off in threaded mode.
                    return Ok(());
                }
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
            Op::Memset { ptr, len, stream } => {
                let (a, s) = (self.ptr(ptr), self.stream(stream));
                let Some(addr) = self.real_addr(a, true) else { return Ok(()) };
                let m = self.model.access(s, &[a], len).map(|()| Out::Unit);
                let r = self.dev_of_stream(s).memset_async(addr, 0xa5, len, &self.real.streams[s]);
                (m, real(r).map(|()| Out::Unit))
            }
            Op::Copy { dst, src, len, stream } => {
                let s = self.stream(stream);
                let (Some(d), Some(sr)) = (self.side(dst), self.side(src)) else { return Ok(()) };
                let (dev, rs) = (self.dev_of_stream(s), &self.real.streams[s]);
                let (ranges, r) = match (d, sr) {
                    (Some((a, ad)), None) => (vec![(a, true)], dev.memcpy_h2d_async(ad, &host_bytes(len), rs)),
                    (None, Some((b, bd))) => {
                        let buf = HostBuffer::new(usize::try_from(len).expect("a small length"));
                        (vec![(b, false)], dev.memcpy_d2h_async(&buf, bd, rs))
                    }
                    (Some((a, ad)), Some((b, bd))) => {
                        (vec![(a, true), (b, false)], dev.memcpy_d2d_async(ad, bd, len, rs))
                    }
                    (None, None) => return Ok(()),
                };
                (self.model.access_rw(s, &ranges, len).map(|()| Out::Unit), real(r).map(|()| Out::Unit))
            }
            Op::Kernel { args, stream } => {
                let s = self.stream(stream);
                let mut ranges = Vec::new();
                let mut declared = Vec::new();
                for arg in args.into_iter().flatten() {
                    let a = self.ptr(arg.ptr);
                    let Some(addr) = self.real_addr(a, true) else { return Ok(()) };
                    ranges.push((a, arg.len, arg.write));
                    declared.push((addr, arg.len, arg.write));
                }
                let accesses: Vec<_> = declared
                    .iter()
                    .map(
                        |&(p, len, write)| if write { KernelAccess::Write(p, len) } else { KernelAccess::Read(p, len) },
                    )
                    .collect();
                let body = move |m: &KernelMem| {
                    for &(p, len, write) in &declared {
                        let n = usize::try_from(len).expect("a small length");
                        if write { m.write(p, &vec![0x6b; n])? } else { m.read(p, len).map(drop)? }
                    }
                    Ok(())
                };
                let m = self.model.launch_kernel(s, &ranges).map(|()| Out::Unit);
                let r = self.dev_of_stream(s).launch_kernel(&self.real.streams[s], &accesses, body);
                (m, real(r).map(|()| Out::Unit))
            }
            Op::HostMemset { ptr, len } => {
                let a = self.ptr(ptr);
                let Some(addr) = self.real_addr(a, true) else { return Ok(()) };
                let m = self.model.host_access(&[(a, true)], len).map(|()| Out::Unit);
                (m, real(self.dev(0).memset_now(addr, 0x3c, len)).map(|()| Out::Unit))
            }
            Op::HostCopy { dst, src, len } => {
                let (Some(d), Some(sr)) = (self.side(dst), self.side(src)) else { return Ok(()) };
                let (mut dst_buf, src_buf) = (host_bytes(len), host_bytes(len));
                let dst_side = d.map_or(CopySide::Host(dst_buf.as_mut_ptr()), |(_, p)| CopySide::Device(p));
                let src_side = sr.map_or(CopySide::Host(src_buf.as_ptr().cast_mut()), |(_, p)| CopySide::Device(p));
                let ranges: Vec<(Addr, bool)> =
                    [d.map(|(a, _)| (a, true)), sr.map(|(a, _)| (a, false))].into_iter().flatten().collect();
                let m = self.model.host_access(&ranges, len).map(|()| Out::Unit);
                // SAFETY: each host side is a buffer of `len` bytes alive for the whole call;
                // the source is only read.
                let r = unsafe { self.dev(0).memcpy_raw(dst_side, src_side, len) };
                (m, real(r).map(|()| Out::Unit))
            }
        };
        if m != r {
            return Err(format!("{op:?}: the model gives {m:?}, the emulator {r:?}"));
        }
        *self.outcomes.entry(label(op, &m)).or_default() += 1;
        self.last = Some(m);
        let all = !threaded || settles;
        self.compare_state(all).map_err(|e| format!("after {op:?}: {e}"))
    }

    /// Destroys stream `s` in the emulator and waits until the work it had queued (which
    /// still runs, on its own) has finished, so both sides are in the same state.
    pub(crate) fn destroy_real_stream(&self, s: usize) -> Result<Res<()>, String> {
        let emu = self.dev(0);
        let rs = &self.real.streams[s];
        let marker = emu.create_event().map_err(|e| format!("create_event: {e}"))?;
        let recorded = emu.record_event(&marker, rs).is_ok();
        let r = real(emu.destroy_stream(rs));
        if recorded {
            let deadline = Instant::now() + Duration::from_secs(30);
            while emu.query_event(&marker).map_err(|e| e.to_string())? != EventStatus::Complete {
                if Instant::now() > deadline {
                    return Err(format!("stream slot {s}: its queued work did not finish after destroy_stream"));
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        let _ = emu.destroy_event(&marker);
        Ok(r)
    }

    /// Compares everything observable without side effects: the statistics, live
    /// allocations and free device memory always; with `all`, also the cached bytes not yet
    /// executed, whether every stream is idle and every event complete (timing in threaded
    /// mode, unless the pair has just settled).
    pub(crate) fn compare_state(&mut self, all: bool) -> Result<(), String> {
        for (p, rp) in self.real.pools.iter().enumerate() {
            let (m, r) = (self.model.stats(p), real(rp.stats()));
            if m != r {
                return Err(format!("pool {p} statistics: the model has {m:?}, the emulator {r:?}"));
            }
            let (m, r) = (self.model.live_allocations(p), rp.live_allocations());
            if m != r {
                return Err(format!("pool {p} live allocations: the model has {m}, the emulator {r}"));
            }
            if all {
                let (m, r) = (self.model.pending_cached_bytes(p), rp.pending_cached_bytes());
                if m != r {
                    return Err(format!("pool {p} cached bytes not yet executed: the model has {m}, the emulator {r}"));
                }
            }
        }
        for d in 0..self.model.devices() {
            let r = self.dev(d).mem_info().map_err(|e| e.to_string())?.free;
            if self.model.mem_free(d) != r {
                return Err(format!(
                    "free memory of device {d}: the model has {}, the emulator {r}",
                    self.model.mem_free(d)
                ));
            }
        }
        if !all {
            return Ok(());
        }
        for (s, rs) in self.real.streams.iter().enumerate() {
            let (m, r) = (self.model.is_idle(s), real(self.dev(0).is_idle(rs)));
            if m != r {
                return Err(format!("stream slot {s} idle: the model has {m:?}, the emulator {r:?}"));
            }
        }
        for (e, re) in self.real.events.iter().enumerate() {
            let (m, r) = (self.model.query_event(e), real(self.dev(0).query_event(re)));
            if m != r {
                return Err(format!("event slot {e} status: the model has {m:?}, the emulator {r:?}"));
            }
        }
        Ok(())
    }
}

/// Runs `ops` after `setup` on both sides in deferred mode; `Err` names the first
/// difference.
pub(crate) fn replay(setup: Setup, ops: &[Op], dev: Deviations) -> Result<Pair, String> {
    replay_in(Mode::Deferred, setup, ops, dev)
}

/// Runs `ops` after `setup` on both sides in `mode`; `Err` names the first difference.
pub(crate) fn replay_in(mode: Mode, setup: Setup, ops: &[Op], dev: Deviations) -> Result<Pair, String> {
    let mut pair = Pair::new(setup, mode, dev)?;
    for (i, op) in ops.iter().enumerate() {
        pair.apply(op).map_err(|e| format!("operation {i}: {e}"))?;
    }
    Ok(pair)
}
