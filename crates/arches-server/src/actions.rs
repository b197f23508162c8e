//! Job actions (mjobctl, canceljob, sethold, releasehold...): permission
//! checks and Moab's result messages (moab-formats §9.2). A refused action
//! changes nothing.

use arches_api::{ActionResponse, JobAction, JobActionRequest, JobSelect};
use arches_core::policy::PreemptPolicy;
use arches_core::state::JobChange;
use arches_core::timespec::parse_duration;
use arches_core::{Event, HoldType, JobFlag, JobId, Time};

use crate::actor::{Actor, Caller};

/// One job's outcome: a line and whether it failed.
type Outcome = Result<Option<String>, String>;

impl Actor {
    /// Runs a job action for a caller.
    pub(crate) fn job_action(
        &mut self,
        caller: &Caller,
        req: &JobActionRequest,
        now: Time,
    ) -> ActionResponse {
        let mut resp = ActionResponse::default();
        // `-R` also requeues completed jobs (Moab: "requeued completed job").
        let scope = crate::jobexpr::Scope {
            completed: matches!(req.action, JobAction::Requeue),
            owner: (!caller.admin).then_some(caller.user.as_str()),
            regex_always: self.cfg.moab.use_job_regex,
            scheduler: &self.cfg.scheduler_name,
        };
        // Array forms (`ID[INDEX]`, `ID[]`, an array's `ID`) first, the
        // other tokens through the job expressions.
        let (array_tokens, rest) = crate::jobexpr::split_arrays(&self.state, &req.jobs);
        let mut ids: Vec<JobId> = Vec::new();
        let mut arrays: Vec<JobId> = Vec::new();
        if array_tokens.is_empty() || !rest.is_empty() || req.select != JobSelect::default() {
            let sel = crate::jobexpr::select(&self.state, &rest, &req.select, &scope);
            let errors = sel.error_lines();
            if !errors.is_empty() {
                resp.stderr.extend(errors);
                resp.failed = true;
            }
            ids = sel.ids;
        }
        if rest.iter().any(|t| t.eq_ignore_ascii_case("ALL")) {
            let waiting = self
                .state
                .arrays()
                .filter(|a| a.pending() > 0 && a.cancelled.is_none())
                .filter(|a| caller.admin || a.template.cred.user == caller.user)
                .map(|a| a.id);
            arrays.extend(waiting);
        }
        for (part, target) in array_tokens {
            match target {
                crate::arrays::Target::Array(a) => arrays.push(a),
                crate::arrays::Target::Pending(a, pos) => match self.materialize(a, pos, now) {
                    Some(id) => ids.push(id),
                    None => {
                        resp.stderr.push(crate::jobexpr::invalid_job(&part));
                        resp.failed = true;
                    }
                },
                crate::arrays::Target::Job(id) => ids.push(id),
            }
        }
        // A job named twice (`canceljob 3 3`, `3,ALL`) is acted on once,
        // where it first appears: Moab matches its job table against the
        // expressions, so a job matches once.
        let mut seen = std::collections::BTreeSet::new();
        ids.retain(|id| seen.insert(*id));
        arrays.retain(|id| seen.insert(*id));
        // A sub-job of an array acted on as a whole is acted on with it.
        ids.retain(|id| {
            self.state
                .array_of(*id)
                .is_none_or(|(a, _)| !arrays.contains(&a.id))
        });
        for array in arrays {
            match self.array_action(caller, array, &req.action, now) {
                Ok(Some(line)) => resp.stdout.push(line),
                Ok(None) => {}
                Err(line) => {
                    resp.stderr.push(line);
                    resp.failed = true;
                }
            }
        }
        for id in ids {
            let owner = self.state.job(id).map(|j| j.cred.user.clone());
            if !caller.admin && owner.as_deref() != Some(caller.user.as_str()) {
                resp.stderr
                    .push("ERROR:  request not authorized - not job owner".to_string());
                resp.failed = true;
                continue;
            }
            if let JobAction::Modify { changes } = &req.action {
                // Each change stands alone, as in Moab: one line per change.
                for c in changes {
                    match self.modify(caller, id, c, now) {
                        Ok(Some(line)) => lines_into(&mut resp.stdout, line),
                        Ok(None) => {}
                        Err(line) => {
                            lines_into(&mut resp.stderr, line);
                            resp.failed = true;
                        }
                    }
                }
                continue;
            }
            match self.act(caller, id, &req.action, now) {
                Ok(Some(line)) => lines_into(&mut resp.stdout, line),
                Ok(None) => {}
                Err(line) => {
                    lines_into(&mut resp.stderr, line);
                    resp.failed = true;
                }
            }
        }
        resp
    }

