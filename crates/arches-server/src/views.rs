//! Read-only views built from the last published [`Snapshot`]: showq,
//! checkjob, checknode, mdiag, showres, showstats... Never touches the actor.

use arches_api::{
    ClusterSummary, ConfigDiagnostic, ConfigView, CredentialInfo, CredentialsView, JobDetail,
    JobPriority, JobSummary, JobsRequest, JobsView, NodeInfo, NodeReservation, NodeShare,
    NodesView, PriorityComponent, PriorityView, QueueView, ReservationInfo, ReservationSpan,
    ReservationsView, SchedulerView, Section, StatsView,
};
use arches_api::{CredStats, FairshareCred, FairshareView, StatTotals};
use arches_core::accounting::{
    active_usage, job_creds, CredKind, FairshareUsage, FsWindow, Totals, GRID_PROCS, GRID_TIMES,
};
use arches_core::policy::Limits;
use arches_core::{CompletionCode, Job, JobFlag, JobState, NodeAdminState, StartKind};

use crate::actor::Snapshot;

/// showq's data.
pub fn queue(s: &Snapshot, completed: bool) -> QueueView {
    let jobs = queue_order(s, completed)
        .into_iter()
        .filter_map(|it| queue_item(s, it))
        .collect();
    QueueView {
        jobs,
        ..queue_shell(s)
    }
}

/// showq's data without its jobs (the answer is streamed job by job, in
/// [`queue_order`]: `crate::stream`).
pub fn queue_shell(s: &Snapshot) -> QueueView {
    QueueView {
        now: s.now,
        cluster: cluster(s),
        jobs: Vec::new(),
        purge_secs: s.cfg.purge_secs,
        scheduler: s.cfg.scheduler_name.clone(),
        notes: Vec::new(),
    }
}

/// One line of a listing: a job of the state, encoded when it is sent, or
/// a line already made (an array's pending sub-jobs, an array's detail).
pub enum Item<T> {
    Job(arches_core::JobId),
    Made(Box<T>),
}

/// The lines of showq in order: active by earliest completion, eligible
/// then blocked by rank (with one line per array for its sub-jobs not made
/// jobs yet), completed by completion time (with `completed`).
pub fn queue_order(s: &Snapshot, completed: bool) -> Vec<Item<JobSummary>> {
    let mut active = Vec::new();
    let mut waiting = Vec::new();
    let mut done = Vec::new();
    for j in s.state.jobs() {
        if j.state.is_active() {
            active.push((j.expected_end().unwrap_or(i64::MAX), j.id));
        } else if j.state.is_finished() {
            if completed {
                done.push((j.completion.map_or(0, |c| c.time), j.id));
            }
        } else {
            let rank = s.plan.decisions.get(&j.id).map_or(u32::MAX, |d| d.rank);
            let blocked = section(s, j) != Section::Eligible;
            waiting.push((blocked, rank, j.id, Item::Job(j.id)));
        }
    }
    // Array sub-jobs not made jobs yet: one line per array.
    for (rank, id, line) in crate::arrays::pending_lines(s) {
        let blocked = line.section != Section::Eligible;
        waiting.push((blocked, rank, id, Item::Made(Box::new(line))));
    }
    active.sort_unstable();
    waiting.sort_by_key(|(b, r, id, _)| (*b, *r, *id));
    done.sort_unstable();
    active
        .into_iter()
        .map(|x| Item::Job(x.1))
        .chain(waiting.into_iter().map(|x| x.3))
        .chain(done.into_iter().map(|x| Item::Job(x.1)))
        .collect()
}

/// One line of showq (`None`: the job is gone).
pub fn queue_item(s: &Snapshot, it: Item<JobSummary>) -> Option<JobSummary> {
    match it {
        Item::Job(id) => s.state.job(id).map(|j| summary(s, j)),
        Item::Made(line) => Some(*line),
    }
}

/// The showq section of a job (active, eligible, blocked or completed).
pub fn section(s: &Snapshot, j: &Job) -> Section {
    if j.state.is_active() {
        Section::Active
    } else if j.state.is_finished() {
        Section::Completed
    } else {
        let decision = s.plan.decisions.get(&j.id);
        let eligible = decision.map_or(j.holds.is_empty(), |d| d.eligible && j.holds.is_empty());
        if eligible {
            Section::Eligible
        } else {
            Section::Blocked
        }
    }
}

/// checkjob's data: the jobs asked for, in order, the unknown ids and the
/// jobs `caller` may not see in detail (`ALL` is every job the caller may
/// see: [`crate::authz::job_visibility`]).
pub fn jobs(s: &Snapshot, req: &JobsRequest, caller: &crate::authz::Caller) -> JobsView {
    let (items, mut out) = jobs_selection(s, req, caller);
    let pv = crate::preempt::PreemptView::default();
    out.jobs = items
        .into_iter()
        .filter_map(|it| job_item(s, it, &pv))
        .collect();
    out
}

/// One job of checkjob (`None`: the job is gone).
pub fn job_item(
    s: &Snapshot,
    it: Item<JobDetail>,
    pv: &crate::preempt::PreemptView,
) -> Option<JobDetail> {
    match it {
        Item::Job(id) => s.state.job(id).map(|j| detail_with(s, j, pv)),
        Item::Made(d) => Some(*d),
    }
}

