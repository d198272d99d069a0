//! cudarc 0.19.4's context and allocation path on the CPU `libcuda.so.1`, unmodified: its
//! loader resolves every driver function when the library is first used, so it starts only
//! if every name is exported. Prints "cudarc 0.19.4: every path passed" at the end; any
//! failure panics (a non-zero exit).

use cudarc::driver::{CudaContext, CudaSlice};

fn main() {
    let ctx = CudaContext::new(0).expect("a context on device 0");
    assert!(ctx.name().expect("the device name").starts_with("mempool-emu"));
    assert!(ctx.total_mem().expect("the total memory") > 0);
    let s0 = ctx.default_stream();
    let z: CudaSlice<u8> = s0.alloc_zeros(4096).expect("alloc_zeros");
    assert_eq!(s0.clone_dtoh(&z).expect("a copy back"), vec![0u8; 4096]);
    let src: Vec<u32> = (0..10_000).collect();
    let s1 = ctx.new_stream().expect("a new stream");
    let d = s1.clone_htod(&src).expect("an upload");
    let e = s1.clone_dtod(&d).expect("a device copy");
    assert_eq!(s1.clone_dtoh(&e).expect("a download"), src);
    drop((z, d, e));
    ctx.synchronize().expect("the context synchronizes");
    println!("cudarc 0.19.4: every path passed");
}
