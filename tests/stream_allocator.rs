//! A pool behind CANN's external-allocator callbacks (contract §16,
//! `contract::allocator_registry`), used the way CANN's
//! operator layer uses a stream's registered allocator: alloc, getAddrFromBlock, work on
//! the stream, then free in stream order.
//!
//! - Through the emulator: `mempool_backend_kit::callbacks::CallbackAllocator` over a pool
//!   and over a `mempool_small::SmallBlocks` layer, its C functions called directly.
//! - Through the Ascend backend over the drop-in `libacl_rt.so`, on both profiles (each in
//!   a child process): `Ascend::register_stream_allocator` registers the pool (or the
//!   layer over it) on a stream, the allocator is fetched back with
//!   `aclrtAllocatorGetByStream` (`Ascend::registered_allocator`), and its callbacks are
//!   called as the operator layer calls them.
//!
//! In both, the checker is on: a block used on another stream without ordering is
//! reported, and nothing is enqueued.

use mempool::hal::{Device, DevicePtr, ErrorKind, MemPool, MemPoolExt, PoolProps};
use mempool_ascend::{Ascend, AscendPool, RegisteredAllocator};
use mempool_backend_kit::callbacks::CallbackAllocator;
use mempool_emu::Emulator;
use mempool_emu::Profile::{self, CannOpen, Documented};
use mempool_small::SmallBlocks;
use rstest::rstest;
use std::ffi::c_void;
use std::sync::Arc;

const WORKSPACE: usize = 96 << 10;

/// Calls a callback allocator's functions as CANN's operator layer does: a block of
/// `size` bytes and its address.
fn op_alloc(r: &RegisteredAllocator, size: usize) -> (*mut c_void, u64) {
    let (alloc, addr_of) = (r.alloc.expect("an alloc callback"), r.get_addr.expect("a getAddr callback"));
    // SAFETY: the functions and object fetched from a live registration; the object lives
    // while the registration does.
    unsafe {
        let block = alloc(r.allocator, size);
        assert!(!block.is_null(), "the registered allocator refused {size} bytes");
        (block, addr_of(block) as u64)
    }
}

/// Frees a block through the fetched free callback.
fn op_free(r: &RegisteredAllocator, block: *mut c_void) {
    let free = r.free.expect("a free callback");
    // SAFETY: as in `op_alloc`; `block` came from the same allocator.
    unsafe { free(r.allocator, block) };
}

/// The registration a `CallbackAllocator` would make, for the emulator cases.
fn as_registered<P: MemPool + 'static>(c: &CallbackAllocator<P>) -> RegisteredAllocator
where
    P::Stream: Send + Sync,
{
    RegisteredAllocator {
        desc: std::ptr::null_mut(),
        allocator: c.object(),
        alloc: Some(c.alloc_fn()),
        free: Some(c.free_fn()),
        alloc_advise: None,
        get_addr: Some(c.get_addr_fn()),
    }
}

/// The operator layer's use of one workspace on `stream`, then a misuse on `other`: the
/// checker refuses the unordered use. Returns the pool's USED while the block was live.
fn operator_round<D: Device>(
    dev: &D,
    r: &RegisteredAllocator,
    stream: &D::Stream,
    other: &D::Stream,
    stats: impl Fn() -> u64,
) -> u64 {
    let (block, addr) = op_alloc(r, WORKSPACE);
    assert_eq!(addr, block as u64, "a block is its address");
    let used = stats();
    let ptr = DevicePtr::from_addr(addr);
    dev.memset_async(ptr, 0x5a, WORKSPACE as u64, stream).expect("the workspace is usable on its stream");
    let e = dev.memset_async(ptr, 0x11, 16, other).expect_err("the checker refuses a use on another stream");
    // The emulator says so by kind; the backend gets code 107000 and the library's message.
    assert_eq!(e.code(), mempool::hal::code::ACL_ERROR_RT_PARAM_INVALID, "{e}");
    assert!(e.to_string().contains("is not ordered after that allocation"), "the checker's answer: {e}");
    op_free(r, block);
    dev.synchronize_stream(stream).expect("synchronize");
    used
}

