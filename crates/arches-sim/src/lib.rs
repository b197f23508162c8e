//! Trace-driven simulation for Arches.
//!
//! - [`swf`]: Standard Workload Format reader (pyss's semantics by default);
//! - [`workload`]: the simulator's job model and the JSONL workload format;
//! - [`run`]: the deterministic event loop over `arches_core` and the
//!   simulated backend `arches_rm::sim::SimRm`;
//! - [`metrics`]: summary statistics (peer-results definitions) and the job CSV;
//! - [`report`]: the self-contained HTML report with SVG charts;
//! - [`generate`]: the Lublin & Feitelson (2003) synthetic workload model;
//! - [`sweep`]: `moab simulate --sweep`, one replay per configuration on
//!   every core;
//! - [`elastic`]: malleable jobs and resize requests (`--malleable`, JSONL `maxprocs`/`resize`);
//! - [`heap`]: a replay's heap in huge pages (fewer page faults);
//! - [`cli`]: `moab simulate`.
//!
//! The simulator calls exactly the same scheduling code as the daemon: it is
//! one more driver of `schedule(&State, &Policy, now)`, with a virtual clock.

pub mod cli;
pub mod elastic;
pub mod generate;
pub mod heap;
pub mod human;
pub mod metrics;
pub mod predict;
mod preempt;
pub mod report;
pub mod run;
pub mod staging;
pub mod sweep;
pub mod swf;
pub mod workload;

pub use cli::{main, prepare, write_outputs, Prepared, RunInfo, SimulateArgs};
pub use metrics::{summarize, JobRecord, Summary};
pub use run::{machine, SimError, Simulation};
pub use workload::SimJob;
