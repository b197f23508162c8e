//! The HTTP/1.1 + JSON API on the Unix socket (axum). Every request carries
//! the caller's kernel credentials (SO_PEERCRED, taken when the connection
//! is accepted); reads are answered from the last snapshot, writes are
//! messages to the actor with a one-shot reply. Bad bodies get a 4xx
//! [`ApiError`] and leave the daemon unaffected.

use std::sync::mpsc::Sender;
use std::sync::Arc;

use arches_api::{
    routes, ApiError, JobActionRequest, JobsRequest, QueueQuery, SchedulerControl, SubmitRequest,
};
use axum::body::Bytes;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::oneshot;

use crate::actor::{current, Caller, Input, Published, Snapshot};
use crate::config::DaemonConfig;
use crate::ident::{self, Peer};
use crate::{estimates, jobspec, views};

/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The caller's credentials as seen when the connection was accepted
/// ([`crate::listen`] puts them in every request).
#[derive(Debug, Clone, Copy)]
pub struct PeerInfo(pub Option<Peer>);

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub tx: Sender<Input>,
    pub published: Published,
    pub cfg: Arc<DaemonConfig>,
    /// The daemon's own uid (a non-root daemon runs only its user's jobs).
    pub daemon_uid: u32,
}

/// The router with every route of [`arches_api::routes`].
pub fn router(app: AppState) -> Router {
    Router::new()
        .route(routes::SUBMIT, post(submit))
        .route(routes::QUEUE, get(queue))
        .route(routes::JOBS_DETAIL, post(jobs_detail))
        .route(routes::JOB_ACTION, post(job_action))
        .route(routes::NODES, get(nodes))
        .route(
            routes::SCHEDULER,
            get(|s: State<AppState>| read(s, views::scheduler)),
        )
        .route(routes::SCHEDULER_CONTROL, post(control))
        .route(routes::PRIORITY, get(priority))
        .route(routes::BACKFILL, post(backfill))
        .route(routes::STARTTIME, post(starttime))
        .route(routes::RESERVATIONS, get(reservations))
        .route(routes::RESERVATION_CONTROL, post(reservation_control))
        .route(routes::CONFIG, get(config))
        .route(routes::CREDENTIALS, get(credentials))
        .route(routes::STATS, get(stats))
        .route(routes::TERMINAL, post(terminal))
        .route(
            routes::FAIRSHARE,
            get(|s: State<AppState>| read(s, views::fairshare)),
        )
        .fallback(|| async { error(StatusCode::NOT_FOUND, "ERROR:  unknown request".into()) })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(crate::guard::screen))
        .layer(axum::middleware::from_fn(crate::metrics::track_socket))
        .with_state(app)
}

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(ApiError { message })).into_response()
}

/// A refused request: status and Moab-style message.
struct Failure(StatusCode, String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        error(self.0, self.1)
    }
}

fn ok<T: Serialize>(v: T) -> Response {
    Json(v).into_response()
}

/// Decodes a JSON body, mapping every failure to a 4xx [`ApiError`].
fn decode<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, Failure> {
    let bytes = body.map_err(|r| {
        let status = r.status();
        let why = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!("request body larger than {MAX_BODY_BYTES} bytes")
        } else {
            r.body_text()
        };
        Failure(status, format!("ERROR:  invalid request ({why})"))
    })?;
    if crate::guard::json_has_nul(&bytes) {
        return Err(Failure(
            StatusCode::BAD_REQUEST,
            format!("ERROR:  invalid request ({})", crate::guard::NUL_REFUSED),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        Failure(
            StatusCode::BAD_REQUEST,
            format!("ERROR:  malformed request ({e})"),
        )
    })
}

fn caller(app: &AppState, peer: PeerInfo) -> Result<Caller, Failure> {
    let peer = peer.0.ok_or_else(|| {
        Failure(
            StatusCode::FORBIDDEN,
            "ERROR:  cannot determine the caller's identity".into(),
        )
    })?;
    Ok(Caller::identify(&app.cfg, app.daemon_uid, peer))
}

/// mcredctl, mdiag -u/-g/-a/-c/-q, showstats' credential checks: the
/// credentials, with the administrator lists narrowed to what the caller
/// may read ([`crate::authz::admin_lists_for`]).
async fn credentials(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
) -> Response {
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(f) => return f.into_response(),
    };
    let snap = current(&app.published);
    let mut v = views::credentials(&snap);
    if let Some(lists) = crate::authz::admin_lists_for(&caller, &v.admin_users) {
        v.admin_users = lists;
        v.viewer = Some(caller.user.clone());
    }
    ok(v)
}