/// The jobs a detail query names, in order (each once, where it is first
/// named, as job actions do), and checkjob's data without them: the
/// unknown names and the jobs `caller` may not see in detail (the answer
/// is streamed job by job: `crate::stream`).
pub fn jobs_selection(
    s: &Snapshot,
    req: &JobsRequest,
    caller: &crate::authz::Caller,
) -> (Vec<Item<JobDetail>>, JobsView) {
    let mut out = JobsView {
        now: s.now,
        jobs: Vec::new(),
        unknown: Vec::new(),
        errors: Vec::new(),
        denied: Vec::new(),
    };
    let mut items = Vec::new();
    let pv = crate::preempt::PreemptView::default();
    // The job expressions resolve in the one place they do; then what the
    // caller may see: a job named by its id that they may not see in detail
    // is refused by name, one reached by ALL, a regex or a selection is
    // left out ([`crate::authz::job_visibility`]).
    let scope = crate::jobexpr::Scope {
        completed: req.completed,
        owner: (!caller.sees_all).then_some(caller.user.as_str()),
        regex_always: s.cfg.moab.use_job_regex,
        scheduler: &s.cfg.scheduler_name,
    };
    // Array forms (`ID[INDEX]`, `ID[]`, an array's `ID`) first, the other
    // tokens through the job expressions.
    let (array_tokens, rest) = crate::jobexpr::split_arrays(&s.state, &req.ids);
    let resolve_rest = array_tokens.is_empty()
        || !rest.is_empty()
        || req.select != arches_api::JobSelect::default();
    let mut seen = std::collections::BTreeSet::new();
    for (text, t) in array_tokens {
        use crate::arrays::Target;
        // An array and its sub-jobs are its owner's.
        let owner = match t {
            Target::Job(id) => s.state.job(id),
            Target::Array(id) | Target::Pending(id, _) => s.state.array(id).map(|a| &*a.template),
        };
        if let Some(o) = owner.filter(|o| !caller.may_see_detail(o)) {
            if seen.insert(o.id) {
                out.denied.push(arches_api::Denied {
                    job: text.clone(),
                    user: caller.user.clone(),
                });
            }
            continue;
        }
        let (key, item) = match t {
            Target::Job(id) => {
                if s.state.job(id).is_none() {
                    out.unknown.push(text.clone());
                    continue;
                }
                (id, Item::Job(id))
            }
            Target::Array(id) => {
                let Some(a) = s.state.array(id) else { continue };
                let mut d = detail_with(s, &crate::arrays::master_job(&s.state, a), &pv);
                d.summary.array = None;
                d.array_info = Some(crate::arrays::array_info(s, a, true));
                (id, Item::Made(Box::new(d)))
            }
            Target::Pending(id, pos) => {
                let Some(a) = s.state.array(id) else { continue };
                let j = crate::arrays::pending_job(a, pos);
                (j.id, Item::Made(Box::new(detail_with(s, &j, &pv))))
            }
        };
        if seen.insert(key) {
            items.push(item);
        }
    }
    let sel = if resolve_rest {
        crate::jobexpr::select(&s.state, &rest, &req.select, &scope)
    } else {
        crate::jobexpr::Selection::default()
    };
    for id in sel.ids {
        let Some(j) = s.state.job(id) else { continue };
        if !seen.insert(id) {
            continue;
        }
        if caller.may_see_detail(j) {
            items.push(Item::Job(id));
        } else if sel.named.contains(&id) {
            out.denied.push(arches_api::Denied {
                job: id.to_string(),
                user: caller.user.clone(),
            });
        }
    }
    out.unknown.extend(sel.unmatched);
    out.errors = sel.errors;
    (items, out)
}

/// The summary line of one job.
pub fn summary(s: &Snapshot, j: &Job) -> JobSummary {
    let decision = s.plan.decisions.get(&j.id);
    let queued = !j.state.is_active() && !j.state.is_finished();
    let section = section(s, j);
    let run = j.run.as_ref();
    let first = run
        .and_then(|r| r.alloc.first())
        .and_then(|a| s.state.node(a.node));
    let eligible_from = j
        .eligible_since
        .unwrap_or_else(|| j.start_after.unwrap_or(j.submit_time).max(j.submit_time));
    JobSummary {
        id: j.id,
        name: j.name.to_string(),
        user: j.cred.user.to_string(),
        group: j.cred.group.to_string(),
        account: j.cred.account.as_deref().map(str::to_string),
        class: j.cred.class.as_deref().map(str::to_string),
        qos: j.cred.qos.as_deref().map(str::to_string),
        state: j.display_state().as_str().to_string(),
        section,
        procs: j.procs(),
        nodes: match run {
            Some(r) if j.state.is_active() => Some(r.nodes()),
            _ => j.req.nodes,
        },
        walltime: j.walltime,
        submit_time: j.submit_time,
        start_time: run.map(|r| r.start_time),
        completion_time: j.completion.map(|c| c.time),
        exit_code: j.completion.and_then(|c| match c.code {
            CompletionCode::Exit(x) => Some(x),
            CompletionCode::Cancelled => None,
        }),
        cancelled: j
            .completion
            .is_some_and(|c| c.code == CompletionCode::Cancelled),
        priority: j
            .sys_prio
            .or(decision.map(|d| d.priority.total))
            .unwrap_or(0),
        system_priority: j.sys_prio.is_some(),
        rank: decision.map(|d| d.rank),
        master_host: first.map(|n| n.name.clone()),
        partition: first
            .map(|n| n.partition.clone())
            .or_else(|| j.req.partition.clone()),
        suspended_secs: run.map_or(0, |r| r.suspended_secs),
        reservation_start: s.plan.reservation(j.id).map(|r| r.start),
        backfilled: run.is_some_and(|r| r.how == StartKind::Backfill),
        preemptible: crate::preempt::shows_preemptible(s, j),
        block_reason: crate::preempt::block_reason(
            s,
            j,
            decision
                .and_then(|d| d.reason.as_ref())
                .map(|r| r.message(s.now)),
        ),
        eligible_secs: if queued && section == Section::Eligible {
            (s.now - eligible_from).max(0)
        } else {
            0
        },
        restartable: j.flags.contains(JobFlag::Restartable),
        elastic: j.elastic.map(|e| arches_api::ElasticInfo {
            min: e.min,
            max: e.max,
            cap: e.cap,
            request: e.request.map(|r| r.procs),
            request_since: e.request.map(|r| r.since),
            waits: s
                .plan
                .elastic
                .waits
                .iter()
                .find(|(id, _)| *id == j.id)
                .map(|(_, r)| r.to_string()),
            growth: s
                .plan
                .elastic
                .notes
                .iter()
                .find(|(id, _)| *id == j.id)
                .map(|(_, n)| n.clone()),
        }),
        array: crate::arrays::member(&s.state, j.id),
        cpu_ms: j.cpu_ms.filter(|_| j.state.is_finished()),
    }
}

fn shares(s: &Snapshot, alloc: &[arches_core::Alloc]) -> Vec<NodeShare> {
    alloc
        .iter()
        .filter_map(|a| {
            Some(NodeShare {
                node: s.state.node(a.node)?.name.clone(),
                tasks: a.tasks,
            })
        })
        .collect()
}

/// Everything checkjob shows about one job.
pub fn detail(s: &Snapshot, j: &Job) -> JobDetail {
    detail_with(s, j, &crate::preempt::PreemptView::default())
}

