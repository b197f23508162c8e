//! Enumerated values that exist only in the configuration (the scheduling
//! enums live in `arches_core::policy`). Each is one Rust enum with Moab's
//! spelling, case-insensitive `FromStr` and `Display`.

use arches_core::moab_enum as cfg_enum;

cfg_enum! {
    /// `RMCFG[x] TYPE=`: the resource-manager interface.
    RmType {
        /// Arches: run jobs on this host (the embedded default).
        Local => "LOCAL",
        /// Arches: drive a Slurm cluster.
        Slurm => "SLURM",
        /// Moab native interface (`*URL=` scripts); storage RMs use it.
        Native => "NATIVE",
        Pbs => "PBS",
        Torque => "TORQUE",
        Wiki => "WIKI",
        Ll => "LL",
        Moab => "MOAB",
        Sss => "SSS",
        Other => "OTHER",
    }
}

cfg_enum! {
    /// `RMCFG[x] RESOURCETYPE=`.
    ResourceType {
        Compute => "COMPUTE",
        Storage => "STORAGE",
        License => "LICENSE",
        Network => "NETWORK",
        Prov => "PROV",
        Info => "INFO",
        Any => "ANY",
    }
}

cfg_enum! {
    /// `SCHEDCFG[x] MODE=`.
    SchedMode {
        Normal => "NORMAL",
        Test => "TEST",
        Monitor => "MONITOR",
        Simulation => "SIMULATION",
        Slave => "SLAVE",
    }
}

cfg_enum! {
    /// `DATASTAGEMODEL` (Moab 5 §17.12).
    DataStageModel {
        /// Verified data staging: an external tool stages; jobs wait until
        /// their files are present.
        External => "EXTERNAL",
        /// Prioritized data staging: Moab starts stage-ins for the highest
        /// priority idle jobs within the storage RM's limits.
        Loose => "LOOSE",
        /// Fully-scheduled data staging: transfers are scheduled with the job's
        /// reservation so data is ready at its start.
        Tight => "TIGHT",
        /// Data staging to the job's allocated nodes.
        Local => "LOCAL",
    }
}

cfg_enum! {
    /// `RUNTIMEPREDICTION` (Arches): how the scheduler predicts run times.
    RuntimePrediction {
        /// Use the requested wall-clock limit.
        None => "NONE",
        /// The mean of the user's last two jobs' run times, capped by the
        /// request (Tsafrir, Etsion & Feitelson 2007).
        UserMean2 => "USERMEAN2",
    }
}

cfg_enum! {
    /// `PREDICTIONCORRECTION` (Arches): what happens to a running job's
    /// prediction when the job outlives it.
    PredictionCorrection {
        /// Extend it stepwise (1, 5, 15, 30 minutes, 1, 2, 5, 10, 20, 50,
        /// 100 hours past the elapsed time).
        Stepwise => "STEPWISE",
        /// Plan with the walltime from then on (pyss's EASY++).
        Walltime => "WALLTIME",
    }
}

cfg_enum! {
    /// `PREDICTIONSCOPE` (Arches): which jobs are planned with their
    /// predicted run time.
    PredictionScope {
        /// Running and queued jobs (EASY++).
        All => "ALL",
        /// Running jobs only: queued jobs are planned with their walltime
        /// (the prediction still orders backfill candidates).
        Running => "RUNNING",
    }
}

cfg_enum! {
    /// `BFORDER` (Arches): order in which backfill considers candidates.
    BfOrder {
        /// Priority order (Moab's behaviour).
        Priority => "PRIORITY",
        /// Shortest predicted run time first (SJBF).
        ShortestPredictedFirst => "SHORTESTPREDICTEDFIRST",
        /// FIRSTFIT traverses the backfill windows widest first (Moab §8.2.2).
        WidestWindowFirst => "WIDESTWINDOWFIRST",
    }
}

/// `NODEACCESSPOLICY`: who may share a node (checknode
/// `EffNodeAccessPolicy:`); the core's enumeration ([`arches_core::access`]).
pub use arches_core::access::NodeAccessPolicy;

cfg_enum! {
    /// `JOBNODEMATCHPOLICY` (mdiag -t column).
    JobNodeMatchPolicy {
        ExactNode => "EXACTNODE",
        ExactProc => "EXACTPROC",
        ExactTask => "EXACTTASK",
        Auto => "AUTO",
    }
}

cfg_enum! {
    /// `FSPOLICY`: what fairshare usage measures (mdiag -f `FS Policy:`).
    FsPolicy {
        DedicatedPs => "DEDICATEDPS",
        DedicatedPes => "DEDICATEDPES",
        UtilizedPs => "UTILIZEDPS",
        SDedicatedPes => "SDEDICATEDPES",
        PDedicatedPs => "PDEDICATEDPS",
    }
}

cfg_enum! {
    /// `SRCFG[x] PERIOD=`.
    SrPeriod {
        Day => "DAY",
        Week => "WEEK",
        Infinity => "INFINITY",
    }
}

cfg_enum! {
    /// `NODECFG[x] STATE=` as configured.
    NodeStateCfg {
        Up => "UP",
        Idle => "IDLE",
        Down => "DOWN",
        Drained => "DRAINED",
    }
}

impl NodeStateCfg {
    /// The core's administrative state.
    pub fn admin(self) -> arches_core::NodeAdminState {
        match self {
            NodeStateCfg::Up | NodeStateCfg::Idle => arches_core::NodeAdminState::Up,
            NodeStateCfg::Down => arches_core::NodeAdminState::Down,
            NodeStateCfg::Drained => arches_core::NodeAdminState::Drained,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        for t in RmType::ALL {
            assert_eq!(t.to_string().parse::<RmType>(), Ok(*t));
        }
        assert_eq!("tight".parse::<DataStageModel>(), Ok(DataStageModel::Tight));
        let e = "usermean3".parse::<RuntimePrediction>().unwrap_err();
        assert!(e.contains("USERMEAN2"), "{e}");
    }
}
