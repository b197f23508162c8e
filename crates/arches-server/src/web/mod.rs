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
//! The utilisation and queue-length charts come from the statistics the
//! daemon keeps ([`samples`]): the system samples of the statistics profile
//! (`PROFILEDURATION` intervals, `PROFILECOUNT` kept, taken once per
//! iteration by [`crate::profiling`] and stored with the accounting, so a
//! restart keeps them), with the interval in progress as the last point.

pub mod pages;
mod svg;

use std::net::SocketAddr;

use anyhow::Context;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::actor::{current, Published, Snapshot};
use crate::config::DaemonConfig;

/// Rows per page of the queue, node and reservation pages.
pub const PAGE_ROWS: usize = 100;
/// Seconds between two refreshes of a page's content.
pub const REFRESH_SECS: u32 = 5;

/// One point of the utilisation and queue-length charts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The start of the interval (or the live value's time).
    pub time: arches_core::Time,
    /// Allocated over up processors (0 to 1): the interval's average.
    pub utilization: f64,
    pub util_max: f64,
    pub running: f64,
    /// Eligible and blocked jobs.
    pub queued: f64,
    pub queued_max: u32,
    /// Still in progress (or the live value).
    pub current: bool,
}

/// The points of the charts: every kept interval of the statistics profile
/// (`PROFILEDURATION`, `PROFILECOUNT`; stored with the accounting, so they
/// survive a restart), oldest first, averaged; the interval in progress as
/// the last point when the snapshot publishes it, else the live value.
pub fn samples(s: &Snapshot) -> Vec<Sample> {
    let mut out = kept(&s.accounting.profile, s.profile_now);
    if out.last().is_none_or(|p| !p.current) {
        out.push(live(s));
    }
    out
}

/// The kept intervals of `p`, averaged, oldest first, then the interval in
/// progress `now` (merged with what a stop before a restart folded of it),
/// marked current, if it has samples.
fn kept(
    p: &arches_core::history::StatProfile,
    now: Option<(i64, arches_core::history::SystemSample)>,
) -> Vec<Sample> {
    use arches_core::history::SystemSample;
    let point = |i: i64, x: &SystemSample, current: bool| Sample {
        time: p.start_of(i),
        utilization: x.avg_util(),
        util_max: x.util_max,
        running: x.avg_running(),
        queued: x.avg_queued(),
        queued_max: x.queued_max,
        current,
    };
    let mut out: Vec<Sample> = p
        .system
        .iter()
        .filter(|(_, x)| x.samples > 0)
        .map(|(i, x)| point(*i, x, false))
        .collect();
    if let Some((i, x)) = now.filter(|(_, x)| x.samples > 0) {
        let mut all = p.system.get(&i).copied().unwrap_or_default();
        all.merge(&x);
        out.retain(|q| q.time < p.start_of(i));
        out.push(point(i, &all, true));
    }
    out
}

/// The state of the snapshot as one point.
fn live(s: &Snapshot) -> Sample {
    let c = crate::views::cluster(s);
    let (mut running, mut queued) = (0u32, 0u32);
    for j in s.state.jobs() {
        if j.state.is_active() {
            running += 1;
        } else if !j.state.is_finished() {
            queued += 1;
        }
    }
    let util = if c.up_procs == 0 {
        0.0
    } else {
        f64::from(c.alloc_procs) / f64::from(c.up_procs)
    };
    Sample {
        time: s.now,
        utilization: util,
        util_max: util,
        running: f64::from(running),
        queued: f64::from(queued),
        queued_max: queued,
        current: true,
    }
}

/// What the handlers share.
#[derive(Clone)]
pub struct WebState {
    pub published: Published,
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

/// Serves `listener` until the runtime ends.
pub async fn serve(listener: tokio::net::TcpListener, published: Published) {
    if let Ok(addr) = listener.local_addr() {
        let msg = format!("metrics and dashboard listening on http://{addr}/");
        // A served simulation has no log: say it on stderr.
        if tracing::dispatcher::has_been_set() {
            tracing::info!("{msg}");
        } else {
            eprintln!("moab: {msg}");
        }
    }
    let app = router(WebState { published });
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
    let rendered = tokio::task::spawn_blocking(move || {
        pages::render(which, &snap, q.page.unwrap_or(1), q.partial == Some(1))
    })
    .await;
    match rendered {
        Ok(html) => ([(header::CACHE_CONTROL, "no-store")], Html(html)).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::history::{StatProfile, SystemSample};

    fn sample(util: f64, running: u32, queued: u32) -> SystemSample {
        let mut s = SystemSample::default();
        s.observe(util, running, queued);
        s
    }

    #[test]
    fn points_are_the_kept_intervals_then_the_one_in_progress() {
        let mut p = StatProfile::default();
        p.configure(60, 10);
        let mut a = sample(0.5, 1, 2);
        a.observe(1.0, 3, 0);
        p.add_system(1, &a);
        p.add_system(2, &sample(0.25, 1, 4));
        // Nothing in progress published: only the kept intervals (the
        // caller adds the live value).
        let pts = kept(&p, None);
        assert_eq!(pts.len(), 2);
        assert_eq!(
            (pts[0].time, pts[0].utilization, pts[0].util_max),
            (60, 0.75, 1.0)
        );
        assert_eq!(
            (pts[0].running, pts[0].queued, pts[0].queued_max),
            (2.0, 1.0, 2)
        );
        assert!(!pts[0].current && !pts[1].current);
        // The interval in progress is the last point.
        let pts = kept(&p, Some((3, sample(1.0, 2, 0))));
        assert_eq!(pts.len(), 3);
        assert!(pts[2].current);
        assert_eq!((pts[2].time, pts[2].utilization), (180, 1.0));
        // A part of it folded before a restart merges with it.
        let pts = kept(&p, Some((2, sample(0.75, 3, 0))));
        assert_eq!(pts.len(), 2);
        assert!(pts[1].current);
        assert_eq!(
            (pts[1].time, pts[1].utilization, pts[1].running),
            (120, 0.5, 2.0)
        );
        // An interval in progress without samples yet is not a point.
        assert_eq!(kept(&p, Some((3, SystemSample::default()))).len(), 2);
    }
}
