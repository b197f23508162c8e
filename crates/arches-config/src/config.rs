//! The typed configuration: what `moab.cfg` says, in the shapes the daemon,
//! the simulator and the commands use.
//!
//! A [`Config`] starts from Moab's defaults ([`Config::default`]: no nodes, no
//! resource managers, `root` the only administrator) and every parameter line
//! is applied to it through the parameter table. Derived parts (the node list
//! with `NODECFG[DEFAULT]` merged in, the reservation buckets) are rebuilt after
//! each change, so `NODECFG[DEFAULT]` may come before or after the nodes and
//! `RESERVATIONQOSLIST[i]` before or after `RESERVATIONDEPTH[i]`.

use std::collections::BTreeMap;

use arches_core::policy::{PreemptPolicy, ReservationBucket};
use arches_core::{HoldType, Node, NodeAdminState, Policy, Secs};

use crate::enums::{
    BfOrder, DataStageModel, JobNodeMatchPolicy, NodeAccessPolicy, PredictionCorrection,
    ResourceType, RmType, RuntimePrediction, SchedMode,
};
use crate::parse::{self, Diagnostic, Parsed};

mod hooks;
mod parts;
pub use hooks::HooksConfig;
pub use parts::{FairshareConfig, LogConfig, RmConfig, SchedConfig, StandingReservation};

/// The whole configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Every scheduling parameter the core understands.
    pub policy: Policy,
    /// Compute nodes from `NODECFG[name]` (with `NODECFG[DEFAULT]` applied), in
    /// the order they first appear. For the simulator and a `LOCAL` RM these
    /// are the machine; with an RM that reports its own nodes they override
    /// the reported attributes of the nodes of the same name.
    pub nodes: Vec<Node>,
    /// `NODECFG[name] PREEMPTPOLICY=`: per-node preemption policy overrides.
    pub node_preempt_policy: BTreeMap<String, PreemptPolicy>,
    /// Administrator user names by level (index 0 = `ADMINCFG[1]`); `root` is
    /// always level 1.
    pub admins: [Vec<String>; 5],
    /// Administrator groups by level (`ADMINCFG[n] GROUPS=`).
    pub admin_groups: [Vec<String>; 5],
    /// Resource managers (`RMCFG[name]`), in the order they first appear.
    pub rms: Vec<RmConfig>,
    /// Scheduler settings (`SCHEDCFG[name]`).
    pub sched: SchedConfig,
    /// `JOBCPURGETIME`: how long finished jobs stay visible (Arches default 24 h).
    pub job_purge_secs: Secs,
    /// `JOBPURGETIME`: how long a job the RM no longer reports is kept.
    pub job_rm_purge_secs: Secs,
    /// `CLIENTTIMEOUT`.
    pub client_timeout: Secs,
    /// `CLIENTMAXCONNECTIONS`: client connections the daemon serves at once.
    pub client_max_connections: u32,
    /// `CLIENTMAXCONNECTIONSPERUSER`: client connections one user may hold.
    pub client_max_connections_per_user: u32,
    /// `DEFERTIME`.
    pub defer_time: Secs,
    /// `DEFERCOUNT`: defers before a batch hold.
    pub defer_count: u32,
    /// `DEFERSTARTCOUNT`: start failures before a defer.
    pub defer_start_count: u32,
    /// `RESERVATIONRETRYTIME`.
    pub reservation_retry_time: Secs,
    /// `LOGLEVEL`, `LOGFILE`, `LOGDIR`, ...
    pub log: LogConfig,
    /// `DATASTAGEMODEL`.
    pub data_stage_model: DataStageModel,
    /// `DATASTAGEHOLDTYPE`: hold placed on a job whose stage-in failed.
    pub data_stage_hold: HoldType,
    /// `TOOLSDIR`: `$TOOLSDIR` of `exec://` interface URLs (relative to the
    /// Moab home directory); `None`: the installed tools.
    pub tools_dir: Option<String>,
    /// `DATASTAGETIMEOUT`.
    pub data_stage_timeout: Secs,
    /// `DATASTAGECLEANUP`.
    pub data_stage_cleanup: bool,
    /// `DATASTAGELOCALDIR`.
    pub data_stage_local_dir: String,
    /// `ENABLEIMPLICITSTAGEOUT`.
    pub implicit_stage_out: bool,
    /// `IMPLICITSTAGEOUTURL`.
    pub implicit_stage_out_url: String,
    /// Standing reservations (`SRCFG[name]`), in the order they first appear.
    pub standing_reservations: Vec<StandingReservation>,
    /// `ENABLEPOSUSERPRIORITY`.
    pub enable_pos_user_priority: bool,
    /// `USEMOABJOBID`.
    pub use_moab_job_id: bool,
    /// `USEJOBREGEX`.
    pub use_job_regex: bool,
    /// `PROFILEDURATION`: statistics profile interval length.
    pub profile_duration: Secs,
    /// `PROFILECOUNT`: statistics profile intervals kept.
    pub profile_count: usize,
    /// `DISPLAYFLAGS`.
    pub display_flags: Vec<String>,
    /// `MSUBQUERYINTERVAL` (seconds between `msub -K` polls).
    pub msub_query_interval: Secs,
    /// `NODEACCESSPOLICY`.
    pub node_access_policy: NodeAccessPolicy,
    /// `JOBNODEMATCHPOLICY` (`None` = not set).
    pub job_node_match_policy: Option<JobNodeMatchPolicy>,
    /// `FSPOLICY`, `FSDEPTH`, `FSINTERVAL`, `FSDECAY`.
    pub fairshare: FairshareConfig,
    /// `RUNTIMEPREDICTION` (Arches).
    pub runtime_prediction: RuntimePrediction,
    /// `BFORDER` (Arches).
    pub bf_order: BfOrder,
    /// `PREDICTIONCORRECTION` (Arches).
    pub prediction_correction: PredictionCorrection,
    /// Priority weights and caps of Moab §5.1 that `Policy::weights` has no
    /// field for (fairshare, resource, target, attribute, usage components and
    /// the `*CAP`s), by parameter name; absent = 0 (the default of each).
    pub extra_weights: BTreeMap<&'static str, i64>,
    /// Site programs: submit and activation filters, mail, notifications.
    pub hooks: HooksConfig,
    /// `METRICSPORT` (Arches): the metrics and dashboard listener's port;
    /// `None` = no listener.
    pub metrics_port: Option<u16>,
    /// `METRICSHOST` (Arches): the address it binds.
    pub metrics_host: String,
    /// Raw settings, for `effective()` and for rebuilding derived parts.
    pub(crate) record: Record,
}