/// [`detail`] with the preemption context computed once for many jobs.
pub fn detail_with(s: &Snapshot, j: &Job, pv: &crate::preempt::PreemptView) -> JobDetail {
    // A sub-job not made a job yet shares its array's record.
    let rec = s
        .exec
        .get(&j.id)
        .or_else(|| crate::arrays::exec_of_array(s, j.id));
    let decision = s.plan.decisions.get(&j.id);
    let pinned = if s.plan.reservation(j.id).is_some() {
        crate::estimates::pinned_reservations(s)
    } else {
        Vec::new()
    };
    // An active job's reservation is its allocation, from its start to its
    // expected end (what showres and mdiag -r list); a queued job's is the
    // plan's priority reservation pinned to nodes.
    let reservation = match j.run.as_ref().filter(|_| j.state.is_active()) {
        Some(r) => Some(ReservationSpan {
            start: r.start_time,
            end: j.expected_end(),
            nodes: shares(s, &r.alloc),
        }),
        None => pinned
            .iter()
            .find(|r| r.job == j.id)
            .map(|r| ReservationSpan {
                start: r.start,
                end: r.end,
                nodes: shares(s, &r.alloc),
            }),
    };
    JobDetail {
        summary: summary(s, j),
        holds: j.holds.iter().map(|h| h.as_str().to_string()).collect(),
        tasks: j.req.tasks,
        tasks_per_node: j.req.tasks_per_node,
        mem_per_task_mb: j.req.mem_per_task_mb,
        features: j.req.features.clone(),
        opsys: rec.and_then(|r| r.opsys.clone()),
        arch: rec.and_then(|r| r.arch.clone()),
        flags: j
            .flags
            .iter()
            .map(|f| f.as_str().to_string())
            .chain(j.req.advres().map(|r| {
                // Moab shows the binding among the flags.
                if r.is_empty() {
                    "ADVRES".to_string()
                } else {
                    format!("ADVRES:{r}")
                }
            }))
            .collect(),
        depend: j
            .depend
            .iter()
            .map(|d| {
                let target = crate::arrays::display_id(&s.state, d.job);
                format!("{}:{}", d.kind.as_str(), target)
            })
            .collect(),
        start_after: j.start_after,
        deadline: arches_core::deadline::of(j, &s.cfg.policy),
        deadline_failed: j.deadline_failed.or_else(|| {
            s.plan
                .deadline_misses
                .iter()
                .find(|m| m.job == j.id)
                .map(|m| m.expected)
        }),
        deadline_guaranteed: arches_core::deadline::guaranteed(j, &s.cfg.policy).is_some(),
        start_count: j.start_count,
        bypass_count: j.bypass_count,
        user_priority: j.user_prio,
        allocated: j
            .run
            .as_ref()
            .filter(|_| j.state.is_active())
            .map(|r| shares(s, &r.alloc))
            .unwrap_or_default(),
        ran_on: j
            .run
            .as_ref()
            .filter(|_| j.state.is_finished())
            .map(|r| shares(s, &r.alloc))
            .unwrap_or_default(),
        reservation,
        priority_components: decision
            .map(|d| components(&d.priority.components))
            .unwrap_or_default(),
        chunk_size: match decision.and_then(|d| d.reason.as_ref()) {
            Some(arches_core::BlockReason::Chunking { size, .. }) => Some(*size),
            _ => None,
        },
        priority_weights: arches_core::priority::weights(&s.cfg.policy)
            .into_iter()
            .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c, d))
            .collect(),
        iwd: rec.map(|r| r.workdir.clone()).unwrap_or_default(),
        submit_dir: rec.map(|r| r.submit_dir.clone()).unwrap_or_default(),
        executable: rec
            .map(|r| r.executable.clone())
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| {
                s.cfg
                    .home
                    .join(crate::rm::SPOOL_DIR)
                    .join(j.id.to_string())
                    .join("script")
                    .display()
                    .to_string()
            }),
        shell: rec.and_then(|r| r.shell.clone()),
        umask: rec.and_then(|r| r.umask),
        output_file: rec.map(|r| r.stdout.clone()).unwrap_or_default(),
        error_file: rec.map(|r| r.stderr.clone()).unwrap_or_default(),
        join: rec.is_some_and(|r| r.join),
        submit_args: rec.map(|r| r.submit_args.clone()).unwrap_or_default(),
        submit_host: rec.map(|r| r.submit_host.clone()).unwrap_or_default(),
        mail_options: rec.and_then(|r| r.mail_options.clone()),
        notification_address: rec.and_then(|r| r.mail_list.clone()),
        variables: rec.map(|r| r.variables.clone()).unwrap_or_default(),
        messages: rec
            .map(|r| {
                let mut m = r.messages.clone();
                m.extend(crate::staging::job_notes(s, r));
                m
            })
            .unwrap_or_default(),
        staging: rec
            .map(|r| {
                let wait = crate::staging::deferral(s, j.id).filter(|_| j.state == JobState::Idle);
                crate::staging::stage_lines(r, j.data_wait, wait)
            })
            .unwrap_or_default(),
        preemption: pv.lines(s, j),
        layout: job_layout(j),
        gres_units: j
            .run
            .as_ref()
            .filter(|_| j.state.is_active())
            .map(|r| {
                r.gres_units
                    .iter()
                    .filter_map(|u| {
                        Some(arches_api::GresUnitsInfo {
                            node: s.state.node(u.node)?.name.clone(),
                            name: s.state.gres_table().name(u.kind)?.to_string(),
                            units: u.indices(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
        class_limits: class_limits(s, j),
        templates: rec.map(|r| r.templates.clone()).unwrap_or_default(),
        stat_templates: rec.map(|r| r.stat_templates.clone()).unwrap_or_default(),
        virtual_walltime: j
            .run
            .as_ref()
            .filter(|_| j.state.is_active())
            .and_then(|r| r.virtual_walltime),
        start_kind: j.run.as_ref().map(|r| {
            match r.how {
                StartKind::Priority => "Priority",
                StartKind::Reserved => "Reserved",
                StartKind::Backfill => "Backfill",
                StartKind::Forced => "Forced",
            }
            .to_string()
        }),
        array_info: s
            .state
            .array_of(j.id)
            .map(|(a, _)| crate::arrays::array_info(s, a, false)),
        args: rec.map(|r| r.args.clone()).unwrap_or_default(),
    }
}

/// The placement parts of a job's request (API form).
fn job_layout(j: &Job) -> Option<arches_api::JobLayout> {
    let l = j.req.layout.as_deref()?;
    let named = |g: &[(String, u32)]| -> Vec<String> {
        g.iter().map(|(n, c)| format!("{n}:{c}")).collect()
    };
    Some(arches_api::JobLayout {
        gres: named(&l.gres),
        groups: l
            .groups
            .iter()
            .map(|g| arches_api::NodeGroupInfo {
                count: g.count,
                host: g.host.clone(),
                tasks_per_node: g.tasks_per_node,
                features: g.features.clone(),
                gres: named(&g.gres),
            })
            .collect(),
        hosts: l.hosts.clone(),
        node_access: l.access.map(|a| a.as_str().to_string()),
        advres: l.advres.clone(),
        task_request_list: l.trl.iter().map(|o| o.describe()).collect(),
    })
}

/// The per-job limits of the job's class as enforced (Moab's attribute
/// names).
fn class_limits(s: &Snapshot, j: &Job) -> Vec<String> {
    let Some(c) = j
        .cred
        .class
        .as_deref()
        .and_then(|c| s.cfg.policy.classes.get(c))
    else {
        return Vec::new();
    };
    let d = &c.job;
    let wc = |t: i64| arches_core::timespec::format_duration(t);
    let mut out = Vec::new();
    out.extend(c.max_wclimit.map(|t| format!("MAX.WCLIMIT={}", wc(t))));
    out.extend(d.max_procs.map(|n| format!("MAX.PROC={n}")));
    out.extend(d.max_nodes.map(|n| format!("MAX.NODE={n}")));
    out.extend(d.min_procs.map(|n| format!("MIN.PROC={n}")));
    out.extend(d.min_wclimit.map(|t| format!("MIN.WCLIMIT={}", wc(t))));
    if !d.hosts.is_empty() {
        out.push(format!("HOSTLIST={}", d.hosts.join(",")));
    }
    out.extend(d.partition.as_ref().map(|p| format!("PARTITION={p}")));
    out
}

fn components(c: &[arches_core::plan::PriorityComponent]) -> Vec<PriorityComponent> {
    c.iter()
        .map(|c| PriorityComponent {
            component: c.component.to_string(),
            sub: c.sub.to_string(),
            value: c.value,
            contribution: c.contribution,
        })
        .collect()
}

/// showq's cluster summary.
pub fn cluster(s: &Snapshot) -> ClusterSummary {
    let mut c = ClusterSummary::default();
    for (i, n) in s.state.nodes().iter().enumerate() {
        let u = s.state.usage(i as u32);
        c.config_nodes += 1;
        if n.admin == NodeAdminState::Down {
            continue;
        }
        c.up_nodes += 1;
        c.up_procs += n.procs;
        c.alloc_procs += u.procs;
        if u.jobs > 0 {
            c.active_nodes += 1;
        }
    }
    c.idle_nodes = c.up_nodes - c.active_nodes;
    c.idle_procs = c.up_procs.saturating_sub(c.alloc_procs);
    c
}

/// checknode / mdiag -n data; `name` restricts to one node (`ALL`: every node).
pub fn nodes(s: &Snapshot, name: Option<&str>) -> NodesView {
    let mut out = Vec::new();
    let pinned = crate::estimates::pinned_reservations(s);
    let admin_rsv = crate::rsvctl::in_force(s);
    for (i, n) in s.state.nodes().iter().enumerate() {
        if name.is_some_and(|w| !w.eq_ignore_ascii_case("ALL") && w != n.name) {
            continue;
        }
        let id = i as u32;
        let u = s.state.usage(id);
        let on_node = |j: &&Job| {
            j.run
                .as_ref()
                .is_some_and(|r| r.alloc.iter().any(|a| a.node == id))
        };
        let jobs: Vec<&Job> = s.state.active().filter(on_node).collect();
        let mut reservations: Vec<NodeReservation> = jobs
            .iter()
            .map(|j| NodeReservation {
                id: j.id.to_string(),
                kind: "Job".to_string(),
                job_state: Some(j.display_state().as_str().to_string()),
                tasks: task_count(j.run.as_ref().map(|r| r.alloc.as_slice()), id),
                start: j.run.as_ref().map_or(s.now, |r| r.start_time),
                end: j.expected_end(),
            })
            .collect();
        for (r, on) in &admin_rsv {
            if let Some((_, p)) = on.iter().find(|x| x.0 == id) {
                reservations.push(NodeReservation {
                    id: r.id.clone(),
                    kind: "User".to_string(),
                    job_state: None,
                    tasks: *p,
                    start: r.start,
                    end: r.end,
                });
            }
        }
        for r in &pinned {
            if r.alloc.iter().any(|a| a.node == id) {
                reservations.push(NodeReservation {
                    id: r.job.to_string(),
                    kind: "Job".to_string(),
                    job_state: Some("Idle".to_string()),
                    tasks: task_count(Some(&r.alloc), id),
                    start: r.start,
                    end: r.end,
                });
            }
        }
        out.push(NodeInfo {
            name: n.name.clone(),
            state: s
                .state
                .node_state(id)
                .map_or("Unknown", |st| st.as_str())
                .to_string(),
            state_secs: s.now - s.stats.started,
            procs: n.procs,
            procs_used: u.procs,
            mem_mb: n.mem_mb,
            mem_used_mb: u.mem_mb,
            features: n.features.clone(),
            partition: n.partition.clone(),
            classes: s.cfg.policy.classes.keys().cloned().collect(),
            jobs: jobs.iter().map(|j| j.id).collect(),
            load: f64::from(u.procs),
            total_secs: s.now - s.stats.started,
            up_secs: s.now - s.stats.started,
            active_secs: 0,
            reservations,
            rm: s.rm_name.clone(),
            rm_type: s.rm_kind.clone(),
            opsys: None,
            arch: None,
            last_update: s.now,
            gres: node_gres(s, id),
            access_policy: n.access.map(|a| a.as_str().to_string()),
            effective_access_policy: effective_access(s, n, &jobs),
        });
    }
    NodesView {
        now: s.now,
        nodes: out,
        storage: crate::staging::storage_view(s, name),
    }
}

/// A node's generic resources: configured and dedicated units.
fn node_gres(s: &Snapshot, id: u32) -> Vec<arches_api::NodeGres> {
    let cap = s.state.node_gres(id);
    let used = s.state.usage(id).gres;
    let table = s.state.gres_table();
    cap.iter()
        .filter_map(|(k, n)| {
            Some(arches_api::NodeGres {
                name: table.name(k)?.to_string(),
                configured: n,
                used: used.get(k),
            })
        })
        .collect()
}

/// The access policy in force on a node (checknode `EffNodeAccessPolicy:`):
/// a job on it with a policy other than SHARED binds later jobs, else the
/// node's own; `None` for SHARED.
fn effective_access(s: &Snapshot, n: &arches_core::Node, jobs: &[&Job]) -> Option<String> {
    let default = s.cfg.policy.node_access;
    jobs.iter()
        .map(|j| arches_core::access::effective(j.req.access(), n, default))
        .find(|p| !p.shares())
        .or_else(|| Some(n.access.unwrap_or(default)).filter(|p| !p.shares()))
        .map(|p| p.as_str().to_string())
}

fn task_count(alloc: Option<&[arches_core::Alloc]>, node: u32) -> u32 {
    alloc
        .unwrap_or_default()
        .iter()
        .filter(|a| a.node == node)
        .map(|a| a.tasks)
        .sum()
}

/// mdiag -S data.
pub fn scheduler(s: &Snapshot) -> SchedulerView {
    let st = &s.stats;
    SchedulerView {
        pid: std::process::id(),
        now: s.now,
        host: s.host.clone(),
        socket: s.socket.clone(),
        mode: if s.virtual_clock {
            "SIMULATION"
        } else {
            "NORMAL"
        }
        .to_string(),
        started: st.started,
        iterations: st.iterations,
        last_iteration_ms: st.last_ms,
        avg_iteration_ms: if st.iterations > 0 {
            st.total_ms / st.iterations as f64
        } else {
            0.0
        },
        max_iteration_ms: st.max_ms,
        paused: st.paused,
        messages: s
            .cfg
            .warnings
            .iter()
            .chain(&st.store_fault)
            .chain(&st.notices)
            .cloned()
            .collect(),
    }
}

/// mdiag -p data: the core's weight table, the queued jobs' breakdowns as
/// the last iteration computed them (eligible in rank order, then blocked),
/// then the active jobs' current priority (the core's formula at `now`).
pub fn priority(s: &Snapshot) -> PriorityView {
    let jobs = priority_order(s)
        .iter()
        .filter_map(|id| job_priority(s, *id))
        .collect();
    PriorityView {
        jobs,
        ..priority_shell(s)
    }
}

/// mdiag -p data without its jobs (streamed in [`priority_order`]).
pub fn priority_shell(s: &Snapshot) -> PriorityView {
    let weights = arches_core::priority::weights(&s.cfg.policy)
        .into_iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c, d))
        .collect();
    PriorityView {
        now: s.now,
        weights,
        jobs: Vec::new(),
    }
}

/// Whether a queued job is eligible for mdiag -p.
fn priority_eligible(s: &Snapshot, j: &Job) -> bool {
    let d = s.plan.decisions.get(&j.id);
    d.map_or(j.holds.is_empty(), |d| d.eligible) && j.holds.is_empty()
}

/// The jobs of mdiag -p in order: eligible by rank, blocked by rank, then
/// active ones, highest priority first.
pub fn priority_order(s: &Snapshot) -> Vec<arches_core::JobId> {
    let mut queued: Vec<(bool, u32, arches_core::JobId)> = s
        .state
        .queued()
        .map(|j| {
            let rank = s.plan.decisions.get(&j.id).map_or(u32::MAX, |d| d.rank);
            (!priority_eligible(s, j), rank, j.id)
        })
        .collect();
    queued.sort_unstable();
    let policy = policy_with_usage(&s.cfg.policy, s.plan.fairshare.as_ref());
    let mut active: Vec<_> = s
        .state
        .active()
        .map(|j| {
            let b = arches_core::priority::priority(j, &policy, s.now);
            (std::cmp::Reverse((b.system, b.total)), j.id)
        })
        .collect();
    active.sort_unstable();
    queued
        .into_iter()
        .map(|x| x.2)
        .chain(active.into_iter().map(|x| x.1))
        .collect()
}

/// One job's line of mdiag -p (`None`: no such job any more).
pub fn job_priority(s: &Snapshot, id: arches_core::JobId) -> Option<JobPriority> {
    let j = s.state.job(id)?;
    if j.state.is_active() {
        let policy = policy_with_usage(&s.cfg.policy, s.plan.fairshare.as_ref());
        let b = arches_core::priority::priority(j, &policy, s.now);
        return Some(JobPriority {
            id: j.id,
            priority: b.total,
            system: b.system,
            state: j.display_state().as_str().to_string(),
            section: Section::Active,
            components: components(&b.components),
        });
    }
    let d = s.plan.decisions.get(&j.id);
    let eligible = priority_eligible(s, j);
    Some(JobPriority {
        id: j.id,
        priority: j.sys_prio.or(d.map(|d| d.priority.total)).unwrap_or(0),
        system: j.sys_prio.is_some(),
        state: j.display_state().as_str().to_string(),
        section: if eligible {
            Section::Eligible
        } else {
            Section::Blocked
        },
        components: d
            .map(|d| components(&d.priority.components))
            .unwrap_or_default(),
    })
}

/// showres data: active jobs and the plan's priority reservations, pinned
/// to nodes by the core.
pub fn reservations(s: &Snapshot) -> ReservationsView {
    let mut out = Vec::new();
    for j in s.state.active() {
        let Some(r) = j.run.as_ref() else { continue };
        out.push(ReservationInfo {
            id: j.id.to_string(),
            kind: "Job".to_string(),
            job_state: Some(j.display_state().as_str().to_string()),
            start: r.start_time,
            end: j.expected_end(),
            nodes: shares(s, &r.alloc),
            procs: r.procs(),
            owner: Some(j.cred.user.to_string()),
            flags: Vec::new(),
            acl: Vec::new(),
            group: None,
        });
    }
    for r in crate::estimates::pinned_reservations(s) {
        let Some(j) = s.state.job(r.job) else {
            continue;
        };
        out.push(ReservationInfo {
            id: r.job.to_string(),
            kind: "Job".to_string(),
            job_state: Some(j.display_state().as_str().to_string()),
            start: r.start,
            end: r.end,
            nodes: shares(s, &r.alloc),
            procs: if r.alloc.is_empty() {
                j.procs()
            } else {
                r.alloc.iter().map(|a| a.procs).sum()
            },
            owner: Some(j.cred.user.to_string()),
            flags: Vec::new(),
            acl: Vec::new(),
            group: None,
        });
    }
    // Administrative (mrsvctl) and standing (SRCFG) reservations.
    out.extend(crate::rsvctl::infos(s));
    ReservationsView {
        now: s.now,
        reservations: out,
    }
}

/// The running configuration.
pub fn config(s: &Snapshot) -> ConfigView {
    ConfigView {
        file: s.cfg.file.as_ref().map(|f| f.display().to_string()),
        parameters: s.cfg.parameters.clone(),
        diagnostics: s
            .cfg
            .warnings
            .iter()
            .map(|w| ConfigDiagnostic {
                file: s
                    .cfg
                    .file
                    .as_ref()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default(),
                line: 0,
                severity: "WARNING".to_string(),
                message: w.clone(),
            })
            .collect(),
    }
}

/// mdiag -u/-g/-a/-c/-q data: configured credentials and those in use.
pub fn credentials(s: &Snapshot) -> CredentialsView {
    use std::collections::BTreeMap;
    let p = &s.cfg.policy;
    // (kind, name) -> info
    let mut map: BTreeMap<(&'static str, String), CredentialInfo> = BTreeMap::new();
    fn entry<'m>(
        map: &'m mut BTreeMap<(&'static str, String), CredentialInfo>,
        kind: &'static str,
        name: &str,
    ) -> &'m mut CredentialInfo {
        map.entry((kind, name.to_string()))
            .or_insert_with(|| CredentialInfo {
                kind: kind.to_string(),
                name: name.to_string(),
                ..CredentialInfo::default()
            })
    }
    // Moab always has the DEFAULT QoS.
    entry(&mut map, "qos", "DEFAULT");
    for (kind, creds) in [
        ("user", &p.users),
        ("group", &p.groups),
        ("account", &p.accounts),
    ] {
        for (name, c) in creds {
            let e = entry(&mut map, kind, name);
            e.priority = c.priority;
            e.limits = limits(&c.limits);
            e.qdef = c.qdef.clone();
            e.qlist = c.qlist.clone();
            e.qlist_marker = list_marker(c.qlist_kind);
        }
    }
    for (name, c) in &p.classes {
        let e = entry(&mut map, "class", name);
        e.priority = c.priority;
        e.limits = limits(&c.limits);
        e.qdef = c.qdef.clone();
        e.qlist = c.qlist.clone();
        e.qlist_marker = list_marker(c.qlist_kind);
        e.job_flags = c.job_flags.iter().map(|f| f.to_string()).collect();
        e.job_limits = [
            ("MAX.NODE", c.job.max_nodes.map(u64::from)),
            ("MAX.PROC", c.job.max_procs.map(u64::from)),
            ("MAX.WCLIMIT", c.max_wclimit.map(|w| w.max(0) as u64)),
            ("MIN.PROC", c.job.min_procs.map(u64::from)),
        ]
        .into_iter()
        .filter_map(|(n, v)| v.map(|v| (n.to_string(), v)))
        .collect();
        if let Some(w) = c.default_wclimit {
            e.attributes.push((
                "DEFAULT.WCLIMIT".to_string(),
                arches_config::value::format_duration(w),
            ));
        }
        if let Some(w) = c.max_wclimit {
            e.attributes.push((
                "MAX.WCLIMIT".to_string(),
                arches_config::value::format_duration(w),
            ));
        }
    }
    for (name, q) in &p.qos {
        let e = entry(&mut map, "qos", name);
        e.priority = q.priority;
        e.limits = limits(&q.limits);
        e.flags = q.flags.iter().map(|f| f.to_string()).collect();
        e.job_flags = q.job_flags.iter().map(|f| f.to_string()).collect();
        e.qt_weight = q.qt_weight;
        e.xf_weight = q.xf_weight;
        e.qt_target = q.qt_target.unwrap_or(0);
        e.xf_target = q.xf_target_hundredths.unwrap_or(0) as f64 / 100.0;
    }
    for j in s.state.jobs().filter(|j| !j.state.is_finished()) {
        let c = &j.cred;
        let names = [
            ("user", Some(&c.user)),
            ("group", Some(&c.group)),
            ("account", c.account.as_ref()),
            ("class", c.class.as_ref()),
            ("qos", c.qos.as_ref()),
        ];
        for (kind, name) in names {
            let Some(name) = name else { continue };
            let e = entry(&mut map, kind, name);
            if j.state.is_active() {
                e.active_jobs += 1;
                e.active_procs += j.procs();
                if let Some((_, _, left)) = active_usage(j, s.now, s.now) {
                    e.active_ps += left as u64;
                }
            }
        }
    }
    let mut credentials: Vec<CredentialInfo> = map.into_values().collect();
    // Nodes and outstanding wall-clock seconds as the limits count them.
    let usage = arches_core::eligibility::Usage::from_state(&s.state, p, s.now);
    for c in &mut credentials {
        let t = usage.get(&c.kind, &c.name);
        c.active_nodes = t.nodes as u32;
        c.active_wc = t.wc;
        if let Some(k) = CredKind::parse(&c.kind) {
            c.fs_target = fs_target(&s.cfg, k, &c.name).unwrap_or(0.0);
        }
    }
    let pv = crate::preempt::PreemptView::default();
    for c in &mut credentials {
        if c.kind == "qos" {
            c.preemption = pv.qos_lines(s, &c.name);
        }
    }
    // Users' Unix groups (mcredctl -q accessto group:NAME).
    for c in credentials.iter_mut().filter(|c| c.kind == "user") {
        if let Some(u) = crate::ident::user_by_name(&c.name) {
            let mut g: Vec<String> = crate::ident::groups_of(&u)
                .into_iter()
                .map(crate::ident::group_name)
                .collect();
            g.sort();
            g.dedup();
            c.unix_groups = g;
        }
    }
    let historical = crate::showq::historical(s, &credentials);
    let mut admin_users: Vec<Vec<String>> = s.cfg.moab.admins[..4].to_vec();
    // SAFETY: geteuid(2) cannot fail.
    let daemon_uid = unsafe { libc::geteuid() };
    let primary = ["root".to_string()]
        .into_iter()
        .chain(crate::ident::user_by_uid(daemon_uid).map(|u| u.name));
    for u in primary {
        if !admin_users[0].contains(&u) {
            admin_users[0].insert(0, u);
        }
    }
    CredentialsView {
        credentials,
        historical,
        admin_users,
        viewer: None,
    }
}

/// Moab's `MQALType` suffix of a QoS list kind.
fn list_marker(k: arches_core::policy::QosListKind) -> String {
    use arches_core::policy::QosListKind;
    match k {
        QosListKind::Or => "",
        QosListKind::And => "&",
        QosListKind::Only => "^",
    }
    .to_string()
}

fn limits(l: &Limits) -> Vec<(String, u64, u64)> {
    [
        ("MAXJOB", l.max_job),
        ("MAXPROC", l.max_proc),
        ("MAXNODE", l.max_node),
        ("MAXWC", l.max_wc),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.map(|v| (n.to_string(), v.soft, v.hard)))
    .collect()
}

/// The fairshare window of the configuration (`FSINTERVAL`, `FSDEPTH`,
/// `FSDECAY`, `FSPOLICY`) on the machine of `state` (its processors and
/// memory, for processor-equivalents).
pub fn fs_window(cfg: &crate::config::DaemonConfig, state: &arches_core::State) -> FsWindow {
    cfg.moab.fairshare.window_for(state)
}

/// `FSTARGET=` of a credential as configured for it.
pub fn fs_target_of(
    cfg: &crate::config::DaemonConfig,
    kind: CredKind,
    name: &str,
) -> Option<arches_core::fairshare::FsTarget> {
    let p = &cfg.policy;
    match kind {
        CredKind::User => p.users.get(name).and_then(|c| c.fs_target),
        CredKind::Group => p.groups.get(name).and_then(|c| c.fs_target),
        CredKind::Account => p.accounts.get(name).and_then(|c| c.fs_target),
        CredKind::Class => p.classes.get(name).and_then(|c| c.fs_target),
        CredKind::Qos => p.qos.get(name).and_then(|c| c.fs_target),
        CredKind::Template => None,
    }
}

/// `FSTARGET=` of a credential: its value (percent; processor-seconds for
/// an absolute cap).
pub fn fs_target(cfg: &crate::config::DaemonConfig, kind: CredKind, name: &str) -> Option<f64> {
    fs_target_of(cfg, kind, name).map(|t| t.value())
}

/// The fairshare usage at `now` as the priority uses it: completed jobs
/// plus the running ones up to `now`, decayed (`FSDECAY`).
pub fn fs_usage(
    cfg: &crate::config::DaemonConfig,
    acc: &arches_core::accounting::Accounting,
    state: &arches_core::State,
    now: i64,
) -> arches_core::fairshare::FsUsage {
    let w = fs_window(cfg, state);
    acc.fairshare(state.active(), &w, now).decayed(w.decay)
}

/// The scheduling policy with the fairshare usage of the iteration when
/// fairshare is active (a copy), else the configuration's.
pub fn policy_with_usage<'a>(
    policy: &'a arches_core::Policy,
    usage: Option<&std::sync::Arc<arches_core::fairshare::FsUsage>>,
) -> std::borrow::Cow<'a, arches_core::Policy> {
    match usage {
        Some(u) if arches_core::fairshare::active(policy) => {
            let mut p = policy.clone();
            p.fairshare.set_usage(u.clone());
            std::borrow::Cow::Owned(p)
        }
        _ => std::borrow::Cow::Borrowed(policy),
    }
}