    /// One action on one job, its lines joined (modifications included).
    pub(crate) fn act_on(
        &mut self,
        caller: &Caller,
        id: JobId,
        action: &JobAction,
        now: Time,
    ) -> Outcome {
        let JobAction::Modify { changes } = action else {
            return self.act(caller, id, action, now);
        };
        let mut lines = Vec::new();
        for c in changes {
            if let Some(line) = self.modify(caller, id, c, now)? {
                lines.push(line);
            }
        }
        Ok((!lines.is_empty()).then(|| lines.join("\n")))
    }

    fn act(&mut self, caller: &Caller, id: JobId, action: &JobAction, now: Time) -> Outcome {
        let Some(job) = self.state.job(id) else {
            return Err(format!("ERROR:  invalid job specified ({id})"));
        };
        let active = job.state.is_active();
        match action {
            JobAction::Cancel => {
                if active {
                    if let Err(e) = self.rm.cancel(id, now) {
                        tracing::warn!(job = id, error = %e, "backend cancel failed");
                    }
                }
                if self.apply(Event::Cancel { job: id }, now) {
                    Ok(Some(format!("job '{id}' cancelled")))
                } else {
                    Err(format!(
                        "ERROR:  cannot cancel job '{id}' (job is not queued or active)"
                    ))
                }
            }
            JobAction::Hold { types } => self.holds(caller, id, types, true, now),
            JobAction::Release { types } => self.holds(caller, id, types, false, now),
            // Changes are applied one by one in `job_action`.
            JobAction::Modify { .. } => Ok(None),
            JobAction::SystemPriority { value, relative } => {
                if !caller.admin {
                    return Err(
                        "ERROR:  request not authorized - cannot specify absolute priority"
                            .to_string(),
                    );
                }
                self.set_sysprio(id, value, *relative, now)
            }
            JobAction::Suspend => self.preempt_lines(id, PreemptPolicy::Suspend, now),
            JobAction::Resume => {
                if !caller.admin {
                    return Err("ERROR:  request not authorized".to_string());
                }
                if matches!(
                    job.state,
                    arches_core::JobState::Running | arches_core::JobState::Starting
                ) {
                    return Err(format!("cannot resume active job {id} "));
                }
                if job.state != arches_core::JobState::Suspended {
                    return Err(format!("job {id} cannot be resumed (job is not suspended)"));
                }
                // Checked before the processes are woken: a refused resume
                // leaves the job stopped.
                self.resume_job(id, now)
                    .map_err(|e| format!("job {id} cannot be resumed ({e})"))?;
                Ok(Some(format!("job {id} successfully resumed ")))
            }
            JobAction::Requeue if job.state.is_finished() => {
                if self.apply(Event::Resubmit { job: id }, now) {
                    self.note(id, "completed job requeued by mjobctl -R".to_string());
                    Ok(Some(format!("requeued completed job '{id}'")))
                } else {
                    Err(format!("ERROR:    could not find completed job '{id}'"))
                }
            }
            JobAction::Requeue => self.preempt_lines(id, PreemptPolicy::Requeue, now),
            JobAction::Checkpoint => self.preempt_lines(id, PreemptPolicy::Checkpoint, now),
            JobAction::Signal { signal } => {
                let sig = parse_signal(signal)
                    .ok_or_else(|| format!("ERROR:  invalid signal '{signal}' specified"))?;
                if !active {
                    return Err(format!(
                        "ERROR:  cannot signal job {id} (job is not active)"
                    ));
                }
                self.rm
                    .signal(id, sig, now)
                    .map_err(|e| format!("ERROR:  cannot signal job {id} ({e})"))?;
                Ok(Some(format!("signal successfully sent to job {id}")))
            }
            JobAction::Execute { flags } => self.execute(caller, id, flags, now),
        }
    }

    /// `mjobctl -s/-R/-C`: the escalation note (if any) and the result as
    /// one outcome (lines joined).
    fn preempt_lines(&mut self, id: JobId, method: PreemptPolicy, now: Time) -> Outcome {
        self.manual_preempt(id, method, now)
            .map(|lines| Some(lines.join("\n")))
    }

