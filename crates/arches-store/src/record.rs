//! The stored form of a job: a serde mirror of the core [`Job`] plus the
//! daemon's execution record. This module is the only place where core types
//! are converted to and from what is written to disk.

use arches_core::{
    Alloc, Completion, CompletionCode, Credentials, Dependency, GresTable, Holds, Job, JobFlag,
    JobState, Request, RequeueCause, RunInfo, StartKind, Termination,
};
use serde::{Deserialize, Serialize};

use crate::StoreError;

/// One job as stored: the scheduler's view and the execution details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub job: StoredJob,
    pub exec: ExecRecord,
}

/// What a job runs: its script and environment. Stored in the `payloads`
/// table, apart from the job record, and read back only when the job starts,
/// so the daemon does not keep it in memory for every queued job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Payload {
    pub script: String,
    pub env: Vec<(String, String)>,
}

impl Payload {
    /// What checkjob shows as the executable: the script's first non-empty
    /// line, at most 4 KiB.
    pub fn executable(&self) -> String {
        let line = self
            .script
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let mut end = line.len().min(4096);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line[..end].to_string()
    }
}

/// Execution details and submission metadata kept by the daemon (not needed
/// by scheduling decisions). The script and environment are a [`Payload`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ExecRecord {
    /// The script file's absolute path (checkjob's executable); empty for
    /// standard-input submissions (older records: the script's first line).
    #[serde(default)]
    pub executable: String,
    /// Requested operating system and architecture (`-l os=`, `-l arch=`).
    #[serde(default)]
    pub opsys: Option<String>,
    #[serde(default)]
    pub arch: Option<String>,
    pub shell: Option<String>,
    pub workdir: String,
    pub stdout: String,
    pub stderr: String,
    pub join: bool,
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub submit_dir: String,
    pub submit_args: String,
    pub submit_host: String,
    pub mail_options: Option<String>,
    pub mail_list: Option<String>,
    /// Generic resources as written (`gres=`), recorded.
    pub gres: Vec<String>,
    /// `ttc=` as written, recorded.
    pub ttc: Option<String>,
    /// `-W umask=`: the file-creation mask the job runs with (`None`: the
    /// daemon's, never one that lets others write).
    #[serde(default)]
    pub umask: Option<u32>,
    /// Notes shown by checkjob (start failures, recovery notes).
    pub messages: Vec<String>,
    /// Job variables (`mjobctl -m var=NAME:VALUE`), shown by checkjob.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<(String, String)>,
    /// Exit status was observed as a wall-clock kill.
    pub walltime_exceeded: bool,
    /// `STAGEIN` files and their staging progress.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stage_in: Vec<StageRecord>,
    /// `STAGEOUT` files (and the implicit stdout/stderr stage-out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stage_out: Vec<StageRecord>,
    /// Failed starts and deferrals ([`arches_core::defer`]); `None` for
    /// the (usual) job that never failed to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer: Option<Box<DeferRecord>>,
    /// Job templates that applied at submission (`JOBCFG`/`JOBMATCHCFG`,
    /// `msub -l template=`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<String>,
    /// Statistics templates (`JOBMATCHCFG[...] JSTAT=`) of the rules the job
    /// matched at submission: its usage is reported into them (`showstats -j`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stat_templates: Vec<String>,
    /// The script of a record written before payloads had their own table
    /// ([`crate::Store::load_jobs`] moves it there). `None` in memory.
    #[serde(default, rename = "script", skip_serializing_if = "Option::is_none")]
    pub legacy_script: Option<String>,
    /// The environment of such a record, likewise.
    #[serde(default, rename = "env", skip_serializing_if = "Option::is_none")]
    pub legacy_env: Option<Vec<(String, String)>>,
    /// Arguments the script runs with (`msub -F`, `msub script a b`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// Serde mirror of [`arches_core::defer::DeferState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DeferRecord {
    #[serde(default)]
    pub failures: u32,
    #[serde(default)]
    pub defers: u32,
    #[serde(default)]
    pub until: Option<i64>,
}

impl DeferRecord {
    pub fn to_core(self) -> arches_core::defer::DeferState {
        arches_core::defer::DeferState {
            failures: self.failures,
            defers: self.defers,
            until: self.until,
        }
    }

