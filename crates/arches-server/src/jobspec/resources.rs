//! `-l` resource lists and `-W` attributes: `nodes=N[:ppn=P][:feature]`,
//! `procs=`, `ncpus=`, `walltime=`, `mem`/`pmem`/`vmem` with units, `qos=`,
//! `feature=`, `partition=`, `flags=`, `depend=`, `ttc=`, `gres=`, `deadline=`, PBS Pro
//! `select=`, and `x=` RM extensions.

use arches_core::timespec::parse_duration;
use arches_core::{Dependency, JobFlag, Request};

use super::nodespec::{parse_nodes, parse_select, NodeSpec, Place};
use super::{err, SubmitError};

/// Resources gathered from `-l` and `-W`.
#[derive(Debug, Default)]
pub(super) struct Resources {
    pub(super) nodes: Option<u32>,
    pub(super) ppn: Option<u32>,
    pub(super) procs: Option<u32>,
    pub(super) ncpus: Option<u32>,
    /// Total memory (`mem=`), per task (`pmem=`), virtual (`vmem=`), MB.
    pub(super) mem: Option<u64>,
    pub(super) pmem: Option<u64>,
    pub(super) vmem: Option<u64>,
    pub(super) walltime: Option<i64>,
    pub(super) qos: Option<String>,
    pub(super) features: Vec<String>,
    pub(super) partition: Option<String>,
    /// `os=` / `opsys=` and `arch=`: recorded and shown (checkjob, XML);
    /// Arches nodes declare no operating system, so they do not restrict
    /// placement (docs/formats.md).
    pub(super) opsys: Option<String>,
    pub(super) arch: Option<String>,
    pub(super) flags: Vec<JobFlag>,
    pub(super) depend: Vec<Dependency>,
    /// Dependencies on named jobs, arrays and sub-jobs (resolved against the state).
    pub(super) depend_named: Vec<super::depend::Named>,
    pub(super) ttc: Option<String>,
    /// `-W umask=`: the job's file-creation mask (Torque), octal.
    pub(super) umask: Option<u32>,
    /// Node groups, host lists, generic resources, access policy,
    /// reservation binding, task request list ([`super::nodespec`]).
    pub(super) place: Place,
    /// `x=STAGEIN:...` / `x=STAGEOUT:...` values as written.
    pub(super) stagein: Vec<String>,
    pub(super) stageout: Vec<String>,
    /// `template=NAME`: a job template (`JOBCFG[NAME] SELECT=TRUE`).
    pub(super) template: Option<String>,
    /// The template that gave the job its wall-clock limit, if one did.
    pub(super) walltime_template: Option<String>,
    /// `procs=MIN-MAX`: the most processors a malleable job may use
    /// (`procs` holds the minimum).
    pub(super) procs_max: Option<u32>,
    /// `deadline=`: the completion deadline as written (resolved against
    /// the submission time by [`super::parse_deadline`]).
    pub(super) deadline: Option<String>,
}

/// Splits `a=1,b=2` at commas.
pub(super) fn split_top(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

fn count(key: &str, v: &str) -> Result<u32, SubmitError> {
    match v.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => err(format!("invalid value '{v}' for resource '{key}'")),
    }
}

