//! `mjobctl -m` for the attributes beyond the basic ones of
//! [`crate::actions`] (walltime, class, jobname, account, qos, priorities,
//! flags, hold): what a queued job requests (`nodecount`, `proccount`,
//! `features`, `partition`, `jobmem`), where it may run (`hostlist`,
//! `reqreservation`), when it may start (`minstarttime`), when it must
//! complete (`deadline`),
//! its effective queue time (`eeduration`), its `group`, notification
//! address, variables and messages, and `state=removed`. Each value is
//! checked as msub checks it (the same parsers, the same "can this request
//! ever run here" test) and the messages are Moab's (moab-formats §9.2).
//! `depend=` and `gres=` are not here (job dependencies and generic
//! resources have their own owners); the attributes Arches has no model for
//! are refused with Moab's `modification of job attribute '<a>' not
//! supported` and the reason.

use arches_core::state::JobChange;
use arches_core::timespec::parse_duration;
use arches_core::{Event, JobId, Time};

use crate::actor::{Actor, Caller};

type Outcome = Result<Option<String>, String>;

/// Attributes Moab lists that Arches has no model for, and why.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "awduration",
        "the active wall-clock duration is measured, not set",
    ),
    ("jobdisk", "Arches tracks no disk"),
    ("jobswap", "Arches tracks no swap"),
    ("loglevel", "Arches keeps one log for the daemon"),
    (
        "rmxstring",
        "resource-manager extension strings are given at submission",
    ),
    ("trig", "Arches has no triggers"),
    ("trigvar", "Arches has no triggers"),
    ("env", "the environment is fixed at submission"),
];

impl Actor {
    /// The job `id`, or Moab's `invalid job specified` answer.
    pub(crate) fn known_job(&self, id: JobId) -> Result<&arches_core::Job, String> {
        self.state
            .job(id)
            .ok_or_else(|| format!("ERROR:  invalid job specified ({id})"))
    }

    /// The attributes of this module; `None` when `attr` is not one of them.
    pub(crate) fn modify_more(
        &mut self,
        caller: &Caller,
        id: JobId,
        attr: &str,
        op: char,
        value: &str,
        now: Time,
    ) -> Option<Outcome> {
        let a = attr.to_ascii_lowercase();
        if let Some((_, why)) = UNSUPPORTED.iter().find(|(n, _)| *n == a) {
            return Some(Err(format!(
                "ERROR:  modification of job attribute '{attr}' not supported ({why})"
            )));
        }
        Some(match a.as_str() {
            "nodecount" | "nodes" => self.modify_request(id, op, value, Req::Nodes, now),
            "proccount" | "procs" => self.modify_request(id, op, value, Req::Procs, now),
            "features" | "feature" => self.modify_request(id, op, value, Req::Features, now),
            "partition" => self.modify_request(id, op, value, Req::Partition, now),
            "jobmem" | "mem" => self.modify_request(id, op, value, Req::Mem, now),
            "hostlist" => self.modify_placement(id, op, value, Place::HostList, now),
            "reqreservation" => self.modify_placement(id, op, value, Place::Reservation, now),
            "minstarttime" => self.minstarttime(id, op, value, now),
            "deadline" => self.deadline(id, op, value, now),
            "eeduration" => self.eeduration(caller, id, op, value, now),
            "group" => self.group(caller, id, value, now),
            "notificationaddress" => self.exec_change(id, |r| {
                r.mail_list = Some(value.to_string());
                format!("notification address modified for job {id}")
            }),
            "messages" | "message" => self.exec_change(id, |r| {
                r.messages.push(value.to_string());
                if r.messages.len() > 20 {
                    r.messages.remove(0);
                }
                format!("INFO:   Messages for job {id} set to {value}")
            }),
            "var" | "variables" => self.variables(id, op, value),
            "state" => self.set_state(id, value, now),
            _ => return None,
        })
    }