/// The name `NODECFG[DEFAULT]` uses.
pub const DEFAULT_NODE: &str = "DEFAULT";

impl Default for Config {
    fn default() -> Self {
        Config {
            policy: Policy::default(),
            nodes: Vec::new(),
            node_preempt_policy: BTreeMap::new(),
            admins: [vec!["root".to_string()], vec![], vec![], vec![], vec![]],
            admin_groups: Default::default(),
            rms: Vec::new(),
            sched: SchedConfig {
                name: "Moab".to_string(),
                server: None,
                mode: SchedMode::Normal,
                flags: Vec::new(),
                max_job_id: None,
                min_job_id: None,
            },
            job_purge_secs: 86400,
            job_rm_purge_secs: 0,
            client_timeout: 30,
            client_max_connections: 1024,
            client_max_connections_per_user: 128,
            defer_time: 3600,
            defer_count: 24,
            defer_start_count: 1,
            reservation_retry_time: 60,
            log: LogConfig {
                level: 0,
                file: "moab.log".to_string(),
                dir: "log".to_string(),
                max_size: 10_000_000,
                roll_depth: 3,
            },
            data_stage_model: DataStageModel::External,
            data_stage_hold: HoldType::Defer,
            tools_dir: None,
            data_stage_timeout: 3600,
            data_stage_cleanup: true,
            data_stage_local_dir: "/tmp/arches-local".to_string(),
            implicit_stage_out: true,
            implicit_stage_out_url: "file://$HOME/".to_string(),
            standing_reservations: Vec::new(),
            enable_pos_user_priority: false,
            use_moab_job_id: false,
            use_job_regex: false,
            profile_duration: arches_core::history::DEFAULT_DURATION,
            profile_count: arches_core::history::DEFAULT_COUNT,
            display_flags: Vec::new(),
            msub_query_interval: 5,
            node_access_policy: NodeAccessPolicy::Shared,
            job_node_match_policy: None,
            fairshare: FairshareConfig {
                policy: None,
                depth: 8,
                interval: 43_200,
                decay: 1.0,
            },
            runtime_prediction: RuntimePrediction::None,
            bf_order: BfOrder::Priority,
            prediction_correction: PredictionCorrection::Stepwise,
            extra_weights: BTreeMap::new(),
            hooks: HooksConfig::default(),
            metrics_port: None,
            metrics_host: "127.0.0.1".to_string(),
            record: Record::default(),
        }
    }
}

