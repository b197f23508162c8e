//! `moab.cfg` parsing, the parameter table and diagnostics (pure: no I/O but
//! the convenience [`load_file`]).
//!
//! - [`params`]: every parameter declared once (type, default, index, doc,
//!   setter); it drives the parser, `mschedctl -l config` and the reference.
//! - [`parse()`]: text → typed [`Config`] + [`Diagnostic`]s (unknown names are
//!   warnings, invalid values errors `file:line: PARAM: why`).
//! - [`Config`]: the typed result — `policy` (an `arches_core::Policy`),
//!   `nodes`, `admins`, `rms`, scheduler, log and data-staging settings,
//!   standing reservations; [`Config::embedded_default`] when there is no file;
//!   [`Config::apply_line`] for `mschedctl -m config`; [`Config::effective`]
//!   for `mschedctl -l config`.
//! - [`check`]: the `mdiag -C` report; [`reference_markdown`]: the generated
//!   `docs/config-reference.md`.
//!
//! Decisions where Moab's behaviour is unspecified or Arches differs:
//! - Per-partition values (`PARAM[p]`) are accepted only for the default
//!   partition (`0`, `DEFAULT`, `ALL`); others are warned about and ignored,
//!   because Arches applies one policy to every partition.
//! - Moab values Arches does not implement (e.g. `NODEALLOCATIONPOLICY
//!   FASTEST`, `QFLAGS=DEDICATED`) are warnings and are ignored, so an existing
//!   site file still loads; the reference lists them per parameter.
//! - `JOBCPURGETIME` defaults to 24 hours (Moab: 5 minutes).
//! - `RMCFG TYPE=` defaults to `PBS` as in Moab; `SERVER=moab://` implies `MOAB`.
//! - Reservation buckets are the configured `RESERVATIONDEPTH[i]` /
//!   `RESERVATIONQOSLIST[i]` indexes in order (missing depth 1, missing list
//!   `[ALL]`); with none configured there is one bucket of depth 1 for all QoS.
//! - Storage RMs are checked after the whole file: `TYPE=NATIVE` and
//!   `SYSTEMQUERYURL` always, `SYSTEMMODIFYURL` for the `LOOSE`, `TIGHT` and
//!   `LOCAL` models, only `exec://` interface URLs; `CLUSTERQUERYURL` is
//!   optional (a warning when `TARGETUSAGE` needs it); a `DATARM=` must name a
//!   storage RM, and a storage RM no `DATARM=` names is a warning.
//!
//! ```
//! let parsed = arches_config::parse("BACKFILLPOLICY BESTFIT\nNODECFG[n1] PROCS=8\n", "moab.cfg");
//! assert!(!parsed.has_errors());
//! assert_eq!(parsed.config.nodes[0].procs, 8);
//! ```

#[macro_use]
pub mod value;

pub mod checks;
pub mod config;
pub mod enums;
pub mod params;
pub mod parse;
pub mod reference;

pub use checks::{check, CheckReport, Verbosity};
pub use config::{
    apply_line, Config, FairshareConfig, HooksConfig, LogConfig, RmConfig, SchedConfig,
    StandingReservation, DEFAULT_NODE,
};
pub use enums::{
    BfOrder, DataStageModel, FsPolicy, JobNodeMatchPolicy, NodeAccessPolicy, PredictionCorrection,
    PredictionScope, ResourceType, RmType, RuntimePrediction, SchedMode, SrPeriod,
};
pub use parse::{parse, Diagnostic, Parsed, Severity};
pub use reference::reference_markdown;

/// Why [`load_file`] failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {source}")]
pub struct LoadError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// Reads and parses the file at `path` (diagnostics name it as given).
pub fn load_file(path: impl AsRef<std::path::Path>) -> Result<Parsed, LoadError> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LoadError {
        path: shown.clone(),
        source,
    })?;
    Ok(parse(&text, &shown))
}
