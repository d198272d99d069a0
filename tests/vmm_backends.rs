//! An expandable segment through both backends over their CPU libraries, the Rust
//! counterpart of the C programs `tests/c/samples/vmm_expandable.c` and
//! `backends/cuda-shim/tests/c/vmm.c`: one range reserved far larger than needed, grown a
//! chunk at a time (create, map at the end, set access, data copied in), read back in one
//! copy across every chunk boundary, a device-to-device copy straddling chunks, misuse
//! refused, then shrunk from the end (unmap, release) and released. The Ascend backend
//! runs over the drop-in `libacl_rt.so` on both Ascend profiles, the CUDA backend over the
//! CPU `libcuda.so.1` on the `cuda` profile (where a fresh mapping has no access until it
//! is set), each case in a child process of its own with the stream-order checker on.
//!
//! The rules it checks: contract §14 (`mempool_hal::contract::vmm`).

use mempool_emu::Profile::{self, CannOpen, Cuda, Documented};
use mempool_hal::{
    Access, Device, DevicePtr, ErrorKind, Granularity, HostBuffer, Mapping, Physical, Result, VirtualMemory,
};
use rstest::rstest;

/// Chunks the segment grows to.
const N: u64 = 6;
const G: u64 = 2 << 20;

fn pattern(len: u64, seed: u64) -> Vec<u8> {
    (0..len).map(|j| ((j * 131 + seed * 7 + 1) % 251) as u8).collect()
}

fn refused<T: std::fmt::Debug>(r: Result<T>, what: &str) {
    match r {
        Err(e) => assert_eq!(e.kind(), ErrorKind::InvalidParam, "{what}: {e}"),
        Ok(v) => panic!("{what}: expected InvalidParam, got {v:?}"),
    }
}

/// The segment's life on `dev`; `access_at_map`: whether a fresh mapping is usable before
/// its access is set (Ascend) or not (CUDA).
fn grow_and_shrink<D: Device + VirtualMemory>(dev: &D, access_at_map: bool) -> Result<()> {
    assert_eq!(dev.granularity(Granularity::Minimum)?, G);
    assert_eq!(dev.granularity(Granularity::Recommended)?, G);
    let s = dev.create_stream()?;
    let range = dev.reserve(64 * G, 0, None)?;
    assert_eq!((range.base.addr() % G, range.size), (0, 64 * G));
    let at = |off: u64| DevicePtr::from_addr(range.base.addr() + off);
    let mut model = Vec::new();
    let mut chunks: Vec<(Physical, Mapping)> = Vec::new();
    for i in 0..N {
        let c = dev.create_physical(G)?;
        let m = dev.map(at(i * G), G, 0, c)?;
        assert_eq!((m.at, m.size), (at(i * G), G));
        if i == 0 && !access_at_map {
            assert!(dev.memcpy_h2d_async(m.at, &[1u8; 16], &s).is_err(), "a copy into a mapping with no access");
        }
        dev.set_access(m.at, G, Access::ReadWrite)?;
        let data = pattern(G, i);
        dev.memcpy_h2d_async(m.at, &data, &s)?;
        model.extend(data);
        chunks.push((c, m));
    }
    let back = HostBuffer::new(model.len());
    dev.memcpy_d2h_async(&back, range.base, &s)?;
    dev.synchronize_stream(&s)?;
    assert!(back.to_vec() == model, "the segment read back in one copy");

    // Device to device, into a range straddling chunks 0 and 1.
    let (dst, src) = (G / 2, 3 * G);
    dev.memcpy_d2d_async(at(dst), at(src), G, &s)?;
    model.copy_within(src as usize..(src + G) as usize, dst as usize);
    dev.memcpy_d2h_async(&back, range.base, &s)?;
    dev.synchronize_stream(&s)?;
    assert!(back.to_vec() == model, "the segment after a copy across a chunk boundary");

    // Misuse, refused with the segment intact.
    let extra = dev.create_physical(G)?;
    refused(dev.map(range.base, G, 0, extra), "a mapping over a mapping");
    refused(dev.map(at(N * G + 4096), G, 0, extra), "a misaligned mapping");
    refused(dev.create_physical(G / 2), "half a granule");
    dev.release_physical(extra)?;
    refused(dev.release_physical(extra), "a chunk released twice");
    refused(dev.map(at(N * G), G, 0, extra), "a released chunk mapped");
    refused(dev.release_reserved(range), "a range still mapped");
    refused(dev.unmap(Mapping { at: at(N * G), size: G }), "nothing mapped there");

    // The last chunk released while mapped keeps its bytes until it is unmapped.
    let (last, _) = chunks[chunks.len() - 1];
    dev.release_physical(last)?;
    let tail = HostBuffer::new(G as usize);
    dev.memcpy_d2h_async(&tail, at((N - 1) * G), &s)?;
    dev.synchronize_stream(&s)?;
    assert!(tail.to_vec()[..] == model[((N - 1) * G) as usize..], "a chunk released while mapped");

    // Shrink from the end, as the caching allocators give chunks back.
    dev.synchronize_stream(&s)?;
    for (i, (c, m)) in chunks.into_iter().enumerate().rev() {
        dev.unmap(m)?;
        if i as u64 != N - 1 {
            dev.release_physical(c)?;
        }
    }
    assert!(dev.memcpy_d2h_async(&tail, range.base, &s).is_err(), "a copy from a range with nothing mapped");
    dev.release_reserved(range)?;
    dev.destroy_stream(&s)?;
    Ok(())
}

#[rstest]
fn an_expandable_segment_through_the_ascend_backend(#[values(Documented, CannOpen)] profile: Profile) {
    let home = mempool_tests::shim_home();
    let env = [
        ("ASCEND_HOME_PATH", home.path().into()),
        (mempool_emu::ENV_GRANULARITY, G.to_string().into()),
        (mempool_emu::ENV_DEVICE_MEMORY, (1u64 << 30).to_string().into()),
        (mempool_emu::ENV_CHECKER, "on".into()),
    ];
    mempool_tests::on_profile_with(profile, &env, |_| {
        let dev = mempool_ascend::Ascend::open(0).expect("the drop-in library is found through ASCEND_HOME_PATH");
        let laid_out = std::env::var_os("ASCEND_HOME_PATH").expect("the parent sets it");
        assert!(dev.runtime().path().starts_with(laid_out), "loaded {}", dev.runtime().path().display());
        grow_and_shrink(&dev, true).unwrap_or_else(|e| panic!("{e}"));
    });
}

#[rstest]
fn an_expandable_segment_through_the_cuda_backend(#[values(0, 1)] device: u32) {
    let home = mempool_tests::cuda_shim_home();
    let mut env = mempool_tests::cuda_conformance_env(&home);
    env.push((mempool_emu::ENV_CHECKER, "on".into()));
    mempool_tests::on_profile_with(Cuda, &env, |_| {
        let dev = mempool_cuda::Cuda::open(device).expect("the CPU libcuda.so.1 is found");
        let laid_out = std::env::var_os(mempool_cuda::ENV_LIBRARY).expect("the parent sets it");
        assert!(dev.runtime().path().starts_with(laid_out), "loaded {}", dev.runtime().path().display());
        grow_and_shrink(&dev, false).unwrap_or_else(|e| panic!("{e}"));
    });
}
