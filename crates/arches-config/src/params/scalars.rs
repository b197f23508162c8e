//! Scalar parameters: `NAME VALUE` (optionally `NAME[partition]` or
//! `NAME[bucket]`).

use arches_core::policy::{
    BackfillMetric, BackfillPolicy, BfPriorityPolicy, DeadlinePolicy, NodeAllocationPolicy,
    PreemptPolicy, ReservationPolicy, VirtualWalltimeConflictPolicy,
};
use arches_core::HoldType;

use super::{IndexKind, ParamDef, Setter, Shape, Site, COUNT, INT, POSITIVE};
use crate::config::Config;
use crate::enums::{
    BfOrder, DataStageModel, FsPolicy, JobNodeMatchPolicy, NodeAccessPolicy, PredictionCorrection,
    PredictionScope, RuntimePrediction, SchedMode,
};
use crate::value::{Value, ValueType};

pub(super) const fn param(
    name: &'static str,
    ty: ValueType,
    index: IndexKind,
    default: Option<&'static str>,
    doc: &'static str,
    used_by: &'static str,
    set: Setter,
) -> ParamDef {
    ParamDef {
        name,
        aliases: &[],
        shape: Shape::Scalar { ty, index, set },
        default,
        doc,
        used_by,
    }
}

/// A priority weight or cap the core's `PriorityWeights` has no field for.
const fn extra_weight(name: &'static str, doc: &'static str) -> ParamDef {
    param(
        name,
        INT,
        IndexKind::Partition,
        Some("0"),
        doc,
        "priority",
        |c, s, v| {
            match v.integer()? {
                0 => c.extra_weights.remove(s.name),
                w => c.extra_weights.insert(s.name, w),
            };
            Ok(())
        },
    )
}

/// Sets the host or the port part of `SCHEDCFG SERVER=` (legacy SERVERHOST/SERVERPORT).
fn set_server_part(c: &mut Config, host: Option<&str>, port: Option<i64>) {
    let current = c.sched.server.clone().unwrap_or_default();
    let (cur_host, cur_port) = match current.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), Some(p.to_string())),
        None => (current, None),
    };
    let h = host.map(str::to_string).unwrap_or(cur_host);
    let p = port.map(|p| p.to_string()).or(cur_port);
    c.sched.server = Some(match p {
        Some(p) => format!("{h}:{p}"),
        None => h,
    });
}

/// Sets the legacy `ADMINn` list (level `n`); root always stays level 1.
pub(super) fn set_admin(c: &mut Config, level: usize, v: &Value) -> Result<(), String> {
    let mut users = v.list()?.to_vec();
    if level == 0 && !users.iter().any(|u| u == "root") {
        users.insert(0, "root".to_string());
    }
    c.admins[level] = users;
    Ok(())
}

fn bucket(s: Site<'_>) -> Result<u32, String> {
    s.index
        .parse()
        .map_err(|_| format!("invalid bucket index '{}'", s.index))
}