    pub fn from_core(s: arches_core::defer::DeferState) -> Self {
        DeferRecord {
            failures: s.failures,
            defers: s.defers,
            until: s.until,
        }
    }
}

/// One file to stage (serde mirror of `arches_core::staging::StageFile`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StageRecord {
    pub src: String,
    pub dest: String,
    #[serde(default)]
    pub size: Option<u64>,
    #[serde(default)]
    pub transferred: u64,
    /// `pending`, `active`, `complete`, `failed`, `removed`.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub estimate: Option<i64>,
    #[serde(default)]
    pub started: Option<i64>,
    #[serde(default)]
    pub error: Option<String>,
    /// LOCAL: the compute node a `$LOCAL` file was staged to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl StageRecord {
    /// The core's view (a script in flight is not persisted).
    pub fn to_core(&self) -> arches_core::staging::StageFile {
        arches_core::staging::StageFile {
            src: self.src.clone(),
            dest: self.dest.clone(),
            size: self.size,
            transferred: self.transferred,
            status: arches_core::staging::StageStatus::parse(&self.status).unwrap_or_default(),
            estimate: self.estimate,
            started: self.started,
            last_query: None,
            in_flight: false,
            error: self.error.clone(),
            node: self.node.clone(),
        }
    }

    pub fn from_core(f: &arches_core::staging::StageFile) -> Self {
        StageRecord {
            src: f.src.clone(),
            dest: f.dest.clone(),
            size: f.size,
            transferred: f.transferred,
            status: f.status.as_str().to_string(),
            estimate: f.estimate,
            started: f.started,
            error: f.error.clone(),
            node: f.node.clone(),
        }
    }
}

/// Serde mirror of [`Job`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredJob {
    pub id: u64,
    pub name: String,
    pub user: String,
    pub group: String,
    pub account: Option<String>,
    pub class: Option<String>,
    pub qos: Option<String>,
    pub tasks: u32,
    pub procs_per_task: u32,
    pub nodes: Option<u32>,
    pub tasks_per_node: Option<u32>,
    pub mem_per_task_mb: u64,
    pub features: Vec<String>,
    pub partition: Option<String>,
    pub walltime: Option<i64>,
    pub estimate: Option<i64>,
    pub submit_time: i64,
    pub start_after: Option<i64>,
    pub holds: Vec<String>,
    pub depend: Vec<(String, u64)>,
    pub user_prio: i64,
    pub sys_prio: Option<i64>,
    pub flags: Vec<String>,
    pub state: String,
    pub run: Option<StoredRun>,
    pub completion: Option<StoredCompletion>,
    pub start_count: u32,
    pub bypass_count: u32,
    /// Suspended by `mjobctl -s` (not resumed automatically).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin_suspended: bool,
    /// Why it last went back to the queue (`checkpoint`, `requeue`, `failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeued: Option<String>,
    /// Node groups, host list, generic resources, access policy,
    /// reservation binding, task request list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<StoredLayout>,
    /// Effective queue start set by `mjobctl -m eeduration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eligible_since: Option<i64>,
    /// A processor range (malleable, resizable job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<StoredElastic>,
    /// Processor time its last run used, milliseconds (`Job::cpu_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<u64>,
    /// The requested completion deadline (`Job::deadline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<i64>,
    /// The completion expected when the deadline was found unmeetable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_failed: Option<i64>,
}

/// Serde mirror of [`arches_core::Layout`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StoredLayout {
    /// `(count, host, tasks per node, features, generic resources per node)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<StoredGroup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Generic resources per task, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<(String, u32)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advres: Option<String>,
    /// `(min tasks, max tasks, walltime)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trl: Vec<(u32, u32, Option<i64>)>,
}

/// Serde mirror of [`arches_core::NodeGroup`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredGroup {
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub tasks_per_node: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<(String, u32)>,
}

