//! Job arrays in the daemon (the core side is `arches_core::array`):
//! submission (`msub -t`), sub-jobs made jobs a window at a time with
//! their execution records (output files `name.oID-INDEX`, `-o` patterns
//! with `%I`/`%J`/`$PBS_ARRAYID`), their environment (`PBS_ARRAYID`,
//! `MOAB_JOBARRAYINDEX`, `MOAB_JOBARRAYRANGE`, `PBS_JOBID=ID[INDEX]`), how
//! array ids resolve (`ID[INDEX]`, `ID[]`, `ID`), whole-array actions and
//! the lines the views show for them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arches_api::{ArrayInfo, ArrayMember, JobAction, JobSummary, Section, SubmitResponse};
use arches_core::array::{ArrayJob, ArrayOp, ArraySpec};
use arches_core::state::JobChange;
use arches_core::{Event, HoldType, Job, JobId, JobState, State, Time};
use arches_store::{ArrayRecord, ExecRecord};

use crate::actor::{Actor, Caller, Snapshot};
use crate::jobspec::{Submission, SubmitError};

/// The daemon's arrays: their stored records and what changed since the
/// last commit.
#[derive(Debug, Default)]
pub struct Book {
    pub(crate) records: BTreeMap<JobId, ArrayRecord>,
    pub(crate) dirty: BTreeSet<JobId>,
    pub(crate) purged: Vec<JobId>,
}

impl Book {
    pub(crate) fn is_clean(&self) -> bool {
        self.dirty.is_empty() && self.purged.is_empty()
    }

    /// The batch part of the arrays that changed.
    pub(crate) fn drain(&mut self, state: &State, batch: &mut arches_store::Batch) {
        for id in std::mem::take(&mut self.dirty) {
            if let (Some(a), Some(rec)) = (state.array(id), self.records.get_mut(&id)) {
                rec.refresh(a, state.gres_table());
                batch.array_upserts.push(rec.clone());
            }
        }
        batch.array_deletes = std::mem::take(&mut self.purged);
    }
}

/// What a job expression names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A job (a sub-job made a job included).
    Job(JobId),
    /// A whole array (`ID`, `ID[]`).
    Array(JobId),
    /// A sub-job not made a job yet: the array and the position.
    Pending(JobId, u32),
}

/// Resolves `ID[INDEX]`, `ID[]` and an array's `ID` (also `Moab.ID[...]`,
/// `ID[INDEX].host`). `None`: not an array form (the caller parses plain
/// ids).
pub fn resolve(state: &State, text: &str) -> Option<Target> {
    let t = text.trim();
    let (head, rest) = match t.split_once('[') {
        Some((h, r)) => (h, Some(r)),
        None => (t, None),
    };
    let num = |s: &str| -> Option<JobId> {
        s.parse().ok().or_else(|| {
            let (a, b) = s.split_once('.')?;
            b.parse().ok().or_else(|| a.parse().ok())
        })
    };
    let id = num(head)?;
    let a = state.array(id)?;
    let Some(rest) = rest else {
        return Some(Target::Array(id));
    };
    let (inner, _host) = rest.split_once(']')?;
    if inner.trim().is_empty() {
        return Some(Target::Array(id));
    }
    let index: u32 = inner.trim().parse().ok()?;
    let pos = a.indices.position(index)?;
    let job = a.element_id(pos);
    Some(if a.materialized(pos) {
        Target::Job(job)
    } else {
        Target::Pending(id, pos)
    })
}

/// `ID[INDEX]` of a sub-job, the plain id otherwise.
pub fn display_id(state: &State, id: JobId) -> String {
    match state.array_of(id) {
        Some((a, m)) => format!("{}[{}]", a.id, m.index),
        None => id.to_string(),
    }
}

/// A sub-job's place, for its summary.
pub fn member(state: &State, id: JobId) -> Option<ArrayMember> {
    let (a, m) = state.array_of(id)?;
    Some(ArrayMember {
        array: a.id,
        index: Some(m.index),
        pending: None,
        pending_count: 0,
    })
}

/// The execution record a sub-job not made a job yet shares with its array.
pub fn exec_of_array(s: &Snapshot, id: JobId) -> Option<&Arc<ExecRecord>> {
    let (a, _) = s.state.array_of(id)?;
    s.exec.get(&a.id)
}

/// A sub-job as it will be made (for views of pending sub-jobs).
pub fn pending_job(a: &ArrayJob, pos: u32) -> Job {
    let mut j = (*a.template).clone();
    j.id = a.element_id(pos);
    if let Some(t) = a.cancelled {
        j.state = JobState::Removed;
        j.completion = Some(arches_core::Completion {
            time: t,
            code: arches_core::CompletionCode::Cancelled,
        });
    }
    j
}

