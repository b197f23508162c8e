//! Workloads: the simulator's job model ([`SimJob`]) and the JSONL workload
//! format.
//!
//! # JSONL workload format
//!
//! One JSON object per line; blank lines and lines starting with `#` are
//! ignored. Times are integer seconds from the start of the workload.
//!
//! | field | required | meaning |
//! |---|---|---|
//! | `id` | yes | job number (unique, positive) |
//! | `submit` | yes | submit time (s, >= 0) |
//! | `procs` | one of | total processors (single-processor tasks anywhere) |
//! | `nodes` + `ppn` | one of | exactly `nodes` nodes with `ppn` processors each |
//! | `walltime` | yes | wall-clock limit (s, > 0): what the scheduler plans with, and the kill limit |
//! | `runtime` | yes | true run time (s, >= 0); cut at `walltime` |
//! | `user`, `group`, `account`, `class`, `qos` | no | credentials (user and group default to `user<id>`-style `u`) |
//! | `priority` | no | user priority (`msub -p`, -1024..1023) |
//! | `flags` | no | list of Moab job flags, e.g. `["BACKFILL", "PREEMPTEE"]` |
//! | `depend` | no | Moab dependency, e.g. `"afterok:12:13"` or `"afterany:4,after:5"`; a job waiting for another's start (`after`) starts in the same second when it fits; `before:N` makes the queued job N wait for this one, as msub does (a job whose `before` names a job not queued, another user's, or an array, is skipped with the reason) |
//! | `stagein` | no | the job's stage-in: `{"source": URL, "size": bytes}` or a list of them (with `--staging`, staged by the modelled storage); or a number of seconds: without `--staging` the job is not eligible before `submit + stagein`, with it a file that takes that long at `--stage-rate` |
//! | `stagein_size` | no | stage-in size in MB (with `--staging`, one file of that size) |
//! | `maxprocs` | no | a malleable job (`msub -l procs=MIN-MAX`): `procs` is the minimum it starts with, `maxprocs` the most it may use; `runtime` is its run on `procs` processors, and its work is conserved when it grows or shrinks (linear speed-up) |
//! | `deadline` | no | completion deadline, seconds after `submit` (`msub -l deadline=+S`): guaranteed (planned first, reserved) when the job's QoS has `QFLAGS=DEADLINE` in the configuration, otherwise only the `DEADLINEWEIGHT` priority subcomponent; a `QTTARGET` on such a QoS gives every job of it one |
//! | `resize` | no | resize requests of a malleable job, each `{"after": S, "procs": N}`: `S` seconds after it starts its owner asks for `N` more processors (`mjobctl -m proccount+=N`), or releases `-N` |
//!
//! Example:
//!
//! ```text
//! {"id": 1, "submit": 0, "procs": 16, "walltime": 3600, "runtime": 1800, "user": "alice"}
//! {"id": 2, "submit": 60, "nodes": 2, "ppn": 8, "walltime": 600, "runtime": 700, "depend": "afterok:1"}
//! ```

use std::io::BufRead;
use std::path::Path;

use arches_core::{Dependency, DependencyKind, Job, JobFlag, JobId, Name, Request, Secs, Time};
use serde::Deserialize;

use crate::swf::open_maybe_gz;

/// One job of a workload, as the simulator replays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimJob {
    pub id: JobId,
    pub submit: Time,
    /// Total processors.
    pub procs: u32,
    /// Exact node layout (`nodes`, `ppn`) when the workload asked for one.
    pub layout: Option<(u32, u32)>,
    /// Wall-clock limit: the duration the scheduler plans with and the kill limit.
    pub walltime: Secs,
    /// True run time, already cut at `walltime`.
    pub runtime: Secs,
    /// A 1-second stand-in for a trace line without a usable run time or
    /// size (pyss's convention); excluded from pyss-style statistics.
    pub placeholder: bool,
    pub user: String,
    pub group: String,
    pub account: Option<String>,
    pub class: Option<String>,
    pub qos: Option<String>,
    pub priority: i64,
    pub flags: Vec<JobFlag>,
    pub depend: Vec<Dependency>,
    /// Not eligible before this time (data staging).
    pub eligible_at: Option<Time>,
    /// Stage-in: seconds at the storage's full rate (`stagein`) and size in
    /// MB (`stagein_size`), for `--staging` ([`crate::staging`]).
    pub stage_secs: Option<Secs>,
    pub stage_mb: Option<u64>,
    /// Stage-in files (JSONL `stagein` objects): source URL and bytes.
    pub stage_files: Vec<(String, u64)>,
    /// A malleable job's maximum (`procs` is its minimum).
    pub max_procs: Option<u32>,
    /// The completion deadline (`Job::deadline`).
    pub deadline: Option<Time>,
    /// Resize requests: seconds after the start, processors (+ more, - fewer).
    pub resizes: Vec<(Secs, i64)>,
    /// A job array (JSONL `array`: `1-100`, `1-9:2`, `1,5,7`, with `%N`
    /// a slot limit): the line stands for its sub-jobs, which take the ids
    /// after its own (`arches_core::array`), each with the line's size and
    /// run time.
    pub array: Option<arches_core::ArraySpec>,
}

