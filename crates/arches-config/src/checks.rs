//! Whole-file checks run after every line is read (references between
//! objects, data-staging requirements), and the `mdiag -C` report.
//!
//! `mdiag -C` format (one line each, in line order):
//!
//! ```text
//! moab.cfg:12: WARNING: unknown parameter 'BACKFILPOLICY' (did you mean BACKFILLPOLICY?); line ignored
//! moab.cfg:14: ERROR: RMCFG[hsm] TARGETUSAGE: invalid percentage '180%' (expected 0–100%, or a fraction 0–1)
//! moab.cfg: 20 parameter lines, 1 error, 1 warning
//! ```
//!
//! With [`Verbosity::Verbose`], every line without a diagnostic is listed
//! first as Moab 5 did: `INFO:    line #3 is valid: 'BACKFILLPOLICY FIRSTFIT'`.
//! The check fails (the command exits 1) when there is any ERROR.

use crate::config::{Config, DEFAULT_NODE};
use crate::enums::{DataStageModel, ResourceType, RmType};
use crate::parse::{self, Diagnostic, Severity};

mod templates;

/// Adds whole-file diagnostics about `config` read from `file`.
pub(crate) fn cross_check(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    check_storage(config, file, out);
    check_qos_references(config, file, out);
    check_qos_targets(config, file, out);
    check_node_sizes(config, file, out);
    check_slurm_node_sizes(config, file, out);
    check_node_allocation(config, file, out);
    check_gres_kinds(config, file, out);
    check_default_class(config, file, out);
    templates::check_templates(config, file, out);
}

/// At most [`arches_core::gres::MAX_GRES`] generic-resource kinds.
fn check_gres_kinds(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    let mut kinds: Vec<&str> = Vec::new();
    for (name, spec) in &config.record.node_specs {
        for (k, _) in spec.gres.iter().flatten() {
            if kinds.contains(&k.as_str()) {
                continue;
            }
            kinds.push(k);
            if kinds.len() > arches_core::gres::MAX_GRES {
                let key = format!("NODECFG[{name}]");
                out.push(Diagnostic {
                    file: file.to_string(),
                    line: config.attr_line(&key, "GRES"),
                    severity: Severity::Error,
                    message: format!(
                        "{key} GRES: '{k}' is generic resource kind {}; at most {} kinds are supported",
                        kinds.len(),
                        arches_core::gres::MAX_GRES
                    ),
                });
            }
        }
    }
}

/// `RMCFG[x] DEFAULTCLASS=` must name a class `CLASSCFG` defines when
/// classes are defined (a job may only be in a defined class then).
fn check_default_class(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    if config.policy.classes.is_empty() {
        return;
    }
    for rm in &config.rms {
        let Some(c) = rm.default_class.as_deref() else {
            continue;
        };
        if !config.policy.classes.contains_key(c) {
            let key = format!("RMCFG[{}]", rm.name);
            out.push(Diagnostic {
                file: file.to_string(),
                line: config.attr_line(&key, "DEFAULTCLASS"),
                severity: Severity::Error,
                message: format!(
                    "{key} DEFAULTCLASS: class '{c}' is not defined by any CLASSCFG (jobs without a class would be refused)"
                ),
            });
        }
    }
}

/// With a Slurm compute RM the nodes, processors and memory come from
/// Slurm: `NODECFG` `PROCS=`/`MEM=` are ignored (features, partition and
/// state still apply on top of what Slurm reports).
fn check_slurm_node_sizes(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    let Some(rm) = config
        .rms
        .iter()
        .find(|r| r.resource_type == ResourceType::Compute && r.rm_type == RmType::Slurm)
    else {
        return;
    };
    for (key, attr) in config.rm_node_size_overrides() {
        let line = config
            .record
            .objects
            .get(&key)
            .and_then(|attrs| attrs.iter().find(|(a, _, l)| a == attr && *l > 0))
            .map_or_else(|| config.object_line(&key), |(_, _, l)| *l);
        out.push(Diagnostic {
            file: file.to_string(),
            line,
            severity: Severity::Warning,
            message: format!(
                "{key} {attr}: ignored with RMCFG[{}] TYPE=SLURM (Slurm reports each node's processors and memory)",
                rm.name
            ),
        });
    }
}

/// Warns that `NODEALLOCATIONPOLICY MAXBALANCE|CPULOAD` fall back to
/// FIRSTAVAILABLE (no node speeds or loads in Arches).
fn check_node_allocation(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    use arches_core::policy::NodeAllocationPolicy as N;
    let why = match config.policy.node_allocation {
        N::MaxBalance => "balances node processor speeds, which Arches does not track",
        N::CpuLoad => "prefers nodes with the lowest CPU load, which Arches does not track",
        _ => return,
    };
    let line = config
        .record
        .scalars
        .iter()
        .filter(|(k, _)| k.starts_with("NODEALLOCATIONPOLICY"))
        .map(|(_, (_, l))| *l)
        .max()
        .unwrap_or(0);
    out.push(Diagnostic {
        file: file.to_string(),
        line,
        severity: Severity::Warning,
        message: format!(
            "NODEALLOCATIONPOLICY {}: Moab's policy {why}; nodes are allocated as FIRSTAVAILABLE",
            config.policy.node_allocation
        ),
    });
}

