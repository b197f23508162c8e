//! Classes (queues) as a job's shape: the defaults a class gives a job
//! that asks for nothing, and the per-job limits it enforces
//! (`CLASSCFG[c] DEFAULT.* MAX.* MIN.* HOSTLIST PARTITION`).
//!
//! Moab checks a job against its class when it is submitted
//! (`MJobCheckClassJLimits`) and refuses it with `job violates class
//! configuration '<why>'`, the reasons worded as Moab's
//! `MJobCheckJMaxLimits`/`MJobCheckJMinLimits` word them ([`check`]). A
//! job already queued when the configuration changes is checked again at
//! every iteration and blocked with the same message
//! ([`crate::context`]'s `ever_fits`).
//!
//! `MAX.WCLIMIT` is the exception kept from before: the engine plans with
//! the class's maximum when a job (a simulated one, or one queued before a
//! configuration change) asks for more ([`crate::effective_walltime`]);
//! the daemon refuses such submissions.

use crate::job::{Job, Request};
use crate::policy::{ClassConfig, Policy};
use crate::Secs;

/// What a submission asked for itself (so that class defaults fill the
/// rest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Given {
    /// A node count, processor count or node specification.
    pub shape: bool,
    pub mem: bool,
    pub features: bool,
    pub walltime: bool,
}

/// The class a submission runs in: the one requested, else the resource
/// manager's `DEFAULTCLASS`. When classes are configured, a class no
/// `CLASSCFG` defines is refused with Moab's words.
pub fn assign(requested: Option<&str>, policy: &Policy) -> Result<Option<String>, String> {
    let class = requested
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .or_else(|| policy.default_class.clone());
    match class {
        Some(c) if !policy.classes.is_empty() && !policy.classes.contains_key(&c) => {
            let known: Vec<&str> = policy.classes.keys().map(String::as_str).collect();
            Err(format!(
                "cannot locate requested class '{c}' (classes: {})",
                known.join(", ")
            ))
        }
        c => Ok(c),
    }
}

/// Applies the class's defaults to what the job did not ask for.
pub fn apply_defaults(
    req: &mut Request,
    walltime: &mut Option<Secs>,
    cfg: &ClassConfig,
    given: Given,
) {
    let d = &cfg.job;
    if !given.shape {
        match (d.default_nodes, d.default_procs) {
            (Some(n), Some(p)) => {
                req.nodes = Some(n);
                req.tasks = p.max(n);
                req.tasks_per_node = None;
            }
            (Some(n), None) => {
                req.nodes = Some(n);
                req.tasks = n;
                req.tasks_per_node = Some(1);
            }
            (None, Some(p)) => req.tasks = p,
            (None, None) => {}
        }
    }
    if !given.mem {
        if let Some(m) = d.default_mem_mb {
            req.mem_per_task_mb = m;
        }
    }
    if !given.features && req.features.is_empty() {
        req.features = d.default_features.clone();
    }
    if !given.walltime && walltime.is_none() {
        *walltime = cfg.default_wclimit;
    }
    if req.partition.is_none() {
        req.partition = d
            .partition
            .clone()
            .filter(|p| !p.eq_ignore_ascii_case("ALL"));
    }
    if !d.hosts.is_empty() && req.hosts().is_empty() {
        req.layout_mut().hosts = d.hosts.clone();
    }
}

/// Moab's reason when `job` breaks a limit of its class `name`, without
/// the `job violates class configuration` wrapper ([`violation`]).
pub fn check(job: &Job, name: &str, cfg: &ClassConfig) -> Result<(), String> {
    check_with(job, name, cfg, true)
}

fn check_with(job: &Job, name: &str, cfg: &ClassConfig, max_wc: bool) -> Result<(), String> {
    let d = &cfg.job;
    let procs = job.req.total_procs();
    let nodes = job.req.nodes.unwrap_or(0);
    if let (Some(max), Some(w), true) = (cfg.max_wclimit, job.walltime, max_wc) {
        if w > max {
            return Err(format!("wclimit too high for class '{name}' ({w} > {max})"));
        }
    }
    if let Some(max) = d.max_nodes.filter(|m| *m > 0) {
        let n = nodes.max(u32::from(procs > 0));
        if n > max {
            return Err(format!("nodes too high for class '{name}' ({n} > {max})"));
        }
    }
    if let Some(max) = d.max_procs.filter(|m| *m > 0) {
        if procs > max {
            return Err(format!(
                "procs too high for class '{name}' ({procs} > {max})"
            ));
        }
    }
    if let (Some(min), Some(w)) = (d.min_wclimit, job.walltime) {
        if w < min {
            return Err(format!("wclimit too low ({w} < {min}) for class '{name}'"));
        }
    }
    if let Some(min) = d.min_procs {
        if procs < min {
            return Err(format!(
                "procs too low for class '{name}' ({procs} < {min})"
            ));
        }
    }
    if let Some(p) = d
        .partition
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case("ALL"))
    {
        if job.req.partition.as_deref().is_some_and(|jp| jp != p) {
            return Err(format!(
                "partition '{}' not allowed for class '{name}' (partition {p})",
                job.req.partition.as_deref().unwrap_or_default()
            ));
        }
    }
    if !d.hosts.is_empty() {
        if let Some(h) = job.req.hosts().iter().find(|h| !d.hosts.contains(h)) {
            return Err(format!("host '{h}' not in the host list of class '{name}'"));
        }
    }
    Ok(())
}

