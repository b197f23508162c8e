//! Resource-manager construction, in one function ([`build_rm`]).

use arches_rm::local::{LocalConfig, LocalRm};
use arches_rm::ResourceManager;

use crate::config::DaemonConfig;

/// Name of the spool directory of the local backend inside the home.
pub const SPOOL_DIR: &str = "spool";

/// Builds the execution backend the configuration asks for: the local
/// backend (`RMCFG[local] TYPE=LOCAL`), whose per-job supervisors are this
/// same executable run as `<exe> __supervise <job dir>`.
pub fn build_rm(config: &DaemonConfig) -> anyhow::Result<Box<dyn ResourceManager>> {
    let exe = std::env::current_exe()?;
    let supervisor = vec![
        exe.to_string_lossy().into_owned(),
        "__supervise".to_string(),
    ];
    let local = LocalConfig::new(
        "local",
        config.home.join(SPOOL_DIR),
        supervisor,
        config.nodes.clone(),
    );
    Ok(Box::new(LocalRm::new(local)?))
}
