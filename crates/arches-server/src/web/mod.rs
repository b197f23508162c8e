//! The optional TCP listener (`METRICSPORT`, `METRICSHOST`; off by
//! default, loopback by default): Prometheus metrics on `/metrics`
//! ([`crate::metrics`]) and a read-only web dashboard ([`pages`]).
//!
//! It is a router of its own, apart from the Unix-socket API
//! ([`crate::http`]): nothing here takes a caller's identity, so everything
//! it shows is what every user may see — showq's summary and rows, the nodes,
//! the reservations and backfill windows showres and showbf show, the plan —
//! and never a script, an environment or a submit argument. Every page is
//! rendered from the published snapshot on the blocking pool, paged, and
//! self-contained (inline CSS, inline SVG, one inline script that refreshes
//! the page's content every few seconds; nothing is loaded from elsewhere).
//!
//! The utilisation and queue-length charts come from [`History`]: a sample
//! of the snapshot every [`SAMPLE_SECS`] kept for the last day.

pub mod pages;
mod svg;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::actor::{current, Published, Snapshot};
use crate::config::DaemonConfig;

/// Seconds between two samples of the history.
pub const SAMPLE_SECS: u64 = 10;
/// Samples kept (one day).
pub const HISTORY_LEN: usize = 8640;
/// Rows per page of the queue, node and reservation pages.
pub const PAGE_ROWS: usize = 100;
/// Seconds between two refreshes of a page's content.
pub const REFRESH_SECS: u32 = 5;

/// One sample of the history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub time: arches_core::Time,
    /// Allocated over up processors.
    pub utilization: f64,
    pub running: u32,
    /// Eligible and blocked jobs.
    pub queued: u32,
}

/// The samples of the last day, oldest first.
#[derive(Debug, Default)]
pub struct History {
    samples: Mutex<VecDeque<Sample>>,
}

impl History {
    /// Records `s` (the oldest falls off after [`HISTORY_LEN`]).
    pub fn push(&self, s: Sample) {
        let mut v = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        if v.len() == HISTORY_LEN {
            v.pop_front();
        }
        v.push_back(s);
    }

    /// A copy of the samples.
    pub fn samples(&self) -> Vec<Sample> {
        let v = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        v.iter().copied().collect()
    }
}

/// The sample of a snapshot.
pub fn sample(s: &Snapshot) -> Sample {
    let c = crate::views::cluster(s);
    let (mut running, mut queued) = (0u32, 0u32);
    for j in s.state.jobs() {
        if j.state.is_active() {
            running += 1;
        } else if !j.state.is_finished() {
            queued += 1;
        }
    }
    Sample {
        time: s.now,
        utilization: if c.up_procs == 0 {
            0.0
        } else {
            f64::from(c.alloc_procs) / f64::from(c.up_procs)
        },
        running,
        queued,
    }
}

/// What the handlers share.
#[derive(Clone)]
pub struct WebState {
    pub published: Published,
    pub history: Arc<History>,
}

/// The address of `METRICSPORT`/`METRICSHOST`, if configured.
pub fn configured(cfg: &DaemonConfig) -> anyhow::Result<Option<SocketAddr>> {
    let Some(port) = cfg.moab.metrics_port else {
        return Ok(None);
    };
    let ip: std::net::IpAddr = cfg.moab.metrics_host.parse().with_context(|| {
        format!(
            "METRICSHOST '{}' is not an IP address",
            cfg.moab.metrics_host
        )
    })?;
    Ok(Some(SocketAddr::new(ip, port)))
}

/// Binds the listener (inside the daemon's runtime) so that a port in use
/// is a start-up error naming it.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} (METRICSPORT/METRICSHOST)"))
}

/// The router of the listener.
pub fn router(state: WebState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/", get(|s, q| page(s, q, pages::Page::Overview)))
        .route("/queue", get(|s, q| page(s, q, pages::Page::Queue)))
        .route("/nodes", get(|s, q| page(s, q, pages::Page::Nodes)))
        .route(
            "/reservations",
            get(|s, q| page(s, q, pages::Page::Reservations)),
        )
        .route("/plan", get(|s, q| page(s, q, pages::Page::Plan)))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .layer(axum::middleware::from_fn(crate::metrics::track_http))
        .with_state(state)
}

/// Serves `listener` and samples the history until the runtime ends.
pub async fn serve(listener: tokio::net::TcpListener, published: Published) {
    let history = Arc::new(History::default());
    let sampler = {
        let (published, history) = (published.clone(), Arc::clone(&history));
        async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(SAMPLE_SECS));
            loop {
                tick.tick().await;
                let snap = current(&published);
                let h = Arc::clone(&history);
                let _ = tokio::task::spawn_blocking(move || h.push(sample(&snap))).await;
            }
        }
    };
    tokio::spawn(sampler);
    if let Ok(addr) = listener.local_addr() {
        let msg = format!("metrics and dashboard listening on http://{addr}/");
        // A served simulation has no log: say it on stderr.
        if tracing::dispatcher::has_been_set() {
            tracing::info!("{msg}");
        } else {
            eprintln!("moab: {msg}");
        }
    }
    let app = router(WebState { published, history });
    if let Err(e) = axum::serve(listener, app).await {
        tracing::error!("metrics and dashboard listener failed: {e}");
    }
}

async fn metrics(State(w): State<WebState>) -> Response {
    let snap = current(&w.published);
    match tokio::task::spawn_blocking(move || crate::metrics::render(&snap)).await {
        Ok(body) => ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// Query of every page: `page` (1-based) and `partial=1` (the content only,
/// for the live refresh).
#[derive(Debug, Default, serde::Deserialize)]
pub struct PageQuery {
    pub page: Option<usize>,
    pub partial: Option<u8>,
}

async fn page(
    State(w): State<WebState>,
    q: Result<Query<PageQuery>, axum::extract::rejection::QueryRejection>,
    which: pages::Page,
) -> Response {
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return (StatusCode::BAD_REQUEST, e.body_text()).into_response(),
    };
    let snap = current(&w.published);
    let history = Arc::clone(&w.history);
    let rendered = tokio::task::spawn_blocking(move || {
        let samples = history.samples();
        pages::render(
            which,
            &snap,
            &samples,
            q.page.unwrap_or(1),
            q.partial == Some(1),
        )
    })
    .await;
    match rendered {
        Ok(html) => ([(header::CACHE_CONTROL, "no-store")], Html(html)).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