impl SimJob {
    /// A plain job: `procs` processors, limit `walltime`, true run `runtime`.
    pub fn new(id: JobId, submit: Time, procs: u32, walltime: Secs, runtime: Secs) -> Self {
        SimJob {
            id,
            submit,
            procs,
            layout: None,
            walltime,
            runtime: runtime.min(walltime),
            placeholder: false,
            user: "u".into(),
            group: "g".into(),
            account: None,
            class: None,
            qos: None,
            priority: 0,
            flags: Vec::new(),
            depend: Vec::new(),
            eligible_at: None,
            stage_secs: None,
            stage_mb: None,
            stage_files: Vec::new(),
            max_procs: None,
            deadline: None,
            resizes: Vec::new(),
            array: None,
        }
    }

    /// The job as the scheduling core sees it (idle, just submitted).
    pub fn to_core(&self) -> Job {
        let req = match self.layout {
            Some((nodes, ppn)) => Request {
                tasks: nodes * ppn,
                nodes: Some(nodes),
                tasks_per_node: Some(ppn),
                ..Request::procs(nodes * ppn)
            },
            None => Request::procs(self.procs),
        };
        let mut job = Job::new(self.id, &self.user, req, Some(self.walltime), self.submit);
        job.cred.group = Name::from(self.group.as_str());
        job.cred.account = self.account.as_deref().map(Name::from);
        job.cred.class = self.class.as_deref().map(Name::from);
        job.cred.qos = self.qos.as_deref().map(Name::from);
        job.user_prio = self.priority;
        job.flags = self.flags.iter().copied().collect();
        job.depend = self.depend.clone();
        job.start_after = self.eligible_at;
        job.deadline = self.deadline;
        job.elastic = self
            .max_procs
            .filter(|_| self.layout.is_none())
            .and_then(|max| arches_core::malleable::check_range(self.procs, max, 1).ok());
        job
    }
}

/// Why a JSONL workload could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}:{line}: {what}")]
    Invalid {
        file: String,
        line: usize,
        what: String,
    },
}

/// A JSONL workload as read.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// Sorted by submit time, then id.
    pub jobs: Vec<SimJob>,
    /// Invalid lines skipped (only when skipping was asked for).
    pub malformed: usize,
}

/// Reads a JSONL workload (plain or `.gz`), sorted by submit time then id.
/// With `skip_malformed` an invalid line (bad JSON, a bad value, a
/// duplicate id) is skipped and counted instead of failing the read.
pub fn read_jsonl(path: &Path, skip_malformed: bool) -> Result<Workload, WorkloadError> {
    let file = path.display().to_string();
    let reader = open_maybe_gz(path).map_err(|source| WorkloadError::Io {
        file: file.clone(),
        source,
    })?;
    parse_jsonl_with(reader, &file, skip_malformed)
}

/// Parses JSONL workload text; `file` names the source in errors. The first
/// invalid line is an error.
pub fn parse_jsonl(reader: impl BufRead, file: &str) -> Result<Vec<SimJob>, WorkloadError> {
    parse_jsonl_with(reader, file, false).map(|w| w.jobs)
}

