//! Submission parsing: a [`SubmitRequest`] plus the caller's identity becomes
//! a core [`Job`] (without id yet) and the execution record. Everything that
//! needs no daemon state is checked here; [`Submission::check_against`]
//! checks what does (node sizes, dependencies), and [`Submission::finalize`]
//! fills in what depends on the id (output paths, environment).
//!
//! Every rejection is a [`SubmitError`] whose text follows
//! `ERROR:    cannot submit job - `.

use std::path::Path;

use arches_api::SubmitRequest;
use arches_core::{
    HoldType, Job, JobFlag, JobId, Node, NodeAdminState, Policy, Request, State, Time,
};
use arches_store::{ExecRecord, Payload};

use crate::ident::UserInfo;

/// Largest accepted script.
pub const MAX_SCRIPT_BYTES: usize = 1024 * 1024;

/// A rejected submission; the text is the reason (the client prefixes it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SubmitError(pub String);

impl SubmitError {
    /// The reason of a request for a QoS the job may not use (or that does
    /// not exist).
    pub const INVALID_QOS: &'static str = "invalid QOS requested";

    /// The full Moab line: `ERROR:    cannot submit job - <reason>`; Moab
    /// prints the QoS refusal with two spaces (`ERROR:  cannot submit job -
    /// invalid QOS requested`).
    pub fn message(&self) -> String {
        let pad = if self.0 == Self::INVALID_QOS {
            "  "
        } else {
            "    "
        };
        format!("ERROR:{pad}cannot submit job - {}", self.0)
    }
}

fn err<T>(why: impl Into<String>) -> Result<T, SubmitError> {
    Err(SubmitError(why.into()))
}

/// A parsed submission waiting for its id.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The job with id 0.
    pub job: Job,
    pub exec: ExecRecord,
    req: SubmitRequest,
    user: UserInfo,
    group: String,
    /// Flags the user asked for (`-l flags=`), as opposed to those of the class.
    user_flags: Vec<JobFlag>,
    /// The policy, kept for requests the engine checks itself (layouts,
    /// generic resources, access policies, reservation binding).
    policy: Option<Box<Policy>>,
    now: Time,
    /// `-t`: the job is an array ([`crate::arrays`]).
    pub array: Option<arches_core::ArraySpec>,
    /// Dependencies on named jobs, arrays and sub-jobs, until resolved
    /// ([`Submission::resolve_dependencies`]).
    depend_named: Vec<depend::Named>,
    /// Jobs this one's `before` dependencies make wait for it.
    pub befores: Vec<(JobId, arches_core::DependencyKind)>,
}

