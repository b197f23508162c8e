//! Data-driven scheduling scenarios: every `tests/scenarios/*.txt` file is
//! replayed by one [`check`] helper that drives `State::apply` + `schedule`
//! over time (submitting jobs, starting what each plan starts, finishing jobs
//! at their run time) and verifies the expectations.
//!
//! # Format
//! One directive per line; `#` starts a comment. Times are seconds, or
//! `Nh`/`Nm`/`Ns`, or a clock `H:MM` (seconds since 0:00).
//!
//! ```text
//! node NAME PROCS [MEM_MB] [FEATURE,...] [gres=gpu:4] [access=SINGLEJOB]   one node
//! nodes COUNT PROCS [MEM_MB] [gres=..] [access=..]   COUNT nodes named n0, n1, ...
//! policy KEY VALUE                            BACKFILLPOLICY, BACKFILLMETRIC,
//!     BACKFILLDEPTH, RESERVATIONDEPTH, RESERVATIONPOLICY, NODEALLOCATIONPOLICY,
//!     NOBF <qos>, MAXJOB <user> <soft>,<hard>, MAXPROC <user> <soft>,<hard>,
//!     DEFAULTWC <class> <time>, MAXWC <class> <time>,
//!     BFVIRTUALWALLTIMESCALINGFACTOR <f>, BFCHUNKSIZE <procs>, BFCHUNKDURATION <time>,
//!     QFLAGS <qos> <FLAG,...>, QOSPRIO <qos> <n>, QOSWEIGHT <n>, QOSJOBFLAGS <qos> <FLAG,...>,
//!     CLASSJOBFLAGS <class> <FLAG,...>, CLASSQDEF <class> <qos>, PREEMPTPOLICY <p>,
//!     JOBPREEMPTMINACTIVETIME <t>, JOBPREEMPTMAXACTIVETIME <t>, BFPRIORITYPOLICY <p>,
//!     GUARANTEEDPREEMPTION TRUE|FALSE, JOBRETRYTIME <t>, BFVIRTUALWALLTIMECONFLICTPOLICY <p>,
//!     BFORDER PRIORITY|SHORTESTPREDICTEDFIRST|WIDESTWINDOWFIRST,
//!     PREDICTIONGUARD <time>, PREDICTIONSCOPE ALL|RUNNING,
//!     QDEF user|group|account|class <name> <qos>[&|^]   (CLASSCFG[name] QDEF=qos ...),
//!     QLIST user|group|account|class <name> <qos,...>[&|^],
//!     WEIGHT <SERVICE|QUEUETIME|XFACTOR|BYPASS|CRED|USER|GROUP|ACCOUNT|CLASS|QOS|USERPRIO> <n>,
//!     PRIO user|group|account|class|qos <name> <n>      (credential PRIORITY=),
//!     LIMIT user|group|account|class|qos <name> MAXJOB|MAXPROC|MAXNODE|MAXWC <soft>[,<hard>],
//!     BUCKETS <depth>:<qos,...|ALL> ...                 (RESERVATIONDEPTH[i] + RESERVATIONQOSLIST[i])
//!     NODEACCESSPOLICY <policy>,
//!     FAIRSHARE <interval> <depth> <decay>   (FSPOLICY DEDICATEDPS: finished jobs are charged
//!         and the decayed usage, running jobs included, feeds every iteration),
//!     WEIGHT <FS|FSUSER|FSGROUP|FSACCOUNT|FSQOS|FSCLASS> <n>,
//!     FSTARGET user|group|account|class|qos <name> <N>[+|-|%|^]
//!     WEIGHT <FSJPU|FSPPU|FSPSPU|FSCAP> <n>,
//!     FSTREE <node> [SHARES=N[@PAR][,..]] [MEMBERLIST=[type:]name,..]   (FSTREE[node] ...),
//!     FSTREETIERMULTIPLIER <f>
//! rm termdelay T                              checkpointed/requeued jobs take T to end (default 0)
//! failstart ID T                              the start of ID at T fails at the resource manager
//!     (it is started, then requeued at once)
//! job ID submit=T procs=N wall=T|none run=T [user=U] [qos=Q] [class=C]
//!     [nodes=N] [ppn=P] [mem=MB] [feature=F] [hold] [prio=P] [group=G] [account=A] [flags=F,G]
//!     [after=KIND:ID] (dependency) [start=T] (msub -a) [exit=N] (exit code at the end)
//!     [est=T] (planning estimate: a run-time prediction, `Job::estimate`)
//!     [deadline=T] (msub -l deadline=: guaranteed in a QFLAGS=DEADLINE QoS)
//!     [data=T] [dataunknown=T]                 stage-in data ready at T: TIGHT (the
//!     ready time is known, `DataWait::Until`) or LOOSE/EXTERNAL (`DataWait::Unknown`)
//!     [gres=gpu:2] (per task) [hosts=A,B] (host list) [access=POLICY] (naccesspolicy)
//!     [advres=NAME|any] [trl=1@100:2@50] (task request list)
//!     [groups=CxT[@HOST][:gpu=N][:FEATURE]+...] (node groups: C nodes of T tasks each,
//!     e.g. `groups=2x8+1x4`, `groups=1x2@n1+1x2@n3`, `groups=2x4:gpu=2`)
//! release ID T                                the job's user hold is released at T
//! rsv ID start=T end=T|none [hosts=A,B] [procs=N] [users=..] [groups=..]
//!     [accounts=..] [classes=..] [qos=..]     an administrative reservation
//! srcfg NAME [period=DAY|WEEK|INFINITY] [starttime=T] [endtime=T] [days=Mon,..]
//!     [hosts=A,B] [tasks=N] [depth=N] [users=..] ...   a standing reservation
//! expect start ID T [priority|backfill]       the job starts at T (and how)
//! expect nostart ID                           the job never starts
//! expect rsv AT ID T                          after the iteration at AT, ID is reserved at T
//! expect norsv AT ID                          ... ID has no reservation
//! expect reason AT ID NAME                    ... ID's BlockReason variant is NAME
//! expect eligible AT ID yes|no                ... ID's Decision.eligible
//! expect nodes ID NAME,NAME                   the nodes the job started on
//! expect preempt ID T [METHOD] [BY]           the job is preempted at T (how, for whom)
//! expect nopreempt ID                         the job is never preempted
//! expect resume ID T                          the suspended job resumes at T
//! expect restart ID T                         the job's last start (after a requeue) is at T
//! expect end ID T                             the job finishes at T
//! expect note AT ID WORD                      ... ID's preempt note contains WORD
//! expect excluded AT ID COND N                ... ID's preempt note excludes N preemptees
//!     for COND (priority|minactive|maxactive|busy|unusable|total)
//! expect outcome AT ID NAME                   ... ID's preempt note outcome variant is NAME
//! expect nonote AT ID                         ... ID has no preempt note
//! expect preempts AT COUNT                    the iterations at AT preempt COUNT jobs
//! expect lock AT ID yes|no                    after AT, ID holds a lock in force
//! expect virtual ID SECS|none                 the job was backfilled on this virtual limit
//! expect restored AT ID                       the plan at AT restores ID's real limit
//! expect window AT NODES PROCS DUR|none       after the iteration at AT (its starts
//!                                             applied), showbf's windows include this one
//! expect qos ID QOS|none                      the QoS the job was given at submission
//! expect units ID NODE:KIND:I,J ...           the generic-resource units the job got
//! expect gwindow AT KIND NODES UNITS DUR|none  showbf --gres KIND's windows include this one
//! expect rejected ID                          submission refused (QoS access)
//! ```
//!
//! Malleable and resizable jobs ([`arches_core::malleable`]):
//!
//! ```text
//! job ... range=MIN-MAX                       a processor range (procs defaults to MIN)
//! resize ID T +N|-N                           the owner asks for N more processors,
//!                                             or releases N, at T (mjobctl -m proccount+=N)
//! policy GROWTH NONE|BEFOREBACKFILL|AFTERBACKFILL   (MALLEABLEGROWTH)
//! expect grow ID T PROCS [auto|priority|backfill]  at T the job grew to PROCS processors
//! expect nogrow ID                            the job never grew
//! expect procs AT ID N                        after the iteration at AT the job has N processors
//! expect growwait AT ID NAME                  ... its pending request waits for reason NAME
//! expect refused ID T                         the resize at T was refused
//! ```
//!
//! Scenarios do not model speed-up: a grown job ends at its run time (the
//! simulator's JSONL `work` does).
//!
//! Jobs get their QoS at submission exactly as the daemon and the simulator
//! give it (`arches_core::qos::assign`: the requested one if their
//! credentials grant it, else their QDEF); a job refused access is never
//! submitted; a QoS name no configuration knows is kept, as the simulator
//! keeps it.
//!
//! Preempted jobs are suspended (their remaining run time is kept and they
//! end that much later after resuming), checkpointed (they keep their
//! processors until they end, `rm termdelay` later; restarted, they run only
//! what was left), requeued (the same, then their full run time again) or
//! cancelled, as the plan says. Plans are applied as the drivers do:
//! preemptions, locks, resumes, starts.
//!
//! Event order at one instant follows pyss: submissions, then terminations,
//! then one scheduling iteration whose starts are applied at once; when jobs
//! were requeued at that instant (a termination delay of 0), one more
//! iteration follows at the same instant.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use arches_core::job::{CompletionCode, Job, JobFlag, JobId, Request, RequeueCause, StartKind};
use arches_core::node::Node;
use arches_core::plan::{BlockReason, Plan};
use arches_core::policy::PreemptPolicy;
use arches_core::policy::{Limit, QosConfig, QosFlag, QosListKind, ReservationBucket};
use arches_core::state::{Event, State};
use arches_core::{schedule, Acl, Policy, Reservation, Standing, Time};