/// Warns about nodes without a processor count when the configuration itself
/// is the machine (no resource manager that reports nodes, or a `LOCAL` one).
fn check_node_sizes(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    let rm_reports_nodes = config
        .rms
        .iter()
        .any(|r| r.resource_type == ResourceType::Compute && r.rm_type != RmType::Local);
    if rm_reports_nodes {
        return;
    }
    let default_procs = config
        .record
        .node_specs
        .iter()
        .any(|(n, s)| n.eq_ignore_ascii_case(DEFAULT_NODE) && s.procs.is_some());
    let mut total: u64 = 0;
    for n in &config.nodes {
        total += u64::from(n.procs);
        if total > u64::from(arches_core::limits::MAX_TOTAL_PROCS) {
            let key = format!("NODECFG[{}]", n.name);
            out.push(Diagnostic {
                file: file.to_string(),
                line: config.object_line(&key),
                severity: Severity::Error,
                message: format!(
                    "{key}: the nodes would have more than {} processors in all (the most one cluster may have)",
                    arches_core::limits::MAX_TOTAL_PROCS
                ),
            });
            break;
        }
    }
    for (name, spec) in &config.record.node_specs {
        if spec.procs.is_none() && !default_procs && !name.eq_ignore_ascii_case(DEFAULT_NODE) {
            let key = format!("NODECFG[{name}]");
            out.push(Diagnostic {
                file: file.to_string(),
                line: config.object_line(&key),
                severity: Severity::Warning,
                message: format!(
                    "{key}: PROCS is set neither here nor in NODECFG[DEFAULT]; the node has 1 processor"
                ),
            });
        }
    }
}

/// Warns about `QDEF=`/`QLIST=` naming a QoS no `QOSCFG[...]` defines.
/// `QOSCFG[q] QTTARGET=`/`XFTARGET=`: shown by mdiag -q but feeding no
/// priority factor in Arches (Moab's TARGET component): said, not dropped.
/// With `QFLAGS=DEADLINE` a `QTTARGET` sets the jobs' relative deadline
/// ([`arches_core::deadline::relative`]): applied, no warning.
fn check_qos_targets(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    for (name, q) in &config.policy.qos {
        let key = format!("QOSCFG[{name}]");
        let deadline = q.flags.contains(&arches_core::policy::QosFlag::Deadline);
        for (attr, set) in [
            ("QTTARGET", q.qt_target.is_some_and(|t| t > 0) && !deadline),
            ("XFTARGET", q.xf_target_hundredths.is_some_and(|t| t > 0)),
        ] {
            if set {
                out.push(Diagnostic {
                    file: file.to_string(),
                    line: config.attr_line(&key, attr),
                    severity: Severity::Warning,
                    message: format!(
                        "{key} {attr}: accepted but not applied (Arches computes no TARGET priority component; mdiag -q shows it)"
                    ),
                });
            }
        }
    }
}

fn check_qos_references(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    let p = &config.policy;
    let creds = [
        (
            "CLASSCFG",
            p.classes
                .iter()
                .map(|(n, c)| (n, &c.qdef, &c.qlist))
                .collect::<Vec<_>>(),
        ),
        (
            "USERCFG",
            p.users
                .iter()
                .map(|(n, c)| (n, &c.qdef, &c.qlist))
                .collect(),
        ),
        (
            "GROUPCFG",
            p.groups
                .iter()
                .map(|(n, c)| (n, &c.qdef, &c.qlist))
                .collect(),
        ),
        (
            "ACCOUNTCFG",
            p.accounts
                .iter()
                .map(|(n, c)| (n, &c.qdef, &c.qlist))
                .collect(),
        ),
    ];
    for (param, entries) in creds {
        for (name, qdef, qlist) in entries {
            let key = format!("{param}[{name}]");
            let named = qdef
                .iter()
                .map(|q| ("QDEF", q))
                .chain(qlist.iter().map(|q| ("QLIST", q)));
            for (attr, qos) in named {
                if !p.qos.contains_key(qos) && !qos.eq_ignore_ascii_case("DEFAULT") {
                    out.push(Diagnostic {
                        file: file.to_string(),
                        line: config.attr_line(&key, attr),
                        severity: Severity::Warning,
                        message: format!(
                            "{key} {attr}: QoS '{qos}' is not defined (no QOSCFG[{qos}] line); it has no priority, limits or flags"
                        ),
                    });
                }
            }
        }
    }
}