impl StoredLayout {
    fn from_core(l: &arches_core::Layout) -> Self {
        StoredLayout {
            groups: l
                .groups
                .iter()
                .map(|g| StoredGroup {
                    count: g.count,
                    host: g.host.clone(),
                    tasks_per_node: g.tasks_per_node,
                    features: g.features.clone(),
                    gres: g.gres.clone(),
                })
                .collect(),
            hosts: l.hosts.clone(),
            gres: l.gres.clone(),
            access: l.access.map(|a| a.as_str().to_string()),
            advres: l.advres.clone(),
            trl: l
                .trl
                .iter()
                .map(|o| (o.min_tasks, o.max_tasks, o.walltime))
                .collect(),
        }
    }

    fn to_core(&self) -> Result<arches_core::Layout, String> {
        Ok(arches_core::Layout {
            groups: self
                .groups
                .iter()
                .map(|g| arches_core::NodeGroup {
                    count: g.count,
                    host: g.host.clone(),
                    tasks_per_node: g.tasks_per_node,
                    features: g.features.clone(),
                    gres: g.gres.clone(),
                })
                .collect(),
            hosts: self.hosts.clone(),
            gres: self.gres.clone(),
            access: self.access.as_deref().map(str::parse).transpose()?,
            advres: self.advres.clone(),
            trl: self
                .trl
                .iter()
                .map(
                    |&(min_tasks, max_tasks, walltime)| arches_core::TaskOption {
                        min_tasks,
                        max_tasks,
                        walltime,
                    },
                )
                .collect(),
        })
    }
}

/// Serde mirror of [`arches_core::malleable::Elastic`]: a pending request
/// is `(procs, since)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredElastic {
    pub min: u32,
    pub max: u32,
    pub cap: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<(u32, i64)>,
}

/// Serde mirror of [`RunInfo`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRun {
    pub start_time: i64,
    /// `(node index, tasks, procs, mem_mb)`.
    pub alloc: Vec<(u32, u32, u32, u64)>,
    pub how: String,
    pub suspended_secs: i64,
    pub suspended_at: Option<i64>,
    /// When it was last resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_at: Option<i64>,
    /// Being terminated for a checkpoint or requeue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating: Option<StoredTermination>,
    /// `BFVIRTUALWALLTIMESCALINGFACTOR`: the virtual limit it was
    /// backfilled with, until the real one is restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_walltime: Option<i64>,
    /// Generic resources of each allocation: `(index in alloc, name,
    /// count)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres: Vec<(u32, String, u32)>,
    /// The generic-resource units it holds: `(node index, name, unit mask)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gres_units: Vec<(u32, String, u64)>,
}

/// Serde mirror of [`Termination`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTermination {
    pub cause: String,
    pub by: Option<u64>,
    pub since: i64,
    pub until: i64,
}

/// Serde mirror of [`Completion`]: `exit` is `None` for a cancelled job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCompletion {
    pub time: i64,
    pub exit: Option<i32>,
}

impl JobRecord {
    /// Stores a core job with its execution record; `table` names the
    /// generic resources of its allocation.
    pub fn new(job: &Job, exec: ExecRecord, table: &GresTable) -> Self {
        JobRecord {
            job: StoredJob::from_job(job, table),
            exec,
        }
    }

    /// Replaces the scheduler part with the job's current state.
    pub fn refresh(&mut self, job: &Job, table: &GresTable) {
        self.job = StoredJob::from_job(job, table);
    }

    /// Back to a core job, generic resources resolved against `table`.
    pub fn to_job(&self, table: &GresTable) -> Result<Job, StoreError> {
        self.job.to_job(table)
    }
}

const STATES: [JobState; 16] = [
    JobState::Idle,
    JobState::Starting,
    JobState::Running,
    JobState::Removed,
    JobState::Completed,
    JobState::Hold,
    JobState::Deferred,
    JobState::Vacated,
    JobState::NotQueued,
    JobState::BatchHold,
    JobState::UserHold,
    JobState::SystemHold,
    JobState::Staging,
    JobState::Staged,
    JobState::Suspended,
    JobState::Blocked,
];

fn kind_str(k: StartKind) -> &'static str {
    match k {
        StartKind::Priority => "Priority",
        StartKind::Reserved => "Reserved",
        StartKind::Backfill => "Backfill",
        StartKind::Forced => "Forced",
    }
}