    /// `mjobctl -x` / `runjob`: start an idle job now on free resources,
    /// within the credential limits and outside reservations it is not on
    /// the access list of, unless `-w flags=ignorepolicies` / `ignorersv`
    /// (`runjob -f` / `-x`) say otherwise.
    fn execute(&mut self, caller: &Caller, id: JobId, flags: &[String], now: Time) -> Outcome {
        if !caller.admin {
            return Err("ERROR:  request not authorized".to_string());
        }
        let job = self.known_job(id)?;
        let shown = job.display_state();
        if shown != arches_core::JobState::Idle {
            return Err(format!(
                "job '{id}' is in state '{}'  (state must be idle)",
                shown.as_str()
            ));
        }
        use arches_core::forced::{force_placement, ForceError, ForceFlags};
        let has = |f: &str| flags.iter().any(|x| x.eq_ignore_ascii_case(f));
        let force = ForceFlags {
            ignore_policies: has("ignorepolicies") || has("ignpolicies"),
            ignore_rsv: has("ignorersv") || has("ignrsv"),
        };
        let alloc = match force_placement(&self.state, &self.cfg.policy, job, now, force) {
            Ok(a) => a,
            Err(ForceError::Policy(why)) => {
                let name = match &why {
                    arches_core::BlockReason::Policy(p) => p.limit,
                    _ => "limit",
                };
                tracing::info!(job = id, reason = %why, "mjobctl -x refused by policy");
                return Err(format!(
                    "ERROR: Job rejected by policy {name}.  Use 'mjobctl -w flags=ignorepolicies <jobnum>'"
                ));
            }
            Err(ForceError::Reserved(rsv)) => {
                let what = rsv.map_or_else(
                    || "resources are locked for a preemptor".to_string(),
                    |r| format!("reservation conflict (resources reserved by {r})"),
                );
                return Err(format!(
                    "ERROR: job cannot run  ({what}).  Use 'mjobctl -w flags=ignorersv <jobnum>'"
                ));
            }
            Err(ForceError::Resources { needed, available }) => {
                return Err(format!(
                    "ERROR: job cannot run  (insufficient idle procs in cluster:  {needed} needed  {available} available)"
                ));
            }
        };
        let start = arches_core::Start {
            job: id,
            alloc,
            kind: arches_core::StartKind::Forced,
            virtual_walltime: None,
        };
        self.start_jobs(vec![start], now)
            .pop()
            .map_or_else(|| Err("not started".to_string()), |(_, r)| r)
            .map_err(|e| format!("ERROR: job cannot run  ({e})"))?;
        Ok(Some(format!("job {id} successfully started")))
    }

    fn holds(
        &mut self,
        caller: &Caller,
        id: JobId,
        types: &[String],
        set: bool,
        now: Time,
    ) -> Outcome {
        let mut kinds = Vec::new();
        if types.is_empty() {
            if set {
                kinds.push(HoldType::User);
            } else {
                kinds.extend(HoldType::ALL);
            }
        }
        for t in types {
            if t.eq_ignore_ascii_case("all") {
                kinds.extend(HoldType::ALL);
            } else {
                kinds.push(
                    t.parse::<HoldType>()
                        .map_err(|_| "ERROR:  invalid hold type specified".to_string())?,
                );
            }
        }
        let job = self.known_job(id)?;
        if set && job.state.is_active() {
            return Err(format!("ERROR:  cannot hold active job {id}"));
        }
        let present: Vec<HoldType> = job.holds.iter().collect();
        let effective: Vec<HoldType> = kinds
            .into_iter()
            .filter(|h| {
                if set {
                    !present.contains(h)
                } else {
                    present.contains(h)
                }
            })
            .collect();
        if !caller.admin && effective.iter().any(|h| *h != HoldType::User) {
            return Err(if set {
                "ERROR:  request not authorized".to_string()
            } else {
                "ERROR:  only admins can clear non-user job holds".to_string()
            });
        }
        if effective.is_empty() {
            return Ok(None);
        }
        for hold in effective {
            let event = if set {
                Event::SetHold { job: id, hold }
            } else {
                Event::ReleaseHold { job: id, hold }
            };
            self.apply(event, now);
        }
        Ok(Some(holds_message(self, id)))
    }

