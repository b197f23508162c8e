//! Resource-manager construction, in one function ([`build_rm`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use arches_rm::local::{LocalConfig, LocalRm};
use arches_rm::slurm::{SlurmConfig, SlurmRm};
use arches_rm::ResourceManager;

use crate::config::DaemonConfig;

/// Name of the spool directory of the local backend inside the home.
pub const SPOOL_DIR: &str = "spool";
/// Name of the Slurm backend's spool (node files, scripts) inside the home.
pub const SLURM_SPOOL_DIR: &str = "slurm-spool";

/// Builds the execution backend the configuration asks for:
/// `RMCFG[name] TYPE=LOCAL` runs jobs in this server (its per-job supervisors
/// are this same executable run as `<exe> __supervise <job dir>`);
/// `TYPE=SLURM` runs them through a Slurm cluster (docs/slurm.md).
pub fn build_rm(config: &DaemonConfig) -> anyhow::Result<Box<dyn ResourceManager>> {
    let (name, kind) = &config.compute_rm;
    match kind.as_str() {
        "LOCAL" => {}
        "SLURM" => return Ok(Box::new(SlurmRm::new(slurm_config(config, name))?)),
        _ => anyhow::bail!(
            "RMCFG[{name}] TYPE={kind}: this server runs jobs only through TYPE=LOCAL or TYPE=SLURM resource managers"
        ),
    }
    let exe = std::env::current_exe()?;
    let supervisor = vec![
        exe.to_string_lossy().into_owned(),
        "__supervise".to_string(),
    ];
    let local = LocalConfig::new(
        name.as_str(),
        config.home.join(SPOOL_DIR),
        supervisor,
        config.nodes.clone(),
    );
    Ok(Box::new(LocalRm::new(local)?))
}

/// The Slurm backend's settings from `RMCFG[name]`: `SERVER=` an absolute
/// path is the `slurm.conf` to use (else `SLURM_CONF` of the daemon's
/// environment, else Slurm's default), `POLLINTERVAL=` (default 1 s),
/// `PARTITION=` the Arches partition of the nodes, `TIMEOUT=` (default
/// 30 s) how long a start waits for an unreachable slurmctld, and how long
/// a released job may stay pending in Slurm before a note says so. Jobs are tagged with the
/// RM name and a hash of the home directory, so two daemons on one cluster
/// never adopt each other's jobs.
pub fn slurm_config(config: &DaemonConfig, name: &str) -> SlurmConfig {
    let rm = config.moab.rm(name);
    let tag = format!("{name}@{:08x}", path_hash(&config.home));
    let mut c = SlurmConfig::new(name, tag, config.home.join(SLURM_SPOOL_DIR));
    c.slurm_conf = rm
        .and_then(|r| r.server.as_deref())
        .filter(|s| s.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("SLURM_CONF").map(PathBuf::from));
    if let Some(p) = rm.and_then(|r| r.poll_interval).filter(|p| *p > 0) {
        c.poll_interval = Duration::from_secs(p as u64);
    }
    if let Some(p) = rm.and_then(|r| r.partition.clone()) {
        c.partition = p;
    }
    if let Some(t) = rm.map(|r| r.timeout).filter(|t| *t > 0) {
        c.timeout = Duration::from_secs(t as u64);
    }
    c
}

/// FNV-1a of the path (stable across runs and builds).
fn path_hash(path: &Path) -> u32 {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    canonical
        .to_string_lossy()
        .bytes()
        .fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        })
}