pub(crate) fn stat_totals(t: &Totals) -> StatTotals {
    StatTotals {
        jobs: t.jobs,
        successful: t.successful,
        ps_requested: t.ps_requested,
        ps_dedicated: t.ps_dedicated,
        xf_sum: t.xf_sum,
        xf_max: t.xf_max,
        qtime_sum: t.qtime_sum,
        qtime_max: t.qtime_max,
        wcacc_sum: t.wcacc_sum,
        wcacc_jobs: t.wcacc_jobs,
        bypass_sum: t.bypass_sum,
        bypass_max: t.bypass_max,
        backfilled: t.backfilled,
        ps_backfilled: t.ps_backfilled,
        ps_utilized: t.ps_utilized,
        ps_measured: t.ps_measured,
    }
}

/// showstats data: the durable accounting of completed jobs plus the
/// running jobs counted at `now`.
pub fn stats(s: &Snapshot) -> StatsView {
    use std::collections::BTreeMap;
    let st = &s.stats;
    let acc = &s.accounting;
    let since = acc.since.min(s.now);
    let c = cluster(s);
    let mut creds: BTreeMap<(CredKind, String), CredStats> = BTreeMap::new();
    let entry = |kind: CredKind, name: &str| -> CredStats {
        CredStats {
            kind: kind.as_str().to_string(),
            name: name.to_string(),
            id: match kind {
                CredKind::User => crate::ident::user_by_name(name).map(|u| u.uid),
                CredKind::Group => crate::ident::gid_by_name(name),
                _ => None,
            },
            fs_target: fs_target(&s.cfg, kind, name),
            ..CredStats::default()
        }
    };
    for ((k, n), t) in &acc.creds {
        let mut e = entry(*k, n);
        e.completed = stat_totals(t);
        creds.insert((*k, n.clone()), e);
    }
    // Every configured statistics template has a row (showstats -j -v),
    // counted or not.
    let templates = &s.cfg.policy.templates;
    for t in templates.stat_templates() {
        creds
            .entry((CredKind::Template, t.clone()))
            .or_insert_with(|| entry(CredKind::Template, &t));
    }
    let mut job_templates: Vec<String> = templates
        .templates
        .keys()
        .cloned()
        .chain(templates.stat_templates())
        .collect();
    job_templates.sort();
    job_templates.dedup();
    let (mut active_ded, mut active_bf, mut active_bf_ded) = (0.0, 0u32, 0.0);
    for j in s.state.active() {
        let Some((procs, ded, left)) = active_usage(j, since, s.now) else {
            continue;
        };
        active_ded += ded;
        if j.run.as_ref().is_some_and(|r| r.how == StartKind::Backfill) {
            active_bf += 1;
            active_bf_ded += ded;
        }
        let stats = s
            .exec
            .get(&j.id)
            .map(|r| r.stat_templates.clone())
            .unwrap_or_default();
        let keys = job_creds(j)
            .into_iter()
            .chain(stats.into_iter().map(|t| (CredKind::Template, t)));
        for key in keys {
            let e = creds
                .entry(key.clone())
                .or_insert_with(|| entry(key.0, &key.1));
            e.active_jobs += 1;
            e.active_procs += procs;
            e.active_ps_remaining += left;
            e.active_ps_dedicated += ded;
        }
    }
    let (mut eligible, mut idle, mut backlog) = (0u32, 0u32, 0.0f64);
    for j in s.state.queued() {
        let sec = summary(s, j).section;
        if sec == Section::Eligible {
            eligible += 1;
        }
        if j.holds.is_empty() {
            idle += 1;
        }
        backlog += f64::from(j.procs()) * j.walltime.unwrap_or(0) as f64;
    }
    let total = &acc.total;
    StatsView {
        now: s.now,
        since,
        started: st.started,
        iterations: st.iterations,
        jobs_completed: total.jobs,
        jobs_backfilled: total.backfilled,
        proc_seconds_used: total.ps_dedicated + active_ded,
        proc_seconds_available: f64::from(c.up_procs) * (s.now - since).max(0) as f64,
        wallclock_accuracy: total.wc_accuracy(),
        avg_wait_secs: total.avg_qtime(),
        eligible_jobs: eligible,
        idle_jobs: idle,
        active_jobs: s.state.active_count() as u32,
        preempted_jobs: st.jobs_preempted,
        up_procs: c.up_procs,
        active_procs: c.alloc_procs,
        up_nodes: c.up_nodes,
        active_nodes: c.active_nodes,
        backlog_secs: if c.up_procs > 0 {
            backlog / f64::from(c.up_procs)
        } else {
            0.0
        },
        active_backfilled: active_bf,
        active_ps_backfilled: active_bf_ded,
        completed: stat_totals(total),
        credentials: creds.into_values().collect(),
        grid_procs: GRID_PROCS.to_vec(),
        grid_times: GRID_TIMES.to_vec(),
        grid: acc.grid.iter().map(stat_totals).collect(),
        min_utilization: st.min_util.map(|m| m.0),
        min_utilization_iteration: st.min_util.map(|m| m.1),
        avg_backlog_secs: (st.backlog_samples > 0)
            .then(|| st.backlog_sum / st.backlog_samples as f64),
        window: None,
        nodes: Vec::new(),
        job_templates,
    }
}