/// Parses a submission for `user` at time `now`.
pub fn parse(
    req: &SubmitRequest,
    user: &UserInfo,
    group: &str,
    policy: &Policy,
    now: Time,
) -> Result<Submission, SubmitError> {
    if req.script.len() > MAX_SCRIPT_BYTES {
        return err(format!(
            "script too large ({} bytes, limit {MAX_SCRIPT_BYTES})",
            req.script.len()
        ));
    }
    if !req.submit_dir.starts_with('/') {
        return err(format!(
            "submit directory '{}' is not absolute",
            req.submit_dir
        ));
    }
    sane::check(req, policy)?;
    let mut res = Resources::default();
    for item in effective_resources(&req.resources) {
        res.apply(item)?;
    }
    for ext in &req.extensions {
        res.apply_extension(ext)?;
    }
    // Templates first (Moab: before the class defaults and checks); they
    // may set the class.
    let mut class = req.class.clone().filter(|c| !c.is_empty());
    let mut account = req.account.clone().filter(|a| !a.is_empty());
    let (applied_templates, stat_templates) = templates::apply(
        policy,
        &mut res,
        templates::Creds {
            user: &user.name,
            group,
            class: &mut class,
            account: &mut account,
        },
    )?;
    // The requested (or template-set) class, else DEFAULTCLASS; refused
    // when classes are defined and it is not one of them (crate docs:
    // classes).
    let class = arches_core::class::assign(class.as_deref(), policy).map_err(SubmitError)?;
    let class_cfg = class.as_ref().and_then(|c| policy.classes.get(c));
    let mut walltime = res.walltime;
    if let Some(w) = walltime {
        if w <= 0 {
            return err(format!("invalid wallclock limit ({w})"));
        }
        arches_core::limits::check_walltime("wallclock limit", w).map_err(SubmitError)?;
    }
    if let (Some(t), Some(w), Some(max)) = (
        &res.walltime_template,
        walltime,
        class_cfg.and_then(|c| c.max_wclimit),
    ) {
        if w > max {
            return err(format!(
                "job template '{t}' sets walltime {} above MAX.WCLIMIT {} of class {}",
                arches_core::timespec::format_duration(w),
                arches_core::timespec::format_duration(max),
                class.as_deref().unwrap_or("")
            ));
        }
    }
    let mut request = res.request()?;
    if let Some(c) = class_cfg {
        arches_core::class::apply_defaults(&mut request, &mut walltime, c, res.given());
    }
    crate::mail::check_mail(req.mail_options.as_deref(), req.mail_list.as_deref())
        .map_err(SubmitError)?;
    let array = array::parse(req)?;
    let name = array
        .as_ref()
        .and_then(|a| a.name.clone())
        .or_else(|| req.name.clone().filter(|n| !n.is_empty()))
        .unwrap_or_else(|| "STDIN".to_string());
    let elastic = match res.procs_max {
        Some(max) => {
            if res.nodes.is_some() || res.ppn.is_some() || res.ncpus.is_some() {
                return err("a processor range (procs=MIN-MAX) cannot be combined with nodes=, ppn= or ncpus=");
            }
            if request
                .layout
                .as_ref()
                .is_some_and(|l| !l.gres.is_empty() || !l.groups.is_empty() || !l.trl.is_empty())
            {
                return err("a processor range (procs=MIN-MAX) cannot be combined with generic resources, node groups or a task request list");
            }
            Some(
                arches_core::malleable::check_range(
                    request.total_procs(),
                    max,
                    request.procs_per_task,
                )
                .map_err(SubmitError)?,
            )
        }
        None => None,
    };
    let mut job = Job::new(0, &user.name, request, walltime, now);
    job.elastic = elastic;
    job.name = name.into();
    job.cred.group = group.into();
    job.cred.account = account.map(Into::into);
    job.cred.class = class.map(Into::into);
    if let (Some(c), Some(cfg)) = (job.cred.class.as_deref(), class_cfg) {
        // Beyond a class limit: refused, never clamped (Moab's words).
        arches_core::class::check(&job, c, cfg)
            .map_err(|why| SubmitError(arches_core::class::violation(&why)))?;
    }
    // The requested QoS if the credentials grant it, else their default
    // (QDEF, Moab's precedence): the one QoS the engine uses.
    arches_core::qos::assign(&mut job.cred, policy, res.qos.as_deref())
        .map_err(|_| SubmitError(SubmitError::INVALID_QOS.to_string()))?;
    job.depend = res.depend.clone();
    if let Some(p) = req.priority {
        if !(-1024..=1023).contains(&p) {
            return err(format!("invalid user priority {p} (range -1024..1023)"));
        }
        job.user_prio = p;
    }
    let mut flags = res.flags.clone();
    if req.rerunable == Some(true) {
        flags.push(JobFlag::Restartable);
    }
    if let Some(c) = class_cfg {
        flags.extend(c.job_flags.iter().copied());
    }
    // Interactive exactly when msub -I asked (a terminal needs a client
    // waiting for it; a class or template cannot make a batch job one).
    flags.retain(|f| *f != JobFlag::Interactive);
    if req.interactive {
        flags.push(JobFlag::Interactive);
    }
    job.flags = flags.into_iter().collect();
    if req.hold {
        job.holds.insert(HoldType::User);
    }
    if let Some(a) = &req.start_after {
        job.start_after = Some(parse_start_date(a, now)?);
    }
    if let Some(d) = &res.deadline {
        job.deadline = Some(parse_deadline(d, now)?);
    }
    let workdir = req
        .workdir
        .clone()
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| req.submit_dir.clone());
    let workdir = absolute(&workdir, &req.submit_dir);
    let stage_in = crate::staging::parse_specs("STAGEIN", &res.stagein, &workdir)?;
    let stage_out = crate::staging::parse_specs("STAGEOUT", &res.stageout, &user.home)?;
    let exec = ExecRecord {
        // The script file's path; empty for standard input (the views then
        // show the spool copy the job runs).
        executable: req.script_path.clone().unwrap_or_default(),
        opsys: res.opsys.clone(),
        arch: res.arch.clone(),
        shell: req.shell.clone().filter(|s| !s.is_empty()),
        workdir,
        join: req.join,
        uid: user.uid,
        gid: user.gid,
        submit_dir: req.submit_dir.clone(),
        submit_args: req.submit_args.clone(),
        submit_host: req.submit_host.clone(),
        mail_options: req.mail_options.clone(),
        mail_list: req.mail_list.clone(),
        ttc: res.ttc.clone(),
        umask: res.umask,
        stage_in,
        stage_out,
        templates: applied_templates,
        stat_templates,
        args: script_args(&req.args)?,
        ..ExecRecord::default()
    };
    let engine = job_needs_engine_check(&job, policy);
    Ok(Submission {
        job,
        exec,
        req: req.clone(),
        user: user.clone(),
        group: group.to_string(),
        user_flags: res.flags.clone(),
        policy: engine.then(|| Box::new(policy.clone())),
        now,
        array,
        depend_named: res.depend_named.clone(),
        befores: Vec::new(),
    })
}

