//! Arches scheduling core.
//!
//! The domain model (jobs, nodes, credentials, policies) and the pure scheduling
//! algorithm. Nothing in this crate performs I/O, spawns threads or reads a
//! clock: time is always a parameter (`now`). The daemon, the simulator and the
//! resource-manager backends are thin drivers around it.
//!
//! The shape follows quinn-proto and rust-analyzer's core: [`State::apply`]
//! ingests what happened, [`schedule()`] turns a state and a [`Policy`] into a
//! [`Plan`] — starts, reservations and, for every job that did not start, the
//! reason — and [`State::next_wakeup`] tells the driver when time alone will
//! change something; [`Plan::next_wakeup`] adds this plan's reservation starts
//! and chunking deadlines.
//!
//! Modules of the engine: [`profile`] (availability timeline), [`priority`]
//! (Moab's formula), [`eligibility`] (holds, dependencies, credential
//! limits), [`placement`] (`NODEALLOCATIONPOLICY`), [`mod@schedule`] (one
//! algorithm for priority starts, reservations and FIRSTFIT backfill),
//! [`backfill`] (BESTFIT/GREEDY selection), [`windows`] (showbf windows,
//! showstart estimates, showres node pinning); [`defer`] (what a failed
//! start does to a job: retry, `Defer` hold, batch hold).
//!
//! Drivers that use `RESERVATIONPOLICY HIGHEST` pass each plan's reservations
//! back with [`State::remember_reservations`] so that reservations are kept
//! and only ever compressed earlier (pyss's conservative backfill).

pub mod access;
pub mod accounting;
pub mod array;
pub mod backfill;
pub mod class;
mod context;
pub mod deadline;
pub mod defer;
pub mod eligibility;
pub mod fairshare;
pub mod forced;
pub mod fstree;
pub mod gres;
pub mod history;
mod idmap;
mod index;
pub mod job;
mod kept;
pub mod layout;
pub mod lean;
pub mod limits;
pub mod malleable;
pub mod node;
pub mod placement;
pub mod plan;
pub mod policy;
pub mod preempt;
pub mod priority;
pub mod profile;
pub mod qos;
pub mod quiet;
pub mod resv;
pub mod schedule;
pub mod staging;
pub mod state;
pub mod templates;
pub mod timespec;
pub mod trl;
pub mod windows;

pub use access::NodeAccessPolicy;
pub use array::{ArrayJob, ArrayOp, ArraySpec, Indices};
pub use eligibility::effective_walltime;
pub use gres::{Gres, GresTable, GresUnits};
pub use job::{
    Alloc, Completion, CompletionCode, Credentials, Dependency, DependencyKind, HoldType, Holds,
    Job, JobFlag, JobFlags, JobId, JobState, Name, Request, RequeueCause, RunInfo, StartKind,
    Termination,
};
pub use layout::{Layout, NodeGroup, TaskOption};
pub use lean::{schedule_lean, schedule_lean_in, LeanPlan, LeanScratch};
pub use node::{Node, NodeAdminState, NodeId, NodeState};
pub use plan::{
    BlockReason, Decision, Decisions, Plan, PlannedReservation, PolicyBlock, PriorityBreakdown,
    Start,
};
pub use policy::Policy;
pub use resv::{Acl, Period, Reservation, Standing};
pub use schedule::{bypassed, schedule};
pub use staging::DataWait;
pub use state::{Event, EventError, Lock, State};
pub use windows::{
    backfill_windows, estimate_start, future_windows, reservations, reservations_at,
    windows_in_plan, Window, WindowQuery,
};

/// Seconds since the Unix epoch (or since the start of a simulated trace).
pub type Time = i64;

/// A length of time in seconds.
pub type Secs = i64;