    /// A change to what a queued job requests, checked as msub checks a
    /// request: the value parses as msub's resource does, and the request
    /// still fits some node of the cluster.
    fn modify_request(
        &mut self,
        id: JobId,
        op: char,
        value: &str,
        what: Req,
        now: Time,
    ) -> Outcome {
        let job = self.known_job(id)?;
        if job.state.is_active() {
            return Err(match what {
                Req::Nodes => {
                    "ERROR:  cannot modify node count for a running or starting job".into()
                }
                Req::Partition => "cannot modify partition for a running job".into(),
                Req::Features => "cannot modify features on active job".into(),
                Req::Procs | Req::Mem => {
                    format!("ERROR:  cannot modify the request of active job {id}")
                }
            });
        }
        let mut r = job.req.clone();
        let count = |v: &str| -> Result<u32, String> {
            match v.parse::<u32>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!(
                    "ERROR:  invalid value '{v}' for attribute '{}'",
                    what.name()
                )),
            }
        };
        let adjust = |old: u32, v: u32| -> Result<u32, String> {
            match op {
                '+' => Ok(old.saturating_add(v)),
                '-' if v < old => Ok(old - v),
                '-' => Err(format!("ERROR:  cannot decrement {} below 1", what.name())),
                _ => Ok(v),
            }
        };
        let line = match what {
            Req::Nodes => {
                let n = adjust(r.nodes.unwrap_or(1), count(value)?)?;
                r.nodes = Some(n);
                match r.tasks_per_node {
                    Some(tpn) => r.tasks = n.saturating_mul(tpn),
                    None => r.tasks = r.tasks.max(n),
                }
                "node count modified".to_string()
            }
            Req::Procs => {
                let p = adjust(r.total_procs(), count(value)?)?;
                r.procs_per_task = 1;
                r.tasks = p;
                r.tasks_per_node = None;
                if r.nodes.is_some_and(|n| n > p) {
                    r.nodes = Some(p);
                }
                format!("INFO:   ReqProcs for job {id} set to {p}")
            }
            Req::Features => {
                let list: Vec<String> = value
                    .split([':', ',', '|'])
                    .filter(|f| !f.is_empty())
                    .map(String::from)
                    .collect();
                match op {
                    '+' => {
                        for f in list {
                            if !r.features.contains(&f) {
                                r.features.push(f);
                            }
                        }
                    }
                    '-' => r.features.retain(|f| !list.contains(f)),
                    _ => r.features = list,
                }
                "job features modified".to_string()
            }
            Req::Partition => {
                if op != '=' {
                    return Err(format!(
                        "ERROR:  partition{op}= not supported: an Arches job requests one partition (use partition=)"
                    ));
                }
                if value.eq_ignore_ascii_case("ALL") {
                    r.partition = None;
                } else {
                    if !self.state.nodes().iter().any(|n| n.partition == value) {
                        return Err(format!(
                            "partition ({value}) does not exist, cannot modify partition for job"
                        ));
                    }
                    r.partition = Some(value.to_string());
                }
                "partition modified".to_string()
            }
            Req::Mem => {
                if op != '=' {
                    return Err(format!("ERROR:  jobmem{op}= not supported (use jobmem=)"));
                }
                let mb = crate::jobspec::parse_mem(value).map_err(|e| format!("ERROR:  {e}"))?;
                r.mem_per_task_mb = mb.div_ceil(u64::from(r.tasks.max(1)));
                format!("INFO:   ReqMem for job {id} set to {mb}M")
            }
        };
        crate::jobspec::fits_somewhere(&self.state, &r)
            .map_err(|e| format!("ERROR:  cannot modify job {id} ({e})"))?;
        if r.layout.is_some() {
            // Host lists, node groups, reservations: the engine's own test
            // (a partition none of the job's hosts is in never runs).
            let mut changed = job.clone();
            changed.req = r.clone();
            arches_core::placement::feasible(&self.state, &self.cfg.policy, &changed, now)
                .map_err(|e| format!("ERROR:  cannot modify job {id} ({e})"))?;
        }
        self.change(id, JobChange::Request(r), now)?;
        Ok(Some(line))
    }

    /// `hostlist=` (`-W x=HOSTLIST:`: the only nodes the job may use;
    /// `+=`/`-=` add or remove hosts, an empty list or `NONE` clears it) and
    /// `reqreservation=` (`-W x=FLAGS:ADVRES:`: the reservation it must run
    /// in; `NONE` clears it) of a queued job, checked by the engine's own
    /// "can this job ever run here" test as msub checks them.
    fn modify_placement(
        &mut self,
        id: JobId,
        op: char,
        value: &str,
        what: Place,
        now: Time,
    ) -> Outcome {
        let job = self.known_job(id)?;
        let name = what.name();
        if job.state.is_active() {
            return Err(format!("ERROR:  cannot modify {name} of active job {id}"));
        }
        let none = value.is_empty() || value.eq_ignore_ascii_case("NONE");
        let mut changed = job.clone();
        let line = match what {
            Place::HostList => {
                let given: Vec<String> = if none {
                    Vec::new()
                } else {
                    value
                        .split([',', ':', '+'])
                        .filter(|h| !h.is_empty())
                        .map(String::from)
                        .collect()
                };
                if let Some(h) = given
                    .iter()
                    .find(|h| !self.state.nodes().iter().any(|n| n.name == **h))
                {
                    return Err(format!(
                        "ERROR:  invalid host '{h}' in hostlist (no such node)"
                    ));
                }
                let hosts = &mut changed.req.layout_mut().hosts;
                match op {
                    '+' => {
                        for h in given {
                            if !hosts.contains(&h) {
                                hosts.push(h);
                            }
                        }
                    }
                    '-' => hosts.retain(|h| !given.contains(h)),
                    _ => *hosts = given,
                }
                if hosts.is_empty() {
                    "hostlist cleared".to_string()
                } else {
                    format!("hostlist set to '{}'", hosts.join(","))
                }
            }
            Place::Reservation => {
                if op != '=' {
                    return Err(format!(
                        "ERROR:  reqreservation{op}= not supported: a job requires one reservation (use reqreservation=)"
                    ));
                }
                let layout = changed.req.layout_mut();
                if none {
                    layout.advres = None;
                    "required reservation cleared".to_string()
                } else {
                    layout.advres = Some(value.to_string());
                    format!("required reservation set to '{value}'")
                }
            }
        };
        arches_core::placement::feasible(&self.state, &self.cfg.policy, &changed, now)
            .map_err(|why| format!("ERROR:  cannot modify {name} of job {id} ({why})"))?;
        self.change(id, JobChange::Request(changed.req), now)?;
        Ok(Some(format!("{line} for job {id}")))
    }

    /// `minstarttime=`: msub -a's date (`[[[[CC]YY]MM]DD]hhmm[.SS]`),
    /// mrsvctl's (`HH:MM[:SS][_MO/DD[/YY]]`, `+DURATION`, epoch seconds), or
    /// `0`/`NONE` to clear it.
    fn minstarttime(&mut self, id: JobId, op: char, value: &str, now: Time) -> Outcome {
        let job = self.known_job(id)?;
        if job.state.is_active() || op != '=' {
            return Err("job minstarttime cannot be modified".to_string());
        }
        let t = if value == "0" || value.eq_ignore_ascii_case("NONE") {
            None
        } else {
            Some(
                crate::jobspec::parse_start_date(value, now)
                    .map_err(|e| e.0)
                    .or_else(|_| crate::rsvctl::parse_time(value, now))
                    .map_err(|_| "job minstarttime cannot be modified".to_string())?,
            )
        };
        self.change(id, JobChange::StartAfter(t), now)?;
        Ok(Some("job minstarttime modified".to_string()))
    }

    /// `deadline=`: as msub's `-l deadline=` (`HH:MM[:SS][_MO/DD[/YY]]`,
    /// `+DURATION` from now, epoch seconds), or `0`/`NONE` to clear it. A
    /// new deadline is judged afresh (a failed one is forgotten); the
    /// answer says when its QoS does not guarantee it.
    fn deadline(&mut self, id: JobId, op: char, value: &str, now: Time) -> Outcome {
        let job = self.known_job(id)?;
        if job.state.is_finished() {
            return Err(format!(
                "ERROR:  cannot modify deadline of completed job {id}"
            ));
        }
        if op != '=' {
            return Err(format!(
                "ERROR:  invalid operation '{op}=' for attribute 'deadline' (use deadline=)"
            ));
        }
        let t = if value == "0" || value.eq_ignore_ascii_case("NONE") {
            None
        } else {
            Some(
                crate::jobspec::parse_deadline(value, now)
                    .map_err(|e| format!("ERROR:  {}", e.0))?,
            )
        };
        self.change(id, JobChange::Deadline(t), now)?;
        let mut msg = match t {
            Some(_) => format!("deadline modified for job {id}"),
            None => format!("deadline removed for job {id}"),
        };
        if let Some(job) = self.state.job(id) {
            let warnings = crate::deadline::submit_warnings(job, &self.cfg.policy, now);
            for w in warnings {
                msg.push_str(&format!("\nWARNING:  {w}"));
                self.note(id, w);
            }
        }
        Ok(Some(msg))
    }

    /// `eeduration=D` (administrators): the job counts as queued for `D`
    /// (its priority's queue time and expansion factor); `eeduration=0`
    /// resets it to its submission.
    fn eeduration(
        &mut self,
        caller: &Caller,
        id: JobId,
        op: char,
        value: &str,
        now: Time,
    ) -> Outcome {
        if !caller.admin {
            return Err("ERROR:  request not authorized".to_string());
        }
        let job = self.known_job(id)?;
        let d = parse_duration(value).map_err(|_| format!("ERROR:  invalid duration '{value}'"))?;
        let cur = (now - job.queued_since()).max(0);
        let new = match op {
            '+' => cur + d,
            '-' => (cur - d).max(0),
            _ => d,
        };
        if op == '=' && d == 0 {
            self.change(id, JobChange::EligibleSince(None), now)?;
            return Ok(Some(format!("effective queue time reset for job {id}")));
        }
        self.change(id, JobChange::EligibleSince(Some(now - new)), now)?;
        Ok(Some(format!("effective queue time specified for job {id}")))
    }

    /// `group=G`: a queued job's group; its owner must belong to `G`
    /// (administrators may name any existing group).
    fn group(&mut self, caller: &Caller, id: JobId, value: &str, now: Time) -> Outcome {
        let job = self.known_job(id)?;
        if job.state.is_active() {
            return Err(format!("ERROR:  cannot modify group of active job {id}"));
        }
        let gid = crate::ident::gid_by_name(value)
            .ok_or_else(|| format!("ERROR:  cannot locate group '{value}'"))?;
        if !caller.admin {
            let member = crate::ident::user_by_name(&job.cred.user)
                .is_some_and(|u| u.gid == gid || crate::ident::groups_of(&u).contains(&gid));
            if !member {
                return Err(format!(
                    "ERROR:    job requests invalid credential access (user '{}' does not belong to group '{value}')",
                    job.cred.user
                ));
            }
        }
        self.change(id, JobChange::Group(value.to_string()), now)?;
        Ok(Some(format!("INFO:   Group for job {id} set to {value}")))
    }

    /// `var=NAME:VALUE` (or `NAME=VALUE`) sets a variable; `var-=NAME`
    /// unsets it.
    fn variables(&mut self, id: JobId, op: char, value: &str) -> Outcome {
        if op == '-' {
            let name = value.split([':', '=']).next().unwrap_or("").to_string();
            return self.exec_change(id, |r| {
                r.variables.retain(|(k, _)| *k != name);
                format!("successfully unset variables on job {id}")
            });
        }
        let mut set = Vec::new();
        for part in value.split([',', '+']).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once([':', '=']).unwrap_or((part, ""));
            if k.is_empty() || k.contains(char::is_whitespace) {
                return Err(format!("ERROR:  invalid variable '{part}'"));
            }
            set.push((k.to_string(), v.to_string()));
        }
        self.exec_change(id, |r| {
            for (k, v) in set {
                match r.variables.iter_mut().find(|(n, _)| *n == k) {
                    Some(e) => e.1 = v,
                    None => r.variables.push((k, v)),
                }
            }
            format!("successfully set variables on job {id}")
        })
    }

    /// `state=removed` cancels the job; `completed` is refused (Arches
    /// completes jobs only when they end).
    fn set_state(&mut self, id: JobId, value: &str, now: Time) -> Outcome {
        match value.to_ascii_lowercase().as_str() {
            "removed" => {
                let active = self.state.job(id).is_some_and(|j| j.state.is_active());
                if active {
                    if let Err(e) = self.rm.cancel(id, now) {
                        tracing::warn!(job = id, error = %e, "backend cancel failed");
                    }
                }
                if self.apply(Event::Cancel { job: id }, now) {
                    Ok(Some(format!("job {id} Removed")))
                } else {
                    Err(format!("ERROR:  cannot cancel job '{id}' (job is not queued or active)"))
                }
            }
            "completed" => Err(
                "ERROR:  modification of job attribute 'state' to completed not supported (a job completes when it ends; use state=removed)"
                    .to_string(),
            ),
            _ => Err("ERROR:  can only set state to completed or removed".to_string()),
        }
    }

    /// Applies a change to the job, or says why the state refused it.
    fn change(&mut self, id: JobId, change: JobChange, now: Time) -> Result<(), String> {
        if self.apply(Event::Modify { job: id, change }, now) {
            Ok(())
        } else {
            Err(format!(
                "ERROR:  cannot modify job {id} (job is not queued)"
            ))
        }
    }

    /// A change to the job's execution record (persisted with the job).
    fn exec_change(
        &mut self,
        id: JobId,
        f: impl FnOnce(&mut arches_store::ExecRecord) -> String,
    ) -> Outcome {
        let finished = self.state.job(id).is_none_or(|j| j.state.is_finished());
        let rec = self
            .exec
            .get_mut(&id)
            .filter(|_| !finished)
            .ok_or_else(|| format!("ERROR:  invalid job specified ({id})"))?;
        let line = f(std::sync::Arc::make_mut(rec));
        self.dirty.insert(id);
        Ok(Some(line))
    }
}

/// Which part of the request a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Req {
    Nodes,
    Procs,
    Features,
    Partition,
    Mem,
}

/// The placement attributes of [`Actor::modify_placement`].
#[derive(Clone, Copy)]
enum Place {
    HostList,
    Reservation,
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Place::HostList => "hostlist",
            Place::Reservation => "reqreservation",
        }
    }
}

impl Req {
    fn name(self) -> &'static str {
        match self {
            Req::Nodes => "nodecount",
            Req::Procs => "proccount",
            Req::Features => "features",
            Req::Partition => "partition",
            Req::Mem => "jobmem",
        }
    }
}
