//! Resizing a running local job (malleable and resizable jobs): its
//! `PBS_NODEFILE` is rewritten in place (atomically: a new file renamed
//! over the old one), the allocation-dependent variables are written to
//! `resize.env` in its job directory (`MOAB_RESIZEFILE` in its environment
//! names it), and the job gets the configured signal (`RESIZESIGNAL`,
//! default `SIGWINCH`, which a job that does not handle it ignores).

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use arches_core::JobId;

use super::spool::{self, NodeEntry};
use super::{Control, LocalRm};
use crate::{LaunchNode, RmError};

/// The environment file a resized job reads.
pub(crate) const RESIZE_ENV: &str = "resize.env";

/// `PBS_NODEFILE` lines: one per allocated processor.
pub(crate) fn nodefile_lines(nodes: &[NodeEntry]) -> String {
    let mut lines = String::new();
    for node in nodes {
        for _ in 0..node.procs {
            lines.push_str(&node.name);
            lines.push('\n');
        }
    }
    lines
}

/// The allocation-dependent variables, as the supervisor sets them at
/// launch.
pub(crate) fn allocation_env(nodes: &[NodeEntry]) -> Vec<(String, String)> {
    let procs: u32 = nodes.iter().map(|n| n.procs).sum();
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let taskmap: Vec<&str> = nodes
        .iter()
        .flat_map(|n| std::iter::repeat_n(n.name.as_str(), n.tasks as usize))
        .collect();
    vec![
        ("PBS_NP".into(), procs.to_string()),
        ("PBS_NUM_NODES".into(), nodes.len().to_string()),
        (
            "PBS_NUM_PPN".into(),
            nodes.first().map_or(0, |n| n.procs).to_string(),
        ),
        ("MOAB_NODELIST".into(), names.join(",")),
        ("MOAB_NODECOUNT".into(), nodes.len().to_string()),
        ("MOAB_PROCCOUNT".into(), procs.to_string()),
        ("MOAB_TASKMAP".into(), taskmap.join(",")),
    ]
}

/// Replaces `dir/name` with `bytes`, keeping the owner of the file it
/// replaces (the job's user), mode 0644.
fn replace(dir: &Path, name: &str, bytes: &[u8], like: &Path) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.new"));
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    if let Ok(m) = fs::metadata(like) {
        std::os::unix::fs::chown(&tmp, Some(m.uid()), Some(m.gid()))?;
    }
    fs::rename(&tmp, dir.join(name))
}

impl LocalRm {
    pub(crate) fn resize_job(
        &mut self,
        job: JobId,
        nodes: &[LaunchNode],
        signal: Option<i32>,
    ) -> Result<(), RmError> {
        let sup = self.jobs.get(&job).ok_or(RmError::UnknownJob(job))?;
        let dir = sup.dir.clone();
        let entries: Vec<NodeEntry> = nodes
            .iter()
            .map(|n| NodeEntry {
                name: n.name.clone(),
                tasks: n.tasks,
                procs: n.procs,
                gres: n.gres.clone(),
            })
            .collect();
        let nodefile = dir.join(spool::NODEFILE);
        let fail = |what: &str, e: std::io::Error| {
            RmError::Unavailable(format!("cannot rewrite {what} of job {job}: {e}"))
        };
        replace(
            &dir,
            spool::NODEFILE,
            nodefile_lines(&entries).as_bytes(),
            &nodefile,
        )
        .map_err(|e| fail("the node file", e))?;
        let env: String = allocation_env(&entries)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect();
        replace(&dir, RESIZE_ENV, env.as_bytes(), &nodefile)
            .map_err(|e| fail("the environment file", e))?;
        if let Some(s) = signal {
            self.control(job, Control::Signal(super::check_signal(s)?))?;
        }
        Ok(())
    }
}
