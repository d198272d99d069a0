//! The shared state of a run, its pools, its plan, and the workers that drive the streams.

use super::*;

/// What every worker and every queued host function of a run shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) gran: u64,
    /// Tag counter: each block's tag is `mix` of a fresh value, so tags are unique.
    pub(crate) next_tag: AtomicU64,
    /// Live blocks on the host's side: start -> (length, tag).
    pub(crate) live: Mutex<BTreeMap<u64, (u64, u64)>>,
    /// Signature checks that failed, described.
    pub(crate) mismatches: Mutex<Vec<String>>,
    /// Signature checks that have run.
    pub(crate) verified: AtomicU64,
    /// Set by the first worker that fails, so the others stop early.
    pub(crate) abort: AtomicBool,
}

impl Shared {
    pub(crate) fn new() -> Arc<Shared> {
        Arc::new(Shared {
            gran: gran(),
            next_tag: AtomicU64::new(1),
            live: Mutex::new(BTreeMap::new()),
            mismatches: Mutex::new(Vec::new()),
            verified: AtomicU64::new(0),
            abort: AtomicBool::new(false),
        })
    }

    pub(crate) fn tag(&self) -> u64 {
        mix(self.next_tag.fetch_add(1, Ordering::Relaxed))
    }

    /// Notes a block handed out; an overlap with a live block is a double hand-out.
    pub(crate) fn register(&self, addr: u64, len: u64, tag: u64) -> R {
        let mut live = lock(&self.live);
        if let Some((&a, &(l, t))) = live.range(..addr + len).next_back() {
            if a + l > addr {
                return Err(format!(
                    "block [{addr:#x}, +{len}) (tag {tag:#x}) was handed out while [{a:#x}, +{l}) (tag {t:#x}) is live"
                ));
            }
        }
        live.insert(addr, (len, tag));
        Ok(())
    }

    /// Forgets a block about to be freed (before the free, so that nobody can be handed
    /// the block while it is still listed).
    pub(crate) fn unregister(&self, addr: u64, tag: u64) -> R {
        match lock(&self.live).remove(&addr) {
            Some((_, t)) if t == tag => Ok(()),
            other => Err(format!("live map lost block {addr:#x} (tag {tag:#x}): found {other:?}")),
        }
    }

    /// The host function that checks a block read back into `buf`.
    pub(crate) fn checker(
        self: &Arc<Shared>,
        buf: HostBuffer,
        addr: u64,
        tag: u64,
        sig: Sig,
    ) -> Box<dyn FnOnce() + Send> {
        let shared = Arc::clone(self);
        Box::new(move || {
            let data = buf.lock();
            if let Some((offset, found)) = first_mismatch(&data, tag, sig, shared.gran) {
                let want = expected_word(tag, sig, offset / 8, shared.gran);
                lock(&shared.mismatches).push(format!(
                    "block {addr:#x} (+{}, tag {tag:#x}, {sig:?}): word at offset {offset} is {found:#018x}, \
                     expected {want:#018x}: another owner wrote it",
                    data.len()
                ));
            }
            shared.verified.fetch_add(1, Ordering::Relaxed);
        })
    }
}

/// One pool of a round, with what the host knows about it.
#[derive(Debug)]
pub(crate) struct PoolSlot {
    pub(crate) pool: EmuPool,
    pub(crate) flags: ReuseFlags,
    /// Bytes of blocks the host holds: raised after each allocation returns, lowered
    /// before each free is called, so it never exceeds USED.
    pub(crate) host_used: AtomicU64,
    pub(crate) host_used_max: AtomicU64,
    /// Allocations per rule, as reported by `malloc_async_traced`.
    pub(crate) rules: Mutex<[u64; 6]>,
}

/// The shape of a stress run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) name: &'static str,
    /// The pools' behaviour (contract §12): on `cann-open` nothing is reused or released
    /// at synchronization, so the workers trim when an allocation runs out of memory.
    pub(crate) profile: Profile,
    pub(crate) mode: ExecutionMode,
    pub(crate) threads: usize,
    pub(crate) shared_streams: usize,
    /// The flag combinations of the rounds' first pools (bit 0: event dependencies,
    /// bit 1: opportunistic, bit 2: internal); the second pool has the complement.
    pub(crate) rounds: Vec<u8>,
    pub(crate) iterations: usize,
    pub(crate) max_live: usize,
    pub(crate) pool_granules: u64,
    /// Percent of iterations that synchronize something.
    pub(crate) sync_percent: u64,
    pub(crate) device_syncs: bool,
    /// Worker 0 launches a panicking host function on its first stream now and then.
    pub(crate) panics: bool,
    pub(crate) seed: u64,
}