/// Parses JSONL workload text, skipping and counting invalid lines when
/// `skip_malformed` is set.
pub fn parse_jsonl_with(
    reader: impl BufRead,
    file: &str,
    skip_malformed: bool,
) -> Result<Workload, WorkloadError> {
    let mut out = Workload::default();
    let mut seen = std::collections::BTreeSet::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|source| WorkloadError::Io {
            file: file.to_string(),
            source,
        })?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let job = serde_json::from_str::<RawJob>(text)
            .map_err(|e| e.to_string())
            .and_then(RawJob::into_job)
            .and_then(|job| {
                if seen.insert(job.id) {
                    Ok(job)
                } else {
                    Err(format!("duplicate job id {}", job.id))
                }
            });
        match job {
            Ok(job) => out.jobs.push(job),
            Err(_) if skip_malformed => out.malformed += 1,
            Err(what) => {
                return Err(WorkloadError::Invalid {
                    file: file.to_string(),
                    line: i + 1,
                    what,
                })
            }
        }
    }
    out.jobs.sort_by_key(|j| (j.submit, j.id));
    Ok(out)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    id: JobId,
    submit: Time,
    procs: Option<u32>,
    nodes: Option<u32>,
    ppn: Option<u32>,
    walltime: Secs,
    runtime: Secs,
    user: Option<String>,
    group: Option<String>,
    account: Option<String>,
    class: Option<String>,
    qos: Option<String>,
    priority: Option<i64>,
    #[serde(default)]
    flags: Vec<String>,
    depend: Option<String>,
    stagein: Option<RawStageIn>,
    /// Stage-in size in MB (with `--staging`).
    stagein_size: Option<u64>,
    /// A job array's index list (`1-100%5`).
    array: Option<String>,
    /// A malleable job's maximum processors.
    maxprocs: Option<u32>,
    /// Completion deadline, seconds after the submission.
    deadline: Option<Secs>,
    #[serde(default)]
    resize: Vec<RawResize>,
}

/// One resize request of a malleable job.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResize {
    /// Seconds after the job started.
    after: Secs,
    /// Processors more (positive) or fewer (negative).
    procs: i64,
}