/// The array itself as a job for checkjob: its template under its id, in
/// the state of its sub-jobs (Running while any is active, Idle while any
/// waits, else Completed).
pub fn master_job(state: &State, a: &ArrayJob) -> Job {
    let c = state.array_counts(a);
    let mut j = (*a.template).clone();
    j.state = if c.active > 0 {
        JobState::Running
    } else if c.idle > 0 {
        JobState::Idle
    } else if c.removed == c.total {
        JobState::Removed
    } else {
        JobState::Completed
    };
    j
}

/// checkjob's `Job Array Info`.
pub fn array_info(s: &Snapshot, a: &ArrayJob, members: bool) -> ArrayInfo {
    let c = s.state.array_counts(a);
    let mut info = ArrayInfo {
        array: a.id,
        indices: a.indices.format(),
        slot_limit: a.slot_limit,
        count: c.total,
        active: c.active,
        completed: c.completed,
        ..ArrayInfo::default()
    };
    let mut queued_state = |j: &Job| {
        let eligible = j.holds.is_empty() && s.plan.decisions.get(&j.id).is_none_or(|d| d.eligible);
        if eligible {
            info.eligible += 1;
            "Idle"
        } else {
            info.blocked += 1;
            "Blocked"
        }
    };
    let mut list = Vec::new();
    for j in s.state.array_jobs(a) {
        let state = if j.state == JobState::Idle {
            queued_state(j).to_string()
        } else {
            j.display_state().as_str().to_string()
        };
        if members {
            let idx = a.index_of(j.id).unwrap_or(0);
            list.push((idx, j.name.to_string(), state));
        }
    }
    for pos in a.pending_positions() {
        let j = pending_job(a, pos);
        let state = if a.cancelled.is_some() {
            "Removed".to_string()
        } else {
            queued_state(&j).to_string()
        };
        if members {
            list.push((a.indices.nth(pos).unwrap_or(0), j.name.to_string(), state));
        } else if a.cancelled.is_none() {
            // The rest are alike: count them without building them.
            let n = a.pending() - 1;
            if state == "Idle" {
                info.eligible += n;
            } else {
                info.blocked += n;
            }
            break;
        }
    }
    list.sort_by_key(|m| m.0);
    info.members = list;
    info
}

/// showq's lines for the sub-jobs of each array that were not made jobs
/// yet: one per array, after the array's queued sub-jobs, in their
/// section. `(rank, id, line)`.
pub fn pending_lines(s: &Snapshot) -> Vec<(u32, JobId, JobSummary)> {
    let mut out = Vec::new();
    for a in s.state.arrays() {
        if a.cancelled.is_some() || a.pending() == 0 {
            continue;
        }
        let first = a.pending_positions().next().unwrap_or(0);
        let j = pending_job(a, first);
        // Alike the last queued sub-job made a job: same section, ranked after it.
        let last = s
            .state
            .array_jobs(a)
            .filter(|j| j.state == JobState::Idle)
            .last();
        let (rank, section) = match last {
            Some(l) => {
                let sum = crate::views::summary(s, l);
                (sum.rank.unwrap_or(u32::MAX), sum.section)
            }
            None if j.holds.is_empty() => (u32::MAX, Section::Eligible),
            None => (u32::MAX, Section::Blocked),
        };
        let mut line = crate::views::summary(s, &j);
        line.id = a.id;
        line.section = section;
        line.rank = None;
        let pending: Vec<u32> = a
            .pending_positions()
            .filter_map(|p| a.indices.nth(p))
            .collect();
        line.array = Some(ArrayMember {
            array: a.id,
            index: None,
            pending: Some(arches_api::index_list(&pending)),
            pending_count: pending.len() as u32,
        });
        out.push((rank, a.element_id(first), line));
    }
    out
}

/// Output and error paths of a sub-job: the default `NAME.oID-INDEX` /
/// `NAME.eID-INDEX` (Torque), or `-o`/`-e` with `%I` (index), `%J` (the
/// array's id), `$PBS_ARRAYID` and `$PBS_JOBID`/`$MOAB_JOBID` (`ID[INDEX]`)
/// replaced.
pub fn element_paths(rec: &ArrayRecord, name: &str, array: JobId, index: u32) -> (String, String) {
    let sdir = &rec.exec.submit_dir;
    let idx = index.to_string();
    let id = format!("{array}[{index}]");
    let expand = |g: &Option<String>| {
        g.as_ref().map(|g| {
            let mut g = g.replace("%I", &idx).replace("%J", &array.to_string());
            for var in ["PBS_ARRAYID", "MOAB_JOBARRAYINDEX"] {
                g = g.replace(&format!("${{{var}}}"), &idx);
                g = g.replace(&format!("${var}"), &idx);
            }
            g
        })
    };
    let out = crate::jobspec::output_path(
        expand(&rec.output).as_deref(),
        &format!("{name}.o{array}-{index}"),
        sdir,
        &id,
    );
    let err = crate::jobspec::output_path(
        expand(&rec.error).as_deref(),
        &format!("{name}.e{array}-{index}"),
        sdir,
        &id,
    );
    if rec.exec.join && rec.join_to_error {
        (err.clone(), err)
    } else {
        (out, err)
    }
}