impl Config {
    /// Parses `moab.cfg` text; `file` names it in diagnostics.
    pub fn parse(text: &str, file: &str) -> Parsed {
        parse::parse(text, file)
    }

    /// The configuration used when there is no `moab.cfg`: Moab's defaults,
    /// one node named `host` with `procs` processors and `mem_mb` MB, and a
    /// `LOCAL` resource manager named `local` that runs jobs on it.
    pub fn embedded_default(host: &str, procs: u32, mem_mb: u64) -> Config {
        let mut config = Config::default();
        config.fill_local_defaults(host, procs, mem_mb);
        config
    }

    /// Completes a configuration that names no compute resource manager or no
    /// node, as the daemon does after reading `moab.cfg`: without a compute RM
    /// a `LOCAL` RM named `local` is added; then, if there is a `LOCAL` RM and
    /// no node, this host becomes the one node (`NODECFG[DEFAULT]` still
    /// supplies its features and partition). A file that configures RMs and
    /// nodes is left as it is.
    pub fn fill_local_defaults(&mut self, host: &str, procs: u32, mem_mb: u64) {
        let has_compute = self
            .rms
            .iter()
            .any(|r| r.resource_type == ResourceType::Compute);
        if !has_compute {
            let name = if self.rm("local").is_none() {
                "local"
            } else {
                "local-compute"
            };
            self.rms.push(RmConfig {
                rm_type: RmType::Local,
                ..RmConfig::new(name)
            });
            self.record.objects.insert(
                format!("RMCFG[{name}]"),
                vec![("TYPE".to_string(), "LOCAL".to_string(), 0)],
            );
        }
        let has_local = self.rms.iter().any(|r| r.rm_type == RmType::Local);
        if has_local && self.nodes.is_empty() {
            let spec = self.node_mut(host);
            spec.procs = Some(procs);
            spec.mem_mb = Some(mem_mb);
            let entry = self
                .record
                .objects
                .entry(format!("NODECFG[{host}]"))
                .or_default();
            entry.retain(|(a, _, _)| a != "PROCS" && a != "MEM");
            entry.push(("PROCS".to_string(), procs.to_string(), 0));
            entry.push(("MEM".to_string(), mem_mb.to_string(), 0));
            self.rebuild();
        }
    }

