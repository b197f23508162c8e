//! Prometheus metrics (prometheus-client; served on `/metrics` by the
//! optional TCP listener, [`crate::web`]).
//!
//! Two kinds:
//! - **events**, recorded where they happen and kept in one process-wide
//!   registry ([`events`]): the duration of each scheduling iteration, of each
//!   store commit and of each resource-manager poll, the queue wait of each
//!   job at its start, and every API request by listener, route and status
//!   (an axum middleware, [`track_socket`] / [`track_http`]);
//! - **state**, computed from the published snapshot at each scrape (never a
//!   second copy of the scheduler's state that could drift): jobs by state
//!   and class, processors and nodes, utilisation, the longest current wait,
//!   and the scheduler's cumulative counts (jobs started, backfilled,
//!   preempted, completed; iterations).
//!
//! Recording is a few atomic operations, so the hooks cost nothing measurable
//! when no listener is configured.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

use crate::actor::Snapshot;

/// Label set: `[(name, value)]`.
type Labels = Vec<(String, String)>;

/// The event metrics (one per process).
pub struct Events {
    registry: Registry,
    pub iteration: Histogram,
    pub commit: Histogram,
    pub rm_poll: Histogram,
    pub queue_wait: Histogram,
    pub requests: Family<Labels, Counter>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

/// The process's event metrics.
pub fn events() -> &'static Events {
    static EVENTS: OnceLock<Events> = OnceLock::new();
    EVENTS.get_or_init(|| {
        let mut registry = Registry::with_prefix("arches");
        // 0.5 ms .. 16 s.
        let iteration = Histogram::new(exponential_buckets(0.0005, 2.0, 16));
        // 0.1 ms .. 3.3 s.
        let commit = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        let rm_poll = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        // 1 s .. 48 days.
        let queue_wait = Histogram::new(exponential_buckets(1.0, 4.0, 12));
        let requests = Family::<Labels, Counter>::default();
        registry.register_with_unit(
            "iteration_duration",
            "Duration of each scheduling iteration",
            Unit::Seconds,
            iteration.clone(),
        );
        registry.register_with_unit(
            "store_commit_duration",
            "Duration of each commit of the durable state (SQLite)",
            Unit::Seconds,
            commit.clone(),
        );
        registry.register_with_unit(
            "rm_poll_duration",
            "Duration of each poll of the resource manager for job and node changes",
            Unit::Seconds,
            rm_poll.clone(),
        );
        registry.register_with_unit(
            "job_queue_wait",
            "Queue wait of each job when it starts (start time minus the time it became eligible)",
            Unit::Seconds,
            queue_wait.clone(),
        );
        registry.register(
            "api_requests",
            "API requests answered, by listener (socket: the client commands; http: metrics and dashboard), route and HTTP status",
            requests.clone(),
        );
        Events {
            registry,
            iteration,
            commit,
            rm_poll,
            queue_wait,
            requests,
        }
    })
}

/// A scheduling iteration took `d`.
pub fn observe_iteration(d: Duration) {
    events().iteration.observe(d.as_secs_f64());
}

/// A store commit took `d`.
pub fn observe_commit(d: Duration) {
    events().commit.observe(d.as_secs_f64());
}

/// A resource-manager poll took `d`.
pub fn observe_rm_poll(d: Duration) {
    events().rm_poll.observe(d.as_secs_f64());
}

/// A job started after waiting `secs` in the queue.
pub fn observe_queue_wait(secs: i64) {
    events().queue_wait.observe(secs.max(0) as f64);
}

async fn track(listener: &'static str, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let resp = next.run(req).await;
    events()
        .requests
        .get_or_create(&vec![
            ("listener".to_string(), listener.to_string()),
            ("route".to_string(), route),
            ("status".to_string(), resp.status().as_u16().to_string()),
        ])
        .inc();
    resp
}

/// Middleware of the Unix-socket API (`Router::layer(from_fn(track_socket))`).
pub async fn track_socket(req: Request, next: Next) -> Response {
    track("socket", req, next).await
}

/// Middleware of the metrics and dashboard listener.
pub async fn track_http(req: Request, next: Next) -> Response {
    track("http", req, next).await
}