/// The `-l` items that count, in order: msub sends the directives' lists
/// first and the command line's after, and for the same resource the last
/// one wins (Moab/Torque: the command line overrides the script, a later
/// `-l` an earlier one). `nodes=` and `select=` are one node
/// specification; `var=NAME:VALUE` is one resource per NAME, and lists by
/// nature (`depend=`, `stagein=`, `stageout=`) add up.
pub(crate) fn effective_resources(lists: &[String]) -> Vec<&str> {
    let items: Vec<&str> = lists.iter().flat_map(|l| split_top(l)).collect();
    let key = |item: &str| -> Option<String> {
        let (k, v) = item.split_once('=')?;
        let k = k.trim().to_ascii_lowercase();
        match k.as_str() {
            "depend" | "stagein" | "stageout" => None,
            "select" => Some("nodes".to_string()),
            "var" => Some(format!("var:{}", v.split(':').next().unwrap_or(v))),
            _ => Some(k),
        }
    };
    let keys: Vec<Option<String>> = items.iter().map(|i| key(i)).collect();
    items
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            keys[*i]
                .as_ref()
                .is_none_or(|k| !keys[i + 1..].iter().any(|later| later.as_ref() == Some(k)))
        })
        .map(|(_, item)| *item)
        .collect()
}

/// Whether the submission check is the engine's own
/// ([`arches_core::placement::feasible`]): requests with a layout, and any
/// request when node access policies other than SHARED are configured.
fn job_needs_engine_check(job: &Job, policy: &Policy) -> bool {
    job.req.layout.is_some() || policy.node_access != arches_core::NodeAccessPolicy::Shared
}

/// Script arguments: at most 4,096, 64 KiB in all, no NUL byte (they
/// become a process's argv).
fn script_args(args: &[String]) -> Result<Vec<String>, SubmitError> {
    let total: usize = args.iter().map(|a| a.len() + 1).sum();
    if args.len() > 4096 || total > 64 * 1024 {
        return err(format!(
            "too many script arguments ({} arguments, {total} bytes; limits 4096 and 65536)",
            args.len()
        ));
    }
    if args.iter().any(|a| a.contains('\0')) {
        return err("a script argument contains a NUL byte");
    }
    Ok(args.to_vec())
}

/// Job flags only an administrator may give a job directly: preemption
/// privileges are granted through a QoS or class (seed §8.4.1: "control
/// access to preemption privileges").
pub const PRIVILEGED_FLAGS: [JobFlag; 1] = [JobFlag::Preemptor];

/// The refusal for a privileged flag set by someone who is not an
/// administrator.
pub fn privileged_flag_error(flag: JobFlag) -> String {
    format!(
        "job flag {flag} may only be set by an administrator (it is granted through a QOS with QFLAGS=PREEMPTOR or a class's JOBFLAGS)"
    )
}

impl Submission {
    /// `-o`, `-e` as written and whether `-j eo` joins into the error file.
    pub fn output_spec(&self) -> (Option<String>, Option<String>, bool) {
        (
            self.req.output.clone().filter(|o| !o.is_empty()),
            self.req.error.clone().filter(|e| !e.is_empty()),
            self.req.join && self.req.join_to_error,
        )
    }

    /// Refuses flags the caller may not set ([`PRIVILEGED_FLAGS`]).
    pub fn check_privileges(&self, admin: bool) -> Result<(), SubmitError> {
        match self
            .user_flags
            .iter()
            .find(|f| !admin && PRIVILEGED_FLAGS.contains(f))
        {
            Some(f) => err(privileged_flag_error(*f)),
            None => Ok(()),
        }
    }

