//! Scheduling policy: the typed form of every `moab.cfg` parameter that
//! changes a scheduling decision. Policies are parameters of one algorithm
//! (EASY and conservative backfill differ only in `reservation_depth`).
//!
//! Every enumerated value is one Rust enum with `FromStr` (case-insensitive,
//! Moab's spelling) and `Display`. Build a policy by mutating
//! [`Policy::default`], which holds Moab's defaults.

use std::collections::BTreeMap;

use crate::job::JobFlag;
use crate::Secs;

/// Declares a Moab enumeration with its spellings: the enum, `ALL`, `as_str`,
/// `Display` and a case-insensitive `FromStr`. Exported so the configuration
/// crate declares its own enumerations the same way.
#[macro_export]
macro_rules! moab_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Moab's spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                let t = s.trim();
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str().eq_ignore_ascii_case(t))
                    .ok_or_else(|| {
                        let names: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                        format!("invalid value '{t}' (expected one of {})", names.join(", "))
                    })
            }
        }
    };
}

moab_enum! {
    /// `BACKFILLPOLICY`.
    BackfillPolicy {
        FirstFit => "FIRSTFIT",
        BestFit => "BESTFIT",
        Greedy => "GREEDY",
        Preempt => "PREEMPT",
        None => "NONE",
    }
}

moab_enum! {
    /// `BACKFILLMETRIC`: what "best fit" maximises.
    BackfillMetric {
        Procs => "PROCS",
        Nodes => "NODES",
        Seconds => "SECONDS",
        ProcSeconds => "PROCSECONDS",
    }
}

moab_enum! {
    /// `RESERVATIONPOLICY`.
    ReservationPolicy {
        /// Reserve for the jobs that are currently the highest priority; drop
        /// reservations of jobs that fell behind.
        CurrentHighest => "CURRENTHIGHEST",
        /// Keep a reservation once made, even if the job's priority drops.
        Highest => "HIGHEST",
        /// Never reserve.
        Never => "NEVER",
    }
}

moab_enum! {
    /// `NODEALLOCATIONPOLICY`.
    NodeAllocationPolicy {
        FirstAvailable => "FIRSTAVAILABLE",
        LastAvailable => "LASTAVAILABLE",
        MinResource => "MINRESOURCE",
        Contiguous => "CONTIGUOUS",
        MaxBalance => "MAXBALANCE",
        Priority => "PRIORITY",
        CpuLoad => "CPULOAD",
    }
}

moab_enum! {
    /// `PREEMPTPOLICY`.
    PreemptPolicy {
        Suspend => "SUSPEND",
        Checkpoint => "CHECKPOINT",
        Requeue => "REQUEUE",
        Cancel => "CANCEL",
    }
}

moab_enum! {
    /// `BFVIRTUALWALLTIMECONFLICTPOLICY`.
    VirtualWalltimeConflictPolicy {
        None => "NONE",
        Preempt => "PREEMPT",
    }
}

moab_enum! {
    /// `BFPRIORITYPOLICY`: order of backfill candidates (PREEMPT backfill).
    BfPriorityPolicy {
        None => "NONE",
        Random => "RANDOM",
        Duration => "DURATION",
        HwDuration => "HWDURATION",
    }
}

moab_enum! {
    /// `QOSCFG[x] QFLAGS=`.
    QosFlag {
        Preemptor => "PREEMPTOR",
        Preemptee => "PREEMPTEE",
        NoBf => "NOBF",
        NoReservation => "NORESERVATION",
        ReserveAlways => "RESERVEALWAYS",
        IgnAll => "IGNALL",
        RunNow => "RUNNOW",
        /// The QoS's jobs may request a completion deadline that the
        /// scheduler guarantees with a reservation ([`crate::deadline`]).
        Deadline => "DEADLINE",
    }
}

moab_enum! {
    /// `DEADLINEPOLICY`: what happens to a job whose guaranteed deadline
    /// cannot be met ([`crate::deadline`]).
    DeadlinePolicy {
        /// Moab's default: the deadline is dropped (as `IGNORE`).
        None => "NONE",
        /// The job is cancelled.
        Cancel => "CANCEL",
        /// The job gets a system hold (and its deadline is dropped).
        Hold => "HOLD",
        /// The deadline is kept and retried each iteration; the
        /// administrators are told (the daemon's log, the job's message).
        Escalate => "ESCALATE",
        /// The deadline is dropped: the job runs as any other.
        Ignore => "IGNORE",
        /// The deadline is kept and retried each iteration.
        Retry => "RETRY",
    }
}