/// showconfig, mschedctl -l config: the whole configuration, ADMINCFG's
/// user lists included, so administrators of levels 1–3 only (Moab's
/// showconfig and mschedctl are administrators' commands).
async fn config(State(app): State<AppState>, ConnectInfo(peer): ConnectInfo<PeerInfo>) -> Response {
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(f) => return f.into_response(),
    };
    if !caller.sees_all {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "ERROR:    user '{}' is not authorized to run command",
                caller.user
            ),
        );
    }
    let snap = current(&app.published);
    ok(views::config(&snap))
}

async fn read<T: Serialize>(
    State(app): State<AppState>,
    f: fn(&crate::actor::Snapshot) -> T,
) -> Response {
    let snap = current(&app.published);
    ok(f(&snap))
}

/// A large answer: what it lists (and the view without that list) is
/// computed on the blocking pool, so that a big queue never stalls the I/O
/// workers; the list's items are then encoded as the client reads
/// ([`crate::stream`]), so an answer never exists whole in memory.
async fn listing<S, K, I, F>(
    snap: Snapshot,
    field: &'static str,
    prepare: impl FnOnce(&Snapshot) -> (S, Vec<K>) + Send + 'static,
    mut item: F,
) -> Response
where
    S: Serialize + Send + 'static,
    K: Send + Unpin + 'static,
    I: Serialize + 'static,
    F: FnMut(&Snapshot, K) -> Option<I> + Send + Unpin + 'static,
{
    let built = tokio::task::spawn_blocking(move || {
        let (shell, keys) = prepare(&snap);
        (snap, shell, keys)
    })
    .await;
    match built {
        Ok((snap, shell, keys)) => {
            crate::stream::listing(&shell, field, keys, move |k| item(&snap, k))
        }
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("ERROR:  internal error ({e})"),
        ),
    }
}

async fn ask<T>(
    app: &AppState,
    make: impl FnOnce(oneshot::Sender<T>) -> Input,
) -> Result<T, Failure> {
    let (tx, rx) = oneshot::channel();
    let unavailable = || {
        Failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "ERROR:  server is shutting down".into(),
        )
    };
    app.tx.send(make(tx)).map_err(|_| unavailable())?;
    rx.await.map_err(|_| unavailable())
}

async fn submit(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let reject = |why: String| error(StatusCode::BAD_REQUEST, jobspec::SubmitError(why).message());
    if body.as_ref().is_ok_and(|b| crate::guard::json_has_nul(b)) {
        return reject(crate::guard::NUL_REFUSED.to_string());
    }
    let req: SubmitRequest = match decode(body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let Some(peer) = peer.0 else {
        return reject("cannot determine the caller's identity".into());
    };
    let Some(user) = ident::user_by_uid(peer.uid) else {
        return reject(format!(
            "unknown user (uid {} has no passwd entry)",
            peer.uid
        ));
    };
    if app.daemon_uid != 0 && peer.uid != app.daemon_uid {
        return reject(format!(
            "server runs as uid {} and cannot run jobs for user '{}'",
            app.daemon_uid, user.name
        ));
    }
    let group = ident::group_name(peer.gid);
    let groups = ident::groups_of(&user);
    let snap = current(&app.published);
    // A job XML input and the SUBMITFILTER (as the user, off the actor).
    let who = crate::submitfilter::Submitter {
        user: &user,
        group: &group,
        groups: groups.clone(),
    };
    let req = match crate::submitfilter::prepare(req, who, &snap.cfg.moab.hooks).await {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.message()),
    };
    let sub = match jobspec::parse(&req, &user, &group, &app.cfg.policy, snap.now) {
        Ok(mut s) => {
            s.exec.groups = groups;
            s
        }
        Err(e) => return error(StatusCode::BAD_REQUEST, e.message()),
    };
    if let Err(e) = jobspec::sane::interactive_allowed(&req, &app.cfg.compute_rm.1) {
        return error(StatusCode::BAD_REQUEST, e.message());
    }
    if app.cfg.compute_rm.1 == "LOCAL" {
        if let Err(e) = jobspec::sane::shell_exists(&req) {
            return error(StatusCode::BAD_REQUEST, e.message());
        }
    }
    let admin = Caller::identify(&app.cfg, app.daemon_uid, peer).admin;
    if let Err(e) = sub.check_privileges(admin) {
        return error(StatusCode::BAD_REQUEST, e.message());
    }
    match ask(&app, |reply| Input::Submit {
        sub: Box::new(sub),
        reply,
    })
    .await
    {
        Ok(Ok(resp)) => ok(resp),
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, e.message()),
        Err(e) => e.into_response(),
    }
}