    /// Resolves the dependencies against the known jobs (names, arrays,
    /// sub-jobs; every job named must exist) and checks the jobs its
    /// `before` dependencies would change.
    pub fn resolve_dependencies(&mut self, state: &State) -> Result<(), SubmitError> {
        let deps = depend::resolve(
            state,
            &self.job.cred.user,
            &self.job.depend,
            &self.depend_named,
        )?;
        self.befores = depend::befores(state, &self.job.cred.user, &deps)?;
        self.job.depend = deps;
        self.depend_named.clear();
        Ok(())
    }

    /// Checks the request against the cluster and the known jobs.
    pub fn check_against(&self, state: &State) -> Result<(), SubmitError> {
        let mut probe = self.clone();
        probe.resolve_dependencies(state)?;
        if let Some(p) = self.policy.as_deref() {
            // Node groups, hosts, generic resources, access policies,
            // reservations: the engine's own test.
            let mut shown = self.job.clone();
            shown.id = 0;
            return arches_core::placement::feasible(state, p, &shown, self.now)
                .map_err(SubmitError);
        }
        fits_somewhere(state, &self.job.req)
    }

    /// Gives the job its id: output paths and environment are resolved.
    /// The script and environment come back as the job's [`Payload`].
    pub fn finalize(mut self, id: JobId, host: &str) -> (Job, ExecRecord, Payload) {
        self.job.id = id;
        let name = self.job.name.clone();
        let sdir = self.req.submit_dir.clone();
        let sid = id.to_string();
        let out_default = format!("{name}.o{id}");
        let err_default = format!("{name}.e{id}");
        self.exec.stdout = output_path(self.req.output.as_deref(), &out_default, &sdir, &sid);
        self.exec.stderr = output_path(self.req.error.as_deref(), &err_default, &sdir, &sid);
        if self.req.join && self.req.join_to_error {
            // `-j eo`: both streams into the error file (Torque).
            self.exec.stdout = self.exec.stderr.clone();
        }
        let class = self.job.cred.class.clone().unwrap_or_default();
        let account = self.job.cred.account.clone().unwrap_or_default();
        let mut env: Vec<(String, String)> = Vec::new();
        let reserved = [
            "PBS_JOBID",
            "PBS_JOBNAME",
            "PBS_O_WORKDIR",
            "PBS_O_HOST",
            "PBS_QUEUE",
            "MOAB_JOBID",
            "MOAB_JOBNAME",
            "MOAB_CLASS",
            "MOAB_USER",
            "MOAB_GROUP",
            "MOAB_ACCOUNT",
            "MOAB_BATCH",
            "PBS_O_QUEUE",
            "PBS_ENVIRONMENT",
            "PBS_O_INITDIR",
            "HOME",
            "USER",
            "LOGNAME",
            "SHELL",
        ];
        let mut path = None;
        for (k, v) in &self.req.env {
            if k == "PATH" {
                path = Some(v.clone());
            } else if !reserved.contains(&k.as_str()) {
                env.push((k.clone(), v.clone()));
            }
        }
        let o_host = if self.req.submit_host.is_empty() {
            host.to_string()
        } else {
            self.req.submit_host.clone()
        };
        for (k, v) in [
            ("HOME", self.user.home.clone()),
            ("USER", self.user.name.clone()),
            ("LOGNAME", self.user.name.clone()),
            ("SHELL", self.user.shell.clone()),
            (
                "PATH",
                path.unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".to_string()),
            ),
            ("PBS_JOBID", sid.clone()),
            ("PBS_JOBNAME", name.to_string()),
            ("PBS_O_WORKDIR", sdir.clone()),
            ("PBS_O_HOST", o_host),
            ("PBS_QUEUE", class.to_string()),
            ("MOAB_JOBID", sid),
            ("MOAB_JOBNAME", name.to_string()),
            ("MOAB_CLASS", class.to_string()),
            ("MOAB_USER", self.user.name.clone()),
            ("MOAB_GROUP", self.group.clone()),
            ("MOAB_ACCOUNT", account.to_string()),
            ("MOAB_BATCH", "1".to_string()),
            // The queue asked for (Torque) and the batch marker.
            ("PBS_O_QUEUE", self.req.class.clone().unwrap_or_default()),
            (
                "PBS_ENVIRONMENT",
                if self.req.interactive {
                    "PBS_INTERACTIVE"
                } else {
                    "PBS_BATCH"
                }
                .to_string(),
            ),
        ] {
            env.push((k.to_string(), v));
        }
        // Torque: the working directory -d gave (the job starts there).
        if self.req.workdir.as_deref().is_some_and(|w| !w.is_empty()) {
            env.push(("PBS_O_INITDIR".to_string(), self.exec.workdir.clone()));
        }
        let payload = Payload {
            script: std::mem::take(&mut self.req.script),
            env,
        };
        (self.job, self.exec, payload)
    }
}

