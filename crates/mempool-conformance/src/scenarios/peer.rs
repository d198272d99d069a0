//! The peer-access scenario ([contract §1](mempool_hal::contract::objects)), for a harness
//! with two devices of one platform ([`Capability::PeerDevices`](crate::Capability)): each
//! device can reach the other; access enabled is disabled once, and a second disable is
//! refused; a device is never its own peer; a peer that does not exist is `InvalidDevice`.
//!
//! Run through [`peer_scenarios`](crate::peer_scenarios) and
//! [`peer_trials`](crate::peer_trials).

use crate::{Failure, Harness, ScenarioResult, ensure};
use mempool_hal::{Device, ErrorKind};

/// Peer access between two devices, both ways, and its misuse.
pub fn p01_peer_access<H: Harness>(h: &H) -> ScenarioResult {
    let (a, b) = h.peer_pair()?;
    let (ia, ib) = (a.id(), b.id());
    ensure!(ia != ib, "peer_pair gave one device twice ({ia})");
    ensure!(a.can_access_peer(ib)?, "device {ia} cannot reach device {ib}");
    ensure!(b.can_access_peer(ia)?, "device {ib} cannot reach device {ia}");
    a.enable_peer_access(ib)?;
    b.enable_peer_access(ia)?;
    a.disable_peer_access(ib)?;
    ensure!(a.disable_peer_access(ib).is_err(), "a second disable of device {ia}'s access to {ib} succeeded");
    b.disable_peer_access(ia)?;
    ensure!(a.enable_peer_access(ia).is_err(), "device {ia} enabled access to itself");
    match a.enable_peer_access(u32::MAX) {
        Err(e) if e.kind() == ErrorKind::InvalidDevice => Ok(()),
        Err(e) => Err(Failure::new(format!("a peer that does not exist: {e} (expected InvalidDevice)"))),
        Ok(()) => Err(Failure::new("access to a device that does not exist was enabled")),
    }
}