/// Every scalar parameter.
pub(super) static SCALARS: &[ParamDef] = &[
    // ---- backfill and reservations
    ParamDef {
        aliases: &["BACKFILLTYPE"],
        ..param("BACKFILLPOLICY", ValueType::Choice(core_choices!(BackfillPolicy)), IndexKind::Partition,
            Some("FIRSTFIT"), "Backfill algorithm: FIRSTFIT starts every job that fits without delaying \
a reservation, in queue order (see BFORDER); BESTFIT the best BACKFILLMETRIC first; GREEDY the \
combination with the largest total BACKFILLMETRIC — the search is bounded to the first 16 candidates \
that fit on their own and 4,096 search steps per iteration, and jobs with node constraints (nodes=, \
ppn, memory, features) stay out of it and are tried first-fit afterwards; PREEMPT starts backfill \
jobs optimistically; NONE disables backfill.", "backfill",
            |c, _, v| { c.policy.backfill = v.parse_choice()?; Ok(()) })
    },
    param("BACKFILLMETRIC", ValueType::Choice(core_choices!(BackfillMetric, ["PE", "PESECONDS"])), IndexKind::Partition,
        Some("PROCS"), "What BESTFIT/GREEDY backfill maximises.", "backfill",
        |c, _, v| { c.policy.backfill_metric = v.parse_choice()?; Ok(()) }),
    param("BACKFILLDEPTH", COUNT, IndexKind::Partition, Some("0"),
        "Idle jobs backfill evaluates per iteration (0 = all).", "backfill",
        |c, _, v| { c.policy.backfill_depth = v.u32()?; Ok(()) }),
    param("BFCHUNKDURATION", ValueType::Duration, IndexKind::None, Some("0"),
        "Time processors freed by a running job are held for jobs of at least BFCHUNKSIZE, \
counted from the last time a job gave processors back (0 = off). Active only while a job of \
BFCHUNKSIZE or more is blocked; FIRSTFIT only.", "backfill",
        |c, _, v| { c.policy.bf_chunk_duration = v.duration()?; Ok(()) }),
    param("BFCHUNKSIZE", COUNT, IndexKind::None, Some("0"),
        "Minimum job size (procs) allowed to use chunked resources.", "backfill",
        |c, _, v| { c.policy.bf_chunk_size = v.u32()?; Ok(()) }),
    param("BFPRIORITYPOLICY", ValueType::Choice(core_choices!(BfPriorityPolicy)), IndexKind::None,
        Some("NONE"), "Order of backfill candidates / which backfill job PREEMPT backfill preempts.", "backfill",
        |c, _, v| { c.policy.bf_priority_policy = v.parse_choice()?; Ok(()) }),
    param("BFVIRTUALWALLTIMESCALINGFACTOR", ValueType::Float, IndexKind::Partition, Some("0"),
        "A backfill job that does not fit with its wall-clock limit is tried again with the limit \
scaled by this factor (0 = disabled; FIRSTFIT/BESTFIT/GREEDY, beyond the reservation depth). It is \
planned to end when the scaled (virtual) limit expires; then its real limit is restored (at that \
iteration: the daemon wakes for it). It never overlaps an administrative or standing reservation \
with either limit; the real limit stays the kill limit.", "backfill",
        |c, _, v| {
            let f = v.float()?;
            c.policy.bf_virtual_walltime_factor = (f > 0.0).then_some(f);
            Ok(())
        }),
    param("BFVIRTUALWALLTIMECONFLICTPOLICY",
        ValueType::Choice(core_choices!(VirtualWalltimeConflictPolicy)), IndexKind::None, Some("NONE"),
        "When a scaled backfill job's virtual limit expires and its real limit overlaps a priority \
reservation: NONE reschedules the overlapped reservations; PREEMPT requeues the scaled job \
(checkjob shows why).", "backfill",
        |c, _, v| { c.policy.bf_virtual_walltime_conflict = v.parse_choice()?; Ok(()) }),
    param("BFORDER", ValueType::Choice(core_choices!(BfOrder)), IndexKind::None, Some("PRIORITY"),
        "Arches: the order in which backfill considers its candidates. PRIORITY (Moab's behaviour): \
         priority order (FIRSTFIT is then exactly pyss's EASY). SHORTESTPREDICTEDFIRST: shortest planning \
         duration first, that is the predicted run time under RUNTIMEPREDICTION USERMEAN2, else the \
         walltime (shortest-job backfill; with USERMEAN2 this is EASY++, Tsafrir, Etsion & Feitelson \
         2007). WIDESTWINDOWFIRST: FIRSTFIT traverses the backfill windows widest first (Moab §8.2.2: a \
         short wide job may start before a higher-priority long narrow one). Only the order changes: a \
         candidate still starts only where it fits without delaying a reservation. Example: BFORDER \
         SHORTESTPREDICTEDFIRST.", "backfill",
        |c, _, v| { c.bf_order = v.parse_choice()?; Ok(()) }),
    param("RUNTIMEPREDICTION", ValueType::Choice(core_choices!(RuntimePrediction)), IndexKind::None,
        Some("NONE"),
        "Arches: the run time the scheduler plans each job with. NONE: its walltime. USERMEAN2: the \
         mean of the same user's last two completed run times (Tsafrir, Etsion & Feitelson 2007), \
         rounded down to whole seconds, at least 1 s and never above the walltime; until the user \
         has two completed jobs the walltime is used, and queued jobs are predicted again whenever \
         their user's history changes. Reservations, backfill windows, showstart and showbf use \
         the prediction (PREDICTIONSCOPE RUNNING: for running jobs only). When a running job \
         outlives its prediction it is corrected as PREDICTIONCORRECTION says: by default extended \
         to the job's elapsed time plus 1 minute, then plus 5, 15 and 30 minutes, 1, 2, 5, 10, 20, \
         50 and 100 hours at each further expiry (never above the walltime). The walltime stays \
         the kill limit: no job is stopped at its prediction. The daemon keeps the history across \
         restarts (arches.db). Example: RUNTIMEPREDICTION USERMEAN2 with BFORDER \
         SHORTESTPREDICTEDFIRST is EASY++; moab simulate --runtime-prediction usermean2 --bf-order \
         shortestpredictedfirst measures it on a trace (BENCHMARKS.md).",
        "backfill",
        |c, _, v| { c.runtime_prediction = v.parse_choice()?; Ok(()) }),
    param("PREDICTIONCORRECTION", ValueType::Choice(core_choices!(PredictionCorrection)),
        IndexKind::None, Some("STEPWISE"),
        "Arches, with RUNTIMEPREDICTION USERMEAN2: what happens when a running job outlives its \
         predicted run time. STEPWISE: the prediction is extended to the elapsed time plus 1 \
         minute, then 5, 15 and 30 minutes, 1, 2, 5, 10, 20, 50 and 100 hours at each further \
         expiry (never above the walltime). WALLTIME: the job is planned with its walltime from \
         then on, as pyss's EASY++ does (on SDSC-SP2 this backfills more and lowers the average \
         wait and bounded slowdown, at the price of a longer maximum wait; BENCHMARKS.md). \
         Either way the walltime stays the kill limit. Example: PREDICTIONCORRECTION WALLTIME.",
        "backfill",
        |c, _, v| { c.prediction_correction = v.parse_choice()?; Ok(()) }),
    param("PREDICTIONSCOPE", ValueType::Choice(core_choices!(PredictionScope)), IndexKind::None,
        Some("ALL"),
        "Arches, with RUNTIMEPREDICTION USERMEAN2: which jobs are planned with their predicted \
         run time. ALL: running and queued jobs (EASY++: reservations and backfill windows follow \
         the predictions, so a backfilled job that outlives its prediction can delay a \
         reservation). RUNNING: running jobs only; queued jobs keep their walltime when they are \
         reserved or backfilled, so no backfilled job can delay a reservation (as with EASY), \
         while the prediction still orders candidates under BFORDER SHORTESTPREDICTEDFIRST. \
         Example: PREDICTIONSCOPE RUNNING.",
        "backfill",
        |c, _, v| {
            c.policy.estimates_running_only = v.parse_choice::<PredictionScope>()?
                == PredictionScope::Running;
            Ok(())
        }),
    param("PREDICTIONGUARD", ValueType::Duration, IndexKind::None, Some("0"),
        "Arches, with RUNTIMEPREDICTION USERMEAN2: a starvation guard (0 = off). Once a job holding \
         a reservation has waited this long since its submission, each iteration is planned with \
         every job's walltime, as EASY is (the predictions still order backfill candidates under \
         BFORDER SHORTESTPREDICTEDFIRST), until it starts: its reservation follows the running \
         jobs' walltimes and no backfilled job may delay it on the strength of a prediction, so it \
         starts no later than EASY would promise. Jobs that have waited less are planned with their \
         predictions as PREDICTIONSCOPE says. On the KTH, SDSC-SP2 and CTC traces 24 hours keeps \
         EASY++'s maximum wait within 9-15% of EASY's (instead of up to twice it); with \
         XFACTORWEIGHT 30 and QUEUETIMEWEIGHT 1 it cuts the bounded slowdown by 37-44% \
         (BENCHMARKS.md). Example: PREDICTIONGUARD 24:00:00.",
        "backfill",
        |c, _, v| {
            let d = v.duration()?;
            c.policy.prediction_guard = (d > 0).then_some(d);
            Ok(())
        }),
    param("RESERVATIONDEPTH", COUNT, IndexKind::Bucket, Some("1"),
        "Priority reservations made in the bucket (RESERVATIONDEPTH[i]).", "reservations",
        |c, s, v| {
            let b = bucket(s)?;
            c.record.buckets.entry(b).or_default().depth = Some(v.u32()?);
            Ok(())
        }),
    param("RESERVATIONQOSLIST", ValueType::List, IndexKind::Bucket, Some("[ALL]"),
        "QoS names sharing the bucket (RESERVATIONQOSLIST[i]), or [ALL].", "reservations",
        |c, s, v| {
            let b = bucket(s)?;
            let list = v.list()?;
            let all = list.is_empty() || list.iter().any(|q| q.eq_ignore_ascii_case("[ALL]") || q.eq_ignore_ascii_case("ALL"));
            c.record.buckets.entry(b).or_default().qos = (!all).then(|| list.to_vec());
            Ok(())
        }),
    param("RESERVATIONPOLICY", ValueType::Choice(core_choices!(ReservationPolicy, ["DEFAULT"])), IndexKind::Partition,
        Some("CURRENTHIGHEST"), "Which idle jobs keep priority reservations.", "reservations",
        |c, _, v| { c.policy.reservation_policy = v.parse_choice()?; Ok(()) }),
    param("RESERVATIONRETRYTIME", ValueType::Duration, IndexKind::None, Some("00:01:00"),
        "How long a job that failed to start in its reservation keeps retrying.", "reservations",
        |c, _, v| { c.reservation_retry_time = v.duration()?; Ok(()) }),
    param("JOBRETRYTIME", ValueType::Duration, IndexKind::None, Some("00:01:00"),
        "With GUARANTEEDPREEMPTION: how long the resources freed for a preemptor stay locked for it once freed, also across a start that fails (a failed start is retried at the next iteration).", "preemption",
        |c, _, v| { c.policy.job_retry_time = v.duration()?; Ok(()) }),
    param("NODEALLOCATIONPOLICY", ValueType::Choice(core_choices!(NodeAllocationPolicy, ["LOCAL", "FASTEST"])),
        IndexKind::Partition, Some("LASTAVAILABLE"), "How nodes are chosen for a job: FIRSTAVAILABLE \
(lowest index first), LASTAVAILABLE, MINRESOURCE (smallest nodes first), CONTIGUOUS (consecutive \
nodes), PRIORITY (highest NODECFG PRIORITY first). MAXBALANCE and CPULOAD need node speeds and \
loads Arches does not track: they allocate as FIRSTAVAILABLE (mdiag -C warns).", "placement",
        |c, _, v| { c.policy.node_allocation = v.parse_choice()?; Ok(()) }),
    param("RMPOLLINTERVAL", ValueType::Duration, IndexKind::None, Some("00:00:30"),
        "Longest time between scheduling iterations.", "daemon",
        |c, _, v| { c.policy.rm_poll_interval = v.duration()?; Ok(()) }),
    // ---- preemption
    param("PREEMPTPOLICY", ValueType::Choice(core_choices!(PreemptPolicy, ["OVERCOMMIT", "MIGRATE"])), IndexKind::None,
        Some("REQUEUE"), "How preemptees are preempted; escalates by what each job allows: SUSPEND (SUSPENDABLE) → CHECKPOINT (CHECKPOINT) → REQUEUE (RESTARTABLE) → CANCEL.", "preemption",
        |c, _, v| { c.policy.preempt_policy = v.parse_choice()?; Ok(()) }),
    param("JOBPREEMPTMINACTIVETIME", ValueType::Duration, IndexKind::None, Some("0"),
        "A job must have run this long since it started or was last resumed before it may be preempted (0 = no minimum).", "preemption",
        |c, _, v| { c.policy.job_preempt_min_active = v.duration()?; Ok(()) }),
    param("JOBPREEMPTMAXACTIVETIME", ValueType::Duration, IndexKind::None, Some("0"),
        "A job that has run longer than this is no longer preemptible (0 = no maximum).", "preemption",
        |c, _, v| { c.policy.job_preempt_max_active = v.duration()?; Ok(()) }),
    param("GUARANTEEDPREEMPTION", ValueType::Boolean, IndexKind::None, Some("FALSE"),
        "The resources freed for a preemptor stay locked for it until it starts, also when its start fails, for up to JOBRETRYTIME after they were freed.", "preemption",
        |c, _, v| { c.policy.guaranteed_preemption = v.boolean()?; Ok(()) }),
    // ---- priority weights the core uses
    param("SERVICEWEIGHT", INT, IndexKind::Partition, Some("1"), "Service component weight.", "priority",
        |c, _, v| { c.policy.weights.service = v.integer()?; Ok(()) }),
    param("QUEUETIMEWEIGHT", INT, IndexKind::Partition, Some("1"), "Weight of minutes queued.", "priority",
        |c, _, v| { c.policy.weights.queuetime = v.integer()?; Ok(()) }),
    param("XFACTORWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the expansion factor.", "priority",
        |c, _, v| { c.policy.weights.xfactor = v.integer()?; Ok(()) }),
    param("BYPASSWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of times the job was backfilled over.", "priority",
        |c, _, v| { c.policy.weights.bypass = v.integer()?; Ok(()) }),
    param("USERPRIOWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the user priority (msub -p).", "priority",
        |c, _, v| { c.policy.weights.userprio = v.integer()?; Ok(()) }),
    param("CREDWEIGHT", INT, IndexKind::Partition, Some("1"), "Credential component weight.", "priority",
        |c, _, v| { c.policy.weights.cred = v.integer()?; Ok(()) }),
    param("USERWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of USERCFG PRIORITY.", "priority",
        |c, _, v| { c.policy.weights.user = v.integer()?; Ok(()) }),
    param("GROUPWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of GROUPCFG PRIORITY.", "priority",
        |c, _, v| { c.policy.weights.group = v.integer()?; Ok(()) }),
    param("ACCOUNTWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of ACCOUNTCFG PRIORITY.", "priority",
        |c, _, v| { c.policy.weights.account = v.integer()?; Ok(()) }),
    param("CLASSWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of CLASSCFG PRIORITY.", "priority",
        |c, _, v| { c.policy.weights.class = v.integer()?; Ok(()) }),
    param("QOSWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of QOSCFG PRIORITY.", "priority",
        |c, _, v| { c.policy.weights.qos = v.integer()?; Ok(()) }),
    // ---- other priority weights and caps (Config::extra_weights)
    extra_weight("STARTCOUNTWEIGHT", "Weight of the job's start count."),
    param("DEADLINEWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the DEADLINE service subcomponent: how close a job with a deadline (msub -l deadline=, or its DEADLINE QoS's QTTARGET) is to it, the percentage of the time from its submission to its deadline that has passed (0 to 100, rising linearly; 100 after it). Shown by mdiag -p as Serv(Deadl).", "priority",
        |c, _, v| { c.policy.weights.deadline = v.integer()?; Ok(()) }),
    param("DEADLINEPOLICY", ValueType::Choice(core_choices!(DeadlinePolicy)), IndexKind::None, Some("NONE"),
        "What happens to a job of a QFLAGS=DEADLINE QoS whose deadline the scheduler cannot meet (its reservation would end after it, or it can no longer complete by it): CANCEL cancels it; HOLD puts a system hold on it and drops the deadline; IGNORE (and NONE, Moab's default) drops the deadline, the job runs as any other; RETRY keeps the deadline and tries again each iteration; ESCALATE does as RETRY and tells the administrators (the daemon's log and the job's message). checkjob shows `Deadline Failed:`.", "scheduling",
        |c, _, v| { c.policy.deadline_policy = v.parse_choice()?; Ok(()) }),
    extra_weight("SPVIOLATIONWEIGHT", "Weight of soft-policy violation."),
    extra_weight("TARGETWEIGHT", "Target service component weight."),
    extra_weight("TARGETQUEUETIMEWEIGHT", "Weight of distance to the target queue time."),
    extra_weight("TARGETXFACTORWEIGHT", "Weight of distance to the target expansion factor."),
    param("FSWEIGHT", INT, IndexKind::Partition, Some("1"), "Fairshare component weight (the FS column of mdiag -p).", "priority",
        |c, _, v| { c.policy.weights.fs = v.integer()?; Ok(()) }),
    param("FSUSERWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the user's fairshare factor: its FSTARGET minus its decayed share of the usage, in percentage points.", "priority",
        |c, _, v| { c.policy.weights.fs_user = v.integer()?; Ok(()) }),
    param("FSGROUPWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the group's fairshare factor.", "priority",
        |c, _, v| { c.policy.weights.fs_group = v.integer()?; Ok(()) }),
    param("FSACCOUNTWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the account's fairshare factor.", "priority",
        |c, _, v| { c.policy.weights.fs_account = v.integer()?; Ok(()) }),
    param("FSQOSWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the QoS's fairshare factor.", "priority",
        |c, _, v| { c.policy.weights.fs_qos = v.integer()?; Ok(()) }),
    param("FSCLASSWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the class's fairshare factor.", "priority",
        |c, _, v| { c.policy.weights.fs_class = v.integer()?; Ok(()) }),
    extra_weight("FSGUSERWEIGHT", "Weight of global user fairshare."),
    extra_weight("FSGGROUPWEIGHT", "Weight of global group fairshare."),
    extra_weight("FSGACCOUNTWEIGHT", "Weight of global account fairshare."),
    param("FSJPUWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the number of jobs the job's user has running (a fairshare subcomponent: usually negative).", "priority",
        |c, _, v| { c.policy.weights.fs_jpu = v.integer()?; Ok(()) }),
    param("FSPPUWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the processors allocated to the jobs the job's user has running (a fairshare subcomponent).", "priority",
        |c, _, v| { c.policy.weights.fs_ppu = v.integer()?; Ok(()) }),
    param("FSPSPUWEIGHT", INT, IndexKind::Partition, Some("0"), "Weight of the processor-seconds the job's user's running jobs still hold (processors × remaining wall-clock limit; a fairshare subcomponent).", "priority",
        |c, _, v| { c.policy.weights.fs_pspu = v.integer()?; Ok(()) }),
    extra_weight("WCACCURACYWEIGHT", "Weight of the user's wall-clock accuracy."),
    extra_weight("RESWEIGHT", "Resource component weight."),
    extra_weight("NODEWEIGHT", "Weight of requested nodes."),
    extra_weight("PROCWEIGHT", "Weight of requested processors."),
    extra_weight("MEMWEIGHT", "Weight of requested memory."),
    extra_weight("SWAPWEIGHT", "Weight of requested swap."),
    extra_weight("DISKWEIGHT", "Weight of requested disk."),
    extra_weight("PSWEIGHT", "Weight of requested processor-seconds."),
    extra_weight("PEWEIGHT", "Weight of requested processor-equivalents."),
    extra_weight("WALLTIMEWEIGHT", "Weight of requested wall-clock time."),
    extra_weight("ATTRWEIGHT", "Attribute component weight."),
    extra_weight("ATTRATTRWEIGHT", "Weight of job attributes."),
    extra_weight("ATTRGRESWEIGHT", "Weight of generic resources."),
    extra_weight("ATTRSTATEWEIGHT", "Weight of job state."),
    extra_weight("JOBIDWEIGHT", "Weight of the job id."),
    extra_weight("JOBNAMEWEIGHT", "Weight of the job name."),
    extra_weight("USAGEWEIGHT", "Usage component weight."),
    extra_weight("USAGECONSUMEDWEIGHT", "Weight of consumed usage."),
    extra_weight("USAGEREMAININGWEIGHT", "Weight of remaining usage."),
    extra_weight("USAGEPERCENTWEIGHT", "Weight of percent usage."),
    extra_weight("USAGEEXECUTIONTIMEWEIGHT", "Weight of execution time."),
    extra_weight("SERVICECAP", "Cap of the service component (0 = none)."),
    param("QUEUETIMECAP", INT, IndexKind::Partition, Some("0"), "The most the raw queue-time subcomponent (minutes queued) contributes before its weight (0 = no cap).", "priority",
        |c, _, v| { c.policy.weights.queuetime_cap = v.integer()?.max(0); Ok(()) }),
    param("XFACTORCAP", INT, IndexKind::Partition, Some("0"), "The most the raw expansion factor contributes before its weight (0 = no cap).", "priority",
        |c, _, v| { c.policy.weights.xfactor_cap = v.integer()?.max(0); Ok(()) }),
    param("BYPASSCAP", INT, IndexKind::Partition, Some("0"), "The most the raw bypass count contributes before its weight (0 = no cap).", "priority",
        |c, _, v| { c.policy.weights.bypass_cap = v.integer()?.max(0); Ok(()) }),
    extra_weight("TARGETCAP", "Cap of the target component (0 = none)."),
    extra_weight("CREDCAP", "Cap of the credential component (0 = none)."),
    extra_weight("USERCAP", "Cap of the user subcomponent (0 = none)."),
    extra_weight("GROUPCAP", "Cap of the group subcomponent (0 = none)."),
    extra_weight("ACCOUNTCAP", "Cap of the account subcomponent (0 = none)."),
    extra_weight("CLASSCAP", "Cap of the class subcomponent (0 = none)."),
    extra_weight("QOSCAP", "Cap of the QoS subcomponent (0 = none)."),
    param("FSCAP", INT, IndexKind::Partition, Some("0"), "The most the fairshare component (Σ FS subcomponent weight × factor, before FSWEIGHT) counts either way (0 = no cap).", "priority",
        |c, _, v| { c.policy.weights.fs_cap = v.integer()?.max(0); Ok(()) }),
    extra_weight("RESCAP", "Cap of the resource component (0 = none)."),
    extra_weight("ATTRCAP", "Cap of the attribute component (0 = none)."),
    extra_weight("USAGECAP", "Cap of the usage component (0 = none)."),
    // ---- nodes and fairshare
    param("NODEACCESSPOLICY", ValueType::Choice(core_choices!(NodeAccessPolicy)), IndexKind::None,
        Some("SHARED"), "Who may share a node with a job that has no NACCESSPOLICY of its own (and whose node has no ACCESS=): SHARED, SHAREDONLY, SINGLEJOB and SINGLETASK (the job is given whole nodes), SINGLEUSER, UNIQUEUSER, SINGLEGROUP, SINGLEACCOUNT.", "placement",
        |c, _, v| { c.node_access_policy = v.parse_choice()?; c.policy.node_access = c.node_access_policy; Ok(()) }),
    param("JOBNODEMATCHPOLICY", ValueType::Choice(core_choices!(JobNodeMatchPolicy)), IndexKind::None,
        None, "How requested nodes/tasks match nodes.", "placement",
        |c, _, v| { c.job_node_match_policy = Some(v.parse_choice()?); Ok(()) }),
    param("FSPOLICY", ValueType::Choice(core_choices!(FsPolicy)), IndexKind::None, None,
        "What fairshare usage measures (unset = fairshare off: no FS priority, no fairshare caps): DEDICATEDPS the processor-seconds dedicated to jobs; DEDICATEDPES processor-equivalent seconds (PE = MAX(procs / machine procs, memory / machine memory) x machine procs); UTILIZEDPS the processor time jobs' processes used, measured by the local resource manager when a job ends (running jobs, and jobs of backends that do not measure, count as dedicated). Nodes have no speed factor, so SDEDICATEDPES is DEDICATEDPES and PDEDICATEDPS is DEDICATEDPS.", "fairshare",
        |c, _, v| { c.fairshare.policy = Some(v.parse_choice()?); c.policy.fairshare.enabled = true; Ok(()) }),
    param("FSTREETIERMULTIPLIER", ValueType::Text, IndexKind::None, Some("1.0"),
        "Weight of each tier of the share tree (FSTREE): M > 0 weighs tier t (the root's members are tier 1) M^(t-1), M < 0 weighs it |M|^(tiers-t+1) (the upper tiers count most), 0 weighs every tier 1.", "fairshare",
        |c, _, v| {
            let t = v.text()?;
            let m: f64 = t
                .trim()
                .parse()
                .ok()
                .filter(|m: &f64| m.is_finite())
                .ok_or_else(|| format!("invalid multiplier '{t}' (expected a number)"))?;
            c.policy.fairshare.tier_multiplier = m;
            Ok(())
        }),
    param("FSTREEISPROPORTIONAL", ValueType::Boolean, IndexKind::None, Some("FALSE"),
        "Moab's proportional share-tree priority scaling: accepted, but Arches computes the tree factor one way only (TRUE is warned as not applied).", "fairshare",
        |c, s, v| {
            match v.boolean()? {
                true => c.extra_weights.insert(s.name, 1),
                false => c.extra_weights.remove(s.name),
            };
            Ok(())
        }),
    param("FSDEPTH", ValueType::Integer { min: 1, max: 32 }, IndexKind::None, Some("8"), "Fairshare intervals remembered (at most 32, Moab's).", "fairshare",
        |c, _, v| { c.fairshare.depth = v.u32()?; c.policy.fairshare.depth = c.fairshare.depth; Ok(()) }),
    param("FSINTERVAL", ValueType::Duration, IndexKind::None, Some("12:00:00"),
        "Length of one fairshare interval.", "fairshare",
        |c, _, v| { c.fairshare.interval = v.duration()?; Ok(()) }),
    param("FSDECAY", ValueType::Float, IndexKind::None, Some("1.0"),
        "Weight of each older fairshare interval (0-1: interval i counts FSDECAY^i; 1 = no decay).", "fairshare",
        |c, _, v| {
            let d = v.float()?;
            if !(0.0..=1.0).contains(&d) {
                return Err(format!("value {d} out of range (0–1)"));
            }
            c.fairshare.decay = d;
            c.policy.fairshare.decay = d;
            Ok(())
        }),
    // ---- jobs
    param("PROFILEDURATION", ValueType::Duration, IndexKind::None, Some("00:30:00"),
        "Length of one statistics profile interval (showstats -t, showstats -n, the dashboard's utilisation and queue-length charts). Changing it starts the kept history afresh.", "statistics",
        |c, _, v| { c.profile_duration = v.duration()?.max(1); Ok(()) }),
    param("PROFILECOUNT", POSITIVE, IndexKind::None, Some("600"),
        "How many statistics profile intervals are kept (the reach of showstats -t and of the dashboard's charts, and how long purged jobs stay in the job history showhist reads).", "statistics",
        |c, _, v| { c.profile_count = v.integer()? as usize; Ok(()) }),
    param("JOBCPURGETIME", ValueType::Duration, IndexKind::None, Some("24:00:00"),
        "How long finished jobs stay visible (showq -c, checkjob); Arches default 24 h.", "daemon",
        |c, _, v| { c.job_purge_secs = v.duration()?; Ok(()) }),
    param("JOBPURGETIME", ValueType::Duration, IndexKind::None, Some("0"),
        "How long a job the RM no longer reports is kept.", "daemon",
        |c, _, v| { c.job_rm_purge_secs = v.duration()?; Ok(()) }),
    param("DEFERTIME", ValueType::Duration, IndexKind::None, Some("01:00:00"),
        "Time a job whose start failed stays Deferred (a Defer hold) before it is released and retried.", "scheduler",
        |c, _, v| { c.defer_time = v.duration()?; Ok(()) }),
    param("DEFERCOUNT", COUNT, IndexKind::None, Some("24"),
        "Deferrals after failed starts before a job gets a batch hold instead (the DEFERCOUNT-th is the batch hold; 0 counts as 1).", "scheduler",
        |c, _, v| { c.defer_count = v.u32()?; Ok(()) }),
    param("DEFERSTARTCOUNT", COUNT, IndexKind::None, Some("1"),
        "Failed starts before a job is deferred (earlier failures requeue it at once; 0 counts as 1).", "scheduler",
        |c, _, v| { c.defer_start_count = v.u32()?; Ok(()) }),
    // ---- data staging
    param("DATASTAGEMODEL", ValueType::Choice(core_choices!(DataStageModel)), IndexKind::None,
        Some("EXTERNAL"), "Data-staging model (Moab 5 §17.12): EXTERNAL, LOOSE, TIGHT or LOCAL.", "data staging",
        |c, _, v| { c.data_stage_model = v.parse_choice()?; Ok(()) }),
    param("DATASTAGEHOLDTYPE", ValueType::Choice(core_choices!(HoldType)), IndexKind::None, Some("Defer"),
        "Hold placed on a job whose data staging failed.", "data staging",
        |c, _, v| { c.data_stage_hold = v.parse_choice()?; Ok(()) }),
    param("TOOLSDIR", ValueType::Text, IndexKind::None, None,
        "Directory of the interface scripts ($TOOLSDIR in exec:// URLs). Unset: the tools installed next to the binaries (<bin>/../share/arches/tools), else $MOABHOMEDIR/tools; a relative value is under the Moab home directory.", "data staging",
        |c, _, v| { c.tools_dir = Some(v.text()?.to_string()); Ok(()) }),
    param("DATASTAGETIMEOUT", ValueType::Duration, IndexKind::None, Some("01:00:00"),
        "A stage-in that has not completed this long after it was initiated (or three times its estimated stage time, if longer) fails: what it left is removed and the job gets the DATASTAGEHOLDTYPE hold with the reason (0 = never).", "data staging",
        |c, _, v| { c.data_stage_timeout = v.duration()?; Ok(()) }),
    param("DATASTAGECLEANUP", ValueType::Boolean, IndexKind::None, Some("TRUE"),
        "Remove the files Arches staged in for a job (SYSTEMMODIFYURL remove) once the job has ended, freeing the storage manager's disk for TARGETUSAGE; FALSE keeps them (they then no longer count as staging's).", "data staging",
        |c, _, v| { c.data_stage_cleanup = v.boolean()?; Ok(()) }),
    param("DATASTAGELOCALDIR", ValueType::Text, IndexKind::None, Some("/tmp/arches-local"),
        "DATASTAGEMODEL LOCAL: directory on each compute node's local disk under which a job's $LOCAL is <dir>/<jobid> on its master node (file:// on a node of the LOCAL resource manager, scp://<node>/... otherwise). Exported to the job as $LOCAL; removed with the job's data.", "data staging",
        |c, _, v| { c.data_stage_local_dir = v.text()?.to_string(); Ok(()) }),
    param("ENABLEIMPLICITSTAGEOUT", ValueType::Boolean, IndexKind::None, Some("TRUE"),
        "Stage the standard output and error of a job that completes successfully to IMPLICITSTAGEOUTURL (Moab §17.12.7; needs the storage RM's SYSTEMMODIFYURL).", "data staging",
        |c, _, v| { c.implicit_stage_out = v.boolean()?; Ok(()) }),
    param("IMPLICITSTAGEOUTURL", ValueType::Text, IndexKind::None, Some("file://$HOME/"),
        "Directory URL the implicit stage-out copies stdout/stderr into ($HOME is the job owner's home directory).", "data staging",
        |c, _, v| { c.implicit_stage_out_url = v.text()?.to_string(); Ok(()) }),
    // ---- commands and daemon
    param("CLIENTTIMEOUT", ValueType::Duration, IndexKind::None, Some("00:00:30"),
        "How long commands wait for the daemon; also how long the daemon keeps a client connection that sends nothing, sends a request only in part, or does not read its answer (then it is closed; read at start).", "commands",
        |c, _, v| { c.client_timeout = v.duration()?; Ok(()) }),
    param("CLIENTMAXCONNECTIONS", POSITIVE, IndexKind::None, Some("1024"),
        "Client connections the daemon serves at once (read at start); further ones are refused at once with a message. The daemon also keeps it below its open-file limit (a quarter of which stays for its own files); root and the daemon's user have a small reserve above it.", "commands",
        |c, _, v| { c.client_max_connections = v.u32()?; Ok(()) }),
    param("CLIENTMAXCONNECTIONSPERUSER", POSITIVE, IndexKind::None, Some("128"),
        "Client connections one user may hold at once (read at start; root and the daemon's user are not limited): a user opening more gets them refused at once with a message, and never keeps others from being served.", "commands",
        |c, _, v| { c.client_max_connections_per_user = v.u32()?; Ok(()) }),
    param("ENABLEPOSUSERPRIORITY", ValueType::Boolean, IndexKind::None, Some("FALSE"),
        "Allow users to request a positive priority (msub -p > 0).", "commands",
        |c, _, v| { c.enable_pos_user_priority = v.boolean()?; Ok(()) }),
    param("USEMOABJOBID", ValueType::Boolean, IndexKind::None, Some("FALSE"),
        "Report Moab job ids instead of resource-manager ids.", "commands",
        |c, _, v| { c.use_moab_job_id = v.boolean()?; Ok(()) }),
    param("USEJOBREGEX", ValueType::Boolean, IndexKind::None, Some("FALSE"),
        "Treat every mjobctl job expression as a regular expression.", "commands",
        |c, _, v| { c.use_job_regex = v.boolean()?; Ok(()) }),
    param("DISPLAYFLAGS", ValueType::ChoiceList(word_choices!("ACCOUNTCENTRIC", "CONDENSED", "ENABLEPOSPRIO",
        "HIDEBLOCKED", "HIDEOUTPUT", "LOCAL", "NODECENTRIC", "REPORTEDNODESONLY", "SERVICEPROVISIONING",
        "SHOWSYSTEMJOBS", "SUMMARY", "TEST", "VERBOSE", "USEBLOCKING", "HIDEDRAINED")),
        IndexKind::None, Some("[NONE]"), "Flags changing how showq/showbf render.", "commands",
        |c, _, v| { c.display_flags = v.choices()?.iter().map(|s| s.to_string()).collect(); Ok(()) }),
    param("MSUBQUERYINTERVAL", POSITIVE, IndexKind::None, Some("5"),
        "Seconds between msub -K polls.", "commands",
        |c, _, v| { c.msub_query_interval = v.integer()?; Ok(()) }),
    param("LOGLEVEL", ValueType::Integer { min: 0, max: 9 }, IndexKind::None, Some("0"),
        "Log verbosity 0–9.", "daemon",
        |c, _, v| { c.log.level = v.u32()?; Ok(()) }),
    param("LOGFILE", ValueType::Text, IndexKind::None, Some("moab.log"),
        "Log file name (relative names are under LOGDIR).", "daemon",
        |c, _, v| { c.log.file = v.text()?.to_string(); Ok(()) }),
    param("LOGDIR", ValueType::Text, IndexKind::None, Some("log"),
        "Log directory (relative names are under the Moab home directory).", "daemon",
        |c, _, v| { c.log.dir = v.text()?.to_string(); Ok(()) }),
    param("LOGFILEMAXSIZE", ValueType::Integer { min: 0, max: i64::MAX }, IndexKind::None, Some("10000000"),
        "Bytes after which the log rolls (0 = never).", "daemon",
        |c, _, v| { c.log.max_size = v.integer()?.unsigned_abs(); Ok(()) }),
    param("LOGFILEROLLDEPTH", COUNT, IndexKind::None, Some("3"),
        "Rolled log files kept.", "daemon",
        |c, _, v| { c.log.roll_depth = v.u32()?; Ok(()) }),
    // ---- the metrics and dashboard listener (Arches)
    param("METRICSPORT", ValueType::Integer { min: 0, max: 65535 }, IndexKind::None, None,
        "Arches: TCP port of the HTTP listener serving Prometheus metrics (/metrics) and the \
read-only web dashboard (/), on METRICSHOST; unset = no listener (the default); 0 = any free port \
(the log names it). The dashboard is anonymous: it shows what showq, showres and showbf show every \
user, never scripts, environments or submit arguments.", "metrics, dashboard",
        |c, _, v| { c.metrics_port = Some(u16::try_from(v.integer()?).map_err(|e| e.to_string())?); Ok(()) }),
    param("METRICSHOST", ValueType::Text, IndexKind::None, Some("127.0.0.1"),
        "Arches: address the METRICSPORT listener binds (an IP address; 0.0.0.0 or :: for every \
interface: the pages are readable by anyone who can reach it).", "metrics, dashboard",
        |c, _, v| {
            let t = v.text()?;
            t.parse::<std::net::IpAddr>().map_err(|_| format!(
                "invalid address '{t}' (an IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0 or ::1)"))?;
            c.metrics_host = t.to_string();
            Ok(())
        }),
    // ---- legacy forms of SCHEDCFG / ADMINCFG
    param("SERVERHOST", ValueType::Text, IndexKind::None, None,
        "Deprecated: host of SCHEDCFG SERVER=.", "daemon",
        |c, _, v| { set_server_part(c, Some(v.text()?), None); Ok(()) }),
    param("SERVERPORT", ValueType::Integer { min: 1, max: 65535 }, IndexKind::None, None,
        "Deprecated: port of SCHEDCFG SERVER=.", "daemon",
        |c, _, v| { set_server_part(c, None, Some(v.integer()?)); Ok(()) }),
    param("SERVERMODE", ValueType::Choice(core_choices!(SchedMode)), IndexKind::None, Some("NORMAL"),
        "Deprecated: SCHEDCFG MODE=.", "daemon",
        |c, _, v| { c.sched.mode = v.parse_choice()?; Ok(()) }),
    param("SERVERNAME", ValueType::Text, IndexKind::None, Some("Moab"),
        "Deprecated: the SCHEDCFG index (scheduler name).", "daemon",
        |c, _, v| {
            let name = v.text()?;
            if name.contains(|ch: char| ch.is_whitespace() || "[]=#\"'".contains(ch)) {
                return Err(format!("invalid scheduler name '{name}' (no spaces, brackets, '=', '#' or quotes)"));
            }
            c.sched.name = name.to_string();
            Ok(())
        }),
    param("ADMIN1", ValueType::List, IndexKind::None, Some("root"),
        "Deprecated: level-1 administrators (ADMINCFG[1] USERS=); root and the daemon's user are always ones.", "commands",
        |c, _, v| set_admin(c, 0, v)),
    param("ADMIN2", ValueType::List, IndexKind::None, Some("[NONE]"),
        "Deprecated: level-2 administrators (ADMINCFG[2] USERS=).", "commands",
        |c, _, v| set_admin(c, 1, v)),
    param("ADMIN3", ValueType::List, IndexKind::None, Some("[NONE]"),
        "Deprecated: level-3 administrators (ADMINCFG[3] USERS=).", "commands",
        |c, _, v| set_admin(c, 2, v)),
];