    /// A node a resource manager reported (Slurm's `sinfo`), with what
    /// `NODECFG[name]` (else `NODECFG[DEFAULT]`) sets laid on top: its
    /// `FEATURES` are added to the reported ones, `PARTITION` replaces the
    /// RM's partition, `GRES` the reported generic resources, `ACCESS` is
    /// applied, a `STATE` other than UP wins over a reported Up (a
    /// reported Down stays Down). `PROCS` and `MEM` are not applied: the RM
    /// knows the node's processors and memory
    /// ([`Config::rm_node_size_overrides`] lists them for a warning).
    pub fn overlay_node(&self, node: &mut Node) {
        let specs = &self.record.node_specs;
        let own = specs.iter().find(|(n, _)| *n == node.name).map(|(_, s)| s);
        let default = specs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(DEFAULT_NODE))
            .map(|(_, s)| s);
        let pick = |f: fn(&NodeSpec) -> bool| own.filter(|s| f(s)).or(default.filter(|s| f(s)));
        if let Some(features) = pick(|s| s.features.is_some()).and_then(|s| s.features.as_ref()) {
            for f in features {
                if !node.features.contains(f) {
                    node.features.push(f.clone());
                }
            }
        }
        if let Some(p) = pick(|s| s.partition.is_some()).and_then(|s| s.partition.as_ref()) {
            node.partition = p.clone();
        }
        if let Some(g) = pick(|s| s.gres.is_some()).and_then(|s| s.gres.as_ref()) {
            node.gres = g.clone();
        }
        if let Some(a) = pick(|s| s.access.is_some()).and_then(|s| s.access) {
            node.access = Some(a);
        }
        if let Some(state) = pick(|s| s.state.is_some()).and_then(|s| s.state) {
            let rank = |a: NodeAdminState| match a {
                NodeAdminState::Up => 0,
                NodeAdminState::Drained => 1,
                NodeAdminState::Down => 2,
            };
            if rank(state) > rank(node.admin) {
                node.admin = state;
            }
        }
    }

    /// Names of the nodes `NODECFG[name]` configures (`DEFAULT` excluded).
    pub fn configured_node_names(&self) -> impl Iterator<Item = &str> {
        self.record
            .node_specs
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !n.eq_ignore_ascii_case(DEFAULT_NODE))
    }

    /// `(NODECFG[name], attribute)` of every `PROCS=`/`MEM=` set, which a
    /// node-reporting resource manager (Slurm) overrides.
    pub fn rm_node_size_overrides(&self) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        for (name, spec) in &self.record.node_specs {
            if spec.procs.is_some() {
                out.push((format!("NODECFG[{name}]"), "PROCS"));
            }
            if spec.mem_mb.is_some() {
                out.push((format!("NODECFG[{name}]"), "MEM"));
            }
        }
        out
    }

    /// Applies one `moab.cfg` line at run time (`mschedctl -m config "PARAM
    /// VALUE"`). On success returns the warnings (unknown attribute, ...); on
    /// error the configuration is unchanged and the errors are returned.
    pub fn apply_line(&mut self, line: &str) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        apply_line(self, line)
    }

    /// The effective value of every parameter as `(NAME, value)`, in table
    /// order: parameters never set show their default; indexed objects show
    /// one entry per index (`("RMCFG[data]", "TYPE=NATIVE RESOURCETYPE=STORAGE")`).
    pub fn effective(&self) -> Vec<(String, String)> {
        crate::params::effective(self)
    }

    /// `RMPOLLINTERVAL`: the longest time between scheduling iterations
    /// (kept in `policy.rm_poll_interval`, where the core reads it).
    pub fn poll_interval(&self) -> Secs {
        self.policy.rm_poll_interval
    }

    /// The RM named `name`.
    pub fn rm(&self, name: &str) -> Option<&RmConfig> {
        self.rms.iter().find(|r| r.name == name)
    }

    /// The administrator level (1–5) of `user` in `groups`, if any.
    pub fn admin_level(&self, user: &str, groups: &[String]) -> Option<u8> {
        (0..5u8)
            .find(|&i| {
                let l = usize::from(i);
                self.admins[l].iter().any(|u| u == user || u == "ALL")
                    || self.admin_groups[l].iter().any(|g| groups.contains(g))
            })
            .map(|i| i + 1)
    }

    /// The first line that set an attribute of object `key` (`"RMCFG[x]"`), or 0.
    pub(crate) fn object_line(&self, key: &str) -> usize {
        self.record
            .objects
            .get(key)
            .and_then(|attrs| {
                attrs
                    .iter()
                    .map(|(_, _, line)| *line)
                    .filter(|l| *l > 0)
                    .min()
            })
            .unwrap_or(0)
    }

    /// The line that set `attr` of object `key`, or 0.
    pub(crate) fn attr_line(&self, key: &str, attr: &str) -> usize {
        self.record
            .objects
            .get(key)
            .and_then(|attrs| attrs.iter().find(|(a, _, _)| a == attr))
            .map_or(0, |(_, _, line)| *line)
    }

    /// The RM entry named `name`, created with defaults if new.
    pub(crate) fn rm_mut(&mut self, name: &str) -> &mut RmConfig {
        let pos = match self.rms.iter().position(|r| r.name == name) {
            Some(p) => p,
            None => {
                self.rms.push(RmConfig::new(name));
                self.rms.len() - 1
            }
        };
        &mut self.rms[pos]
    }

    /// The node spec named `name`, created if new.
    pub(crate) fn node_mut(&mut self, name: &str) -> &mut NodeSpec {
        let specs = &mut self.record.node_specs;
        let pos = match specs.iter().position(|(n, _)| n == name) {
            Some(p) => p,
            None => {
                specs.push((name.to_string(), NodeSpec::default()));
                specs.len() - 1
            }
        };
        &mut specs[pos].1
    }

    /// The standing reservation named `name`, created if new.
    pub(crate) fn sr_mut(&mut self, name: &str) -> &mut StandingReservation {
        let srs = &mut self.standing_reservations;
        let pos = match srs.iter().position(|s| s.name == name) {
            Some(p) => p,
            None => {
                srs.push(StandingReservation::new(name));
                srs.len() - 1
            }
        };
        &mut srs[pos]
    }

    /// Rebuilds the derived fields (nodes, reservation buckets) from the specs.
    pub(crate) fn rebuild(&mut self) {
        let default = self
            .record
            .node_specs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(DEFAULT_NODE))
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        self.nodes.clear();
        self.node_preempt_policy.clear();
        for (name, spec) in &self.record.node_specs {
            if name.eq_ignore_ascii_case(DEFAULT_NODE) {
                continue;
            }
            let mut node = Node::new(
                name,
                spec.procs.or(default.procs).unwrap_or(1),
                spec.mem_mb.or(default.mem_mb).unwrap_or(0),
            );
            if let Some(f) = spec.features.as_ref().or(default.features.as_ref()) {
                node.features = f.clone();
            }
            if let Some(p) = spec.partition.as_ref().or(default.partition.as_ref()) {
                node.partition = p.clone();
            }
            node.admin = spec.state.or(default.state).unwrap_or_default();
            node.priority = spec.priority.or(default.priority).unwrap_or(0);
            if let Some(g) = spec.gres.as_ref().or(default.gres.as_ref()) {
                node.gres = g.clone();
            }
            node.access = spec.access.or(default.access);
            if let Some(p) = spec.preempt_policy.or(default.preempt_policy) {
                self.node_preempt_policy.insert(name.clone(), p);
            }
            self.nodes.push(node);
        }
        self.policy.default_class = self
            .rms
            .iter()
            .filter(|r| r.resource_type == ResourceType::Compute)
            .find_map(|r| r.default_class.clone());
        self.policy.standing = self
            .standing_reservations
            .iter()
            .map(StandingReservation::to_core)
            .collect();
        if !self.record.buckets.is_empty() {
            self.policy.reservation_buckets = self
                .record
                .buckets
                .values()
                .map(|b| ReservationBucket {
                    depth: b.depth.unwrap_or(1),
                    qos: b.qos.clone(),
                })
                .collect();
        }
    }
}

