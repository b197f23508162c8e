//! The parts of a [`super::Config`] that are objects of their own: log and
//! scheduler settings, resource managers, standing reservations.

use std::collections::BTreeMap;

use arches_core::Secs;

use crate::enums::{FsPolicy, ResourceType, RmType, SchedMode, SrPeriod};

/// Logging settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// `LOGLEVEL` 0–9.
    pub level: u32,
    /// `LOGFILE` (relative names are under `dir`).
    pub file: String,
    /// `LOGDIR` (relative names are under the Moab home directory).
    pub dir: String,
    /// `LOGFILEMAXSIZE` in bytes.
    pub max_size: u64,
    /// `LOGFILEROLLDEPTH`.
    pub roll_depth: u32,
}

/// Fairshare settings (shown by `mdiag -f`).
#[derive(Debug, Clone, PartialEq)]
pub struct FairshareConfig {
    /// `FSPOLICY` (`None` = fairshare off).
    pub policy: Option<FsPolicy>,
    /// `FSDEPTH`: intervals remembered.
    pub depth: u32,
    /// `FSINTERVAL`: length of one interval.
    pub interval: Secs,
    /// `FSDECAY`: weight of each older interval.
    pub decay: f64,
}

impl FairshareConfig {
    /// The fairshare window the drivers charge usage into: `FSINTERVAL`,
    /// `FSDEPTH`, `FSDECAY`, and what `FSPOLICY` charges on a machine of
    /// `procs` processors and `mem_mb` MB (processor-equivalents need the
    /// totals). Nodes have no speed factor in Arches (every node's is 1), so
    /// `SDEDICATEDPES` charges as `DEDICATEDPES` and `PDEDICATEDPS` as
    /// `DEDICATEDPS`.
    pub fn window(&self, procs: u32, mem_mb: u64) -> arches_core::accounting::FsWindow {
        use arches_core::accounting::FsCharge;
        let charge = match self.policy {
            Some(FsPolicy::DedicatedPes | FsPolicy::SDedicatedPes) => {
                FsCharge::ProcEquivalents { procs, mem_mb }
            }
            Some(FsPolicy::UtilizedPs) => FsCharge::Utilized,
            Some(FsPolicy::DedicatedPs | FsPolicy::PDedicatedPs) | None => FsCharge::Dedicated,
        };
        arches_core::accounting::FsWindow {
            interval: self.interval.max(1),
            depth: self.depth.max(1),
            decay: self.decay,
            charge,
        }
    }

    /// [`FairshareConfig::window`] on the machine of `state` (all its
    /// nodes' processors and memory, summed only for the policy that
    /// charges processor-equivalents: the drivers ask at every job end).
    pub fn window_for(&self, state: &arches_core::State) -> arches_core::accounting::FsWindow {
        let pes = matches!(
            self.policy,
            Some(FsPolicy::DedicatedPes | FsPolicy::SDedicatedPes)
        );
        let (procs, mem) = if pes {
            state.nodes().iter().fold((0u32, 0u64), |(p, m), n| {
                (p.saturating_add(n.procs), m + n.mem_mb)
            })
        } else {
            (0, 0)
        };
        self.window(procs, mem)
    }
}

/// Scheduler settings (`SCHEDCFG[name] ...` and the legacy `SERVERHOST`,
/// `SERVERPORT`, `SERVERMODE`, `SERVERNAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedConfig {
    /// The scheduler's name (the `SCHEDCFG` index), default `Moab`.
    pub name: String,
    /// `SERVER=<host>[:<port>]`.
    pub server: Option<String>,
    /// `MODE=`.
    pub mode: SchedMode,
    /// `FLAGS=`.
    pub flags: Vec<String>,
    /// `MAXJOBID=`.
    pub max_job_id: Option<u64>,
    /// `MINJOBID=`.
    pub min_job_id: Option<u64>,
}

/// One resource manager (`RMCFG[name] ...`).
#[derive(Debug, Clone, PartialEq)]
pub struct RmConfig {
    pub name: String,
    /// `TYPE=` (e.g. `LOCAL`, `SLURM`, `NATIVE`).
    pub rm_type: RmType,
    /// The part after `:` in `TYPE=NATIVE:msm`.
    pub subtype: Option<String>,
    /// `RESOURCETYPE=`.
    pub resource_type: ResourceType,
    /// `SERVER=` (`host[:port]` or a URL).
    pub server: Option<String>,
    /// `HOST=`.
    pub host: Option<String>,
    /// `PORT=`.
    pub port: Option<u16>,
    /// `TIMEOUT=`.
    pub timeout: Secs,
    /// `POLLINTERVAL=` (falls back to `RMPOLLINTERVAL`).
    pub poll_interval: Option<Secs>,
    /// `PARTITION=`: partition of the nodes this RM reports.
    pub partition: Option<String>,
    /// `FLAGS=`.
    pub flags: Vec<String>,
    /// `DEFAULTCLASS=`.
    pub default_class: Option<String>,
    /// `DESCRIPTION=`.
    pub description: Option<String>,
    /// `DATARM=`: storage RM that stages this RM's jobs' data.
    pub data_rm: Option<String>,
    /// Native interface URLs by attribute name (`CLUSTERQUERYURL`, ...).
    pub urls: BTreeMap<String, String>,
    /// `TARGETUSAGE=` percent of the storage cache data staging may fill.
    pub target_usage: Option<f64>,
    /// `MAXDSOP=`: concurrent data-staging operations.
    pub max_dsop: Option<u32>,
    /// `MAXDSOPPERNODE=`: concurrent LOCAL stage-ins to one compute node.
    pub max_dsop_per_node: u32,
    /// `BANDWIDTH=` in KB/s.
    pub bandwidth_kbps: Option<u64>,
    /// `SUSPENDSIG=`.
    pub suspend_sig: Option<i32>,
    /// `CHECKPOINTSIG=`.
    pub checkpoint_sig: Option<i32>,
    /// `CHECKPOINTTIMEOUT=`.
    pub checkpoint_timeout: Option<Secs>,
    /// `SOFTTERMSIG=`.
    pub soft_term_sig: Option<i32>,
}