#[test]
fn emulator_pool_behind_the_callbacks() {
    let emu = Emulator::new();
    assert!(emu.config().checker, "the checker is on by default");
    let (s, other) = (emu.create_stream().unwrap(), emu.create_stream().unwrap());
    let pool = Arc::new(emu.create_pool(&PoolProps::builder().max_size(64 << 20).build()).unwrap());
    let cb = CallbackAllocator::new(Arc::clone(&pool), s.clone());
    let r = as_registered(&cb);
    let used = operator_round(&emu, &r, &s, &other, || pool.stats().unwrap().used_current);
    assert!(used >= WORKSPACE as u64, "the workspace came from the pool ({used} bytes used)");
    assert_eq!(pool.stats().unwrap().used_current, 0, "freed back to the pool");
    assert_eq!((cb.counts(), cb.live_blocks(), cb.failures()), ((1, 1), 0, 0));

    // Misuse through the C functions: size 0, a foreign block, a block freed twice.
    // SAFETY: the object of the live allocator; the blocks are only looked up.
    unsafe {
        assert!((r.alloc.unwrap())(r.allocator, 0).is_null(), "size 0 is refused");
        (r.free.unwrap())(r.allocator, 0x1234 as *mut c_void);
        (r.free.unwrap())(r.allocator, std::ptr::null_mut());
        assert!((r.alloc.unwrap())(std::ptr::null_mut(), 64).is_null(), "a null object");
    }
    assert_eq!(cb.failures(), 3, "size 0, the foreign block and the null block are counted");
    assert_eq!(cb.last_error().map(|e| e.kind()), Some(ErrorKind::InvalidPointer));

    // Blocks still handed out are freed, in stream order, when the allocator goes.
    let (_, _) = op_alloc(&r, 1000);
    assert!(pool.stats().unwrap().used_current > 0);
    drop(cb);
    emu.synchronize_stream(&s).unwrap();
    assert_eq!(pool.stats().unwrap().used_current, 0, "the allocator freed its last block");
    emu.destroy_pool(&pool).unwrap();
}

#[test]
fn emulator_small_block_layer_behind_the_callbacks() {
    let emu = Arc::new(Emulator::new());
    let (s, other) = (emu.create_stream().unwrap(), emu.create_stream().unwrap());
    let pool = Arc::new(emu.create_pool(&PoolProps::builder().max_size(64 << 20).build()).unwrap());
    let small = Arc::new(SmallBlocks::new_shared(Arc::clone(&emu), Arc::clone(&pool), 256 << 10).unwrap());
    let cb = CallbackAllocator::new(Arc::clone(&small), s.clone());
    let r = as_registered(&cb);
    let used = operator_round(&*emu, &r, &s, &other, || small.small_stats().requested_current);
    assert_eq!(used, WORKSPACE as u64, "the workspace was carved by the small-block layer");
    assert_eq!(small.small_stats().requested_current, 0);
    assert_eq!((cb.counts(), cb.failures()), ((1, 1), 0));
    drop(cb);
    drop(small);
    emu.synchronize_device().unwrap();
    emu.destroy_pool(&pool).unwrap();
}

/// The Ascend backend over the drop-in library, in a child process on `profile`.
fn on_shim(profile: Profile, body: impl FnOnce(&Ascend)) {
    let home = mempool_tests::shim_home();
    mempool_tests::on_profile_with(profile, &mempool_tests::shim_conformance_env(&home), |_| {
        let dev = Ascend::open(0).expect("the drop-in library is found through ASCEND_HOME_PATH");
        body(&dev);
    });
}

fn ascend_pool(dev: &Ascend) -> Arc<AscendPool> {
    Arc::new(dev.create_pool(&PoolProps::builder().max_size(64 << 20).build()).unwrap())
}

#[rstest]
fn ascend_pool_registered_on_a_stream(#[values(Documented, CannOpen)] profile: Profile) {
    on_shim(profile, |dev| {
        let (s, other) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
        let pool = ascend_pool(dev);
        assert!(dev.registered_allocator(&s).unwrap().is_none(), "nothing registered yet");
        let reg = dev.register_stream_allocator(&s, Arc::clone(&pool)).unwrap();
        let r = dev.registered_allocator(&s).unwrap().expect("the stream's allocator");
        assert_eq!(r.allocator, reg.callbacks().object(), "aclrtAllocatorGetByStream answers the registered object");
        assert!(r.alloc_advise.is_none(), "no address-advised alloc");
        assert!(dev.registered_allocator(&other).unwrap().is_none(), "registered per stream");
        for _ in 0..3 {
            let used = operator_round(dev, &r, &s, &other, || pool.stats().unwrap().used_current);
            assert!(used >= WORKSPACE as u64, "the workspace came from the pool ({used} bytes used)");
        }
        assert_eq!(pool.stats().unwrap().used_current, 0);
        assert_eq!((reg.callbacks().counts(), reg.callbacks().failures()), ((3, 3), 0));
        reg.unregister().unwrap();
        assert!(dev.registered_allocator(&s).unwrap().is_none(), "unregistered");
        dev.destroy_pool(&pool).unwrap();
    });
}