fn list(kv: &BTreeMap<&str, &str>, k: &str) -> Vec<String> {
    kv.get(k)
        .map(|v| v.split(',').map(String::from).collect())
        .unwrap_or_default()
}

fn acl(kv: &BTreeMap<&str, &str>) -> Acl {
    Acl {
        users: list(kv, "users"),
        groups: list(kv, "groups"),
        accounts: list(kv, "accounts"),
        classes: list(kv, "classes"),
        qos: list(kv, "qos"),
    }
}

struct Scenario {
    nodes: Vec<Node>,
    policy: Policy,
    /// `policy FAIRSHARE`: the fairshare window (accounting kept).
    fs: Option<arches_core::accounting::FsWindow>,
    jobs: Vec<(Job, Time)>,
    rsvs: Vec<Reservation>,
    expects: Vec<(usize, Vec<String>)>,
    /// When each job's stage-in data is there (`data=`, `dataunknown=`).
    data_ready: BTreeMap<JobId, Time>,
    /// How long a checkpointed or requeued job takes to end.
    term_delay: Time,
    /// Starts that fail at the resource manager: (job, time).
    fail_starts: BTreeSet<(JobId, Time)>,
    /// Exit codes of jobs that do not end with 0.
    exits: BTreeMap<JobId, i32>,
    /// User holds released at a time.
    releases: Vec<(JobId, Time)>,
    /// Resize requests (+N) and releases (-N) at a time.
    resizes: Vec<(JobId, Time, i64)>,
    /// Job arrays (`array=1-10%2`): the job line is the array's template.
    arrays: BTreeMap<JobId, arches_core::ArraySpec>,
}

fn time(s: &str) -> Time {
    if s == "none" {
        return -1;
    }
    if let Some((h, m)) = s.split_once(':') {
        return h.parse::<i64>().unwrap() * 3600 + m.parse::<i64>().unwrap() * 60;
    }
    let (num, mul) = match s.chars().last() {
        Some('h') => (&s[..s.len() - 1], 3600),
        Some('m') => (&s[..s.len() - 1], 60),
        Some('s') => (&s[..s.len() - 1], 1),
        _ => (s, 1),
    };
    num.parse::<i64>()
        .unwrap_or_else(|_| panic!("bad time '{s}'"))
        * mul
}

fn limit(s: &str) -> Limit {
    let (a, b) = s.split_once(',').unwrap_or((s, s));
    Limit {
        soft: a.parse().unwrap(),
        hard: b.parse().unwrap(),
    }
}