/// Applies one line to `config` (see [`Config::apply_line`]). Diagnostics name
/// the file `mschedctl` and line 1.
pub fn apply_line(config: &mut Config, line: &str) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut next = config.clone();
    let diagnostics = parse::apply_text(&mut next, line, "mschedctl", parse::Origin::Runtime);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect());
    }
    *config = next;
    Ok(diagnostics)
}

/// `SRCFG[x] RESOURCES=PROCS:N[;MEM:M]...`: the processors per task.
pub(crate) fn sr_procs_per_task(text: &str) -> Result<u32, String> {
    let mut procs = 1;
    for part in text.split([';', '+', ',']) {
        let (k, v) = part
            .split_once(':')
            .ok_or_else(|| format!("invalid resource '{part}' (expected TYPE:COUNT)"))?;
        let n: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("invalid count '{v}' for {k}"))?;
        if k.trim().eq_ignore_ascii_case("PROCS") {
            procs = n;
        }
    }
    Ok(procs)
}

/// What `NODECFG[name]` said, before `NODECFG[DEFAULT]` is merged in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeSpec {
    pub procs: Option<u32>,
    pub mem_mb: Option<u64>,
    pub features: Option<Vec<String>>,
    pub partition: Option<String>,
    pub state: Option<NodeAdminState>,
    pub preempt_policy: Option<PreemptPolicy>,
    pub priority: Option<i64>,
    pub gres: Option<Vec<(String, u32)>>,
    pub access: Option<arches_core::access::NodeAccessPolicy>,
}

/// `RESERVATIONDEPTH[i]` / `RESERVATIONQOSLIST[i]` as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BucketSpec {
    pub depth: Option<u32>,
    /// `None` = `[ALL]`.
    pub qos: Option<Vec<String>>,
}

/// Raw settings: what each line set, as normalised text, plus the specs the
/// derived fields are rebuilt from.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Record {
    /// `NAME` or `NAME[index]` → (normalised value, line).
    pub scalars: BTreeMap<String, (String, usize)>,
    /// `NAME[index]` → attributes in first-set order → (value, line).
    pub objects: BTreeMap<String, Vec<(String, String, usize)>>,
    pub node_specs: Vec<(String, NodeSpec)>,
    pub buckets: BTreeMap<u32, BucketSpec>,
}

#[cfg(test)]
mod tests;