/// mdiag -f data: fairshare usage per interval, running jobs included.
pub fn fairshare(s: &Snapshot) -> FairshareView {
    let f = &s.cfg.moab.fairshare;
    let w = fs_window(&s.cfg, &s.state);
    let usage = s.accounting.fairshare(s.state.active(), &w, s.now);
    let mut credentials: Vec<FairshareCred> = usage
        .creds
        .iter()
        .map(|((k, n), u)| FairshareCred {
            kind: k.as_str().to_string(),
            name: n.clone(),
            target: fs_target(&s.cfg, *k, n),
            target_kind: fs_target_of(&s.cfg, *k, n)
                .map(|t| t.kind.suffix().to_string().trim().to_string())
                .unwrap_or_default(),
            percent: FairshareUsage::decayed_percent(u, &usage.total, w.decay),
            intervals: u
                .iter()
                .zip(&usage.total)
                .map(|(a, t)| (*t > 0.0 && *a > 0.0).then(|| a * 100.0 / t))
                .collect(),
        })
        .collect();
    // Credentials with a target but no usage are shown too.
    let p = &s.cfg.policy;
    let targets = p
        .users
        .iter()
        .map(|(n, c)| (CredKind::User, n, c.fs_target))
        .chain(
            p.groups
                .iter()
                .map(|(n, c)| (CredKind::Group, n, c.fs_target)),
        )
        .chain(
            p.accounts
                .iter()
                .map(|(n, c)| (CredKind::Account, n, c.fs_target)),
        )
        .chain(p.qos.iter().map(|(n, c)| (CredKind::Qos, n, c.fs_target)))
        .chain(
            p.classes
                .iter()
                .map(|(n, c)| (CredKind::Class, n, c.fs_target)),
        );
    for (k, n, t) in targets {
        let Some(t) = t else { continue };
        if !credentials
            .iter()
            .any(|c| c.kind == k.as_str() && &c.name == n)
        {
            credentials.push(FairshareCred {
                kind: k.as_str().to_string(),
                name: n.clone(),
                target: Some(t.value()),
                target_kind: t.kind.suffix().to_string().trim().to_string(),
                percent: 0.0,
                intervals: vec![None; w.depth as usize],
            });
        }
    }
    let trees = fairshare_trees(&s.cfg.policy, &usage.decayed(w.decay));
    let members = usage
        .pairs
        .iter()
        .filter_map(|((a, u), v)| {
            let acct = usage.creds.get(&(CredKind::Account, a.clone()))?;
            Some(arches_api::FairshareMember {
                account: a.clone(),
                user: u.clone(),
                percent: FairshareUsage::decayed_percent(v, acct, w.decay),
                intervals: v
                    .iter()
                    .zip(acct)
                    .map(|(x, t)| (*t > 0.0 && *x > 0.0).then(|| x * 100.0 / t))
                    .collect(),
                total_percent: FairshareUsage::decayed_percent(v, &usage.total, w.decay),
                total_intervals: v
                    .iter()
                    .zip(&usage.total)
                    .map(|(x, t)| (*t > 0.0 && *x > 0.0).then(|| x * 100.0 / t))
                    .collect(),
            })
        })
        .collect();
    FairshareView {
        now: s.now,
        policy: f.policy.map(|p| p.to_string()),
        depth: w.depth,
        interval: w.interval,
        decay: w.decay,
        total: usage.total.iter().map(|t| t / 3600.0).collect(),
        credentials,
        trees,
        members,
    }
}