    /// `mjobctl -m gres[=+-]name:count[,...]`: the generic resources per
    /// task of a queued job (set, added or taken away); the result must be
    /// a request the cluster can ever hold.
    fn modify_gres(&mut self, id: JobId, op: char, value: &str, now: Time) -> Outcome {
        let job = self.known_job(id)?;
        if job.state.is_active() {
            return Err(format!(
                "ERROR:  cannot modify generic resources of active job {id}"
            ));
        }
        let given = if value.eq_ignore_ascii_case("NONE") && op == '=' {
            Vec::new()
        } else {
            arches_core::gres::parse_list(value).map_err(|e| format!("ERROR:  {e}"))?
        };
        let mut list: Vec<(String, u32)> = if op == '=' {
            Vec::new()
        } else {
            job.req.gres().to_vec()
        };
        for (name, n) in given {
            let pos = list.iter().position(|(x, _)| *x == name);
            match (op, pos) {
                ('-', Some(i)) => {
                    list[i].1 = list[i].1.saturating_sub(n);
                    if list[i].1 == 0 {
                        list.remove(i);
                    }
                }
                ('-', None) => {}
                (_, Some(i)) => list[i].1 = list[i].1.saturating_add(n),
                (_, None) => list.push((name, n)),
            }
        }
        let mut changed = job.clone();
        changed.req.layout_mut().gres = list.clone();
        arches_core::placement::feasible(&self.state, &self.cfg.policy, &changed, now).map_err(
            |why| format!("ERROR:  cannot modify generic resources of job {id} ({why})"),
        )?;
        self.apply(
            Event::Modify {
                job: id,
                change: JobChange::Gres(list.clone()),
            },
            now,
        );
        Ok(Some(format!(
            "gres set to '{}' for job {id}",
            if list.is_empty() {
                "NONE".to_string()
            } else {
                arches_core::gres::format_list(&list)
            }
        )))
    }

