//! Dependencies the daemon writes onto other jobs: a job submitted with
//! `before:X` makes `X` wait for it (`after:ID`), and `mjobctl -m depend=`
//! replaces, adds to or removes from a queued job's (or array's) list.
//! Parsing and resolution are `jobspec::depend`'s; evaluation is the core's.

use arches_core::array::ArrayOp;
use arches_core::state::JobChange;
use arches_core::{Dependency, DependencyKind, Event, JobId, JobState, Time};

use crate::actor::{Actor, Caller};

impl Actor {
    /// Sets a queued job's (or a whole array's) dependency list.
    pub(crate) fn set_dependencies(&mut self, id: JobId, deps: Vec<Dependency>, now: Time) -> bool {
        if let Some(a) = self.state.array(id) {
            let queued: Vec<JobId> = self
                .state
                .array_jobs(a)
                .filter(|j| j.state == JobState::Idle)
                .map(|j| j.id)
                .collect();
            let op = ArrayOp::Modify(JobChange::Depend(deps.clone()));
            let ok = self.apply(Event::Array { array: id, op }, now);
            self.arrays.dirty.insert(id);
            for j in queued {
                let change = JobChange::Depend(deps.clone());
                self.apply(Event::Modify { job: j, change }, now);
            }
            return ok;
        }
        let change = JobChange::Depend(deps);
        self.apply(Event::Modify { job: id, change }, now)
    }

    /// The dependencies of a job or array.
    pub(crate) fn dependencies(&self, id: JobId) -> Vec<Dependency> {
        match (self.state.job(id), self.state.array(id)) {
            (Some(j), _) => j.depend.clone(),
            (None, Some(a)) => a.template.depend.clone(),
            _ => Vec::new(),
        }
    }

    /// `before` dependencies of job `id`: each target waits for it.
    pub(crate) fn apply_befores(
        &mut self,
        id: JobId,
        befores: &[(JobId, DependencyKind)],
        now: Time,
    ) {
        for &(target, kind) in befores {
            let mut deps = self.dependencies(target);
            let d = Dependency { kind, job: id };
            if !deps.contains(&d) {
                deps.push(d);
                self.set_dependencies(target, deps, now);
            }
        }
    }

    /// `mjobctl -m depend=LIST` (replace), `depend+=LIST`, `depend-=LIST`.
    pub(crate) fn modify_depend(
        &mut self,
        caller: &Caller,
        id: JobId,
        op: char,
        value: &str,
        now: Time,
    ) -> Result<Option<String>, String> {
        let job = self.known_job(id)?;
        if job.state != JobState::Idle {
            return Err(format!(
                "ERROR:  cannot modify dependencies of job {id} (job is not queued)"
            ));
        }
        let owner = job.cred.user.clone();
        let fail = |e: crate::jobspec::SubmitError| {
            format!("ERROR:  cannot set dependency for job {id} - {}", e.0)
        };
        let (deps, named) = crate::jobspec::depend::parse(value).map_err(fail)?;
        let given =
            crate::jobspec::depend::resolve(&self.state, &owner, &deps, &named).map_err(fail)?;
        if given.iter().any(|d| d.job == id) {
            return Err(format!("ERROR:  job {id} cannot depend on itself"));
        }
        let befores = if op == '-' {
            Vec::new()
        } else {
            let user = if caller.admin {
                owner.as_str()
            } else {
                caller.user.as_str()
            };
            crate::jobspec::depend::befores(&self.state, user, &given).map_err(fail)?
        };
        let mut list = match op {
            '+' | '-' => self.dependencies(id),
            _ => Vec::new(),
        };
        if op == '-' {
            list.retain(|d| !given.contains(d));
        } else {
            for d in given {
                if !list.contains(&d) {
                    list.push(d);
                }
            }
        }
        self.set_dependencies(id, list, now);
        self.apply_befores(id, &befores, now);
        Ok(Some(format!(
            "set depend attribute for job {id} to '{value}'"
        )))
    }
}