/// The share trees (`FSTREE`) evaluated under `usage` (mdiag -f,
/// showstats -T): the global tree, then each partition's.
pub fn fairshare_trees(
    policy: &arches_core::Policy,
    usage: &arches_core::fairshare::FsUsage,
) -> Vec<arches_api::FairshareTree> {
    let fs = &policy.fairshare;
    let Some(tree) = fs.tree.as_ref() else {
        return Vec::new();
    };
    let k = arches_core::fstree::tree_constant(fs.depth, fs.decay);
    let order = tree.preorder();
    let mut pars: Vec<Option<String>> = vec![None];
    pars.extend(tree.partitions().into_iter().map(Some));
    pars.into_iter()
        .map(|par| {
            let st = tree.evaluate(usage, par.as_deref(), k, fs.tier_multiplier);
            let nodes = order
                .iter()
                .map(|&i| {
                    let n = &tree.nodes[i];
                    arches_api::FairshareTreeNode {
                        depth: tree.depth(i) as u32,
                        name: n.name.clone(),
                        node_type: n.type_name().to_string(),
                        usage_shares: st.used_shares[i],
                        shares: st.shares[i],
                        total_shares: n.parent.map_or(st.shares[i], |p| st.child_shares[p]),
                        usage: st.usage[i] / 3600.0,
                        factor: if n.cred.is_some() { st.factor[i] } else { 0.0 },
                    }
                })
                .collect();
            arches_api::FairshareTree {
                partition: par.unwrap_or_else(|| "ALL".to_string()),
                tiers: tree.tiers() as u32,
                nodes,
            }
        })
        .collect()
}