/// A soft,hard limit pair (`MAXJOB=2,4`). A single value sets both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub soft: u64,
    pub hard: u64,
}

impl Limit {
    /// The limit at a policy level.
    pub fn at(self, level: PolicyLevel) -> u64 {
        match level {
            PolicyLevel::Soft => self.soft,
            PolicyLevel::Hard => self.hard,
        }
    }
}

/// Which side of soft,hard limits a pass enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyLevel {
    Soft,
    Hard,
}

impl PolicyLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyLevel::Soft => "SOFT",
            PolicyLevel::Hard => "HARD",
        }
    }
}

/// Throttling limits of one credential (`MAXJOB`, `MAXPROC`, `MAXNODE`, `MAXWC`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// Active jobs.
    pub max_job: Option<Limit>,
    /// Active processors.
    pub max_proc: Option<Limit>,
    /// Active nodes.
    pub max_node: Option<Limit>,
    /// Outstanding wall-clock seconds of active jobs.
    pub max_wc: Option<Limit>,
}

/// How a credential's QoS access list (`QLIST=`, plus its `QDEF=`) combines
/// with the other credentials' lists (Moab's list markers, `MQOSGetAccess`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum QosListKind {
    /// No marker: the job may use the union of its credentials' lists.
    #[default]
    Or,
    /// `&` (`QDEF=high&`): the job may use only QoS in this list (the
    /// intersection of every `&` list of its credentials).
    And,
    /// `^`: exactly this list, whatever the other credentials say.
    Only,
}

/// Configuration of one credential (`USERCFG`, `GROUPCFG`, `ACCOUNTCFG`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CredConfig {
    pub priority: i64,
    pub limits: Limits,
    /// Default QoS (`QDEF=`); it is also part of the access list.
    pub qdef: Option<String>,
    /// QoS access list (`QLIST=`).
    pub qlist: Vec<String>,
    /// `FSTARGET=` ([`crate::fairshare`]).
    pub fs_target: Option<crate::fairshare::FsTarget>,
    /// How the list combines with other credentials' (`&`, `^` markers).
    pub qlist_kind: QosListKind,
}

/// Configuration of one class/queue (`CLASSCFG[x]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassConfig {
    pub priority: i64,
    pub limits: Limits,
    /// `DEFAULT.WCLIMIT`: applied to jobs that request none.
    pub default_wclimit: Option<Secs>,
    /// `MAX.WCLIMIT`: the most a job of this class may request.
    pub max_wclimit: Option<Secs>,
    /// `QDEF=`: default QoS of the class's jobs (also part of its list).
    pub qdef: Option<String>,
    /// `QLIST=`: QoS the class's jobs may use.
    pub qlist: Vec<String>,
    /// How the list combines with other credentials' (`&`, `^` markers).
    pub qlist_kind: QosListKind,
    /// `JOBFLAGS=` / `FLAGS=`: flags given to every job of the class.
    pub job_flags: Vec<JobFlag>,
    /// `FSTARGET=` ([`crate::fairshare`]).
    pub fs_target: Option<crate::fairshare::FsTarget>,
    /// Job defaults and per-job limits beyond the wall clock
    /// ([`crate::class`]).
    pub job: ClassJobLimits,
}

/// `CLASSCFG[x] DEFAULT.* MAX.* MIN.* HOSTLIST PARTITION`: what a job of
/// the class gets when it asks for nothing, and what it may ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassJobLimits {
    /// `DEFAULT.NODES`: node count of jobs that request no shape.
    pub default_nodes: Option<u32>,
    /// `DEFAULT.PROC`: processors of jobs that request no shape.
    pub default_procs: Option<u32>,
    /// `DEFAULT.MEM`: memory per task (MB) of jobs that request none.
    pub default_mem_mb: Option<u64>,
    /// `DEFAULT.FEATURES`: features required of jobs that request none.
    pub default_features: Vec<String>,
    /// `MAX.PROC`, `MAX.NODE`, `MIN.PROC`, `MIN.WCLIMIT`.
    pub max_procs: Option<u32>,
    pub max_nodes: Option<u32>,
    pub min_procs: Option<u32>,
    pub min_wclimit: Option<Secs>,
    /// `HOSTLIST`: the nodes the class's jobs may use (empty: any).
    pub hosts: Vec<String>,
    /// `PARTITION`: the partition the class's jobs run in.
    pub partition: Option<String>,
}
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosConfig {
    pub priority: i64,
    pub limits: Limits,
    pub flags: Vec<QosFlag>,
    /// `JOBFLAGS=`: flags given to every job of the QoS.
    pub job_flags: Vec<JobFlag>,
    /// `FSTARGET=` ([`crate::fairshare`]).
    pub fs_target: Option<crate::fairshare::FsTarget>,
    /// `QTWEIGHT=`, `XFWEIGHT=`: added to `QUEUETIMEWEIGHT` and
    /// `XFACTORWEIGHT` for the QoS's jobs (Moab's per-QoS service weights).
    pub qt_weight: i64,
    pub xf_weight: i64,
    /// `QTTARGET=` (seconds) and `XFTARGET=` (hundredths): the QoS's
    /// service targets, shown by mdiag -q; Arches has no TARGET priority
    /// component to apply them to (a warning says so).
    pub qt_target: Option<Secs>,
    pub xf_target_hundredths: Option<u64>,
}