/// Sets a sub-job's array variables in its environment.
pub fn element_env(state: &State, id: JobId, env: &mut Vec<(String, String)>) {
    let Some((a, m)) = state.array_of(id) else {
        return;
    };
    let jobid = format!("{}[{}]", a.id, m.index);
    let index = m.index.to_string();
    for (k, v) in [
        ("PBS_JOBID", jobid.clone()),
        ("MOAB_JOBID", jobid),
        ("PBS_ARRAYID", index.clone()),
        ("MOAB_JOBARRAYINDEX", index),
        ("MOAB_JOBARRAYRANGE", a.count().to_string()),
    ] {
        match env.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v,
            None => env.push((k.to_string(), v)),
        }
    }
}

/// The job whose payload (script and environment) a job runs: its array's
/// for a sub-job.
pub fn payload_id(state: &State, id: JobId) -> JobId {
    state.array_of(id).map_or(id, |(a, _)| a.id)
}

impl Actor {
    /// Accepts an array: one record, the ids `A..=A+N` taken, nothing made
    /// a job yet (the next iteration makes the first window).
    pub(crate) fn submit_array(
        &mut self,
        mut sub: Submission,
        spec: ArraySpec,
        now: Time,
    ) -> Result<SubmitResponse, SubmitError> {
        sub.check_against(&self.state)?;
        crate::staging::check_submission(self.staging.as_ref().map(|d| d.model), &sub.exec)?;
        let befores = std::mem::take(&mut sub.befores);
        let id = self.next_id;
        let (output, error, join_to_error) = sub.output_spec();
        let (mut job, exec, payload) = sub.finalize(id, &self.host);
        job.submit_time = now;
        job.estimate = self.predictor.predict(&job.cred.user, job.walltime);
        let a = ArrayJob::new(id, job, spec.indices, spec.slot_limit);
        let count = u64::from(a.count());
        let mut rec = ArrayRecord::new(&a, exec.clone(), self.state.gres_table());
        rec.output = output;
        rec.error = error;
        rec.join_to_error = join_to_error;
        self.state
            .apply(Event::SubmitArray(Box::new(a)), now)
            .map_err(|e| SubmitError(e.to_string()))?;
        self.next_id += count + 1;
        self.exec.insert(id, Arc::new(exec));
        self.payloads.push((id, payload));
        self.arrays.records.insert(id, rec);
        self.arrays.dirty.insert(id);
        self.wake = true;
        self.apply_befores(id, &befores, now);
        tracing::info!(array = id, sub_jobs = count, "job array submitted");
        Ok(SubmitResponse {
            id,
            warnings: Vec::new(),
        })
    }

    /// Makes the next window of every array's sub-jobs jobs, with their
    /// execution records; returns how many were made.
    pub(crate) fn expand_arrays(&mut self, now: Time) -> usize {
        let made = self.state.expand_arrays(now);
        for &id in &made {
            self.element_made(id);
        }
        made.len()
    }

    /// Gives a sub-job just made a job its execution record.
    pub(crate) fn element_made(&mut self, id: JobId) {
        let Some((a, m)) = self.state.array_of(id) else {
            return;
        };
        let array = a.id;
        let name = a.template.name.clone();
        let Some(rec) = self.arrays.records.get(&array) else {
            return;
        };
        let mut exec = rec.exec.clone();
        let (out, err) = element_paths(rec, &name, array, m.index);
        exec.stdout = out;
        exec.stderr = err;
        exec.messages.clear();
        self.exec.insert(id, Arc::new(exec));
        self.dirty.insert(id);
        self.arrays.dirty.insert(array);
    }

    /// Makes a pending sub-job a job (an action names it alone).
    pub(crate) fn materialize(&mut self, array: JobId, pos: u32, now: Time) -> Option<JobId> {
        let id = self.state.materialize(array, pos, now).ok()?;
        if !self.exec.contains_key(&id) {
            self.element_made(id);
        }
        Some(id)
    }