/// `stagein`: seconds, one file or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawStageIn {
    Secs(Secs),
    One(RawStageFile),
    Many(Vec<RawStageFile>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStageFile {
    source: String,
    /// Bytes.
    size: u64,
}

impl RawJob {
    fn into_job(self) -> Result<SimJob, String> {
        if self.id == 0 {
            return Err("id must be positive".into());
        }
        if self.submit < 0 {
            return Err(format!("submit must be >= 0, got {}", self.submit));
        }
        if self.walltime <= 0 {
            return Err(format!("walltime must be > 0, got {}", self.walltime));
        }
        if self.runtime < 0 {
            return Err(format!("runtime must be >= 0, got {}", self.runtime));
        }
        use arches_core::limits::{check, MAX_JOB_NODES, MAX_TIME, MAX_TOTAL_PROCS, MAX_WALLTIME};
        check("submit", self.submit, 0..=MAX_TIME)?;
        check("walltime", self.walltime, 1..=MAX_WALLTIME)?;
        check("runtime", self.runtime, 0..=MAX_WALLTIME)?;
        for (what, v) in [("procs", self.procs), ("ppn", self.ppn)] {
            if let Some(v) = v {
                check(what, v, 0..=MAX_TOTAL_PROCS)?;
            }
        }
        if let Some(n) = self.nodes {
            check("nodes", n, 0..=MAX_JOB_NODES)?;
        }
        let (procs, layout) = match (self.procs, self.nodes, self.ppn) {
            (Some(p), None, None) if p > 0 => (p, None),
            (None, Some(n), Some(ppn)) if n > 0 && ppn > 0 => {
                let total = n
                    .checked_mul(ppn)
                    .filter(|t| *t <= MAX_TOTAL_PROCS)
                    .ok_or(format!("nodes * ppn above {MAX_TOTAL_PROCS} processors"))?;
                (total, Some((n, ppn)))
            }
            (None, Some(n), None) if n > 0 => (n, Some((n, 1))),
            _ => return Err("give either a positive `procs` or positive `nodes` and `ppn`".into()),
        };
        let mut job = SimJob::new(self.id, self.submit, procs, self.walltime, self.runtime);
        job.layout = layout;
        if let Some(u) = self.user {
            job.user = u;
        }
        job.group = self.group.unwrap_or_else(|| job.user.clone());
        job.account = self.account;
        job.class = self.class;
        job.qos = self.qos;
        job.priority = self.priority.unwrap_or(0);
        if !(-1024..=1023).contains(&job.priority) {
            return Err(format!("priority {} outside -1024..1023", job.priority));
        }
        job.flags = self
            .flags
            .iter()
            .map(|f| f.parse::<JobFlag>())
            .collect::<Result<_, _>>()?;
        if let Some(d) = self.depend {
            job.depend = parse_depend(&d)?;
        }
        match self.stagein {
            Some(RawStageIn::Secs(s)) => {
                check("stagein", s, 0..=MAX_WALLTIME)?;
                job.eligible_at = Some(self.submit + s);
                job.stage_secs = Some(s);
            }
            Some(RawStageIn::One(f)) => job.stage_files = vec![(f.source, f.size)],
            Some(RawStageIn::Many(v)) => {
                job.stage_files = v.into_iter().map(|f| (f.source, f.size)).collect()
            }
            None => {}
        }
        if job.stage_files.iter().any(|(s, _)| s.trim().is_empty()) {
            return Err("stagein: a file needs a non-empty `source`".into());
        }
        job.stage_mb = self.stagein_size;
        if let Some(d) = self.deadline {
            check("deadline", d, 1..=MAX_TIME)?;
            job.deadline = Some(self.submit + d);
        }
        if let Some(max) = self.maxprocs {
            if job.layout.is_some() {
                return Err(
                    "`maxprocs` needs `procs` (a malleable job's processors go anywhere)".into(),
                );
            }
            arches_core::malleable::check_range(job.procs, max, 1)?;
            job.max_procs = Some(max);
        }
        for r in self.resize {
            if job.max_procs.is_none() {
                return Err(
                    "`resize` needs `maxprocs` (only a malleable job can be resized)".into(),
                );
            }
            if r.after < 0 || r.procs == 0 {
                return Err(format!(
                    "resize: `after` must be >= 0 and `procs` not 0, got {} and {}",
                    r.after, r.procs
                ));
            }
            job.resizes.push((r.after, r.procs));
        }
        if let Some(a) = self.array {
            let spec =
                arches_core::ArraySpec::parse(&a).map_err(|e| format!("array '{a}': {e}"))?;
            if spec.name.is_some() {
                return Err(format!("array '{a}': give the index list only"));
            }
            if job.max_procs.is_some() {
                return Err(
                    "`maxprocs` and `array` cannot be combined (sub-jobs are rigid)".into(),
                );
            }
            job.array = Some(spec);
        }
        Ok(job)
    }
}

/// Parses Moab's `TYPE:id[:id][,TYPE:id...]` dependency syntax.
fn parse_depend(text: &str) -> Result<Vec<Dependency>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut fields = part.split(':');
        let kind: DependencyKind = fields.next().unwrap_or_default().parse()?;
        let mut any = false;
        for id in fields {
            let job = id
                .trim()
                .parse::<JobId>()
                .map_err(|_| format!("invalid job id '{id}' in dependency '{part}'"))?;
            out.push(Dependency { kind, job });
            any = true;
        }
        if !any {
            return Err(format!("dependency '{part}' names no job"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_sizes_and_optional_fields() {
        let text = r#"
# comment
{"id": 2, "submit": 60, "nodes": 2, "ppn": 8, "walltime": 600, "runtime": 700, "depend": "afterok:1", "stagein": 30}
{"id": 1, "submit": 0, "procs": 16, "walltime": 3600, "runtime": 1800, "user": "alice", "flags": ["backfill"], "priority": 5}
"#;
        let jobs = parse_jsonl(text.as_bytes(), "w.jsonl").unwrap();
        assert_eq!(jobs[0].deadline, None);
        let dl = r#"{"id": 3, "submit": 60, "procs": 1, "walltime": 60, "runtime": 60, "deadline": 600}"#;
        let d = parse_jsonl(dl.as_bytes(), "w.jsonl").unwrap();
        assert_eq!(d[0].to_core().deadline, Some(660));
        let bad =
            r#"{"id": 3, "submit": 60, "procs": 1, "walltime": 60, "runtime": 60, "deadline": 0}"#;
        assert!(parse_jsonl(bad.as_bytes(), "w.jsonl").is_err());
        assert_eq!(jobs[0].id, 1);
        assert_eq!(jobs[0].user, "alice");
        assert_eq!(jobs[0].group, "alice");
        assert_eq!(jobs[0].flags, vec![JobFlag::Backfill]);
        assert_eq!(jobs[1].procs, 16);
        assert_eq!(jobs[1].layout, Some((2, 8)));
        assert_eq!(jobs[1].runtime, 600, "cut at the walltime");
        assert_eq!(jobs[1].eligible_at, Some(90));
        assert_eq!(
            jobs[1].depend,
            vec![Dependency {
                kind: DependencyKind::AfterOk,
                job: 1
            }]
        );
        let core = jobs[1].to_core();
        assert_eq!(core.req.nodes, Some(2));
        assert_eq!(core.req.total_procs(), 16);
    }

    #[test]
    fn stagein_files_with_source_and_size() {
        let text = concat!(
            r#"{"id": 1, "submit": 0, "procs": 1, "walltime": 10, "runtime": 5, "stagein": {"source": "hsm:///d/a", "size": 2048}}"#,
            "\n",
            r#"{"id": 2, "submit": 0, "procs": 1, "walltime": 10, "runtime": 5, "stagein": [{"source": "file:///x", "size": 1}, {"source": "file:///y", "size": 2}]}"#,
            "\n",
        );
        let jobs = parse_jsonl(text.as_bytes(), "w").unwrap();
        assert_eq!(jobs[0].stage_files, vec![("hsm:///d/a".to_string(), 2048)]);
        assert_eq!(jobs[0].eligible_at, None);
        assert_eq!(jobs[1].stage_files.len(), 2);
        let bad = r#"{"id": 1, "submit": 0, "procs": 1, "walltime": 10, "runtime": 5, "stagein": {"source": "", "size": 1}}"#;
        let e = parse_jsonl(bad.as_bytes(), "b").unwrap_err();
        assert!(e.to_string().contains("b:1: stagein: a file needs"), "{e}");
        let bad = r#"{"id": 1, "submit": 0, "procs": 1, "walltime": 10, "runtime": 5, "stagein": {"src": "x"}}"#;
        assert!(parse_jsonl(bad.as_bytes(), "b").is_err());
    }

    #[test]
    fn malleable_jobs_and_resize_requests() {
        let text = r#"{"id": 1, "submit": 0, "procs": 2, "maxprocs": 8, "walltime": 100, "runtime": 50, "resize": [{"after": 10, "procs": 4}, {"after": 20, "procs": -2}]}"#;
        let jobs = parse_jsonl(text.as_bytes(), "m").unwrap();
        assert_eq!(jobs[0].max_procs, Some(8));
        assert_eq!(jobs[0].resizes, vec![(10, 4), (20, -2)]);
        let core = jobs[0].to_core();
        assert_eq!(core.elastic.map(|e| (e.min, e.max)), Some((2, 8)));
        for (bad, why) in [
            (
                r#"{"id": 1, "submit": 0, "procs": 4, "maxprocs": 2, "walltime": 1, "runtime": 1}"#,
                "invalid processor range 4-2",
            ),
            (
                r#"{"id": 1, "submit": 0, "nodes": 1, "ppn": 2, "maxprocs": 4, "walltime": 1, "runtime": 1}"#,
                "`maxprocs` needs `procs`",
            ),
            (
                r#"{"id": 1, "submit": 0, "procs": 1, "walltime": 1, "runtime": 1, "resize": [{"after": 1, "procs": 1}]}"#,
                "`resize` needs `maxprocs`",
            ),
            (
                r#"{"id": 1, "submit": 0, "procs": 1, "maxprocs": 2, "walltime": 1, "runtime": 1, "resize": [{"after": 1, "procs": 0}]}"#,
                "resize: `after`",
            ),
        ] {
            let e = parse_jsonl(bad.as_bytes(), "b").unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn errors_name_file_and_line() {
        let text = "{\"id\": 1, \"submit\": 0, \"procs\": 1, \"walltime\": 10, \"runtime\": 5}\n\
                    {\"id\": 2, \"submit\": 0, \"walltime\": 10, \"runtime\": 5}\n";
        let e = parse_jsonl(text.as_bytes(), "w.jsonl").unwrap_err();
        assert!(e.to_string().starts_with("w.jsonl:2: give either"), "{e}");
        let dup = "{\"id\": 1, \"submit\": 0, \"procs\": 1, \"walltime\": 10, \"runtime\": 5}\n"
            .repeat(2);
        let e = parse_jsonl(dup.as_bytes(), "d").unwrap_err();
        assert!(e.to_string().contains("d:2: duplicate job id 1"), "{e}");
        let bad = "{\"id\": 1, \"submit\": 0, \"procs\": 1, \"walltime\": 10, \"runtime\": 5, \"colour\": 1}";
        let e = parse_jsonl(bad.as_bytes(), "b").unwrap_err();
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
    }

    #[test]
    fn malformed_lines_are_skipped_and_counted_on_request() {
        let text = "{\"id\": 1, \"submit\": 0, \"procs\": 1, \"walltime\": 10, \"runtime\": 5}\n\
                    not json\n\
                    {\"id\": 2, \"submit\": 0, \"walltime\": 10, \"runtime\": 5}\n\
                    {\"id\": 1, \"submit\": 3, \"procs\": 1, \"walltime\": 10, \"runtime\": 5}\n\
                    # a comment is not malformed\n\
                    {\"id\": 3, \"submit\": 2, \"procs\": 2, \"walltime\": 10, \"runtime\": 5}\n";
        let e = parse_jsonl_with(text.as_bytes(), "w", false).unwrap_err();
        assert!(e.to_string().starts_with("w:2: "), "{e}");
        let w = parse_jsonl_with(text.as_bytes(), "w", true).unwrap();
        assert_eq!(w.malformed, 3, "bad JSON, no size, duplicate id");
        let ids: Vec<JobId> = w.jobs.iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![1, 3]);
    }
}