fn parse(text: &str) -> Scenario {
    let mut sc = Scenario {
        nodes: Vec::new(),
        policy: Policy::default(),
        fs: None,
        jobs: Vec::new(),
        rsvs: Vec::new(),
        expects: Vec::new(),
        data_ready: BTreeMap::new(),
        term_delay: 0,
        fail_starts: BTreeSet::new(),
        exits: BTreeMap::new(),
        releases: Vec::new(),
        resizes: Vec::new(),
        arrays: BTreeMap::new(),
    };
    for (ln, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap().trim();
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        match w[0] {
            "node" => {
                let (pos, kv) = split_kv(&w);
                let mut n = Node::new(pos[1], pos[2].parse().unwrap(), 0);
                if let Some(m) = pos.get(3) {
                    n.mem_mb = m.parse().unwrap();
                }
                if let Some(f) = pos.get(4) {
                    n.features = f.split(',').map(String::from).collect();
                }
                node_extras(&mut n, &kv);
                sc.nodes.push(n);
            }
            "nodes" => {
                let (pos, kv) = split_kv(&w);
                let count: usize = pos[1].parse().unwrap();
                let mem = pos.get(3).map_or(0, |m| m.parse().unwrap());
                for _ in 0..count {
                    let name = format!("n{}", sc.nodes.len());
                    let mut n = Node::new(&name, pos[2].parse().unwrap(), mem);
                    node_extras(&mut n, &kv);
                    sc.nodes.push(n);
                }
            }
            "policy" if w[1] == "FAIRSHARE" => {
                sc.policy.fairshare.enabled = true;
                sc.fs = Some(arches_core::accounting::FsWindow {
                    interval: time(w[2]),
                    depth: w[3].parse().unwrap(),
                    decay: w[4].parse().unwrap(),
                    charge: Default::default(),
                });
                sc.policy.fairshare.depth = w[3].parse().unwrap();
                sc.policy.fairshare.decay = w[4].parse().unwrap();
            }
            "policy" => policy(&mut sc.policy, &w[1..]),
            "job" => {
                let id: JobId = w[1].parse().unwrap();
                let kv: BTreeMap<&str, &str> = w[2..]
                    .iter()
                    .map(|x| x.split_once('=').unwrap_or((x, "")))
                    .collect();
                let range = kv.get("range").map(|r| {
                    let (a, b) = r.split_once('-').unwrap();
                    (a.parse::<u32>().unwrap(), b.parse::<u32>().unwrap())
                });
                let mut req = Request::procs(
                    kv.get("procs")
                        .map_or(range.map_or(1, |r| r.0), |p| p.parse().unwrap()),
                );
                if let Some(n) = kv.get("nodes") {
                    req.nodes = Some(n.parse().unwrap());
                }
                if let Some(p) = kv.get("ppn") {
                    req.tasks_per_node = Some(p.parse().unwrap());
                    req.tasks = req.nodes.unwrap_or(1) * req.tasks_per_node.unwrap();
                }
                if let Some(m) = kv.get("mem") {
                    req.mem_per_task_mb = m.parse().unwrap();
                }
                if let Some(f) = kv.get("feature") {
                    req.features.push(f.to_string());
                }
                let wall = time(kv["wall"]);
                let user = kv.get("user").copied().unwrap_or("u");
                let mut job = Job::new(
                    id,
                    user,
                    req,
                    (wall >= 0).then_some(wall),
                    time(kv["submit"]),
                );
                job.cred.qos = kv.get("qos").map(|s| (*s).into());
                job.cred.class = kv.get("class").map(|s| (*s).into());
                job.cred.account = kv.get("account").map(|s| (*s).into());
                if let Some(g) = kv.get("group") {
                    job.cred.group = (*g).into();
                }
                if kv.contains_key("hold") {
                    job.holds.insert(arches_core::HoldType::User);
                }
                if let Some(p) = kv.get("prio") {
                    job.sys_prio = Some(p.parse().unwrap());
                }
                if let Some(t) = kv.get("deadline") {
                    job.deadline = Some(time(t));
                }
                if let Some(f) = kv.get("flags") {
                    for x in f.split(',') {
                        job.flags.insert(x.parse().unwrap());
                    }
                }
                if let Some(t) = kv.get("data") {
                    job.data_wait = Some(arches_core::DataWait::Until(time(t)));
                    sc.data_ready.insert(id, time(t));
                }
                if let Some(t) = kv.get("dataunknown") {
                    job.data_wait = Some(arches_core::DataWait::Unknown);
                    sc.data_ready.insert(id, time(t));
                }
                if let Some(d) = kv.get("after") {
                    let (kind, on) = d.split_once(':').unwrap();
                    job.depend.push(arches_core::Dependency {
                        kind: kind.parse().unwrap(),
                        job: on.parse().unwrap(),
                    });
                }
                if let Some(t) = kv.get("start") {
                    job.start_after = Some(time(t));
                }
                if let Some(t) = kv.get("est") {
                    job.estimate = Some(time(t));
                }
                if let Some(x) = kv.get("exit") {
                    sc.exits.insert(id, x.parse().unwrap());
                }
                job_layout(&mut job, &kv);
                if let Some((min, max)) = range {
                    job.elastic = Some(
                        arches_core::malleable::check_range(min, max, job.req.procs_per_task)
                            .unwrap(),
                    );
                }
                if let Some(a) = kv.get("array") {
                    sc.arrays
                        .insert(id, arches_core::ArraySpec::parse(a).unwrap());
                }
                sc.jobs.push((job, time(kv["run"])));
            }
            "rsv" | "srcfg" => {
                let kv: BTreeMap<&str, &str> = w[2..]
                    .iter()
                    .map(|x| x.split_once('=').unwrap_or((x, "")))
                    .collect();
                if w[0] == "rsv" {
                    let end = time(kv["end"]);
                    sc.rsvs.push(Reservation {
                        id: w[1].to_string(),
                        start: time(kv["start"]),
                        end: (end >= 0).then_some(end),
                        hosts: list(&kv, "hosts"),
                        procs: kv.get("procs").map_or(0, |p| p.parse().unwrap()),
                        acl: acl(&kv),
                        flags: Vec::new(),
                        owner: None,
                        standing: None,
                        group: None,
                    });
                } else {
                    let mut st = Standing::new(w[1]);
                    if let Some(p) = kv.get("period") {
                        st.period = p.parse().unwrap();
                    }
                    st.start_time = kv.get("starttime").map(|t| time(t));
                    st.end_time = kv.get("endtime").map(|t| time(t));
                    st.days = list(&kv, "days")
                        .iter()
                        .map(|d| arches_core::resv::weekday(d).unwrap())
                        .collect();
                    st.hosts = list(&kv, "hosts");
                    st.tasks = kv.get("tasks").map_or(0, |p| p.parse().unwrap());
                    if let Some(d) = kv.get("depth") {
                        st.depth = d.parse().unwrap();
                    }
                    st.acl = acl(&kv);
                    sc.policy.standing.push(st);
                }
            }
            "rm" => match w[1] {
                "termdelay" => sc.term_delay = time(w[2]),
                other => panic!("line {}: unknown rm setting {other}", ln + 1),
            },
            "failstart" => {
                sc.fail_starts.insert((w[1].parse().unwrap(), time(w[2])));
            }
            "release" => sc.releases.push((w[1].parse().unwrap(), time(w[2]))),
            "resize" => sc.resizes.push((
                w[1].parse().unwrap(),
                time(w[2]),
                w[3].trim_start_matches('+').parse().unwrap(),
            )),
            "expect" => sc
                .expects
                .push((ln + 1, w[1..].iter().map(|s| s.to_string()).collect())),
            other => panic!("line {}: unknown directive {other}", ln + 1),
        }
    }
    sc
}

/// Positional words and `key=value` words of a directive.
fn split_kv<'a>(w: &[&'a str]) -> (Vec<&'a str>, BTreeMap<&'a str, &'a str>) {
    let pos = w.iter().copied().filter(|x| !x.contains('=')).collect();
    let kv = w.iter().filter_map(|x| x.split_once('=')).collect();
    (pos, kv)
}

/// `gres=` and `access=` of a node.
fn node_extras(n: &mut Node, kv: &BTreeMap<&str, &str>) {
    if let Some(g) = kv.get("gres") {
        n.gres = arches_core::gres::parse_list(g).unwrap();
    }
    if let Some(a) = kv.get("access") {
        n.access = Some(a.parse().unwrap());
    }
}

