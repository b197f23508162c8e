//! Job templates at submission (`JOBCFG`/`JOBMATCHCFG`, `msub -l
//! template=NAME`): the submission's resources and credentials as a
//! [`Subject`], the core's [`arches_core::templates::apply`], and the
//! changes written back. Templates apply before the class defaults and
//! checks, as in Moab.

use arches_core::templates::{self, Subject};
use arches_core::Policy;

use super::resources::Resources;
use super::SubmitError;

/// The credentials a template may read or set, besides the resources.
pub(super) struct Creds<'a> {
    pub user: &'a str,
    pub group: &'a str,
    pub class: &'a mut Option<String>,
    pub account: &'a mut Option<String>,
}

/// Applies the templates to a parsed submission: the names of those that
/// applied (for checkjob's `TemplateSets:`) and the statistics templates
/// (`JSTAT`) the job is counted in, or the rejection.
pub(super) fn apply(
    policy: &Policy,
    res: &mut Resources,
    creds: Creds<'_>,
) -> Result<(Vec<String>, Vec<String>), SubmitError> {
    let t = &policy.templates;
    if t.is_empty() {
        return match &res.template {
            Some(name) => Err(SubmitError(format!("job template '{name}' does not exist"))),
            None => Ok((Vec::new(), Vec::new())),
        };
    }
    // Node groups and task request lists count as a size too.
    let given_size = res.given().shape;
    let request = res.request().ok();
    let before = Subject {
        user: creds.user.to_string(),
        group: creds.group.to_string(),
        account: creds.account.clone(),
        class: creds.class.clone(),
        qos: res.qos.clone(),
        partition: res.partition.clone(),
        flags: res.flags.clone(),
        features: res.features.clone(),
        walltime: res.walltime,
        procs: request
            .as_ref()
            .filter(|_| given_size)
            .map(|r| r.total_procs()),
        nodes: res.nodes,
        mem_mb: request
            .as_ref()
            .map(|r| r.total_mem_mb())
            .filter(|m| *m > 0),
    };
    let mut s = before.clone();
    let applied = templates::apply(t, &mut s, res.template.as_deref()).map_err(SubmitError)?;
    // Write back what the templates changed.
    if s.walltime != before.walltime {
        res.walltime = s.walltime;
        res.walltime_template = applied.origin.get("WALLTIME").cloned();
    }
    if s.procs != before.procs {
        res.procs = s.procs;
        res.ncpus = None;
    }
    if s.nodes != before.nodes {
        res.nodes = s.nodes;
    }
    if s.mem_mb != before.mem_mb {
        res.mem = s.mem_mb;
        res.pmem = None;
        res.vmem = None;
    }
    res.qos = s.qos;
    res.partition = s.partition;
    res.flags = s.flags;
    res.features = s.features;
    *creds.class = s.class;
    *creds.account = s.account;
    Ok((applied.names, applied.stats))
}