impl StoredJob {
    /// Mirrors a core job (`table` names its allocation's generic
    /// resources).
    pub fn from_job(j: &Job, table: &GresTable) -> Self {
        StoredJob {
            id: j.id,
            name: j.name.to_string(),
            user: j.cred.user.to_string(),
            group: j.cred.group.to_string(),
            account: j.cred.account.as_deref().map(str::to_string),
            class: j.cred.class.as_deref().map(str::to_string),
            qos: j.cred.qos.as_deref().map(str::to_string),
            tasks: j.req.tasks,
            procs_per_task: j.req.procs_per_task,
            nodes: j.req.nodes,
            tasks_per_node: j.req.tasks_per_node,
            mem_per_task_mb: j.req.mem_per_task_mb,
            features: j.req.features.clone(),
            partition: j.req.partition.clone(),
            walltime: j.walltime,
            estimate: j.estimate,
            submit_time: j.submit_time,
            start_after: j.start_after,
            holds: j.holds.iter().map(|h| h.as_str().to_string()).collect(),
            depend: j
                .depend
                .iter()
                .map(|d| (d.kind.as_str().to_string(), d.job))
                .collect(),
            user_prio: j.user_prio,
            sys_prio: j.sys_prio,
            flags: j.flags.iter().map(|f| f.as_str().to_string()).collect(),
            state: j.state.as_str().to_string(),
            run: j.run.as_ref().map(|r| StoredRun {
                start_time: r.start_time,
                alloc: r
                    .alloc
                    .iter()
                    .map(|a| (a.node, a.tasks, a.procs, a.mem_mb))
                    .collect(),
                how: kind_str(r.how).to_string(),
                suspended_secs: r.suspended_secs,
                suspended_at: r.suspended_at,
                resumed_at: r.resumed_at,
                terminating: r.terminating.map(|t| StoredTermination {
                    cause: t.cause.as_str().to_string(),
                    by: t.by,
                    since: t.since,
                    until: t.until,
                }),
                virtual_walltime: r.virtual_walltime,
                gres: r
                    .alloc
                    .iter()
                    .enumerate()
                    .flat_map(|(i, a)| {
                        table
                            .named(&a.gres)
                            .into_iter()
                            .map(move |(n, c)| (i as u32, n, c))
                    })
                    .collect(),
                gres_units: r
                    .gres_units
                    .iter()
                    .filter_map(|u| Some((u.node, table.name(u.kind)?.to_string(), u.units)))
                    .collect(),
            }),
            completion: j.completion.map(|c| StoredCompletion {
                time: c.time,
                exit: match c.code {
                    CompletionCode::Exit(x) => Some(x),
                    CompletionCode::Cancelled => None,
                },
            }),
            start_count: j.start_count,
            bypass_count: j.bypass_count,
            admin_suspended: j.admin_suspended,
            requeued: j.requeued.map(|c| c.as_str().to_string()),
            layout: j.req.layout.as_deref().map(StoredLayout::from_core),
            eligible_since: j.eligible_since,
            cpu_ms: j.cpu_ms,
            deadline: j.deadline,
            deadline_failed: j.deadline_failed,
            elastic: j.elastic.map(|e| StoredElastic {
                min: e.min,
                max: e.max,
                cap: e.cap,
                request: e.request.map(|r| (r.procs, r.since)),
            }),
        }
    }

