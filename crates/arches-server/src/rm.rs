//! Resource-manager construction, in one function ([`build_rm`]), and the
//! conversion of backend [`Observation`]s into core events.

use arches_rm::ResourceManager;

use crate::config::DaemonConfig;

/// Builds the execution backend the configuration asks for.
///
/// The local backend (`arches_rm::local::LocalRm`) is not part of this build
/// yet: starting the daemon without an injected backend is refused with a
/// clear error rather than accepting jobs that could never run.
pub fn build_rm(config: &DaemonConfig) -> anyhow::Result<Box<dyn ResourceManager>> {
    let _ = config;
    anyhow::bail!(
        "no execution backend available: the local resource manager (arches_rm::local::LocalRm) is not built into this binary"
    )
}