/// Priority component and subcomponent weights (Moab §5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityWeights {
    pub service: i64,
    pub queuetime: i64,
    pub xfactor: i64,
    pub bypass: i64,
    pub cred: i64,
    pub user: i64,
    pub group: i64,
    pub account: i64,
    pub class: i64,
    pub qos: i64,
    /// Weight of the job's user priority (`msub -p`).
    pub userprio: i64,
    /// `DEADLINEWEIGHT`: weight of the deadline's proximity
    /// ([`crate::deadline::factor`]).
    pub deadline: i64,
    /// `FSWEIGHT`: the fairshare component ([`crate::fairshare`]).
    pub fs: i64,
    /// `FSUSERWEIGHT`, `FSGROUPWEIGHT`, `FSACCOUNTWEIGHT`, `FSQOSWEIGHT`,
    /// `FSCLASSWEIGHT`.
    pub fs_user: i64,
    pub fs_group: i64,
    pub fs_account: i64,
    pub fs_qos: i64,
    pub fs_class: i64,
    /// `FSJPUWEIGHT`, `FSPPUWEIGHT`, `FSPSPUWEIGHT`: the user's running
    /// jobs, processors and processor-seconds.
    pub fs_jpu: i64,
    pub fs_ppu: i64,
    pub fs_pspu: i64,
    /// `FSCAP`: the most the fairshare component (Σ subcomponent weight ×
    /// factor) counts either way before `FSWEIGHT` (0: no cap).
    pub fs_cap: i64,
    /// `QUEUETIMECAP`, `XFACTORCAP`, `BYPASSCAP`: the most the raw
    /// (pre-weighted) queue-time minutes, expansion factor and bypass
    /// count contribute (0: no cap).
    pub queuetime_cap: i64,
    pub xfactor_cap: i64,
    pub bypass_cap: i64,
}

impl Default for PriorityWeights {
    fn default() -> Self {
        // Moab defaults: SERVICEWEIGHT 1, QUEUETIMEWEIGHT 1, CREDWEIGHT 1,
        // all other subcomponent weights 0: pure FIFO by queue time.
        PriorityWeights {
            service: 1,
            queuetime: 1,
            xfactor: 0,
            bypass: 0,
            cred: 1,
            user: 0,
            group: 0,
            account: 0,
            class: 0,
            qos: 0,
            userprio: 0,
            deadline: 0,
            // Moab: every component weight 1, the subcomponents 0.
            fs: 1,
            fs_user: 0,
            fs_group: 0,
            fs_account: 0,
            fs_qos: 0,
            fs_class: 0,
            fs_jpu: 0,
            fs_ppu: 0,
            fs_pspu: 0,
            fs_cap: 0,
            queuetime_cap: 0,
            xfactor_cap: 0,
            bypass_cap: 0,
        }
    }
}

/// One `RESERVATIONDEPTH[i]` / `RESERVATIONQOSLIST[i]` bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservationBucket {
    pub depth: u32,
    /// QoS names sharing the bucket; `None` = `[ALL]`.
    pub qos: Option<Vec<String>>,
}