#[rstest]
fn ascend_small_block_layer_registered_on_a_stream(#[values(Documented, CannOpen)] profile: Profile) {
    on_shim(profile, |dev| {
        let (s, other) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
        let pool = ascend_pool(dev);
        let small = Arc::new(SmallBlocks::new_shared(Arc::new(dev.clone()), Arc::clone(&pool), 256 << 10).unwrap());
        let reg = dev.register_stream_allocator(&s, Arc::clone(&small)).unwrap();
        let r = dev.registered_allocator(&s).unwrap().expect("the stream's allocator");
        let used = operator_round(dev, &r, &s, &other, || small.small_stats().requested_current);
        assert_eq!(used, WORKSPACE as u64, "carved by the small-block layer");
        // A second registration on the stream wins; dropping the first leaves it.
        let pool2 = ascend_pool(dev);
        let reg2 = dev.register_stream_allocator(&s, Arc::clone(&pool2)).unwrap();
        drop(reg);
        let r2 = dev.registered_allocator(&s).unwrap().expect("the second registration stays");
        assert_eq!(r2.allocator, reg2.callbacks().object());
        drop(reg2);
        assert!(dev.registered_allocator(&s).unwrap().is_none());
        drop(small);
        dev.synchronize_device().unwrap();
        dev.destroy_pool(&pool).unwrap();
        dev.destroy_pool(&pool2).unwrap();
    });
}

#[rstest]
fn ascend_registration_goes_with_its_stream(#[values(Documented)] profile: Profile) {
    on_shim(profile, |dev| {
        let s = dev.create_stream().unwrap();
        let pool = ascend_pool(dev);
        let reg = dev.register_stream_allocator(&s, Arc::clone(&pool)).unwrap();
        dev.destroy_stream(&s).unwrap();
        let e = dev.registered_allocator(&s).expect_err("a destroyed stream");
        assert_eq!(e.kind(), ErrorKind::InvalidHandle);
        drop(reg); // nothing left to unregister; the descriptor goes
        let dead = dev.register_stream_allocator(&s, Arc::clone(&pool)).expect_err("a destroyed stream");
        assert_eq!(dead.kind(), ErrorKind::InvalidHandle);
        dev.destroy_pool(&pool).unwrap();
    });
}

/// The pluggable-allocator library's one call (`mempool_register_stream_allocator`) over the
/// Ascend backend on the drop-in library: the library's pool, through its small-block
/// layer, becomes the stream's allocator; fetched by stream, its workspaces move the
/// library's statistics; unregistering drops it.
#[rstest]
fn pluggable_library_registers_its_pool(#[values(Documented, CannOpen)] profile: Profile) {
    let home = mempool_tests::shim_home();
    let mut env = mempool_tests::shim_conformance_env(&home);
    env.push(("MEMPOOL_ALLOC_BACKEND", "ascend".into()));
    mempool_tests::on_profile_with(profile, &env, |_| {
        // The bytes asked of the library's layer (the pool keeps the layer's block after
        // the free: USED stays).
        let requested = || {
            let mut s = mempool_alloc::Stats::default();
            // SAFETY: a valid, sized `Stats`.
            assert_eq!(unsafe { mempool_alloc::mempool_stats(0, &mut s) }, 0, "{:?}", mempool_alloc::last_error());
            s.requested_current
        };
        // The framework's runtime and streams: the library loads the same runtime.
        let dev = Ascend::open(0).expect("the drop-in library is found through ASCEND_HOME_PATH");
        let (s, other) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
        let raw = s.as_raw();
        // SAFETY: a live stream of the runtime the library loads.
        let rc = unsafe { mempool_alloc::mempool_register_stream_allocator(0, raw) };
        assert_eq!(rc, 0, "{:?}", mempool_alloc::last_error());
        let backend = mempool_alloc::mempool_backend();
        assert!(!backend.is_null());
        // SAFETY: non-null: the library's NUL-terminated description, valid for the process.
        let backend = unsafe { std::ffi::CStr::from_ptr(backend) }.to_string_lossy().into_owned();
        assert!(backend.starts_with("ascend"), "the library runs on {backend}");
        assert_eq!(requested(), 0);
        let r = dev.registered_allocator(&s).unwrap().expect("the library's allocator is registered");
        let during = operator_round(&dev, &r, &s, &other, requested);
        assert_eq!(during, WORKSPACE as u64, "the workspace came from the library's layer");
        assert_eq!(requested(), 0, "freed back in stream order");
        // SAFETY: as above.
        assert_eq!(unsafe { mempool_alloc::mempool_unregister_stream_allocator(0, raw) }, 0);
        assert!(dev.registered_allocator(&s).unwrap().is_none(), "unregistered");
        // SAFETY: as above.
        assert_eq!(unsafe { mempool_alloc::mempool_unregister_stream_allocator(0, raw) }, -1, "nothing left");
    });
}