/// A block owned by a worker.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub(crate) ptr: DevicePtr,
    pub(crate) len: u64,
    pub(crate) pool: usize,
    pub(crate) tag: u64,
    pub(crate) sig: Sig,
    /// The stream ordered after everything done to the block so far.
    pub(crate) at: usize,
}

pub(crate) struct Worker<'a> {
    pub(crate) id: usize,
    pub(crate) emu: &'a Emulator,
    pub(crate) plan: &'a Plan,
    pub(crate) pools: &'a [PoolSlot; 2],
    pub(crate) shared: Arc<Shared>,
    /// Own streams first, then the streams shared by every worker.
    pub(crate) streams: Vec<EmuStream>,
    pub(crate) own: usize,
    pub(crate) events: Vec<EmuEvent>,
    pub(crate) next_event: usize,
    /// The last event recorded, with the stream it was recorded on.
    pub(crate) last_event: Option<(usize, usize)>,
    pub(crate) rng: Rng,
    pub(crate) live: Vec<Block>,
    pub(crate) ops: Ops,
    /// The stream whose next synchronization must report a panic.
    pub(crate) panic_pending: Option<usize>,
}

impl Worker<'_> {
    pub(crate) fn err(&self, msg: String) -> String {
        format!("worker {}: {msg}", self.id)
    }

    pub(crate) fn stream_name(&self, i: usize) -> String {
        let kind = if i < self.own { "own" } else { "shared" };
        format!("{kind} stream {}", self.streams[i].id())
    }

    pub(crate) fn pick_stream(&mut self) -> usize {
        if self.streams.len() == self.own || self.rng.chance(70) {
            self.rng.index(self.own)
        } else {
            self.own + self.rng.index(self.streams.len() - self.own)
        }
    }

    pub(crate) fn pick_other(&mut self, not: usize) -> usize {
        let i = self.rng.index(self.streams.len() - 1);
        if i >= not { i + 1 } else { i }
    }

    pub(crate) fn run(mut self) -> R<Ops> {
        for _ in 0..self.plan.iterations {
            if self.shared.abort.load(Ordering::Relaxed) {
                break;
            }
            if let Err(e) = self.step() {
                self.shared.abort.store(true, Ordering::Relaxed);
                return Err(self.err(e));
            }
        }
        let end = self.finish();
        if end.is_err() {
            self.shared.abort.store(true, Ordering::Relaxed);
        }
        end.map_err(|e| self.err(e))?;
        Ok(self.ops)
    }

    pub(crate) fn step(&mut self) -> R {
        if self.plan.panics && self.id == 0 && self.panic_pending.is_none() && self.rng.chance(2) {
            return self.launch_panic();
        }
        if self.rng.chance(self.plan.sync_percent) {
            return self.sync_something();
        }
        match self.rng.below(100) {
            0..=39 if self.live.len() < self.plan.max_live => self.alloc(),
            0..=64 if !self.live.is_empty() => {
                let i = self.rng.index(self.live.len());
                self.free(i)
            }
            65..=74 if !self.live.is_empty() => {
                let i = self.rng.index(self.live.len());
                let to = self.pick_other(self.live[i].at);
                let mut b = self.live[i];
                self.hand_off(&mut b, to)?;
                self.live[i] = b;
                Ok(())
            }
            75..=84 if !self.live.is_empty() => {
                let i = self.rng.index(self.live.len());
                let b = self.live[i];
                self.verify(&b)
            }
            85..=93 => self.link(),
            94..=96 => self.set_threshold(),
            97..=98 => self.trim(),
            _ => self.read_stats(),
        }
    }

    pub(crate) fn alloc(&mut self) -> R {
        let g = self.shared.gran;
        let p = self.rng.index(2);
        let at = self.pick_stream();
        let size = if self.rng.chance(10) { 1 + self.rng.below(8 * g) } else { 1 + self.rng.below(4 * g) };
        let Some((ptr, rule)) = self.try_alloc(p, size, at)? else { return Ok(()) };
        self.ops.allocs += 1;
        self.ops.rules[rule_index(rule)] += 1;
        lock(&self.pools[p].rules)[rule_index(rule)] += 1;
        let slot = &self.pools[p];
        if !rule.allowed_by(slot.flags) {
            return Err(format!("pool with flags {} served an allocation by the {rule} rule", slot.flags));
        }
        let len = round_up(size, g).expect("small sizes round");
        let (base, end) = (slot.pool.base().addr(), slot.pool.base().addr() + slot.pool.size());
        if ptr.addr() % g != 0 || ptr.addr() < base || ptr.addr() + len > end {
            return Err(format!("allocation {ptr} of {len} bytes is not a granule of the pool [{base:#x}, {end:#x})"));
        }
        let tag = self.shared.tag();
        self.shared.register(ptr.addr(), len, tag)?;
        let now = slot.host_used.fetch_add(len, Ordering::SeqCst) + len;
        slot.host_used_max.fetch_max(now, Ordering::SeqCst);
        let sig = if self.rng.chance(50) { Sig::Copied } else { Sig::Memset };
        let b = Block { ptr, len, pool: p, tag, sig, at };
        self.write_signature(&b)?;
        self.live.push(b);
        Ok(())
    }

    /// Allocates, relieving memory pressure on out-of-memory: first by synchronizing
    /// this worker's streams (their cached blocks become known complete), then by the
    /// device (or by freeing one of its own blocks); then it gives up on this one. On
    /// `cann-open` a synchronization releases nothing and cached blocks are never reused
    /// (contract §12), so each relief step ends with a trim down to USED.
    pub(crate) fn try_alloc(&mut self, p: usize, size: u64, at: usize) -> R<Option<(DevicePtr, ReuseRule)>> {
        for attempt in 0..3 {
            match self.pools[p].pool.malloc_async_traced(size, &self.streams[at]) {
                Ok(x) => return Ok(Some(x)),
                Err(e) if e.kind() == ErrorKind::OutOfMemory => {
                    self.ops.oom += 1;
                    let oom = e.oom().ok_or_else(|| format!("out-of-memory error without details: {e}"))?;
                    if oom.stats.reserved_current > self.pools[p].pool.size() {
                        return Err(format!("out-of-memory error with RESERVED above the pool size: {e}"));
                    }
                    match attempt {
                        0 => {
                            for i in 0..self.streams.len() {
                                self.sync_stream(i)?;
                            }
                        }
                        1 if self.plan.device_syncs => self.sync_device()?,
                        1 if !self.live.is_empty() => {
                            let at = self.live[0].at;
                            self.free(0)?;
                            self.sync_stream(at)?;
                        }
                        _ => {}
                    }
                    if !self.plan.profile.reuses() {
                        self.trim_to_used(p)?;
                    }
                }
                Err(e) => return Err(format!("malloc_async({size}) on {}: {e}", self.stream_name(at))),
            }
        }
        self.ops.oom_skipped += 1;
        Ok(None)
    }

    pub(crate) fn write_signature(&mut self, b: &Block) -> R {
        let g = self.shared.gran;
        let s = &self.streams[b.at];
        match b.sig {
            Sig::Copied => {
                let data: Vec<u8> =
                    (0..b.len / 8).flat_map(|k| expected_word(b.tag, b.sig, k, g).to_le_bytes()).collect();
                self.emu.memcpy_h2d_async(b.ptr, &data, s).ctx(|| format!("h2d into {}", b.ptr))?;
                self.ops.h2d += 1;
            }
            Sig::Memset => {
                self.emu.memset_async(b.ptr, fill_byte(b.tag), b.len, s).ctx(|| format!("memset of {}", b.ptr))?;
                self.ops.memsets += 1;
                for k in 0..b.len / g {
                    let at = b.ptr.checked_add(k * g).expect("inside the block");
                    self.emu.memcpy_h2d_async(at, &b.tag.to_le_bytes(), s).ctx(|| format!("h2d into {at}"))?;
                    self.ops.h2d += 1;
                }
            }
        }
        Ok(())
    }

    /// Reads the block back on its current stream and checks it in a host function.
    pub(crate) fn verify(&mut self, b: &Block) -> R {
        let s = &self.streams[b.at];
        let buf = HostBuffer::new(b.len as usize);
        self.emu.memcpy_d2h_async(&buf, b.ptr, s).ctx(|| format!("d2h from {}", b.ptr))?;
        self.ops.d2h += 1;
        let check = self.shared.checker(buf, b.ptr.addr(), b.tag, b.sig);
        self.emu.launch_host_func(s, check).ctx(|| "launch_host_func".into())?;
        self.ops.host_fns += 1;
        self.ops.verifies += 1;
        Ok(())
    }

    pub(crate) fn next_event(&mut self) -> usize {
        self.next_event = (self.next_event + 1) % self.events.len();
        self.next_event
    }

    /// Records an event on `from` and makes `to` wait for it.
    pub(crate) fn order(&mut self, from: usize, to: usize) -> R {
        let e = self.next_event();
        let (ev, src, dst) = (&self.events[e], &self.streams[from], &self.streams[to]);
        self.emu.record_event(ev, src).ctx(|| format!("record_event on {}", self.stream_name(from)))?;
        self.emu.stream_wait_event(dst, ev).ctx(|| format!("stream_wait_event on {}", self.stream_name(to)))?;
        self.ops.records += 1;
        self.ops.waits += 1;
        self.last_event = Some((e, from));
        Ok(())
    }

    /// Moves a block to stream `to`, ordered after everything done to it so far.
    pub(crate) fn hand_off(&mut self, b: &mut Block, to: usize) -> R {
        self.order(b.at, to)?;
        b.at = to;
        Ok(())
    }

    /// An ordering edge between two streams that no block needs (it builds the chains
    /// the event-dependency rule follows).
    pub(crate) fn link(&mut self) -> R {
        let from = self.pick_stream();
        let to = self.pick_other(from);
        self.order(from, to)
    }

    /// Frees `live[i]`: sometimes moves it first, sometimes checks it on another stream
    /// and brings it back; always checks it on the stream that frees it.
    pub(crate) fn free(&mut self, i: usize) -> R {
        let mut b = self.live.swap_remove(i);
        if self.rng.chance(40) {
            let to = self.pick_other(b.at);
            self.hand_off(&mut b, to)?;
        }
        if self.rng.chance(20) {
            let (home, away) = (b.at, self.pick_other(b.at));
            self.hand_off(&mut b, away)?;
            self.verify(&b)?;
            self.hand_off(&mut b, home)?;
        }
        self.verify(&b)?;
        let slot = &self.pools[b.pool];
        self.shared.unregister(b.ptr.addr(), b.tag)?;
        slot.host_used.fetch_sub(b.len, Ordering::SeqCst);
        slot.pool
            .free(b.ptr, &self.streams[b.at])
            .ctx(|| format!("free of {} on {}", b.ptr, self.stream_name(b.at)))?;
        self.ops.frees += 1;
        Ok(())
    }

    pub(crate) fn sync_stream(&mut self, i: usize) -> R {
        let r = self.emu.synchronize_stream(&self.streams[i]);
        self.ops.stream_syncs += 1;
        if self.panic_pending == Some(i) {
            self.panic_pending = None;
            let e = match r {
                Ok(()) => return Err(format!("the sync of {} did not report the panic", self.stream_name(i))),
                Err(e) => e,
            };
            if e.kind() != ErrorKind::AsyncFailure || !e.message().contains(PANIC_MSG) {
                return Err(format!("the sync of {} reported {e}, not the panic", self.stream_name(i)));
            }
            self.ops.panics_reported += 1;
            return Ok(());
        }
        r.ctx(|| format!("synchronize_stream of {}", self.stream_name(i)))
    }

    pub(crate) fn sync_device(&mut self) -> R {
        self.ops.device_syncs += 1;
        self.emu.synchronize_device().ctx(|| "synchronize_device".into())
    }

    pub(crate) fn sync_something(&mut self) -> R {
        match (self.rng.below(10), self.last_event) {
            // A worker with a panic pending leaves events alone until its stream has
            // reported it: the report belongs to that stream's synchronization.
            (4..=5, Some((e, _))) if self.panic_pending.is_none() => {
                self.ops.event_syncs += 1;
                self.emu.synchronize_event(&self.events[e]).ctx(|| "synchronize_event".into())
            }
            (6..=7, Some((e, _))) => {
                self.ops.queries += 1;
                self.emu.query_event(&self.events[e]).ctx(|| "query_event".into()).map(|_| ())
            }
            (8, _) if self.plan.device_syncs => self.sync_device(),
            _ => {
                let i = self.rng.index(self.streams.len());
                self.sync_stream(i)
            }
        }
    }

    pub(crate) fn set_threshold(&mut self) -> R {
        let p = self.rng.index(2);
        let pool = &self.pools[p].pool;
        let granules = pool.size() / self.shared.gran;
        let t = match self.rng.below(4) {
            0 => 0,
            1 => pool.size(),
            _ => self.rng.below(granules + 1) * self.shared.gran,
        };
        self.ops.attr_sets += 1;
        pool.set(attr::ReleaseThreshold, t).ctx(|| format!("set ReleaseThreshold {t}"))
    }

    /// Trims to USED plus a little; USED may rise in between on another thread, and a
    /// trim below USED is refused (Ascend's rule).
    pub(crate) fn trim(&mut self) -> R {
        let p = self.rng.index(2);
        let pool = &self.pools[p].pool;
        let used = pool.get(attr::UsedMemCurrent).ctx(|| "get UsedMemCurrent".into())?;
        let keep = (used + self.rng.below(8) * self.shared.gran).min(pool.size());
        self.ops.stats_reads += 1;
        self.ops.trims += 1;
        match pool.trim_to(keep) {
            Err(e) if e.kind() == ErrorKind::InvalidParam && e.message().contains("below USED") => {
                self.ops.trims_refused += 1;
                Ok(())
            }
            r => r.ctx(|| format!("trim_to({keep})")),
        }
    }

    /// Trims pool `p` down to USED: every cached block whose free has run goes back.
    /// USED may rise on another thread between the read and the trim, which is then
    /// refused; a few tries, then the trim is left to the next out-of-memory.
    pub(crate) fn trim_to_used(&mut self, p: usize) -> R {
        let pool = &self.pools[p].pool;
        for _ in 0..4 {
            let used = pool.stats().ctx(|| "stats".into())?.used_current;
            self.ops.stats_reads += 1;
            self.ops.trims += 1;
            match pool.trim_to(used) {
                Err(e) if e.kind() == ErrorKind::InvalidParam && e.message().contains("below USED") => {
                    self.ops.trims_refused += 1;
                }
                r => return r.ctx(|| format!("trim_to({used})")),
            }
        }
        Ok(())
    }

    pub(crate) fn read_stats(&mut self) -> R {
        let pool = &self.pools[self.rng.index(2)].pool;
        let s = pool.stats().ctx(|| "stats".into())?;
        self.ops.stats_reads += 1;
        let size = pool.size();
        if s.used_current > size || s.reserved_current > size || s.used_high > size || s.reserved_high > size {
            return Err(format!("statistics above the pool size {size}: {s:?}"));
        }
        Ok(())
    }

    pub(crate) fn launch_panic(&mut self) -> R {
        self.emu.launch_host_func(&self.streams[0], Box::new(|| panic!("{PANIC_MSG}"))).ctx(|| "launch".into())?;
        self.ops.host_fns += 1;
        self.ops.panics += 1;
        self.panic_pending = Some(0);
        Ok(())
    }

    /// Frees every block left, synchronizes the own streams (a pending panic is
    /// reported there) and destroys them and the events.
    pub(crate) fn finish(&mut self) -> R {
        while !self.live.is_empty() {
            let i = self.live.len() - 1;
            self.free(i)?;
        }
        for i in 0..self.own {
            self.sync_stream(i)?;
        }
        if let Some(i) = self.panic_pending {
            return Err(format!("a panic on {} was never reported", self.stream_name(i)));
        }
        for s in &self.streams[..self.own] {
            self.emu.destroy_stream(s).ctx(|| "destroy_stream".into())?;
        }
        for e in &self.events {
            self.emu.destroy_event(e).ctx(|| "destroy_event".into())?;
        }
        Ok(())
    }
}