/// The layout keys of a job (`gres= hosts= access= advres= trl= groups=`).
fn job_layout(job: &mut Job, kv: &BTreeMap<&str, &str>) {
    let req = &mut job.req;
    if let Some(g) = kv.get("gres") {
        req.layout_mut().gres = arches_core::gres::parse_list(g).unwrap();
    }
    if let Some(h) = kv.get("hosts") {
        req.layout_mut().hosts = h.split(',').map(String::from).collect();
    }
    if let Some(a) = kv.get("access") {
        req.layout_mut().access = Some(a.parse().unwrap());
    }
    if let Some(a) = kv.get("advres") {
        req.layout_mut().advres = Some(if *a == "any" {
            String::new()
        } else {
            a.to_string()
        });
    }
    if let Some(t) = kv.get("trl") {
        req.layout_mut().trl = arches_core::layout::parse_trl(t).unwrap();
    }
    if let Some(g) = kv.get("groups") {
        let mut groups = Vec::new();
        for part in g.split('+') {
            let mut bits = part.split(':');
            let head = bits.next().unwrap();
            let (shape, host) = match head.split_once('@') {
                Some((s, h)) => (s, Some(h.to_string())),
                None => (head, None),
            };
            let (c, t) = shape.split_once('x').unwrap();
            let mut grp = arches_core::NodeGroup {
                count: c.parse().unwrap(),
                host,
                tasks_per_node: t.parse().unwrap(),
                features: Vec::new(),
                gres: Vec::new(),
            };
            for b in bits {
                match b.split_once('=') {
                    Some((k, v)) => grp.gres.push((k.to_string(), v.parse().unwrap())),
                    None => grp.features.push(b.to_string()),
                }
            }
            groups.push(grp);
        }
        req.tasks = groups.iter().map(|g| g.tasks()).sum();
        req.nodes = Some(groups.iter().map(|g| g.count).sum());
        req.tasks_per_node = None;
        req.layout_mut().groups = groups;
    }
}