    fn modify(&mut self, caller: &Caller, id: JobId, change: &str, now: Time) -> Outcome {
        let (attr, op, value) = split_change(change)
            .ok_or_else(|| format!("ERROR:  no valid attributes specified ({change})"))?;
        let attr_l = attr.to_ascii_lowercase();
        if value.is_empty() {
            return Err(format!("ERROR:  no value specified for attribute '{attr}'"));
        }
        let job = self.known_job(id)?;
        let active = job.state.is_active();
        if active && matches!(attr_l.as_str(), "proccount" | "procs") {
            // A running job: a resize request (crate::elastic).
            return self.resize_request(id, op, value, now);
        }
        match attr_l.as_str() {
            "depend" | "dependency" => self.modify_depend(caller, id, op, value, now),
            "walltime" | "wclimit" | "reqawduration" => {
                let secs = parse_duration(value)
                    .map_err(|_| format!("ERROR:  invalid walltime '{value}'"))?;
                let old = job.walltime.unwrap_or(0);
                let new = match op {
                    '+' => old.saturating_add(secs),
                    '-' => old.saturating_sub(secs).max(1),
                    _ => secs,
                };
                if new > arches_core::limits::MAX_WALLTIME {
                    return Err(format!(
                        "cannot change walltime attribute for job {id} from {old} to {new} (limit {})",
                        arches_core::limits::MAX_WALLTIME
                    ));
                }
                if new <= 0 {
                    return Err(format!(
                        "cannot change walltime attribute for job {id} from {old} to {new} (invalid value)"
                    ));
                }
                // An active job's limit is enforced by the resource
                // manager: it must take the change first. Owners may not
                // change it; administrators may raise or lower it.
                if active && new < old && !caller.admin {
                    return Err(format!(
                        "cannot reduce walltime for active job {id} from {old} to {new} (cancel job instead?)"
                    ));
                }
                if active && new > old && !caller.admin {
                    return Err(format!(
                        "not authorized to increase walltime attribute for job {id} to '{new}' (job is active)"
                    ));
                }
                if active && new != old {
                    if let Err(e) = self.rm.set_walltime(id, Some(new), now) {
                        return Err(format!(
                            "cannot change walltime attribute for job {id} from {old} to {new} ({e})"
                        ));
                    }
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::Walltime(Some(new)),
                    },
                    now,
                );
                Ok(Some(format!(
                    "set walltime attribute for job {id} to '{new}' "
                )))
            }
            "class" | "queue" => {
                if active {
                    return Err(format!("ERROR:  cannot modify class of active job {id}"));
                }
                let classes = &self.cfg.policy.classes;
                if !classes.is_empty() && !classes.contains_key(value) {
                    return Err(format!("ERROR:  cannot locate class '{value}'"));
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::Class(Some(value.to_string())),
                    },
                    now,
                );
                Ok(Some(format!("class/queue set to {value} for job {id}")))
            }
            "jobname" | "name" => {
                if let Err(e) = crate::jobspec::sane::job_name(value) {
                    return Err(format!("ERROR:  {}", e.0));
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::Name(value.to_string()),
                    },
                    now,
                );
                Ok(Some(format!(
                    "user-specified jobname modified for job {id}"
                )))
            }
            "account" => {
                if active {
                    return Err("ERROR:  cannot modify active job's account".to_string());
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::Account(Some(value.to_string())),
                    },
                    now,
                );
                Ok(Some(format!("INFO:   Account for job {id} set to {value}")))
            }
            "qos" => {
                if active {
                    return Err("ERROR:  cannot modify QOS of active job".to_string());
                }
                match arches_core::qos::check_access(&job.cred, &self.cfg.policy, value) {
                    Ok(()) => {}
                    Err(arches_core::qos::QosError::Unknown(_)) => {
                        return Err("ERROR:  invalid QOS specified".to_string())
                    }
                    Err(arches_core::qos::QosError::Denied { allowed, .. }) => {
                        let list = if allowed.is_empty() {
                            "NONE".to_string()
                        } else {
                            allowed.join(",")
                        };
                        return Err(format!(
                            "ERROR:    job {id} does not have access to QOS {value} (QOSList: {list})"
                        ));
                    }
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::Qos(Some(value.to_string())),
                    },
                    now,
                );
                Ok(Some("job QOS modified".to_string()))
            }
            "userprio" => {
                let v: i64 = value
                    .parse()
                    .map_err(|_| "ERROR:  invalid value for user priority".to_string())?;
                let new = match op {
                    '+' => job.user_prio.checked_add(v),
                    '-' => job.user_prio.checked_sub(v),
                    _ => Some(v),
                }
                .ok_or_else(|| "ERROR:  invalid value for user priority".to_string())?;
                if !arches_core::limits::USER_PRIORITY.contains(&new) {
                    return Err("ERROR:  invalid value for user priority".to_string());
                }
                if new > 0 && !caller.admin {
                    return Err("ERROR:  only admins can set positive job priority".to_string());
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::UserPrio(new),
                    },
                    now,
                );
                Ok(Some("priority modified".to_string()))
            }
            "sysprio" | "priority" => {
                if !caller.admin {
                    return Err(
                        "ERROR:  request not authorized - cannot specify absolute priority"
                            .to_string(),
                    );
                }
                let v = match op {
                    '+' => format!("+{value}"),
                    '-' => format!("-{value}"),
                    _ => value.to_string(),
                };
                self.set_sysprio(id, &v, false, now)
            }
            "flags" => {
                let mut flags: Vec<JobFlag> = if op == '=' {
                    Vec::new()
                } else {
                    job.flags.iter().collect()
                };
                for f in value.split([':', ',']).filter(|f| !f.is_empty()) {
                    let flag = f
                        .parse::<JobFlag>()
                        .map_err(|_| format!("ERROR:  unknown flag '{f}'"))?;
                    let privileged = crate::jobspec::PRIVILEGED_FLAGS.contains(&flag);
                    if privileged && op != '-' && !caller.admin && !job.flags.contains(flag) {
                        return Err(format!(
                            "ERROR:  request not authorized - {}",
                            crate::jobspec::privileged_flag_error(flag)
                        ));
                    }
                    if op == '-' {
                        flags.retain(|x| *x != flag);
                    } else if !flags.contains(&flag) {
                        flags.push(flag);
                    }
                }
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::Flags(flags),
                    },
                    now,
                );
                Ok(Some(format!("flags modified for job {id}")))
            }
            "hold" => {
                let types = vec![value.to_string()];
                self.holds(caller, id, &types, op != '-', now)
            }
            "gres" => self.modify_gres(id, op, value, now),
            _ => self
                .modify_more(caller, id, attr, op, value, now)
                .unwrap_or_else(|| Err(format!("ERROR:  unknown attribute '{attr}' specified"))),
        }
    }

    fn set_sysprio(&mut self, id: JobId, value: &str, relative: bool, now: Time) -> Outcome {
        let job = self.known_job(id)?;
        let (sign, digits) = match value.as_bytes().first() {
            Some(b'+') => (1, &value[1..]),
            Some(b'-') => (-1, &value[1..]),
            _ => (0, value),
        };
        let v: i64 = digits
            .trim()
            .parse()
            .map_err(|_| format!("ERROR:  invalid priority '{value}'"))?;
        let new = if relative || sign != 0 {
            let base = job.sys_prio.unwrap_or(0);
            let new = if sign < 0 {
                base.checked_sub(v)
            } else {
                base.checked_add(v)
            };
            let range = arches_core::limits::RELATIVE_PRIORITY;
            match new.filter(|n| range.contains(n)) {
                Some(n) => n,
                None => {
                    return Err(format!(
                        "ERROR:  relative system priority change '{value}' out of range (the result must be in {} - {})",
                        range.start(),
                        range.end()
                    ))
                }
            }
        } else {
            if !arches_core::limits::SYSTEM_PRIORITY.contains(&v) {
                return Err("ERROR:  system priority must be in the range 0 - 1000".to_string());
            }
            if v == 0 {
                // Moab: "0 to clear" (setspri, mjobctl -p): the job's
                // policy-computed priority counts again.
                self.apply(
                    Event::Modify {
                        job: id,
                        change: JobChange::SysPrio(None),
                    },
                    now,
                );
                return Ok(Some(format!("job {id} system priority modified")));
            }
            v
        };
        self.apply(
            Event::Modify {
                job: id,
                change: JobChange::SysPrio(Some(new)),
            },
            now,
        );
        Ok(Some(format!("job {id} system priority modified")))
    }
}