/// A route's query string, or the `400` answer for a malformed one.
fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, Box<Response>> {
    q.map(|Query(q)| q).map_err(|e| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            format!("ERROR:  malformed request ({})", e.body_text()),
        ))
    })
}

async fn queue(
    State(app): State<AppState>,
    q: Result<Query<QueueQuery>, QueryRejection>,
) -> Response {
    let q = match query(q) {
        Ok(q) => q,
        Err(r) => return *r,
    };
    let snap = current(&app.published);
    // Checked here so that an unknown partition is a 404, not a view.
    if let Err(e) = crate::showq::shell(&snap, q.partition.as_deref()) {
        return error(StatusCode::NOT_FOUND, e);
    }
    let partition = q.partition.clone();
    listing(
        snap,
        "jobs",
        move |s| {
            let shell = crate::showq::shell(s, q.partition.as_deref())
                .unwrap_or_else(|_| views::queue_shell(s));
            (shell, views::queue_order(s, q.completed))
        },
        move |s, it| crate::showq::line(s, it, partition.as_deref()),
    )
    .await
}

async fn jobs_detail(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let req = match decode::<JobsRequest>(body) {
        Ok(req) => req,
        Err(e) => return e.into_response(),
    };
    // Who may see which job in detail: crate::authz.
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let pv = crate::preempt::PreemptView::default();
    listing(
        current(&app.published),
        "jobs",
        move |s| {
            let (mut items, mut shell) = views::jobs_selection(s, &req, &caller);
            if req.history {
                crate::history::add(s, &caller, &mut items, &mut shell);
            }
            (shell, items)
        },
        move |s, it| views::job_item(s, it, &pv),
    )
    .await
}