/// The full message of a class violation, as Moab records it.
pub fn violation(why: &str) -> String {
    format!("job violates class configuration '{why}'")
}

/// [`check`] for the job's own class under `policy` (no class, or one the
/// configuration does not define: no limits).
pub fn check_job(job: &Job, policy: &Policy) -> Result<(), String> {
    let Some(name) = job.cred.class.as_deref() else {
        return Ok(());
    };
    match policy.classes.get(name) {
        Some(cfg) => check(job, name, cfg).map_err(|w| violation(&w)),
        None => Ok(()),
    }
}

/// [`check_job`] without `MAX.WCLIMIT` (the engine plans with the
/// maximum instead, see the module doc): what blocks a queued job.
pub fn check_job_shape(job: &Job, policy: &Policy) -> Result<(), String> {
    let Some(name) = job.cred.class.as_deref() else {
        return Ok(());
    };
    match policy.classes.get(name) {
        Some(cfg) => check_with(job, name, cfg, false).map_err(|w| violation(&w)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ClassConfig {
        let mut c = ClassConfig {
            max_wclimit: Some(3600),
            ..ClassConfig::default()
        };
        c.job.max_procs = Some(8);
        c.job.max_nodes = Some(2);
        c.job.min_procs = Some(2);
        c.job.min_wclimit = Some(60);
        c
    }

    #[test]
    fn limits_use_moabs_words() {
        let c = cfg();
        let ok = Job::new(1, "u", Request::procs(4), Some(600), 0);
        assert_eq!(check(&ok, "batch", &c), Ok(()));
        let long = Job::new(1, "u", Request::procs(4), Some(7200), 0);
        assert_eq!(
            check(&long, "batch", &c).unwrap_err(),
            "wclimit too high for class 'batch' (7200 > 3600)"
        );
        let big = Job::new(1, "u", Request::procs(16), Some(600), 0);
        assert_eq!(
            check(&big, "batch", &c).unwrap_err(),
            "procs too high for class 'batch' (16 > 8)"
        );
        let mut wide = Job::new(1, "u", Request::procs(4), Some(600), 0);
        wide.req.nodes = Some(4);
        assert_eq!(
            check(&wide, "batch", &c).unwrap_err(),
            "nodes too high for class 'batch' (4 > 2)"
        );
        let small = Job::new(1, "u", Request::procs(1), Some(600), 0);
        assert_eq!(
            check(&small, "batch", &c).unwrap_err(),
            "procs too low for class 'batch' (1 < 2)"
        );
        let short = Job::new(1, "u", Request::procs(4), Some(10), 0);
        assert_eq!(
            check(&short, "batch", &c).unwrap_err(),
            "wclimit too low (10 < 60) for class 'batch'"
        );
        assert_eq!(violation("x"), "job violates class configuration 'x'");
    }

    #[test]
    fn unknown_classes_are_refused_once_classes_exist() {
        let mut p = Policy::default();
        assert_eq!(assign(Some("any"), &p), Ok(Some("any".into())));
        assert_eq!(assign(None, &p), Ok(None));
        p.classes.insert("batch".into(), ClassConfig::default());
        p.default_class = Some("batch".into());
        assert_eq!(assign(None, &p), Ok(Some("batch".into())));
        assert_eq!(assign(Some(""), &p), Ok(Some("batch".into())));
        assert_eq!(
            assign(Some("gpu"), &p).unwrap_err(),
            "cannot locate requested class 'gpu' (classes: batch)"
        );
    }

    #[test]
    fn defaults_fill_only_what_is_missing() {
        let mut c = ClassConfig {
            default_wclimit: Some(100),
            ..ClassConfig::default()
        };
        c.job.default_nodes = Some(2);
        c.job.default_mem_mb = Some(512);
        c.job.default_features = vec!["fast".into()];
        c.job.hosts = vec!["n1".into()];
        let mut r = Request::procs(1);
        let mut w = None;
        apply_defaults(&mut r, &mut w, &c, Given::default());
        assert_eq!((r.nodes, r.tasks, r.mem_per_task_mb), (Some(2), 2, 512));
        assert_eq!(r.features, vec!["fast".to_string()]);
        assert_eq!(r.hosts(), ["n1".to_string()]);
        assert_eq!(w, Some(100));
        let mut r = Request::procs(4);
        let mut w = Some(5);
        let given = Given {
            shape: true,
            mem: true,
            features: false,
            walltime: true,
        };
        apply_defaults(&mut r, &mut w, &c, given);
        assert_eq!(
            (r.nodes, r.tasks, r.mem_per_task_mb, w),
            (None, 4, 0, Some(5))
        );
    }
}