/// Resolves `-o`/`-e`: a file, or a directory (trailing `/` or existing
/// directory) receiving the default name; `$MOAB_JOBID`/`$PBS_JOBID`
/// expanded; relative paths against the submit directory.
pub fn output_path(given: Option<&str>, default_name: &str, submit_dir: &str, id: &str) -> String {
    let Some(g) = given.filter(|g| !g.is_empty()) else {
        return Path::new(submit_dir)
            .join(default_name)
            .to_string_lossy()
            .into_owned();
    };
    let mut g = g.to_string();
    for var in ["MOAB_JOBID", "PBS_JOBID"] {
        g = g.replace(&format!("${{{var}}}"), id);
        g = g.replace(&format!("${var}"), id);
    }
    // `host:path` as qsub writes it.
    if let Some((h, p)) = g.split_once(':') {
        if !h.contains('/') && p.starts_with('/') {
            g = p.to_string();
        }
    }
    let abs = absolute(&g, submit_dir);
    if g.ends_with('/') || Path::new(&abs).is_dir() {
        Path::new(&abs)
            .join(default_name)
            .to_string_lossy()
            .into_owned()
    } else {
        abs
    }
}

fn absolute(p: &str, base: &str) -> String {
    if p.starts_with('/') {
        p.to_string()
    } else {
        Path::new(base).join(p).to_string_lossy().into_owned()
    }
}

/// Checks that some set of usable nodes can hold the request when the
/// cluster is empty: the same per-node test the placement uses (processors
/// and memory per task, tasks per node, features, partition), node by node,
/// so that e.g. `nodes=2:ppn=3` is refused when only one node has 3
/// processors. Drained nodes count (they may come back); down nodes do not.
pub(crate) fn fits_somewhere(state: &State, req: &Request) -> Result<(), SubmitError> {
    let nodes: Vec<_> = state
        .nodes()
        .iter()
        .filter(|n| n.admin != NodeAdminState::Down)
        .filter(|n| n.has_features(&req.features))
        .filter(|n| req.partition.as_ref().is_none_or(|p| *p == n.partition))
        .collect();
    if nodes.is_empty() {
        return err(match (&req.partition, req.features.is_empty()) {
            (Some(p), _) => format!("no nodes in partition '{p}' with the requested features"),
            (None, false) => format!("no node has features '{}'", req.features.join(":")),
            (None, true) => "no compute nodes are configured".to_string(),
        });
    }
    let ppt = req.procs_per_task.max(1);
    // Tasks of this job each node could hold on its own.
    let fit = |n: &Node| arches_core::placement::tasks_fitting(n, req, n.procs, n.mem_mb);
    // Tasks every chosen node must hold (exact node count), as placement has it.
    let per_node = match (req.nodes, req.tasks_per_node) {
        (_, Some(tpn)) => Some(tpn.max(1)),
        (Some(n), None) if n > 0 => Some(req.tasks.div_ceil(n).max(1)),
        _ => None,
    };
    if let Some(t) = per_node {
        let need_procs = t.saturating_mul(ppt);
        let need_mem = req.mem_per_task_mb.saturating_mul(u64::from(t));
        let big_enough = nodes.iter().filter(|n| fit(n) >= t).count();
        let wanted = req.nodes.unwrap_or(1).max(1) as usize;
        if big_enough == 0 || big_enough < wanted {
            let max_procs = nodes.iter().map(|n| n.procs).max().unwrap_or(0);
            let max_mem = nodes.iter().map(|n| n.mem_mb).max().unwrap_or(0);
            if need_procs > max_procs {
                return err(format!(
                    "job requests {need_procs} procs per node but no node has more than {max_procs}"
                ));
            }
            if req.mem_per_task_mb > 0 && max_mem > 0 && need_mem > max_mem {
                return err(format!(
                    "job requests {need_mem} MB of memory per node but no node has more than {max_mem} MB"
                ));
            }
            if wanted > nodes.len() {
                return err(format!(
                    "job requests {wanted} nodes but only {} are available",
                    nodes.len()
                ));
            }
            let mem = if req.mem_per_task_mb > 0 {
                format!(" and {need_mem} MB of memory")
            } else {
                String::new()
            };
            return err(format!(
                "job requests {wanted} nodes with {need_procs} procs{mem} each but only {big_enough} of the {} usable nodes {} that large",
                nodes.len(),
                if big_enough == 1 { "is" } else { "are" }
            ));
        }
        return Ok(());
    }
    let total: u64 = nodes.iter().map(|n| u64::from(fit(n))).sum();
    if u64::from(req.tasks) > total {
        let procs: u64 = nodes.iter().map(|n| u64::from(n.procs)).sum();
        let per_task_fit: u64 = nodes.iter().map(|n| u64::from(n.procs / ppt)).sum();
        if u64::from(req.tasks) > per_task_fit {
            return err(format!(
                "job requests {} procs but the cluster has only {procs}",
                req.total_procs()
            ));
        }
        let total_mem: u64 = nodes.iter().map(|n| n.mem_mb).sum();
        if total_mem > 0 && req.total_mem_mb() > total_mem {
            return err(format!(
                "job requests {} MB of memory but the cluster has only {total_mem} MB",
                req.total_mem_mb()
            ));
        }
        return err(format!(
            "job requests {} tasks of {ppt} procs and {} MB each but the nodes can hold only {total}",
            req.tasks, req.mem_per_task_mb
        ));
    }
    Ok(())
}