fn policy(p: &mut Policy, w: &[&str]) {
    match w[0] {
        "NODEACCESSPOLICY" => p.node_access = w[1].parse().unwrap(),
        "BACKFILLPOLICY" => p.backfill = w[1].parse().unwrap(),
        "BACKFILLMETRIC" => p.backfill_metric = w[1].parse().unwrap(),
        "BACKFILLDEPTH" => p.backfill_depth = w[1].parse().unwrap(),
        "RESERVATIONPOLICY" => p.reservation_policy = w[1].parse().unwrap(),
        "NODEALLOCATIONPOLICY" => p.node_allocation = w[1].parse().unwrap(),
        "BFCHUNKSIZE" => p.bf_chunk_size = w[1].parse().unwrap(),
        "BFCHUNKDURATION" => p.bf_chunk_duration = time(w[1]),
        "BFVIRTUALWALLTIMESCALINGFACTOR" => {
            p.bf_virtual_walltime_factor = Some(w[1].parse().unwrap())
        }
        "BFVIRTUALWALLTIMECONFLICTPOLICY" => p.bf_virtual_walltime_conflict = w[1].parse().unwrap(),
        "RESERVATIONDEPTH" => {
            p.reservation_buckets = vec![ReservationBucket {
                depth: w[1].parse().unwrap(),
                qos: None,
            }]
        }
        "NOBF" => {
            p.qos.insert(
                w[1].to_string(),
                QosConfig {
                    flags: vec![QosFlag::NoBf],
                    ..QosConfig::default()
                },
            );
        }
        "WEIGHT" => {
            let n: i64 = w[2].parse().unwrap();
            let ws = &mut p.weights;
            match w[1] {
                "SERVICE" => ws.service = n,
                "QUEUETIME" => ws.queuetime = n,
                "XFACTOR" => ws.xfactor = n,
                "BYPASS" => ws.bypass = n,
                "CRED" => ws.cred = n,
                "USER" => ws.user = n,
                "GROUP" => ws.group = n,
                "ACCOUNT" => ws.account = n,
                "CLASS" => ws.class = n,
                "QOS" => ws.qos = n,
                "USERPRIO" => ws.userprio = n,
                "FS" => ws.fs = n,
                "FSUSER" => ws.fs_user = n,
                "FSGROUP" => ws.fs_group = n,
                "FSACCOUNT" => ws.fs_account = n,
                "FSQOS" => ws.fs_qos = n,
                "FSCLASS" => ws.fs_class = n,
                "FSJPU" => ws.fs_jpu = n,
                "FSPPU" => ws.fs_ppu = n,
                "FSPSPU" => ws.fs_pspu = n,
                "FSCAP" => ws.fs_cap = n,
                other => panic!("unknown weight {other}"),
            }
        }
        "PRIO" | "LIMIT" => {
            let name = w[2].to_string();
            let (prio, limits) = match w[1] {
                "class" => {
                    let c = p.classes.entry(name).or_default();
                    (&mut c.priority, &mut c.limits)
                }
                "qos" => {
                    let c = p.qos.entry(name).or_default();
                    (&mut c.priority, &mut c.limits)
                }
                kind => {
                    let map = match kind {
                        "user" => &mut p.users,
                        "group" => &mut p.groups,
                        "account" => &mut p.accounts,
                        other => panic!("unknown credential kind {other}"),
                    };
                    let c = map.entry(name).or_default();
                    (&mut c.priority, &mut c.limits)
                }
            };
            if w[0] == "PRIO" {
                *prio = w[3].parse().unwrap();
            } else {
                let l = Some(limit(w[4]));
                match w[3] {
                    "MAXJOB" => limits.max_job = l,
                    "MAXPROC" => limits.max_proc = l,
                    "MAXNODE" => limits.max_node = l,
                    "MAXWC" => {
                        let (a, b) = w[4].split_once(',').unwrap_or((w[4], w[4]));
                        limits.max_wc = Some(Limit {
                            soft: time(a) as u64,
                            hard: time(b) as u64,
                        });
                    }
                    other => panic!("unknown limit {other}"),
                }
            }
        }
        "FSTREE" => {
            // policy FSTREE <node> [SHARES=..] [MEMBERLIST=..]  (moab.cfg's FSTREE[node] ...)
            let tree =
                std::sync::Arc::make_mut(p.fairshare.tree.get_or_insert_with(Default::default));
            let i = tree.node_for_index(w[1]).unwrap();
            for a in &w[2..] {
                match a.split_once('=').unwrap() {
                    ("SHARES", v) => tree.set_shares(i, v).unwrap(),
                    ("MEMBERLIST", v) => tree.add_members(i, v).unwrap(),
                    (other, _) => panic!("unknown FSTREE attribute {other}"),
                }
            }
        }
        "FSTREETIERMULTIPLIER" => {
            p.fairshare.tier_multiplier = w[1].parse().unwrap();
        }
        "FSTARGET" => {
            use arches_core::fairshare::{FsTarget, FsTargetKind};
            let v = w[3];
            let (n, kind) = match v.chars().last().unwrap() {
                '+' => (&v[..v.len() - 1], FsTargetKind::Floor),
                '-' => (&v[..v.len() - 1], FsTargetKind::Ceiling),
                '%' => (&v[..v.len() - 1], FsTargetKind::CapRelative),
                '^' => (&v[..v.len() - 1], FsTargetKind::CapAbsolute),
                _ => (v, FsTargetKind::Target),
            };
            let t = Some(FsTarget {
                hundredths: (n.parse::<f64>().unwrap() * 100.0).round() as u64,
                kind,
            });
            let name = w[2].to_string();
            match w[1] {
                "user" => p.users.entry(name).or_default().fs_target = t,
                "group" => p.groups.entry(name).or_default().fs_target = t,
                "account" => p.accounts.entry(name).or_default().fs_target = t,
                "class" => p.classes.entry(name).or_default().fs_target = t,
                "qos" => p.qos.entry(name).or_default().fs_target = t,
                other => panic!("unknown credential kind {other}"),
            }
        }
        "BUCKETS" => {
            p.reservation_buckets = w[1..]
                .iter()
                .map(|b| {
                    let (d, q) = b.split_once(':').unwrap();
                    ReservationBucket {
                        depth: d.parse().unwrap(),
                        qos: (q != "ALL").then(|| q.split(',').map(String::from).collect()),
                    }
                })
                .collect();
        }
        "MAXJOB" | "MAXPROC" => {
            let c = p.users.entry(w[1].to_string()).or_default();
            if w[0] == "MAXJOB" {
                c.limits.max_job = Some(limit(w[2]));
            } else {
                c.limits.max_proc = Some(limit(w[2]));
            }
        }
        "DEFAULTWC" | "MAXWC" => {
            let c = p.classes.entry(w[1].to_string()).or_default();
            if w[0] == "DEFAULTWC" {
                c.default_wclimit = Some(time(w[2]));
            } else {
                c.max_wclimit = Some(time(w[2]));
            }
        }
        "QFLAGS" => {
            let q = p.qos.entry(w[1].to_string()).or_default();
            q.flags
                .extend(w[2].split(',').map(|f| f.parse::<QosFlag>().unwrap()));
        }
        "QOSPRIO" => p.qos.entry(w[1].to_string()).or_default().priority = w[2].parse().unwrap(),
        "QOSWEIGHT" => p.weights.qos = w[1].parse().unwrap(),
        "QOSJOBFLAGS" => {
            let q = p.qos.entry(w[1].to_string()).or_default();
            q.job_flags
                .extend(w[2].split(',').map(|f| f.parse::<JobFlag>().unwrap()));
        }
        "CLASSQDEF" => p.classes.entry(w[1].to_string()).or_default().qdef = Some(w[2].to_string()),
        "GUARANTEEDPREEMPTION" => p.guaranteed_preemption = w[1].eq_ignore_ascii_case("TRUE"),
        "JOBRETRYTIME" => p.job_retry_time = time(w[1]),
        "CLASSJOBFLAGS" => {
            let c = p.classes.entry(w[1].to_string()).or_default();
            c.job_flags
                .extend(w[2].split(',').map(|f| f.parse::<JobFlag>().unwrap()));
        }
        "QDEF" | "QLIST" => {
            let (value, kind) = match w[3].strip_suffix('&') {
                Some(v) => (v, Some(QosListKind::And)),
                None => match w[3].strip_suffix('^') {
                    Some(v) => (v, Some(QosListKind::Only)),
                    None => (w[3], None),
                },
            };
            let name = w[2].to_string();
            let (qdef, qlist, qkind) = match w[1] {
                "class" => {
                    let c = p.classes.entry(name).or_default();
                    (&mut c.qdef, &mut c.qlist, &mut c.qlist_kind)
                }
                kind => {
                    let map = match kind {
                        "user" => &mut p.users,
                        "group" => &mut p.groups,
                        "account" => &mut p.accounts,
                        other => panic!("unknown credential kind {other}"),
                    };
                    let c = map.entry(name).or_default();
                    (&mut c.qdef, &mut c.qlist, &mut c.qlist_kind)
                }
            };
            if w[0] == "QDEF" {
                *qdef = Some(value.to_string());
            } else {
                *qlist = value.split(',').map(String::from).collect();
            }
            if let Some(k) = kind {
                *qkind = k;
            }
        }
        "PREEMPTPOLICY" => p.preempt_policy = w[1].parse().unwrap(),
        "BFPRIORITYPOLICY" => p.bf_priority_policy = w[1].parse().unwrap(),
        "BFORDER" => match w[1] {
            "WIDESTWINDOWFIRST" => p.bf_widest_window_first = true,
            "SHORTESTPREDICTEDFIRST" => p.bf_shortest_first = true,
            _ => {}
        },
        "PREDICTIONGUARD" => p.prediction_guard = Some(time(w[1])).filter(|t| *t > 0),
        "PREDICTIONSCOPE" => p.estimates_running_only = w[1] == "RUNNING",
        "JOBPREEMPTMINACTIVETIME" => p.job_preempt_min_active = time(w[1]),
        "JOBPREEMPTMAXACTIVETIME" => p.job_preempt_max_active = time(w[1]),
        "GROWTH" => p.growth = w[1].parse().unwrap(),
        other => panic!("unknown policy key {other}"),
    }
}

/// What happened during a replay.
#[derive(Default)]
struct Outcome {
    starts: BTreeMap<JobId, (Time, StartKind, Vec<String>)>,
    last_start: BTreeMap<JobId, Time>,
    /// Every iteration's plan at each instant, in order.
    plans: BTreeMap<Time, Vec<Plan>>,
    /// Whether each job held a lock in force after each instant.
    locked: BTreeMap<(Time, JobId), bool>,
    preempted: BTreeMap<JobId, Vec<(Time, PreemptPolicy, JobId)>>,
    resumed: BTreeMap<JobId, Vec<Time>>,
    ended: BTreeMap<JobId, Time>,
    /// The QoS each job was given at submission.
    qos: BTreeMap<JobId, Option<String>>,
    rejected: BTreeSet<JobId>,
    /// Virtual limits of backfill starts.
    virtual_limits: BTreeMap<JobId, i64>,
    /// Backfill windows `(nodes, procs, duration)` after the iteration at a time.
    windows: BTreeMap<Time, Vec<Window>>,
    /// Generic-resource units each job got at its first start
    /// (`NODE:KIND:I,J`).
    units: BTreeMap<JobId, Vec<String>>,
    /// Generic-resource windows `(nodes, units, duration)` by time and kind.
    gwindows: BTreeMap<(Time, String), Vec<Window>>,
    /// Grows: (time, processors after, how).
    grows: BTreeMap<JobId, Vec<(Time, u32, String)>>,
    /// Processors of each job after each instant.
    procs: BTreeMap<(Time, JobId), u32>,
    /// Resizes refused: (job, time).
    refused: BTreeSet<(JobId, Time)>,
}

/// A backfill window: `(nodes, processors or units, duration)`.
type Window = (u32, u32, Option<i64>);