    /// Back to a core job; unknown names are a [`StoreError::Corrupt`]. A
    /// generic resource `table` no longer knows is left out of the
    /// allocation (the restored start then fails and the job is requeued).
    pub fn to_job(&self, table: &GresTable) -> Result<Job, StoreError> {
        let bad = |why: String| StoreError::Corrupt { id: self.id, why };
        let state = STATES
            .into_iter()
            .find(|s| s.as_str() == self.state)
            .ok_or_else(|| bad(format!("unknown state '{}'", self.state)))?;
        let mut holds = Holds::none();
        for h in &self.holds {
            holds.insert(h.parse().map_err(bad)?);
        }
        let mut depend = Vec::new();
        for (k, id) in &self.depend {
            depend.push(Dependency {
                kind: k.parse().map_err(bad)?,
                job: *id,
            });
        }
        let mut flags = Vec::new();
        for f in &self.flags {
            flags.push(f.parse::<JobFlag>().map_err(bad)?);
        }
        let run = match &self.run {
            None => None,
            Some(r) => Some(RunInfo {
                start_time: r.start_time,
                alloc: r
                    .alloc
                    .iter()
                    .enumerate()
                    .map(|(i, &(node, tasks, procs, mem_mb))| {
                        let mut gres = arches_core::Gres::NONE;
                        for (_, name, n) in r.gres.iter().filter(|g| g.0 as usize == i) {
                            if let Some(id) = table.id(name) {
                                gres.set(id, *n);
                            }
                        }
                        Alloc {
                            node,
                            tasks,
                            procs,
                            mem_mb,
                            gres,
                        }
                    })
                    .collect(),
                how: match r.how.as_str() {
                    "Priority" => StartKind::Priority,
                    "Reserved" => StartKind::Reserved,
                    "Backfill" => StartKind::Backfill,
                    "Forced" => StartKind::Forced,
                    other => return Err(bad(format!("unknown start kind '{other}'"))),
                },
                suspended_secs: r.suspended_secs,
                suspended_at: r.suspended_at,
                resumed_at: r.resumed_at,
                terminating: match &r.terminating {
                    None => None,
                    Some(t) => Some(Termination {
                        cause: t.cause.parse::<RequeueCause>().map_err(bad)?,
                        by: t.by,
                        since: t.since,
                        until: t.until,
                    }),
                },
                virtual_walltime: r.virtual_walltime,
                gres_units: r
                    .gres_units
                    .iter()
                    .filter_map(|(node, name, units)| {
                        Some(arches_core::GresUnits {
                            node: *node,
                            kind: table.id(name)?,
                            units: *units,
                        })
                    })
                    .collect(),
            }),
        };
        let mut job = Job::new(
            self.id,
            &self.user,
            Request {
                tasks: self.tasks,
                procs_per_task: self.procs_per_task,
                nodes: self.nodes,
                tasks_per_node: self.tasks_per_node,
                mem_per_task_mb: self.mem_per_task_mb,
                features: self.features.clone(),
                partition: self.partition.clone(),
                layout: self
                    .layout
                    .as_ref()
                    .map(|l| l.to_core().map(Box::new))
                    .transpose()
                    .map_err(bad)?,
            },
            self.walltime,
            self.submit_time,
        );
        job.name = self.name.as_str().into();
        job.cred = Credentials {
            user: self.user.as_str().into(),
            group: self.group.as_str().into(),
            account: self.account.as_deref().map(Into::into),
            class: self.class.as_deref().map(Into::into),
            qos: self.qos.as_deref().map(Into::into),
        };
        job.estimate = self.estimate;
        job.start_after = self.start_after;
        job.holds = holds;
        job.depend = depend;
        job.user_prio = self.user_prio;
        job.sys_prio = self.sys_prio;
        job.flags = flags.into_iter().collect();
        job.state = state;
        job.run = run;
        job.completion = self.completion.as_ref().map(|c| Completion {
            time: c.time,
            code: c
                .exit
                .map_or(CompletionCode::Cancelled, CompletionCode::Exit),
        });
        job.start_count = self.start_count;
        job.bypass_count = self.bypass_count;
        job.admin_suspended = self.admin_suspended;
        job.requeued = match &self.requeued {
            None => None,
            Some(c) => Some(c.parse::<RequeueCause>().map_err(bad)?),
        };
        job.eligible_since = self.eligible_since;
        job.cpu_ms = self.cpu_ms;
        job.deadline = self.deadline;
        job.deadline_failed = self.deadline_failed;
        job.elastic = self
            .elastic
            .as_ref()
            .map(|e| arches_core::malleable::Elastic {
                min: e.min,
                max: e.max,
                cap: e.cap,
                request: e
                    .request
                    .map(|(procs, since)| arches_core::malleable::GrowRequest { procs, since }),
            });
        Ok(job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::{DependencyKind, HoldType};

    #[test]
    fn round_trip_keeps_every_field() {
        let mut j = Job::new(7, "bob", Request::procs(4), Some(3600), 50);
        j.name = "x".into();
        j.cred.account = Some("acct".into());
        j.holds.insert(HoldType::Batch);
        j.depend.push(Dependency {
            kind: DependencyKind::AfterOk,
            job: 3,
        });
        j.flags.insert(JobFlag::Restartable);
        j.admin_suspended = true;
        j.state = JobState::Completed;
        j.run = Some(RunInfo {
            start_time: 60,
            alloc: vec![Alloc {
                node: 0,
                tasks: 4,
                procs: 4,
                mem_mb: 10,
                gres: Default::default(),
            }],
            how: StartKind::Backfill,
            suspended_secs: 5,
            suspended_at: None,
            resumed_at: Some(70),
            terminating: Some(Termination {
                cause: RequeueCause::Checkpoint,
                by: Some(9),
                since: 80,
                until: 90,
            }),
            virtual_walltime: Some(90),
            gres_units: Vec::new(),
        });
        j.requeued = Some(RequeueCause::Requeue);
        j.elastic = Some(arches_core::malleable::Elastic {
            min: 4,
            max: 16,
            cap: 8,
            request: Some(arches_core::malleable::GrowRequest {
                procs: 4,
                since: 75,
            }),
        });
        j.completion = Some(Completion {
            time: 90,
            code: CompletionCode::Cancelled,
        });
        let mut table = GresTable::default();
        let gpu = table.intern("gpu").unwrap();
        if let Some(r) = j.run.as_mut() {
            r.alloc[0].gres.set(gpu, 2);
            r.gres_units = vec![arches_core::GresUnits {
                node: 0,
                kind: gpu,
                units: 0b101,
            }];
        }
        j.req.layout = Some(Box::new(arches_core::Layout {
            groups: vec![arches_core::NodeGroup {
                count: 2,
                host: Some("n1".into()),
                tasks_per_node: 4,
                features: vec!["fast".into()],
                gres: vec![("gpu".into(), 1)],
            }],
            hosts: vec!["n1".into()],
            gres: vec![("gpu".into(), 2)],
            access: Some(arches_core::NodeAccessPolicy::SingleUser),
            advres: Some("r1".into()),
            trl: arches_core::layout::parse_trl("1@60:2-4").unwrap(),
        }));
        let text = serde_json::to_string(&StoredJob::from_job(&j, &table)).unwrap();
        let back: StoredJob = serde_json::from_str(&text).unwrap();
        assert_eq!(back.to_job(&table).unwrap(), j);
        // A record without the new fields still reads.
        let plain = Job::new(8, "bob", Request::procs(1), None, 0);
        let text = serde_json::to_string(&StoredJob::from_job(&plain, &table)).unwrap();
        assert!(!text.contains("layout"), "{text}");
    }
}

/// Serde mirror of an administrative [`arches_core::Reservation`]
/// (`mrsvctl -c`), stored in the `reservations` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationRecord {
    pub id: String,
    pub start: i64,
    pub end: Option<i64>,
    pub hosts: Vec<String>,
    pub procs: u32,
    pub users: Vec<String>,
    pub groups: Vec<String>,
    pub accounts: Vec<String>,
    pub classes: Vec<String>,
    pub qos: Vec<String>,
    pub flags: Vec<String>,
    pub owner: Option<String>,
    /// Reservation group (`mrsvctl -c -g`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

impl ReservationRecord {
    pub fn from_core(r: &arches_core::Reservation) -> Self {
        ReservationRecord {
            id: r.id.clone(),
            start: r.start,
            end: r.end,
            hosts: r.hosts.clone(),
            procs: r.procs,
            users: r.acl.users.clone(),
            groups: r.acl.groups.clone(),
            accounts: r.acl.accounts.clone(),
            classes: r.acl.classes.clone(),
            qos: r.acl.qos.clone(),
            flags: r.flags.clone(),
            owner: r.owner.clone(),
            group: r.group.clone(),
        }
    }

    pub fn to_core(&self) -> arches_core::Reservation {
        arches_core::Reservation {
            id: self.id.clone(),
            start: self.start,
            end: self.end,
            hosts: self.hosts.clone(),
            procs: self.procs,
            acl: arches_core::Acl {
                users: self.users.clone(),
                groups: self.groups.clone(),
                accounts: self.accounts.clone(),
                classes: self.classes.clone(),
                qos: self.qos.clone(),
            },
            flags: self.flags.clone(),
            owner: self.owner.clone(),
            standing: None,
            group: self.group.clone(),
        }
    }
}