/// `Moab.17`, `17`, `17.host` → 17.
pub fn parse_job_id(text: &str) -> Option<JobId> {
    // Strict: `80.*` is a regular expression, never job 80.
    crate::jobexpr::exact_id(text)
}

/// `-l deadline=` / `mjobctl -m deadline=`: the time the job must complete
/// by — Moab's absolute forms (`HH:MM[:SS][_MO/DD[/YY]]` in local time,
/// e.g. `08:00:00_03/01/08`; epoch seconds) or a duration after `now` (the
/// submission, or the modification): `+3:00:00`. A deadline that has
/// already passed is refused.
pub fn parse_deadline(text: &str, now: Time) -> Result<Time, SubmitError> {
    let at = crate::rsvctl::parse_time(text, now).map_err(|_| {
        SubmitError(format!(
            "invalid deadline '{text}' (expected HH:MM[:SS][_MO/DD[/YY]] or +DURATION)"
        ))
    })?;
    if at <= now {
        return Err(SubmitError(format!("deadline '{text}' has already passed")));
    }
    Ok(at)
}

/// `msub -a [[[[CC]YY]MM]DD]hhmm[.SS]` in local time.
pub fn parse_start_date(text: &str, now: Time) -> Result<Time, SubmitError> {
    let bad = || SubmitError(format!("invalid date '{text}'"));
    let (main, secs) = match text.split_once('.') {
        Some((m, s)) => (m, Some(s)),
        None => (text, None),
    };
    if !main.bytes().all(|b| b.is_ascii_digit()) || ![4, 6, 8, 10, 12].contains(&main.len()) {
        return Err(bad());
    }
    let field = |s: &str| s.parse::<i32>().map_err(|_| bad());
    let sec = match secs {
        Some(s) if s.len() == 2 => field(s)?,
        Some(_) => return Err(bad()),
        None => 0,
    };
    let t = now as libc::time_t;
    // SAFETY: zeroed tm is a valid out-parameter; localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return Err(bad());
    }
    let n = main.len();
    tm.tm_min = field(&main[n - 2..])?;
    tm.tm_hour = field(&main[n - 4..n - 2])?;
    if n >= 6 {
        tm.tm_mday = field(&main[n - 6..n - 4])?;
    }
    if n >= 8 {
        tm.tm_mon = field(&main[n - 8..n - 6])? - 1;
    }
    if n >= 10 {
        let yy = field(&main[n - 10..n - 8])?;
        tm.tm_year = if n == 12 {
            field(&main[..2])? * 100 + yy - 1900
        } else {
            2000 + yy - 1900
        };
    }
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    if tm.tm_min > 59 || tm.tm_hour > 23 || tm.tm_sec > 60 || !(0..12).contains(&tm.tm_mon) {
        return Err(bad());
    }
    if !(1..=31).contains(&tm.tm_mday) {
        return Err(bad());
    }
    // SAFETY: tm is fully initialised.
    let at = unsafe { libc::mktime(&mut tm) };
    if at == -1 {
        return Err(bad());
    }
    Ok(at as Time)
}

mod array;
pub mod depend;
mod nodespec;
mod resources;
pub mod sane;
mod templates;

pub use resources::parse_mem;
use resources::{split_top, Resources};

#[cfg(test)]
mod tests;