impl Resources {
    pub(super) fn apply(&mut self, item: &str) -> Result<(), SubmitError> {
        let Some((key, value)) = item.split_once('=') else {
            return err(format!("malformed resource '{item}' (expected name=value)"));
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        match key.as_str() {
            "nodes" => self.nodes_spec(value)?,
            "ppn" => self.ppn = Some(count(&key, value)?),
            "procs" => match value.split_once('-') {
                // A processor range: a malleable job (arches_core::malleable).
                Some((min, max)) => {
                    self.procs = Some(count(&key, min)?);
                    self.procs_max = Some(count(&key, max)?);
                }
                None => {
                    self.procs = Some(count(&key, value)?);
                    self.procs_max = None;
                }
            },
            "ncpus" => self.ncpus = Some(count(&key, value)?),
            "walltime" | "wclimit" => {
                let w = parse_duration(value)
                    .map_err(|_| SubmitError(format!("invalid walltime '{value}'")))?;
                self.walltime = Some(w);
            }
            "mem" => self.mem = Some(parse_mem(value)?),
            "pmem" => self.pmem = Some(parse_mem(value)?),
            "vmem" | "pvmem" => self.vmem = Some(parse_mem(value)?),
            "qos" => self.qos = Some(non_empty(&key, value)?),
            "feature" | "features" => {
                if value.contains('|') {
                    return err(format!(
                        "feature alternatives ('{value}': one of several features) are not supported; list features that are all required, separated by ':'"
                    ));
                }
                for f in value.split(':').filter(|f| !f.is_empty()) {
                    self.features.push(f.to_string());
                }
            }
            "partition" => self.partition = Some(non_empty(&key, value)?),
            "os" | "opsys" => self.opsys = Some(non_empty(&key, value)?),
            "arch" => self.arch = Some(non_empty(&key, value)?),
            "flags" => self.flags_spec(value)?,
            "depend" => self.depend_spec(value)?,
            "ttc" => self.ttc = Some(non_empty(&key, value)?),
            "select" => self.select_spec(value)?,
            "template" => self.template = Some(non_empty(&key, value)?),
            "deadline" => self.deadline = Some(non_empty(&key, value)?),
            "cput" | "pcput" => {
                return err(format!(
                    "resource '{key}' (a CPU-time limit) is not supported; give the wall-clock limit with walltime="
                ))
            }
            "file" => {
                return err(
                    "resource 'file' (a local disk requirement) is not supported".to_string(),
                )
            }
            "nodeset" => {
                return err("resource 'nodeset' (node set constraints) is not supported".to_string())
            }
            "other" => return err(format!("resource 'other={value}' is not supported")),
            _ => {
                if !self.place.apply(&key, value)? {
                    return err(format!("unknown resource '{key}'"));
                }
            }
        }
        Ok(())
    }

    fn nodes_spec(&mut self, value: &str) -> Result<(), SubmitError> {
        if self.nodes.is_some() || self.place.groups.is_some() {
            return err(format!(
                "node specification '{value}' given twice (nodes= or select= once per job)"
            ));
        }
        match parse_nodes(value)? {
            NodeSpec::Simple {
                nodes,
                ppn,
                features,
            } => {
                self.nodes = Some(nodes);
                if ppn.is_some() {
                    self.ppn = ppn;
                }
                self.features.extend(features);
            }
            NodeSpec::Groups(g) => self.place.groups = Some(g),
        }
        Ok(())
    }

    /// PBS Pro `select=`: chunks as node groups (one chunk shape without
    /// hosts or GPUs is `nodes=N:ppn=C`). Memory per chunk becomes memory
    /// per task.
    fn select_spec(&mut self, value: &str) -> Result<(), SubmitError> {
        if self.nodes.is_some() || self.place.groups.is_some() {
            return err(format!(
                "node specification '{value}' given twice (nodes= or select= once per job)"
            ));
        }
        let (groups, mems) = parse_select(value)?;
        let per_task: Vec<Option<u64>> = groups
            .iter()
            .zip(&mems)
            .map(|(g, m)| m.map(|m| m.div_ceil(u64::from(g.tasks_per_node))))
            .collect();
        if per_task.iter().any(|m| *m != per_task[0]) {
            return err(format!(
                "select '{value}': chunks with different memory per CPU are not supported"
            ));
        }
        if let Some(m) = per_task[0] {
            self.pmem = Some(m);
        }
        if groups.len() == 1 && groups[0].host.is_none() && groups[0].gres.is_empty() {
            self.nodes = Some(groups[0].count);
            self.ppn = Some(groups[0].tasks_per_node);
        } else {
            self.place.groups = Some(groups);
        }
        Ok(())
    }

    /// What the submission itself asked for (class defaults fill the rest).
    pub(super) fn given(&self) -> arches_core::class::Given {
        arches_core::class::Given {
            shape: self.nodes.is_some()
                || self.procs.is_some()
                || self.ncpus.is_some()
                || self.ppn.is_some()
                || self.place.groups.is_some()
                || !self.place.trl.is_empty(),
            mem: self.mem.is_some() || self.pmem.is_some() || self.vmem.is_some(),
            features: !self.features.is_empty(),
            walltime: self.walltime.is_some(),
        }
    }

    fn flags_spec(&mut self, value: &str) -> Result<(), SubmitError> {
        let mut words = value.split([':', ',']).filter(|f| !f.is_empty()).peekable();
        while let Some(f) = words.next() {
            if f.eq_ignore_ascii_case("ADVRES") {
                // `FLAGS:ADVRES[:rsvid]`: the next word, unless a flag, is
                // the reservation.
                let rsv = match words.peek() {
                    Some(w)
                        if w.parse::<JobFlag>().is_err() && !w.eq_ignore_ascii_case("ADVRES") =>
                    {
                        words.next().unwrap_or_default()
                    }
                    _ => "",
                };
                self.place.apply("advres", rsv)?;
                continue;
            }
            let flag = f.parse::<JobFlag>().map_err(SubmitError)?;
            if flag == JobFlag::Interactive {
                // A terminal needs a client waiting for it: msub -I.
                return err("job flag INTERACTIVE is set by msub -I (an interactive job), not by -W x=FLAGS");
            }
            self.flags.push(flag);
        }
        Ok(())
    }

    /// `[TYPE:]ID[:ID...][,...]` ([`super::depend`]).
    fn depend_spec(&mut self, value: &str) -> Result<(), SubmitError> {
        let (deps, named) = super::depend::parse(value)?;
        self.depend.extend(deps);
        self.depend_named.extend(named);
        Ok(())
    }

    /// One `-W` attribute: `x=...` RM extensions, `depend=...`, `umask=`;
    /// any other is refused.
    pub(super) fn apply_extension(&mut self, ext: &str) -> Result<(), SubmitError> {
        let Some((key, value)) = ext.split_once('=') else {
            return err(format!("malformed attribute '{ext}'"));
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "x" => {
                for part in value.split(';').filter(|p| !p.is_empty()) {
                    let (k, v) = part
                        .split_once([':', '='])
                        .ok_or_else(|| SubmitError(format!("malformed extension '{part}'")))?;
                    match k.to_ascii_lowercase().as_str() {
                        "flags" => self.flags_spec(v)?,
                        "qos" => self.qos = Some(non_empty(k, v)?),
                        "partition" => self.partition = Some(non_empty(k, v)?),
                        "feature" | "features" => self.apply(&format!("feature={v}"))?,
                        "depend" => self.depend_spec(v)?,
                        "ttc" => self.ttc = Some(non_empty(k, v)?),
                        "stagein" => self.stagein.push(v.to_string()),
                        "stageout" => self.stageout.push(v.to_string()),
                        "walltime" | "wclimit" => self.apply(&format!("walltime={v}"))?,
                        "nodes" | "procs" | "mem" | "pmem" => {
                            self.apply(&format!("{}={v}", k.to_ascii_lowercase()))?
                        }
                        other => {
                            if !self.place.apply(other, v)? {
                                return err(format!(
                                    "unsupported resource manager extension '{k}' in '-W x={value}'"
                                ));
                            }
                        }
                    }
                }
                Ok(())
            }
            "depend" => self.depend_spec(value.trim()),
            "umask" => {
                self.umask = Some(parse_umask(value.trim())?);
                Ok(())
            }
            other => err(format!(
                "unsupported job attribute '-W {other}=' (supported: depend, umask, x)"
            )),
        }
    }

    pub(super) fn request(&self) -> Result<Request, SubmitError> {
        let mut r = Request::procs(1);
        if self.place.groups.is_some()
            && (self.procs.is_some() || self.ncpus.is_some() || self.ppn.is_some())
        {
            return err("procs, ncpus and ppn cannot be combined with a node specification of named hosts, several parts or GPUs (give ppn inside each part)".to_string());
        }
        match (self.nodes, self.procs.or(self.ncpus)) {
            (Some(n), None) => {
                let ppn = self.ppn.unwrap_or(1);
                r.tasks = n
                    .checked_mul(ppn)
                    .ok_or_else(|| SubmitError("node request too large".into()))?;
                r.nodes = Some(n);
                r.tasks_per_node = Some(ppn);
            }
            (None, Some(p)) => r.tasks = p,
            (Some(n), Some(p)) => {
                r.tasks = p.max(n);
                r.nodes = Some(n);
            }
            (None, None) => {
                if let Some(ppn) = self.ppn {
                    r.tasks = ppn;
                    r.nodes = Some(1);
                    r.tasks_per_node = Some(ppn);
                }
            }
        }
        let tasks = u64::from(r.tasks.max(1));
        r.mem_per_task_mb = match (self.pmem, self.mem.or(self.vmem)) {
            (Some(p), _) => p,
            (None, Some(total)) => total.div_ceil(tasks),
            (None, None) => 0,
        };
        r.features = self.features.clone();
        self.place.finish(&mut r)?;
        if self.place.groups.is_some() {
            let tasks = u64::from(r.tasks.max(1));
            r.mem_per_task_mb = match (self.pmem, self.mem.or(self.vmem)) {
                (Some(p), _) => p,
                (None, Some(total)) => total.div_ceil(tasks),
                (None, None) => 0,
            };
        }
        // `partition=ALL` is Moab's global partition: no restriction.
        r.partition = self
            .partition
            .clone()
            .filter(|p| !p.eq_ignore_ascii_case("ALL"));
        Ok(r)
    }
}

fn non_empty(key: &str, v: &str) -> Result<String, SubmitError> {
    if v.trim().is_empty() {
        err(format!("empty value for '{key}'"))
    } else {
        Ok(v.trim().to_string())
    }
}

/// Memory with a unit (`b kb mb gb tb`, also `k m g t`, `w` ignored, case
/// insensitive); no unit means bytes. Result in MB, rounded up.
pub fn parse_mem(text: &str) -> Result<u64, SubmitError> {
    let t = text.trim().to_ascii_lowercase();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = t.split_at(digits);
    let bad = || SubmitError(format!("invalid memory specification '{text}'"));
    let n: u64 = num.parse().map_err(|_| bad())?;
    let kb: u64 = match unit {
        "" | "b" => return Ok(n.div_ceil(1024 * 1024)),
        "k" | "kb" => n,
        "m" | "mb" => n.checked_mul(1024).ok_or_else(bad)?,
        "g" | "gb" => n.checked_mul(1024 * 1024).ok_or_else(bad)?,
        "t" | "tb" => n.checked_mul(1024 * 1024 * 1024).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    Ok(kb.div_ceil(1024))
}

/// `-W umask=` as Torque takes it: an octal mask of at most four digits
/// (`022`, `0077`, `77`), each 0–7, at most `0777`.
pub(super) fn parse_umask(v: &str) -> Result<u32, SubmitError> {
    let bad = || {
        SubmitError(format!(
            "invalid umask '{v}' (an octal mask such as 022 or 0077)"
        ))
    };
    if v.is_empty() || v.len() > 4 || !v.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(bad());
    }
    let m = u32::from_str_radix(v, 8).map_err(|_| bad())?;
    if m > 0o777 {
        return Err(bad());
    }
    Ok(m)
}
