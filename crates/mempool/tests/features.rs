//! Which backend `DefaultBackend` names under each feature combination, and what exists
//! without any backend. `cargo xtask features` runs this for every combination.

#[cfg(any(feature = "ascend", feature = "cuda", feature = "emu", feature = "mock"))]
use std::any::type_name;

#[cfg(feature = "ascend")]
#[test]
fn the_real_runtime_is_the_default_whenever_it_is_enabled() {
    assert_eq!(type_name::<mempool::DefaultBackend>(), type_name::<mempool::backend::Ascend>());
}

/// Ascend stays first with `cuda` on too: a crate elsewhere in the build that turns `cuda`
/// on does not move an Ascend application off its runtime.
#[cfg(all(feature = "ascend", feature = "cuda"))]
#[test]
fn ascend_comes_before_cuda() {
    assert_ne!(type_name::<mempool::DefaultBackend>(), type_name::<mempool::backend::Cuda>());
}

#[cfg(all(feature = "cuda", not(feature = "ascend")))]
#[test]
fn the_cuda_driver_is_the_default_without_the_ascend_runtime() {
    assert_eq!(type_name::<mempool::DefaultBackend>(), type_name::<mempool::backend::Cuda>());
}

#[cfg(all(feature = "emu", not(feature = "ascend"), not(feature = "cuda")))]
#[test]
fn the_emulator_is_the_default_without_the_real_runtime() {
    assert_eq!(type_name::<mempool::DefaultBackend>(), type_name::<mempool::backend::Emulator>());
}

#[cfg(all(feature = "mock", not(feature = "emu"), not(feature = "ascend"), not(feature = "cuda")))]
#[test]
fn the_mock_is_the_default_only_without_the_emulator() {
    assert_eq!(type_name::<mempool::DefaultBackend>(), type_name::<mempool::backend::Mock>());
}

#[cfg(feature = "mock")]
#[test]
fn the_mock_is_always_there_by_name() {
    assert_eq!(type_name::<mempool::backend::Mock>(), type_name::<mempool::backend::MockDevice>());
    assert!(type_name::<mempool::backend::Mock>().ends_with("MockDevice"));
}

/// Without a backend feature the facade still has the keys, the props and the raw ids,
/// and they agree with each other.
#[test]
fn keys_and_types_exist_with_any_features() {
    use mempool::attr::{self, Attribute};
    assert_eq!(attr::ReleaseThreshold::ID, mempool::AttrId(4));
    assert_eq!(mempool::AttrId(4).info().map(|i| i.name), Some("RELEASE_THRESHOLD"));
    assert_eq!(mempool::PoolProps::default().max_size, 0);
}