fn replay(sc: &Scenario) -> Outcome {
    let mut state = State::new(sc.nodes.clone());
    let mut accounting = arches_core::accounting::Accounting::new(0);
    for r in &sc.rsvs {
        state.add_reservation(r.clone()).unwrap();
    }
    let mut out = Outcome::default();
    let mut runtime: BTreeMap<JobId, Time> = sc.jobs.iter().map(|(j, r)| (j.id, *r)).collect();
    // Every sub-job of an array runs as long as its line says.
    for (id, a) in &sc.arrays {
        for p in 0..a.indices.len() {
            runtime.insert(id + 1 + u64::from(p), runtime[id]);
        }
    }
    let mut times: BTreeSet<Time> = sc.jobs.iter().map(|(j, _)| j.submit_time).collect();
    times.extend(sc.data_ready.values().copied());
    times.extend(sc.releases.iter().map(|r| r.1));
    times.extend(sc.resizes.iter().map(|r| r.1));
    for (_, e) in &sc.expects {
        if matches!(
            e[0].as_str(),
            "rsv"
                | "norsv"
                | "reason"
                | "eligible"
                | "note"
                | "preempts"
                | "excluded"
                | "outcome"
                | "nonote"
                | "lock"
                | "restored"
                | "window"
                | "gwindow"
                | "procs"
                | "growwait"
        ) {
            times.insert(time(&e[1]));
        }
    }
    // When each running job ends, and what a suspended job still needs.
    let mut end_of: BTreeMap<JobId, Time> = BTreeMap::new();
    let mut left: BTreeMap<JobId, Time> = BTreeMap::new();
    // Checkpointed jobs: what is left of their run when they restart.
    let mut ckpt_left: BTreeMap<JobId, Time> = BTreeMap::new();
    // Terminating jobs: when the resource manager reports them gone.
    let mut term_end: BTreeMap<JobId, Time> = BTreeMap::new();
    let mut submitted: BTreeSet<JobId> = BTreeSet::new();
    let mut guard = 0;
    // Standing reservations wake the scheduler forever: stop once every
    // job is done and every expectation's time is past.
    let last_fixed = times.last().copied().unwrap_or(0);
    while let Some(now) = times.pop_first() {
        if now > last_fixed && state.queued_count() == 0 && state.active_count() == 0 {
            break;
        }
        guard += 1;
        assert!(guard < 100_000, "scenario does not terminate");
        for (j, _) in sc.jobs.iter().filter(|(j, _)| j.submit_time == now) {
            if !submitted.insert(j.id) {
                continue;
            }
            let mut j = j.clone();
            let requested = j.cred.qos.take();
            match arches_core::qos::assign(&mut j.cred, &sc.policy, requested.as_deref()) {
                Ok(()) => {}
                // As in the simulator: a name no configuration knows is kept.
                Err(arches_core::qos::QosError::Unknown(_)) => j.cred.qos = requested,
                Err(arches_core::qos::QosError::Denied { .. }) => {
                    out.rejected.insert(j.id);
                    continue;
                }
            }
            out.qos
                .insert(j.id, j.cred.qos.as_deref().map(str::to_string));
            if let Some(a) = sc.arrays.get(&j.id) {
                let array = arches_core::ArrayJob::new(j.id, j, a.indices.clone(), a.slot_limit);
                state
                    .apply(Event::SubmitArray(Box::new(array)), now)
                    .unwrap();
                continue;
            }
            state.apply(Event::submit(j), now).unwrap();
        }
        for &(id, _) in sc.releases.iter().filter(|r| r.1 == now) {
            let hold = arches_core::HoldType::User;
            state
                .apply(Event::ReleaseHold { job: id, hold }, now)
                .unwrap();
        }
        let ending: Vec<JobId> = end_of
            .iter()
            .filter(|(_, t)| **t == now)
            .map(|(j, _)| *j)
            .collect();
        for id in ending {
            end_of.remove(&id);
            let code = CompletionCode::Exit(sc.exits.get(&id).copied().unwrap_or(0));
            state.apply(Event::Finish { job: id, code }, now).unwrap();
            out.ended.insert(id, now);
            if let (Some(fs), Some(j)) = (sc.fs.as_ref(), state.job(id)) {
                accounting.record(j, now, fs);
            }
        }
        // Stage-in data that arrived: the job no longer waits.
        for (&id, _) in sc.data_ready.iter().filter(|(_, t)| **t <= now) {
            if state.job(id).is_some_and(|j| j.data_wait.is_some()) {
                let change = arches_core::state::JobChange::DataWait(None);
                state.apply(Event::Modify { job: id, change }, now).unwrap();
            }
        }
        for &(id, _, n) in sc.resizes.iter().filter(|r| r.1 == now) {
            use arches_core::malleable;
            let Some(j) = state.job(id) else {
                out.refused.insert((id, now));
                continue;
            };
            let done = if n > 0 {
                malleable::request(j, n as u32, now).map(|e| {
                    let change = arches_core::state::JobChange::Elastic(Some(e));
                    state.apply(Event::Modify { job: id, change }, now).unwrap();
                })
            } else {
                malleable::release(j, n.unsigned_abs() as u32).map(|(less, e)| {
                    state
                        .apply(
                            Event::Shrink {
                                job: id,
                                alloc: less,
                            },
                            now,
                        )
                        .unwrap();
                    let change = arches_core::state::JobChange::Elastic(Some(e));
                    state.apply(Event::Modify { job: id, change }, now).unwrap();
                })
            };
            if done.is_err() {
                out.refused.insert((id, now));
            }
        }
        let gone: Vec<JobId> = term_end
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(j, _)| *j)
            .collect();
        for id in gone {
            term_end.remove(&id);
            state.apply(Event::Requeue { job: id }, now).unwrap();
        }
        state.expand_arrays(now);
        let fs_policy;
        let policy = match sc.fs.as_ref() {
            Some(fs) => {
                let mut p = sc.policy.clone();
                let usage = accounting.fairshare(state.active(), fs, now);
                p.fairshare
                    .set_usage(std::sync::Arc::new(usage.decayed(fs.decay)));
                fs_policy = p;
                &fs_policy
            }
            None => &sc.policy,
        };
        let plan = schedule(&state, policy, now);
        let mut again = false;
        for p in &plan.preemptions {
            let ev = match p.method {
                PreemptPolicy::Suspend => {
                    if let Some(e) = end_of.remove(&p.job) {
                        left.insert(p.job, e - now);
                    }
                    Event::Suspend { job: p.job }
                }
                PreemptPolicy::Checkpoint | PreemptPolicy::Requeue => {
                    let e = end_of.remove(&p.job);
                    let cause = if p.method == PreemptPolicy::Checkpoint {
                        // Restarted from the checkpoint: only the rest runs.
                        if let Some(e) = e {
                            ckpt_left.insert(p.job, e - now);
                        }
                        RequeueCause::Checkpoint
                    } else {
                        RequeueCause::Requeue
                    };
                    let until = now + sc.term_delay;
                    term_end.insert(p.job, until);
                    if until == now {
                        again = true;
                    } else {
                        times.insert(until);
                    }
                    Event::Terminate {
                        job: p.job,
                        cause,
                        by: Some(p.by),
                        until,
                    }
                }
                PreemptPolicy::Cancel => {
                    end_of.remove(&p.job);
                    Event::Cancel { job: p.job }
                }
            };
            state.apply(ev, now).unwrap();
            out.preempted
                .entry(p.job)
                .or_default()
                .push((now, p.method, p.by));
        }
        for l in &plan.locks {
            state
                .apply(
                    Event::Lock {
                        job: l.job,
                        alloc: l.alloc.clone(),
                        retry: l.retry,
                    },
                    now,
                )
                .unwrap();
        }
        for &id in &plan.restore_walltime {
            let change = arches_core::state::JobChange::VirtualWalltime(None);
            state.apply(Event::Modify { job: id, change }, now).unwrap();
        }
        for &id in &plan.resumes {
            state.apply(Event::Resume { job: id }, now).unwrap();
            let end = now + left.remove(&id).unwrap_or(1).max(1);
            end_of.insert(id, end);
            times.insert(end);
            out.resumed.entry(id).or_default().push(now);
        }
        for s in &plan.starts {
            state
                .apply(
                    Event::Start {
                        job: s.job,
                        alloc: s.alloc.clone(),
                        kind: s.kind,
                    },
                    now,
                )
                .unwrap();
            if sc.fail_starts.contains(&(s.job, now)) {
                // The resource manager could not start it: back to the queue.
                state.apply(Event::Requeue { job: s.job }, now).unwrap();
                times.insert(now + 1);
                continue;
            }
            if let Some(v) = s.virtual_walltime {
                let change = arches_core::state::JobChange::VirtualWalltime(Some(v));
                state
                    .apply(Event::Modify { job: s.job, change }, now)
                    .unwrap();
                out.virtual_limits.insert(s.job, v);
            }
            let job = state.job(s.job).unwrap();
            if let Some(r) = job.run.as_ref().filter(|r| !r.gres_units.is_empty()) {
                let table = state.gres_table();
                let u = r
                    .gres_units
                    .iter()
                    .map(|u| {
                        let idx: Vec<String> = u.indices().iter().map(|i| i.to_string()).collect();
                        format!(
                            "{}:{}:{}",
                            sc.nodes[u.node as usize].name,
                            table.name(u.kind).unwrap(),
                            idx.join(",")
                        )
                    })
                    .collect();
                out.units.entry(s.job).or_insert(u);
            }
            let wall = job.walltime.unwrap_or(i64::MAX / 4);
            let run = ckpt_left.remove(&s.job).unwrap_or(runtime[&s.job]);
            let end = now + run.min(wall).max(1);
            end_of.insert(s.job, end);
            times.insert(end);
            let names = s
                .alloc
                .iter()
                .map(|a| sc.nodes[a.node as usize].name.clone())
                .collect();
            out.last_start.insert(s.job, now);
            out.starts.entry(s.job).or_insert((now, s.kind, names));
        }
        for g in &plan.elastic.grows {
            state
                .apply(
                    Event::Grow {
                        job: g.job,
                        alloc: g.alloc.clone(),
                    },
                    now,
                )
                .unwrap();
            let j = state.job(g.job).unwrap();
            if let arches_core::malleable::GrowKind::Request(_) = g.how {
                // Granted: the request is done.
                let e = j
                    .elastic
                    .map(|e| arches_core::malleable::Elastic { request: None, ..e });
                let change = arches_core::state::JobChange::Elastic(e);
                state
                    .apply(Event::Modify { job: g.job, change }, now)
                    .unwrap();
            }
            let j = state.job(g.job).unwrap();
            let how = match g.how {
                arches_core::malleable::GrowKind::Auto => "auto".to_string(),
                arches_core::malleable::GrowKind::Request(k) => format!("{k:?}"),
            };
            out.grows
                .entry(g.job)
                .or_default()
                .push((now, j.procs(), how));
        }
        for j in state.active() {
            out.procs.insert((now, j.id), j.procs());
        }
        if let Some(w) = plan.next_wakeup {
            times.insert(w);
        }
        if sc.policy.reservation_policy == arches_core::policy::ReservationPolicy::Highest {
            // As the daemon does: HIGHEST keeps the plan's reservations.
            let kept: Vec<(JobId, Time)> = plan
                .reservations
                .iter()
                .filter(|r| {
                    state
                        .job(r.job)
                        .is_some_and(|j| j.state == arches_core::JobState::Idle)
                })
                .map(|r| (r.job, r.start))
                .collect();
            state.remember_reservations(kept).unwrap();
        }
        if sc
            .expects
            .iter()
            .any(|(_, e)| e[0] == "window" && time(&e[1]) == now)
        {
            let q = arches_core::WindowQuery::default();
            let w = arches_core::windows_in_plan(&state, &sc.policy, &plan, now, &q)
                .into_iter()
                .map(|w| (w.nodes, w.procs, w.duration))
                .collect();
            out.windows.insert(now, w);
        }
        for (_, e) in sc.expects.iter().filter(|(_, e)| e[0] == "gwindow") {
            if time(&e[1]) != now {
                continue;
            }
            let q = arches_core::WindowQuery {
                gres: Some(e[2].clone()),
                ..Default::default()
            };
            let w = arches_core::windows_in_plan(&state, &sc.policy, &plan, now, &q)
                .into_iter()
                .map(|w| (w.nodes, w.procs, w.duration))
                .collect();
            out.gwindows.insert((now, e[2].clone()), w);
        }
        let started = !plan.starts.is_empty();
        out.plans.entry(now).or_default().push(plan);
        for (j, _) in &sc.jobs {
            let held = state.lock_in_force(j.id, now).is_some();
            out.locked.insert((now, j.id), held);
        }
        // Array sub-jobs made after starts may start at once (as the drivers do).
        if started && !state.expand_arrays(now).is_empty() {
            again = true;
        }
        if again {
            times.insert(now);
        }
    }
    out
}