    /// Forgets arrays whose sub-jobs are all finished and purged.
    pub(crate) fn purge_arrays(&mut self, now: Time) {
        for array in self.state.purgeable_arrays() {
            let op = ArrayOp::Purge;
            if self.state.apply(Event::Array { array, op }, now).is_ok() {
                self.exec.remove(&array);
                self.arrays.records.remove(&array);
                self.arrays.dirty.remove(&array);
                self.arrays.purged.push(array);
                // Its payload row goes with it.
                self.purged.push(array);
            }
        }
    }

    /// An action on a whole array: on every sub-job that is a job, and on
    /// the array's record so that sub-jobs made later are alike.
    pub(crate) fn array_action(
        &mut self,
        caller: &Caller,
        array: JobId,
        action: &JobAction,
        now: Time,
    ) -> Result<Option<String>, String> {
        let Some(a) = self.state.array(array) else {
            return Err(format!("ERROR:  invalid job specified ({array})"));
        };
        if !caller.admin && a.template.cred.user != caller.user {
            return Err("ERROR:  request not authorized - not job owner".to_string());
        }
        // Queued sub-jobs are jobs to act on, and the first one's
        // result is what the record takes.
        self.expand_arrays(now);
        let Some(a) = self.state.array(array) else {
            return Err(format!("ERROR:  invalid job specified ({array})"));
        };
        let ids: Vec<JobId> = self
            .state
            .array_jobs(a)
            .filter(|j| !j.state.is_finished())
            .map(|j| j.id)
            .collect();
        if matches!(action, JobAction::Cancel) {
            self.apply(
                Event::Array {
                    array,
                    op: ArrayOp::Cancel,
                },
                now,
            );
            self.arrays.dirty.insert(array);
            for id in ids {
                let _ = self.act_on(caller, id, action, now);
            }
            return Ok(Some(format!("job '{array}' cancelled")));
        }
        let mut first: Option<(JobId, Result<Option<String>, String>)> = None;
        for id in ids {
            let r = self.act_on(caller, id, action, now);
            if first.is_none() || (first.as_ref().is_some_and(|f| f.1.is_err()) && r.is_ok()) {
                first = Some((id, r));
            }
        }
        self.sync_template(array, now);
        match first {
            Some((id, r)) => {
                let rename = |line: String| {
                    line.replace(&format!("job {id}"), &format!("job {array}"))
                        .replace(&format!("job '{id}'"), &format!("job '{array}'"))
                };
                r.map(|o| o.map(rename)).map_err(rename)
            }
            None => Err(format!(
                "ERROR:  cannot modify job '{array}' (no sub-job is queued or active)"
            )),
        }
    }

    /// Takes the scheduling attributes of the array's first queued
    /// sub-job into its record (after a whole-array hold, release or
    /// modification).
    fn sync_template(&mut self, array: JobId, now: Time) {
        let Some(a) = self.state.array(array) else {
            return;
        };
        let Some(q) = self
            .state
            .array_jobs(a)
            .find(|j| j.state == JobState::Idle)
            .cloned()
        else {
            return;
        };
        let t = a.template.clone();
        let mut ops = Vec::new();
        for h in HoldType::ALL {
            match (t.holds.contains(h), q.holds.contains(h)) {
                (false, true) => ops.push(ArrayOp::SetHold(h)),
                (true, false) => ops.push(ArrayOp::ReleaseHold(h)),
                _ => {}
            }
        }
        let changes = [
            (t.walltime != q.walltime).then_some(JobChange::Walltime(q.walltime)),
            (t.name != q.name).then(|| JobChange::Name(q.name.to_string())),
            (t.cred.class != q.cred.class)
                .then(|| JobChange::Class(q.cred.class.as_deref().map(str::to_string))),
            (t.cred.account != q.cred.account)
                .then(|| JobChange::Account(q.cred.account.as_deref().map(str::to_string))),
            (t.cred.qos != q.cred.qos)
                .then(|| JobChange::Qos(q.cred.qos.as_deref().map(str::to_string))),
            (t.user_prio != q.user_prio).then_some(JobChange::UserPrio(q.user_prio)),
            (t.sys_prio != q.sys_prio).then_some(JobChange::SysPrio(q.sys_prio)),
            (t.start_after != q.start_after).then_some(JobChange::StartAfter(q.start_after)),
            (t.flags != q.flags).then(|| JobChange::Flags(q.flags.iter().collect())),
            (t.depend != q.depend).then(|| JobChange::Depend(q.depend.clone())),
        ];
        ops.extend(changes.into_iter().flatten().map(ArrayOp::Modify));
        for op in ops {
            self.apply(Event::Array { array, op }, now);
        }
        self.arrays.dirty.insert(array);
    }
}