/// Every scheduling parameter the core understands.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub backfill: BackfillPolicy,
    pub backfill_metric: BackfillMetric,
    /// `BACKFILLDEPTH`: queued jobs backfill looks at (0 = all).
    pub backfill_depth: u32,
    pub bf_chunk_duration: Secs,
    pub bf_chunk_size: u32,
    pub bf_priority_policy: BfPriorityPolicy,
    /// `BFORDER SHORTESTPREDICTEDFIRST` (Arches, SJBF): backfill candidates
    /// are tried shortest planning duration (estimate, else walltime) first
    /// instead of in priority order (FIRSTFIT and BESTFIT).
    pub bf_shortest_first: bool,
    /// `PREDICTIONSCOPE RUNNING` (Arches): only running jobs are planned
    /// with their `estimate` (predicted run time); queued jobs are reserved
    /// and backfilled with their walltime, so no backfilled job can delay a
    /// reservation by outliving a prediction. Their `estimate` still orders
    /// backfill candidates under `bf_shortest_first`.
    pub estimates_running_only: bool,
    /// `PREDICTIONGUARD` (Arches): when a job holding a reservation has
    /// waited at least this long (since submission), the iteration is
    /// planned with walltimes as EASY is (estimates only order backfill
    /// candidates), so backfill can no longer delay it on the strength of
    /// a prediction ([`crate::schedule()`]). `None`: off.
    pub prediction_guard: Option<Secs>,
    /// Every job is planned with its walltime, its `estimate` only orders
    /// backfill candidates (set by the prediction guard for one iteration).
    pub estimates_ignored: bool,
    /// Whether plans carry each queued job's priority components (what
    /// `checkjob` and `mdiag -p` show). Off, a breakdown holds the total
    /// alone, the same number: the simulator orders by it and shows no
    /// breakdown. Not a `moab.cfg` parameter; on by default.
    pub priority_components: bool,
    /// Whether plans carry a decision for every queued job (rank, priority,
    /// reason: what `checkjob`, `showq` and `mdiag` read). Off, a plan's
    /// decisions stay empty unless the iteration itself needs them (elastic
    /// jobs, `BFVIRTUALWALLTIMECONFLICTPOLICY PREEMPT`): the simulator reads
    /// none unless it is served or stages data. Not a `moab.cfg` parameter;
    /// on by default.
    pub plan_decisions: bool,
    /// `BFORDER WIDESTWINDOWFIRST` (Arches): FIRSTFIT traverses the backfill
    /// windows widest first (Moab §8.2.2) instead of the queue in order.
    pub bf_widest_window_first: bool,
    /// `BFVIRTUALWALLTIMESCALINGFACTOR` (`None` = disabled).
    pub bf_virtual_walltime_factor: Option<f64>,
    pub bf_virtual_walltime_conflict: VirtualWalltimeConflictPolicy,
    /// Reservation buckets; the default is one bucket of depth 1 for all QoS.
    pub reservation_buckets: Vec<ReservationBucket>,
    pub reservation_policy: ReservationPolicy,
    pub node_allocation: NodeAllocationPolicy,
    pub weights: PriorityWeights,
    pub users: BTreeMap<String, CredConfig>,
    pub groups: BTreeMap<String, CredConfig>,
    pub accounts: BTreeMap<String, CredConfig>,
    pub classes: BTreeMap<String, ClassConfig>,
    pub qos: BTreeMap<String, QosConfig>,
    pub preempt_policy: PreemptPolicy,
    pub job_preempt_min_active: Secs,
    pub job_preempt_max_active: Secs,
    /// `GUARANTEEDPREEMPTION`: the resources freed for a preemptor stay
    /// locked for it until it starts or `JOBRETRYTIME` has passed.
    pub guaranteed_preemption: bool,
    /// `JOBRETRYTIME`: how long a preemptor's lock outlives the release of
    /// its resources (and a failed start).
    pub job_retry_time: Secs,
    /// `RMPOLLINTERVAL`: the longest the daemon waits between iterations.
    pub rm_poll_interval: Secs,
    /// Standing reservations (`SRCFG[name]`), materialised each iteration.
    pub standing: Vec<crate::resv::Standing>,
    /// `NODEACCESSPOLICY`: the node access policy of jobs and nodes that
    /// have none of their own ([`crate::access`]).
    pub node_access: crate::access::NodeAccessPolicy,
    /// `RMCFG[x] DEFAULTCLASS=` of the compute resource manager: the class
    /// of jobs submitted without one ([`crate::class::assign`]).
    pub default_class: Option<String>,
    /// Job templates (`JOBCFG`, `JOBMATCHCFG`), applied at submission.
    pub templates: crate::templates::Templates,
    /// `MALLEABLEGROWTH`: when running malleable jobs grow
    /// ([`crate::malleable`]).
    pub growth: crate::malleable::GrowthPolicy,
    /// Fairshare (`FSPOLICY` and the usage of this iteration).
    pub fairshare: Fairshare,
    /// `DEADLINEPOLICY` ([`crate::deadline`]).
    pub deadline_policy: DeadlinePolicy,
}