async fn stats(
    State(app): State<AppState>,
    q: Result<Query<arches_api::StatsQuery>, QueryRejection>,
) -> Response {
    let q = match query(q) {
        Ok(q) => q,
        Err(r) => return *r,
    };
    let snap = current(&app.published);
    match crate::profiling::stats_view(&snap, &q) {
        Ok(v) => ok(v),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}

#[derive(serde::Deserialize)]
struct RsvQuery {
    select: Option<String>,
}

/// showres, mdiag -r, and `mrsvctl -l/-q EXPR` (`?select=`).
async fn reservations(
    State(app): State<AppState>,
    q: Result<Query<RsvQuery>, QueryRejection>,
) -> Response {
    let select = match query(q) {
        Ok(q) => q.select,
        Err(r) => return *r,
    };
    let mut v = views::reservations(&current(&app.published));
    if let Some(expr) = select {
        let ids: Vec<String> = v.reservations.iter().map(|r| r.id.clone()).collect();
        match crate::rsvhosts::select_ids(&expr, ids.iter().map(String::as_str)) {
            Ok(keep) => v.reservations.retain(|r| keep.contains(&r.id)),
            Err(tok) => {
                return error(
                    StatusCode::NOT_FOUND,
                    format!("ERROR:  cannot locate reservation '{tok}'"),
                )
            }
        }
    }
    ok(v)
}

async fn priority(State(app): State<AppState>) -> Response {
    listing(
        current(&app.published),
        "jobs",
        |s| (views::priority_shell(s), views::priority_order(s)),
        views::job_priority,
    )
    .await
}

async fn job_action(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let req: JobActionRequest = match decode(body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    match ask(&app, |reply| Input::Action { caller, req, reply }).await {
        Ok(resp) => ok(resp),
        Err(e) => e.into_response(),
    }
}

async fn control(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let req: SchedulerControl = match decode(body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    match ask(&app, |reply| Input::Control { caller, req, reply }).await {
        Ok(resp) => ok(resp),
        Err(e) => e.into_response(),
    }
}

#[derive(serde::Deserialize)]
struct NodeQuery {
    name: Option<String>,
}

async fn nodes(
    State(app): State<AppState>,
    q: Result<Query<NodeQuery>, QueryRejection>,
) -> Response {
    let name = match query(q) {
        Ok(q) => q.name,
        Err(r) => return *r,
    };
    let view = views::nodes(&current(&app.published), name.as_deref());
    if let Some(n) = name.filter(|n| !n.eq_ignore_ascii_case("ALL")) {
        if view.nodes.is_empty() && view.storage.is_empty() {
            return error(
                StatusCode::NOT_FOUND,
                format!("ERROR:    cannot locate node '{n}'"),
            );
        }
    }
    ok(view)
}

async fn backfill(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let q: arches_api::BackfillQuery = match decode(body) {
        Ok(q) => q,
        Err(e) => return e.into_response(),
    };
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let group = ident::group_name(caller.peer.gid);
    match estimates::backfill(&current(&app.published), &q, caller.user, group) {
        Ok(v) => ok(v),
        Err(e) => error(StatusCode::BAD_REQUEST, e.0),
    }
}

async fn starttime(State(app): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    let q: arches_api::StartQuery = match decode(body) {
        Ok(q) => q,
        Err(e) => return e.into_response(),
    };
    match estimates::start_estimate(&current(&app.published), &q) {
        Ok(v) => ok(v),
        Err(e) => error(StatusCode::NOT_FOUND, e.0),
    }
}

/// `msub -I`: where the running interactive job's terminal socket is. Only
/// its owner is told (the socket itself admits nobody else either).
async fn terminal(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let req: arches_api::TerminalRequest = match decode(body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let snap = current(&app.published);
    let invalid = || {
        error(
            StatusCode::NOT_FOUND,
            format!("ERROR:  invalid job specified ({})", req.id),
        )
    };
    let Some(job) = snap.state.job(req.id) else {
        return invalid();
    };
    if !caller.owns(job) {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "ERROR:  user {} is not the owner of job {}: only its owner may attach to an interactive job",
                caller.user, req.id
            ),
        );
    }
    if !job.flags.contains(arches_core::JobFlag::Interactive) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("ERROR:  job {} is not an interactive job", req.id),
        );
    }
    match app.cfg.compute_rm.1.as_str() {
        "LOCAL" => {}
        "SLURM" => return slurm_session(&app, req.id).await,
        _ => {
            return error(
                StatusCode::BAD_REQUEST,
                "ERROR:  interactive jobs run only on the LOCAL and SLURM resource managers".into(),
            )
        }
    }
    let socket = app
        .cfg
        .home
        .join(crate::rm::SPOOL_DIR)
        .join(req.id.to_string())
        .join(arches_rm::local::TTY_SOCKET);
    ok(arches_api::TerminalResponse {
        socket: socket.display().to_string(),
        slurm: None,
    })
}

/// The terminal answer for a job the Slurm backend started: its Slurm job
/// (read from the spool on the blocking pool: the spool may be on a shared
/// file system), its session directory and the `slurm.conf` in use; msub
/// runs the session as a step of the allocation.
async fn slurm_session(app: &AppState, id: u64) -> Response {
    let spool = app.cfg.home.join(crate::rm::SLURM_SPOOL_DIR);
    let slurm_conf = crate::rm::slurm_config(&app.cfg, &app.cfg.compute_rm.0)
        .slurm_conf
        .map(|p| p.display().to_string());
    let dir = spool
        .join(id.to_string())
        .join(arches_rm::slurm::SESSION_DIR);
    let read =
        tokio::task::spawn_blocking(move || arches_rm::slurm::recorded_slurm_job(&spool, id)).await;
    match read {
        Ok(Ok(Some(job_id))) => ok(arches_api::TerminalResponse {
            socket: String::new(),
            slurm: Some(arches_api::SlurmSession {
                job_id,
                dir: dir.display().to_string(),
                slurm_conf,
            }),
        }),
        Ok(Ok(None)) => error(
            StatusCode::CONFLICT,
            format!("ERROR:  job {id} has no Slurm job yet"),
        ),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("ERROR:  {e}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("ERROR:  {e}")),
    }
}

async fn reservation_control(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<PeerInfo>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let req: arches_api::ReservationRequest = match decode(body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let caller = match caller(&app, peer) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    match ask(&app, |reply| Input::Reservation { caller, req, reply }).await {
        Ok(resp) => ok(resp),
        Err(e) => e.into_response(),
    }
}