impl RmConfig {
    /// An RM with Moab's defaults (`TYPE=PBS`, `RESOURCETYPE=COMPUTE`, 30 s timeout).
    pub fn new(name: &str) -> Self {
        RmConfig {
            name: name.to_string(),
            rm_type: RmType::Pbs,
            subtype: None,
            resource_type: ResourceType::Compute,
            server: None,
            host: None,
            port: None,
            timeout: 30,
            poll_interval: None,
            partition: None,
            flags: Vec::new(),
            default_class: None,
            description: None,
            data_rm: None,
            urls: BTreeMap::new(),
            target_usage: None,
            max_dsop: None,
            max_dsop_per_node: 1,
            bandwidth_kbps: None,
            suspend_sig: None,
            checkpoint_sig: None,
            checkpoint_timeout: None,
            soft_term_sig: None,
        }
    }

    /// A native interface URL (`"SYSTEMQUERYURL"`, ...).
    pub fn url(&self, attr: &str) -> Option<&str> {
        self.urls.get(attr).map(String::as_str)
    }

    /// Whether this is a storage (data-staging) RM.
    pub fn is_storage(&self) -> bool {
        self.resource_type == ResourceType::Storage
    }
}

/// A standing reservation (`SRCFG[name] ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingReservation {
    pub name: String,
    /// `PERIOD=`.
    pub period: SrPeriod,
    /// `STARTTIME=`: offset into the period.
    pub start_time: Option<Secs>,
    /// `ENDTIME=`: offset into the period.
    pub end_time: Option<Secs>,
    /// `DURATION=`.
    pub duration: Option<Secs>,
    /// `DAYS=` (`Mon`..`Sun`, empty = every day).
    pub days: Vec<String>,
    /// `HOSTLIST=`.
    pub hosts: Vec<String>,
    /// `TASKCOUNT=`.
    pub task_count: u32,
    /// `RESOURCES=PROCS:N`: processors per task.
    pub procs_per_task: u32,
    /// `DEPTH=`: periods reserved ahead.
    pub depth: u32,
    /// `PARTITION=`.
    pub partition: Option<String>,
    /// Access lists.
    pub users: Vec<String>,
    pub groups: Vec<String>,
    pub accounts: Vec<String>,
    pub classes: Vec<String>,
    pub qos: Vec<String>,
    /// `FLAGS=`.
    pub flags: Vec<String>,
    /// `OWNER=`.
    pub owner: Option<String>,
}

impl StandingReservation {
    /// The core's standing reservation (what the scheduler materialises).
    pub fn to_core(&self) -> arches_core::Standing {
        let mut s = arches_core::Standing::new(&self.name);
        s.period = match self.period {
            SrPeriod::Day => arches_core::Period::Day,
            SrPeriod::Week => arches_core::Period::Week,
            SrPeriod::Infinity => arches_core::Period::Infinity,
        };
        s.start_time = self.start_time;
        s.end_time = self.end_time;
        s.duration = self.duration;
        s.days = self
            .days
            .iter()
            .filter_map(|d| arches_core::resv::weekday(d))
            .collect();
        s.hosts = self.hosts.clone();
        s.tasks = self.task_count.saturating_mul(self.procs_per_task.max(1));
        s.depth = self.depth;
        s.acl = arches_core::Acl {
            users: self.users.clone(),
            groups: self.groups.clone(),
            accounts: self.accounts.clone(),
            classes: self.classes.clone(),
            qos: self.qos.clone(),
        };
        s.flags = self.flags.clone();
        s.owner = self.owner.clone();
        s
    }

    /// A reservation with Moab's defaults (`PERIOD=DAY`, `DEPTH=2`).
    pub fn new(name: &str) -> Self {
        StandingReservation {
            name: name.to_string(),
            period: SrPeriod::Day,
            start_time: None,
            end_time: None,
            duration: None,
            days: Vec::new(),
            hosts: Vec::new(),
            task_count: 0,
            procs_per_task: 1,
            depth: 2,
            partition: None,
            users: Vec::new(),
            groups: Vec::new(),
            accounts: Vec::new(),
            classes: Vec::new(),
            qos: Vec::new(),
            flags: Vec::new(),
            owner: None,
        }
    }
}