/// Fairshare as the core sees it ([`crate::fairshare`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Fairshare {
    /// `FSPOLICY` is set (otherwise fairshare neither changes priorities nor
    /// blocks jobs).
    pub enabled: bool,
    /// The decayed usage at the iteration's `now`, set by the driver before
    /// each iteration when [`crate::fairshare::active`] (with
    /// [`Fairshare::set_usage`], which also evaluates the share tree).
    pub usage: std::sync::Arc<crate::fairshare::FsUsage>,
    /// `FSTREE` (`None`: no share tree) ([`crate::fstree`]).
    pub tree: Option<std::sync::Arc<crate::fstree::FsTree>>,
    /// `FSDEPTH` and `FSDECAY` (the share tree's constant).
    pub depth: u32,
    pub decay: f64,
    /// `FSTREETIERMULTIPLIER` ([`crate::fstree`]).
    pub tier_multiplier: f64,
    /// The share tree evaluated under [`Fairshare::usage`]: the global
    /// tree (key `None`) and each partition's with its own shares.
    pub tree_states:
        std::sync::Arc<std::collections::BTreeMap<Option<String>, crate::fstree::TreeState>>,
}

impl Fairshare {
    /// Sets the usage of this iteration and evaluates the share tree
    /// under it.
    pub fn set_usage(&mut self, usage: std::sync::Arc<crate::fairshare::FsUsage>) {
        self.usage = usage;
        self.refresh_tree();
    }

    /// Re-evaluates the share tree under the current usage.
    pub fn refresh_tree(&mut self) {
        let mut states = std::collections::BTreeMap::new();
        if let Some(t) = &self.tree {
            let k = crate::fstree::tree_constant(self.depth, self.decay);
            let m = self.tier_multiplier;
            states.insert(None, t.evaluate(&self.usage, None, k, m));
            for p in t.partitions() {
                let s = t.evaluate(&self.usage, Some(&p), k, m);
                states.insert(Some(p), s);
            }
        }
        self.tree_states = std::sync::Arc::new(states);
    }
}

impl Default for Fairshare {
    fn default() -> Self {
        // Moab's FSDEPTH 8 and FSDECAY 1.0.
        Fairshare {
            enabled: false,
            usage: Default::default(),
            tree: None,
            depth: 8,
            decay: 1.0,
            tier_multiplier: 1.0,
            tree_states: Default::default(),
        }
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            backfill: BackfillPolicy::FirstFit,
            backfill_metric: BackfillMetric::Procs,
            backfill_depth: 0,
            bf_chunk_duration: 0,
            bf_chunk_size: 0,
            bf_priority_policy: BfPriorityPolicy::None,
            bf_shortest_first: false,
            estimates_running_only: false,
            prediction_guard: None,
            estimates_ignored: false,
            priority_components: true,
            plan_decisions: true,
            bf_widest_window_first: false,
            bf_virtual_walltime_factor: None,
            bf_virtual_walltime_conflict: VirtualWalltimeConflictPolicy::None,
            reservation_buckets: vec![ReservationBucket {
                depth: 1,
                qos: None,
            }],
            reservation_policy: ReservationPolicy::CurrentHighest,
            node_allocation: NodeAllocationPolicy::LastAvailable,
            weights: PriorityWeights::default(),
            users: BTreeMap::new(),
            groups: BTreeMap::new(),
            accounts: BTreeMap::new(),
            classes: BTreeMap::new(),
            qos: BTreeMap::new(),
            preempt_policy: PreemptPolicy::Requeue,
            job_preempt_min_active: 0,
            job_preempt_max_active: 0,
            guaranteed_preemption: false,
            job_retry_time: 60,
            rm_poll_interval: 30,
            standing: Vec::new(),
            node_access: crate::access::NodeAccessPolicy::Shared,
            default_class: None,
            templates: crate::templates::Templates::default(),
            growth: crate::malleable::GrowthPolicy::default(),
            fairshare: Fairshare::default(),
            deadline_policy: DeadlinePolicy::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_parse_case_insensitively_and_round_trip() {
        assert_eq!(
            "bestfit".parse::<BackfillPolicy>(),
            Ok(BackfillPolicy::BestFit)
        );
        for p in BackfillPolicy::ALL {
            assert_eq!(p.to_string().parse::<BackfillPolicy>(), Ok(*p));
        }
        let e = "sometimes".parse::<ReservationPolicy>().unwrap_err();
        assert!(e.contains("CURRENTHIGHEST"), "{e}");
    }
}