fn reason_name(r: &Option<BlockReason>) -> String {
    match r {
        None => "none".into(),
        Some(r) => format!("{r:?}")
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("")
            .to_string(),
    }
}

/// Replays one scenario file and checks every expectation.
fn check(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let sc = parse(&text);
    let out = replay(&sc);
    let name = path.file_name().unwrap().to_string_lossy();
    let mut failures = Vec::new();
    for (ln, e) in &sc.expects {
        let id = |k: usize| -> JobId { e[k].parse().unwrap() };
        let plans_at = |k: usize| out.plans.get(&time(&e[k])).expect("iteration at that time");
        let plan_at = |k: usize| &plans_at(k)[0];
        let note_at = |k: usize, j: JobId| plans_at(k).iter().find_map(|p| p.preempt_note(j));
        let ok = match e[0].as_str() {
            "start" => out.starts.get(&id(1)).is_some_and(|(t, kind, _)| {
                *t == time(&e[2])
                    && e.get(3)
                        .is_none_or(|k| format!("{kind:?}").eq_ignore_ascii_case(k))
            }),
            "nostart" => !out.starts.contains_key(&id(1)),
            "rsv" => plan_at(1)
                .reservation(id(2))
                .is_some_and(|r| r.start == time(&e[3])),
            "norsv" => plan_at(1).reservation(id(2)).is_none(),
            "reason" => {
                let d = plan_at(1).decisions.get(&id(2));
                d.is_some_and(|d| reason_name(&d.reason) == e[3])
            }
            "eligible" => plan_at(1)
                .decisions
                .get(&id(2))
                .is_some_and(|d| d.eligible == (e[3] == "yes")),
            "nodes" => out
                .starts
                .get(&id(1))
                .is_some_and(|(_, _, n)| n.join(",") == e[2]),
            "preempt" => out.preempted.get(&id(1)).is_some_and(|v| {
                v.iter().any(|(t, m, by)| {
                    *t == time(&e[2])
                        && e.get(3).is_none_or(|x| m.as_str().eq_ignore_ascii_case(x))
                        && e.get(4).is_none_or(|x| by.to_string() == *x)
                })
            }),
            "nopreempt" => !out.preempted.contains_key(&id(1)),
            "units" => out.units.get(&id(1)).is_some_and(|u| u[..] == e[2..]),
            "resume" => out
                .resumed
                .get(&id(1))
                .is_some_and(|v| v.contains(&time(&e[2]))),
            "restart" => out.last_start.get(&id(1)) == Some(&time(&e[2])),
            "end" => out.ended.get(&id(1)) == Some(&time(&e[2])),
            "note" => note_at(1, id(2)).is_some_and(|n| n.to_string().contains(e[3].as_str())),
            "nonote" => note_at(1, id(2)).is_none(),
            "excluded" => note_at(1, id(2)).is_some_and(|n| {
                let x = n.excluded;
                let got = match e[3].as_str() {
                    "priority" => x.priority,
                    "minactive" => x.min_active,
                    "maxactive" => x.max_active,
                    "busy" => x.busy,
                    "unusable" => x.unusable,
                    "total" => x.total(),
                    other => panic!("{name}:{ln}: unknown condition {other}"),
                };
                got == e[4].parse::<u32>().unwrap()
            }),
            "outcome" => note_at(1, id(2)).is_some_and(|n| {
                format!("{:?}", n.outcome)
                    .split(|c: char| !c.is_alphanumeric())
                    .next()
                    == Some(e[3].as_str())
            }),
            "lock" => out.locked.get(&(time(&e[1]), id(2))).copied() == Some(e[3] == "yes"),
            "preempts" => {
                plans_at(1)
                    .iter()
                    .map(|p| p.preemptions.len())
                    .sum::<usize>()
                    == e[2].parse::<usize>().unwrap()
            }
            "qos" => out
                .qos
                .get(&id(1))
                .is_some_and(|q| q.as_deref().unwrap_or("none") == e[2]),
            "rejected" => out.rejected.contains(&id(1)),
            "virtual" => match e[2].as_str() {
                "none" => !out.virtual_limits.contains_key(&id(1)),
                t => out.virtual_limits.get(&id(1)) == Some(&time(t)),
            },
            "restored" => plan_at(1).restore_walltime.contains(&id(2)),
            "grow" => out.grows.get(&id(1)).is_some_and(|v| {
                v.iter().any(|(t, p, how)| {
                    *t == time(&e[2])
                        && *p == e[3].parse::<u32>().unwrap()
                        && e.get(4).is_none_or(|k| how.eq_ignore_ascii_case(k))
                })
            }),
            "nogrow" => !out.grows.contains_key(&id(1)),
            "procs" => out.procs.get(&(time(&e[1]), id(2))).copied() == Some(e[3].parse().unwrap()),
            "growwait" => {
                let waits = &plan_at(1).elastic.waits;
                waits
                    .iter()
                    .any(|(j, r)| *j == id(2) && reason_name(&Some(r.clone())) == e[3])
            }
            "refused" => out.refused.contains(&(id(1), time(&e[2]))),
            "window" => out.windows.get(&time(&e[1])).is_some_and(|ws| {
                let want = (
                    e[2].parse::<u32>().unwrap(),
                    e[3].parse::<u32>().unwrap(),
                    (e[4] != "none").then(|| time(&e[4])),
                );
                ws.contains(&want)
            }),
            "gwindow" => out
                .gwindows
                .get(&(time(&e[1]), e[2].clone()))
                .is_some_and(|ws| {
                    let want = (
                        e[3].parse::<u32>().unwrap(),
                        e[4].parse::<u32>().unwrap(),
                        (e[5] != "none").then(|| time(&e[5])),
                    );
                    ws.contains(&want)
                }),
            other => panic!("{name}:{ln}: unknown expectation {other}"),
        };
        if !ok {
            let got = match e[0].as_str() {
                "start" | "nostart" | "nodes" => format!("{:?}", out.starts.get(&id(1))),
                "units" => format!("{:?}", out.units.get(&id(1))),
                "preempt" | "nopreempt" => format!("{:?}", out.preempted.get(&id(1))),
                "resume" => format!("{:?}", out.resumed.get(&id(1))),
                "restart" => format!("{:?}", out.last_start.get(&id(1))),
                "end" => format!("{:?}", out.ended.get(&id(1))),
                "note" | "nonote" | "excluded" | "outcome" => {
                    format!("{:?}", note_at(1, id(2)))
                }
                "lock" => format!("{:?}", out.locked.get(&(time(&e[1]), id(2)))),
                "preempts" => format!("{:?}", plan_at(1).preemptions),
                "virtual" => format!("{:?}", out.virtual_limits.get(&id(1))),
                "restored" => format!("{:?}", plan_at(1).restore_walltime),
                "window" => format!("{:?}", out.windows.get(&time(&e[1]))),
                "gwindow" => format!("{:?}", out.gwindows.get(&(time(&e[1]), e[2].clone()))),
                "grow" | "nogrow" => format!("{:?}", out.grows.get(&id(1))),
                "procs" => format!("{:?}", out.procs.get(&(time(&e[1]), id(2)))),
                "growwait" => format!(
                    "{:?} {:?}",
                    plan_at(1).elastic.waits,
                    plan_at(1).elastic.notes
                ),
                "refused" => format!("{:?}", out.refused),
                "qos" | "rejected" => format!(
                    "qos {:?}, rejected {}",
                    out.qos.get(&id(1)),
                    out.rejected.contains(&id(1))
                ),
                _ => {
                    let p = plan_at(1);
                    format!("{:?} {:?}", p.reservation(id(2)), p.decisions.get(&id(2)))
                }
            };
            failures.push(format!("{name}:{ln}: expect {} -- got {got}", e.join(" ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failed = Vec::new();
    for f in &files {
        if let Err(e) = std::panic::catch_unwind(|| check(f)) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{}: {msg}", f.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