/// Registers a gauge family with one `state` label.
fn by_state<const N: usize>(r: &mut Registry, name: &str, help: &str, values: [(&str, u32); N]) {
    let family = Family::<Labels, Gauge>::default();
    for (state, n) in values {
        family
            .get_or_create(&vec![("state".to_string(), state.to_string())])
            .set(i64::from(n));
    }
    r.register(name, help, family);
}

/// The state metrics of one snapshot.
fn state_registry(s: &Snapshot) -> Registry {
    let mut r = Registry::with_prefix("arches");
    let jobs = Family::<Labels, Gauge>::default();
    let mut counts: BTreeMap<(&str, &str), i64> = BTreeMap::new();
    let mut oldest_wait: i64 = 0;
    for j in s.state.jobs() {
        let class = j.cred.class.as_deref().unwrap_or("");
        *counts
            .entry((j.display_state().as_str(), class))
            .or_default() += 1;
        if !j.state.is_active() && !j.state.is_finished() && j.holds.is_empty() {
            let from = j.start_after.unwrap_or(j.submit_time).max(j.submit_time);
            oldest_wait = oldest_wait.max(s.now - from);
        }
    }
    for ((state, class), n) in counts {
        jobs.get_or_create(&vec![
            ("state".to_string(), state.to_string()),
            ("class".to_string(), class.to_string()),
        ])
        .set(n);
    }
    r.register(
        "jobs",
        "Jobs known to the scheduler by state (as showq and checkjob show it) and class",
        jobs,
    );
    let c = crate::views::cluster(s);
    by_state(
        &mut r,
        "processors",
        "Processors of the nodes that are up, by state",
        [
            ("up", c.up_procs),
            ("allocated", c.alloc_procs),
            ("idle", c.idle_procs),
        ],
    );
    by_state(
        &mut r,
        "nodes",
        "Nodes by state",
        [
            ("configured", c.config_nodes),
            ("up", c.up_nodes),
            ("active", c.active_nodes),
        ],
    );
    let util = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    util.set(if c.up_procs == 0 {
        0.0
    } else {
        f64::from(c.alloc_procs) / f64::from(c.up_procs)
    });
    r.register_with_unit(
        "utilization",
        "Share of the up processors allocated to jobs",
        Unit::Other("ratio".to_string()),
        util,
    );
    let wait = Gauge::<i64>::default();
    wait.set(oldest_wait);
    r.register_with_unit(
        "queue_wait_max",
        "Longest current wait of a queued job without holds",
        Unit::Seconds,
        wait,
    );
    let st = &s.stats;
    for (name, help, v) in [
        (
            "jobs_started",
            "Jobs started since the daemon started",
            st.jobs_started,
        ),
        (
            "jobs_backfilled",
            "Jobs started by backfill since the daemon started",
            st.jobs_backfilled,
        ),
        (
            "jobs_preempted",
            "Jobs preempted (QoS or PREEMPT backfill) since the daemon started",
            st.jobs_preempted,
        ),
        (
            "jobs_completed",
            "Jobs that reached a final state since the daemon started",
            st.jobs_completed,
        ),
        (
            "iterations",
            "Scheduling iterations since the daemon started",
            st.iterations,
        ),
    ] {
        let counter = Counter::<u64>::default();
        counter.inc_by(v);
        r.register(name, help, counter);
    }
    let paused = Gauge::<i64>::default();
    paused.set(i64::from(st.paused));
    r.register(
        "scheduler_paused",
        "1 while scheduling is paused (mschedctl -p), else 0",
        paused,
    );
    r.register(
        "build",
        "Arches version, scheduler name and resource manager",
        prometheus_client::metrics::info::Info::new(vec![
            ("version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
            ("scheduler".to_string(), s.cfg.scheduler_name.clone()),
            ("rm".to_string(), s.rm_kind.clone()),
        ]),
    );
    r
}

/// The OpenMetrics content type Prometheus negotiates.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `/metrics` document: the event metrics, then the state of `s`.
pub fn render(s: &Snapshot) -> String {
    let mut out = String::with_capacity(16 * 1024);
    // Writing to a String cannot fail.
    let _ = encode_registry(&mut out, &events().registry);
    let _ = encode_registry(&mut out, &state_registry(s));
    let _ = encode_eof(&mut out);
    out
}