/// Errors and warnings about storage resource managers (Moab §17.12) and
/// `DATARM=` references.
fn check_storage(config: &Config, file: &str, out: &mut Vec<Diagnostic>) {
    let mut diag = |line: usize, severity: Severity, message: String| {
        out.push(Diagnostic {
            file: file.to_string(),
            line,
            severity,
            message,
        })
    };
    let model = config.data_stage_model;
    for rm in &config.rms {
        let key = format!("RMCFG[{}]", rm.name);
        let line = config.object_line(&key);
        if let Some(data) = &rm.data_rm {
            match config.rm(data) {
                None => diag(
                    line,
                    Severity::Error,
                    format!(
                        "RMCFG[{}] DATARM: no resource manager named '{data}' (add RMCFG[{data}] TYPE=NATIVE RESOURCETYPE=STORAGE ...)",
                        rm.name
                    ),
                ),
                Some(d) if !d.is_storage() => diag(
                    line,
                    Severity::Error,
                    format!(
                        "RMCFG[{}] DATARM: resource manager '{data}' is not a storage RM (set RMCFG[{data}] RESOURCETYPE=STORAGE)",
                        rm.name
                    ),
                ),
                Some(_) => {}
            }
        }
        if !rm.is_storage() {
            continue;
        }
        if rm.rm_type != RmType::Native {
            diag(
                line,
                Severity::Error,
                format!(
                    "RMCFG[{}] TYPE: a storage resource manager must have TYPE=NATIVE (found {})",
                    rm.name, rm.rm_type
                ),
            );
        }
        // Only exec:// scripts drive a storage manager: anything else would
        // fail on the first call.
        for url in ["SYSTEMQUERYURL", "CLUSTERQUERYURL", "SYSTEMMODIFYURL"] {
            if let Some(v) = rm.url(url).filter(|v| !v.starts_with("exec://")) {
                diag(
                    config.attr_line(&key, url).max(line),
                    Severity::Error,
                    format!(
                        "RMCFG[{}] {url}: '{v}' is not supported (a storage interface is an exec:// script, e.g. exec://$TOOLSDIR/dstage.query)",
                        rm.name
                    ),
                );
            }
        }
        // The seed (§17.12.1): TYPE, RESOURCETYPE and SYSTEMQUERYURL always;
        // every model that initiates transfers needs SYSTEMMODIFYURL.
        // CLUSTERQUERYURL is optional (throttling by disk only).
        let mut required = vec!["SYSTEMQUERYURL"];
        if model != DataStageModel::External {
            required.push("SYSTEMMODIFYURL");
        }
        for url in required {
            if rm.url(url).is_none() {
                diag(
                    line,
                    Severity::Error,
                    format!(
                        "RMCFG[{}] {url}: required for a storage resource manager with DATASTAGEMODEL {model}",
                        rm.name
                    ),
                );
            }
        }
        if rm.url("CLUSTERQUERYURL").is_none() && rm.target_usage.is_some() {
            diag(
                config.attr_line(&key, "TARGETUSAGE").max(line),
                Severity::Warning,
                format!(
                    "RMCFG[{}] TARGETUSAGE: has no effect without CLUSTERQUERYURL (the configured disk is unknown); only MAXDSOP throttles staging",
                    rm.name
                ),
            );
        }
        let linked = config
            .rms
            .iter()
            .any(|c| c.data_rm.as_deref() == Some(rm.name.as_str()));
        if !linked {
            let compute = config
                .rms
                .iter()
                .find(|c| !c.is_storage())
                .map_or("<compute RM>", |c| c.name.as_str());
            diag(
                line,
                Severity::Warning,
                format!(
                    "RMCFG[{0}]: no resource manager names this storage resource manager with DATARM= (Moab would stage nothing through it; Arches uses it for every job): add RMCFG[{compute}] DATARM={0}",
                    rm.name
                ),
            );
        }
    }
}

/// How much `mdiag -C` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Diagnostics and the summary.
    Normal,
    /// Also one `INFO` line per valid line.
    Verbose,
}

/// The `mdiag -C` report of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Lines to print, in order (the last is the summary).
    pub lines: Vec<String>,
    pub errors: usize,
    pub warnings: usize,
}

impl CheckReport {
    /// Whether the file has no errors (exit status 0).
    pub fn ok(&self) -> bool {
        self.errors == 0
    }

    /// The report as text, one line each, newline-terminated.
    pub fn render(&self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }
}

/// Checks `text` read from `file` (`mdiag -C [file]`).
pub fn check(text: &str, file: &str, verbosity: Verbosity) -> CheckReport {
    let parsed = parse::parse(text, file);
    let logical = parse::logical_lines(text);
    let mut lines = Vec::new();
    if verbosity == Verbosity::Verbose {
        for l in &logical {
            if !parsed.diagnostics.iter().any(|d| d.line == l.number) {
                lines.push(format!(
                    "INFO:    line #{} is valid: '{}'",
                    l.number, l.text
                ));
            }
        }
    }
    let mut diags = parsed.diagnostics.clone();
    diags.sort_by_key(|d| d.line);
    lines.extend(diags.iter().map(ToString::to_string));
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags.len() - errors;
    lines.push(format!(
        "{file}: {} parameter line{}, {errors} error{}, {warnings} warning{}",
        logical.len(),
        plural(logical.len()),
        plural(errors),
        plural(warnings)
    ));
    CheckReport {
        lines,
        errors,
        warnings,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
