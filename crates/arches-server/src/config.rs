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
    /// Users of `ADMINCFG[1] USERS=` (root and the daemon's own user are
    /// always administrators).
    pub admins: Vec<String>,
    /// `JOBCPURGETIME`: how long finished jobs are kept (seconds).
    pub purge_secs: Secs,
    /// `SCHEDCFG[name]`: the scheduler name used in messages.
    pub scheduler_name: String,
    /// Effective `(PARAMETER, value)` pairs for `mdiag -C`.
    pub parameters: Vec<(String, String)>,
    /// Warnings to log (unknown parameters...).
    pub warnings: Vec<String>,
    /// The compute resource manager: `(RMCFG name, TYPE)`.
    pub compute_rm: (String, String),
    /// The parsed `moab.cfg` everything above was taken from (runtime
    /// changes with `mschedctl -m config` apply to it).
    pub moab: arches_config::Config,
    /// `moab --salvage`: start with unreadable records set aside, and
    /// with jobs the state does not know left running ([`crate::salvage`]).
    pub salvage: bool,
}

/// Default `JOBCPURGETIME`: one day.
pub const DEFAULT_PURGE_SECS: Secs = 86_400;

/// Loads the configuration: `explicit` (`--config`) or `<home>/moab.cfg`,
/// parsed by `arches-config`. Without a file the embedded default is used:
/// one node named after the host with all its processors and memory, local
/// execution. An invalid value is an error naming `file:line: why`; unknown
/// parameters become warnings.
pub fn load_config(home: &Path, explicit: Option<&Path>) -> anyhow::Result<DaemonConfig> {
    let path = explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| home.join(arches_api::paths::CONFIG_NAME));
    if explicit.is_some() && !path.exists() {
        anyhow::bail!("{}: configuration file not found", path.display());
    }
    let (host, procs, mem) = machine();
    let (mut moab, diagnostics, file) = if path.exists() {
        let parsed = arches_config::load_file(&path)?;
        if parsed.has_errors() {
            let lines: Vec<String> = parsed
                .errors()
                .map(|d| format!("{}:{}: {}", d.file, d.line, d.message))
                .collect();
            anyhow::bail!("invalid configuration\n{}", lines.join("\n"));
        }
        (parsed.config, parsed.diagnostics, Some(path))
    } else {
        (
            arches_config::Config::embedded_default(&host, procs, mem),
            Vec::new(),
            None,
        )
    };
    moab.fill_local_defaults(&host, procs, mem);
    let warnings = diagnostics
        .iter()
        .filter(|d| !d.is_error())
        .map(|d| format!("{}:{}: {}", d.file, d.line, d.message))
        .collect();
    Ok(from_moab(home, moab, file, warnings))
}

/// The configuration used when there is no `moab.cfg`.
pub fn embedded_default(home: &Path) -> DaemonConfig {
    let (host, procs, mem) = machine();
    let moab = arches_config::Config::embedded_default(&host, procs, mem);
    from_moab(home, moab, None, Vec::new())
}

/// Derives the daemon configuration from a parsed `moab.cfg`.
pub fn from_moab(
    home: &Path,
    moab: arches_config::Config,
    file: Option<PathBuf>,
    warnings: Vec<String>,
) -> DaemonConfig {
    DaemonConfig {
        file,
        home: home.to_path_buf(),
        policy: arches_core::Policy {
            bf_shortest_first: moab.bf_order == arches_config::BfOrder::ShortestPredictedFirst,
            bf_widest_window_first: moab.bf_order == arches_config::BfOrder::WidestWindowFirst,
            ..moab.policy.clone()
        },
        nodes: moab.nodes.clone(),
        admins: moab.admins[0].clone(),
        purge_secs: moab.job_purge_secs,
        scheduler_name: moab.sched.name.clone(),
        parameters: moab.effective(),
        warnings,
        compute_rm: moab
            .rms
            .iter()
            .find(|r| r.resource_type == arches_config::ResourceType::Compute)
            .map(|r| (r.name.clone(), r.rm_type.as_str().to_string()))
            .unwrap_or_else(|| ("local".to_string(), "LOCAL".to_string())),
        moab,
        salvage: false,
    }
}

/// This host's short name, processor count and memory.
fn machine() -> (String, u32, u64) {
    let procs = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    (crate::ident::short_hostname(), procs, machine_mem_mb())
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
    fn config_file_is_parsed_and_bad_values_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("moab.cfg");
        std::fs::write(
            &cfg,
            "ADMINCFG[1] USERS=root,alice\nJOBCPURGETIME 120\nNODECFG[n1] PROCS=8\nRMCFG[local] TYPE=LOCAL\nNOSUCHPARAM 1\n",
        )
        .unwrap();
        let c = load_config(dir.path(), None).unwrap();
        assert_eq!(c.purge_secs, 120);
        assert!(c.admins.contains(&"alice".to_string()));
        assert_eq!(c.nodes.len(), 1);
        assert_eq!(c.nodes[0].procs, 8);
        assert!(
            c.warnings.iter().any(|w| w.contains("NOSUCHPARAM")),
            "{:?}",
            c.warnings
        );
        std::fs::write(&cfg, "RMPOLLINTERVAL 30\nBACKFILLPOLICY SOMETIMES\n").unwrap();
        let e = format!("{:#}", load_config(dir.path(), None).unwrap_err());
        assert!(e.contains("moab.cfg:2: "), "{e}");
    }

    #[test]
    fn missing_explicit_file_is_an_error() {
        let dir = std::env::temp_dir();
        let e = load_config(&dir, Some(Path::new("/nonexistent/moab.cfg"))).unwrap_err();
        assert!(e.to_string().contains("not found"), "{e}");
    }
}