/// An outcome of several lines as several answer lines (each answer line
/// is one line: clients show line feeds inside one escaped).
fn lines_into(out: &mut Vec<String>, text: String) {
    if text.contains('\n') {
        out.extend(text.lines().map(str::to_string));
    } else {
        out.push(text);
    }
}

/// `holds modified for job <id>` plus what is still in place.
fn holds_message(actor: &Actor, id: JobId) -> String {
    let left: Vec<&str> = actor
        .state
        .job(id)
        .map(|j| j.holds.iter().map(|h| h.as_str()).collect())
        .unwrap_or_default();
    match left.len() {
        0 => format!("holds modified for job {id}"),
        1 => format!(
            "holds modified for job {id}  ({} hold still in place)",
            left[0]
        ),
        _ => format!(
            "holds modified for job {id}  ({} holds still in place)",
            left.join(",")
        ),
    }
}

/// `attr=v`, `attr+=v`, `attr-=v` → (attr, op, value).
fn split_change(c: &str) -> Option<(&str, char, &str)> {
    let (lhs, value) = c.split_once('=')?;
    let (attr, op) = match lhs.strip_suffix('+') {
        Some(a) => (a, '+'),
        None => match lhs.strip_suffix('-') {
            Some(a) => (a, '-'),
            None => (lhs, '='),
        },
    };
    let attr = attr.trim();
    (!attr.is_empty()).then_some((attr, op, value.trim()))
}

/// `[signal=]SIGTERM`, `TERM`, `15`.
pub(crate) fn parse_signal(text: &str) -> Option<i32> {
    let t = text.trim();
    let t = t.strip_prefix("signal=").unwrap_or(t);
    if let Ok(n) = t.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let name = t.to_ascii_uppercase();
    let name = name.strip_prefix("SIG").unwrap_or(&name);
    Some(match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "TERM" => libc::SIGTERM,
        "CONT" => libc::SIGCONT,
        "STOP" => libc::SIGSTOP,
        "TSTP" => libc::SIGTSTP,
        "ALRM" => libc::SIGALRM,
        "XCPU" => libc::SIGXCPU,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_and_signals_parse() {
        assert_eq!(split_change("walltime+=10"), Some(("walltime", '+', "10")));
        assert_eq!(split_change("userprio-=5"), Some(("userprio", '-', "5")));
        assert_eq!(split_change("jobname=x"), Some(("jobname", '=', "x")));
        assert_eq!(split_change("=x"), None);
        assert_eq!(parse_signal("signal=SIGUSR1"), Some(libc::SIGUSR1));
        assert_eq!(parse_signal("term"), Some(libc::SIGTERM));
        assert_eq!(parse_signal("9"), Some(9));
        assert_eq!(parse_signal("bogus"), None);
    }
}
