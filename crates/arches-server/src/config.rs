//! The daemon's configuration: the scheduling policy, the nodes, the
//! administrators and the daemon parameters. Loaded in ONE function,
//! [`load_config`], so that wiring the `moab.cfg` parser is one change.

use std::path::{Path, PathBuf};

use arches_core::{Node, Policy, Secs};

/// Everything the daemon takes from its configuration.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    /// The file read, if any.
    pub file: Option<PathBuf>,
    /// The daemon's home directory (state, logs, the local RM's spool).
    pub home: PathBuf,
    pub policy: Policy,
    /// Configured nodes; empty means "whatever the resource manager reports".
    pub nodes: Vec<Node>,
    /// Users of `ADMINCFG[1] USERS=` (root is always an administrator).
    pub admins: Vec<String>,
    /// `JOBCPURGETIME`: how long finished jobs are kept (seconds).
    pub purge_secs: Secs,
    /// `SCHEDCFG[name]`: the scheduler name used in messages.
    pub scheduler_name: String,
    /// Effective `(PARAMETER, value)` pairs for `mdiag -C`.
    pub parameters: Vec<(String, String)>,
    /// Warnings to log (unknown parameters...).
    pub warnings: Vec<String>,
}

/// Default `JOBCPURGETIME`: one day.
pub const DEFAULT_PURGE_SECS: Secs = 86_400;

/// Loads the configuration: `explicit` (`--config`) or `<home>/moab.cfg`.
/// Without a file the embedded default is used: one node named after the
/// host with all its processors and memory.
pub fn load_config(home: &Path, explicit: Option<&Path>) -> anyhow::Result<DaemonConfig> {
    let path = explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| home.join(arches_api::paths::CONFIG_NAME));
    let mut cfg = embedded_default(home);
    if explicit.is_some() && !path.exists() {
        anyhow::bail!("{}: configuration file not found", path.display());
    }
    if path.exists() {
        // The moab.cfg parser (arches-config) is not available in this build:
        // the file is noted and the embedded default applies.
        cfg.warnings.push(format!(
            "{}: moab.cfg parsing is not available in this build; using the embedded default",
            path.display()
        ));
        cfg.file = Some(path);
    }
    Ok(cfg)
}

/// The configuration used when there is no `moab.cfg`.
pub fn embedded_default(home: &Path) -> DaemonConfig {
    let procs = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let node = Node::new(&crate::ident::short_hostname(), procs, machine_mem_mb());
    let policy = Policy::default();
    let parameters = vec![
        ("SCHEDCFG[Moab]".to_string(), "MODE=NORMAL".to_string()),
        (
            "RMPOLLINTERVAL".to_string(),
            policy.rm_poll_interval.to_string(),
        ),
        ("JOBCPURGETIME".to_string(), DEFAULT_PURGE_SECS.to_string()),
        ("RMCFG[local]".to_string(), "TYPE=LOCAL".to_string()),
    ];
    DaemonConfig {
        file: None,
        home: home.to_path_buf(),
        policy,
        nodes: vec![node],
        admins: Vec::new(),
        purge_secs: DEFAULT_PURGE_SECS,
        scheduler_name: "Moab".to_string(),
        parameters,
        warnings: Vec::new(),
    }
}

/// Total memory of this machine in MB (`MemTotal` of /proc/meminfo; 0 when unknown).
pub fn machine_mem_mb() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| parse_meminfo_mb(&t))
        .unwrap_or(0)
}

fn parse_meminfo_mb(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_parsed_in_mb() {
        let t = "MemTotal:       16318480 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_meminfo_mb(t), Some(15936));
        assert_eq!(parse_meminfo_mb("nothing"), None);
    }

    #[test]
    fn default_has_one_node_with_this_machine() {
        let c = embedded_default(Path::new("/tmp"));
        assert_eq!(c.nodes.len(), 1);
        assert!(c.nodes[0].procs >= 1);
        assert_eq!(c.purge_secs, DEFAULT_PURGE_SECS);
    }

    #[test]
    fn missing_explicit_file_is_an_error() {
        let dir = std::env::temp_dir();
        let e = load_config(&dir, Some(Path::new("/nonexistent/moab.cfg"))).unwrap_err();
        assert!(e.to_string().contains("not found"), "{e}");
    }
}
