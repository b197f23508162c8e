//! The `moab` daemon: one actor thread owns the scheduler state (see
//! [`actor`]), an axum server on a Unix socket answers the clients (see
//! [`http`]), SQLite keeps everything acknowledged (see `arches-store`).
//!
//! Start-up: resolve the home (`MOABHOMEDIR` or the per-user default, or
//! `--home`), load the configuration ([`config::load_config`]), open the
//! store, build the resource manager ([`rm::build_rm`]), recover jobs, then
//! serve until SIGTERM/SIGINT or `mschedctl -k`. Running jobs are left
//! running; the next start re-adopts them.

/// The state database in the daemon's home.
pub const STORE_FILE: &str = "arches.db";

pub mod actions;
mod activation;
pub mod actor;
pub mod arrays;
pub mod authz;
pub mod config;
mod control;
mod deadline;
mod defer;
mod depend;
pub mod durable;
mod elastic;
pub mod estimates;
mod guard;
mod history;
pub mod home;
pub mod http;
pub mod ident;
pub mod intent;
pub mod jobenv;
pub mod jobexpr;
pub mod jobspec;
pub mod jobxml;
pub mod listen;
pub mod mail;
pub mod metrics;
mod modify;
pub mod notify;
mod observe;
pub mod pace;
pub mod preempt;
pub mod profiling;
pub mod rm;
pub mod rsvctl;
pub mod rsvhosts;
mod rsvmod;
pub mod salvage;
pub mod showq;
pub mod simserve;
pub mod staging;
mod stream;
pub mod submitfilter;
pub mod testing;
pub mod views;
pub mod web;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use arches_rm::ResourceManager;
use clap::{CommandFactory, Parser};

/// Exit status when the daemon cannot start or fails.
pub const EXIT_FAILURE: u8 = 1;

/// `moab [--config FILE] [--socket PATH] [--home DIR]`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "moab",
    version,
    about = "The Arches workload manager daemon (Moab compatible)",
    long_about = "Runs the scheduler in the foreground: reads moab.cfg from the home directory \
                  (MOABHOMEDIR), keeps its state in arches.db there, logs to stderr and \
                  log/moab.log, and answers the client commands on moab.sock.\n\n\
                  Under pressure: the daemon raises its open-file limit to the hard limit at \
                  start and serves at most CLIENTMAXCONNECTIONS client connections \
                  (default 1024, and never more than three quarters of that limit), at most \
                  CLIENTMAXCONNECTIONSPERUSER (default 128) of one user (root and the \
                  daemon's user are not limited per user); a connection over a limit is \
                  refused at once with a message. A connection that sends nothing, sends half \
                  a request or does not read its answer for CLIENTTIMEOUT (default 30 s) is \
                  closed. When arches.db cannot be written (disk full, I/O error), new jobs \
                  are refused with the reason, nothing is started, reads are served, and what \
                  is owed (job ends...) is retried every second until it is recorded; mdiag -S \
                  says so.\n\n\
                  The daemon does not start on a damaged state: an unreadable record, or jobs \
                  still running that arches.db does not know (a lost or replaced database), \
                  stop it with a message. --salvage starts anyway: unreadable records are set \
                  aside (kept in the set_aside table of arches.db) and reported, unknown \
                  running jobs are left alone, and no job id is ever handed out twice."
)]
pub struct Options {
    /// Configuration file (default: <home>/moab.cfg; without one the embedded default applies).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Socket path (default: MOAB_SOCKET, else <home>/moab.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Home directory (default: MOABHOMEDIR, else ~/.arches).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Start even though stored records cannot be read (each is set aside in
    /// the set_aside table of arches.db, kept and reported, never deleted) or
    /// the resource manager runs jobs the state does not know (a lost or
    /// replaced arches.db: they are left running, and their ids are never
    /// handed out again). Without it the daemon refuses to start in both
    /// cases and says why.
    #[arg(long)]
    pub salvage: bool,
    #[command(subcommand)]
    pub command: Option<Subcommand>,
}

/// What `moab` does instead of running the daemon.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Subcommand {
    /// Replay a workload (SWF trace or JSONL) through the real scheduling engine
    /// with a virtual clock (the texts are arches_sim::cli::ABOUT and
    /// LONG_ABOUT).
    #[command(about = arches_sim::cli::ABOUT, long_about = arches_sim::cli::LONG_ABOUT)]
    Simulate(arches_sim::cli::SimulateArgs),
}

/// The clap definition (for man pages and completions).
pub fn cli_command() -> clap::Command {
    Options::command()
}

/// Entry point of the `moab` binary.
pub fn main() -> ExitCode {
    // Before any thread: systemd's notification socket is ours alone.
    notify::take_socket();
    let opts = Options::parse();
    if let Some(Subcommand::Simulate(args)) = opts.command {
        if args.serve {
            return simserve::main(&args);
        }
        return arches_sim::cli::main(args);
    }
    pace::tune_allocator();
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("moab: {e:#}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Resolved locations.
#[derive(Debug, Clone)]
pub struct Locations {
    pub home: PathBuf,
    pub socket: PathBuf,
}

impl Options {
    /// Home and socket by the shared resolution rules.
    pub fn locations(&self) -> Locations {
        let home = self.home.clone().unwrap_or_else(arches_api::paths::home);
        let socket = match (&self.socket, &self.home) {
            (Some(s), _) => s.clone(),
            (None, Some(h)) if std::env::var_os("MOAB_SOCKET").is_none() => {
                h.join(arches_api::paths::SOCKET_NAME)
            }
            _ => arches_api::paths::socket(None),
        };
        Locations { home, socket }
    }
}

/// Runs the daemon with the configured backend until it is told to stop.
pub fn run(opts: &Options) -> anyhow::Result<()> {
    let loc = opts.locations();
    prepare_home(&loc.home)?;
    let mut cfg = config::load_config(&loc.home, opts.config.as_deref())?;
    init_logging(&log_path(&loc.home, &cfg.moab.log));
    cfg.salvage = opts.salvage;
    let rm = rm::build_rm(&cfg)?;
    serve(loc, cfg, rm)
}

/// Runs the daemon with an explicit backend (tests and benchmarks use
/// [`testing::FakeRm`]). Blocks until shutdown.
pub fn serve(
    loc: Locations,
    cfg: config::DaemonConfig,
    rm: Box<dyn ResourceManager>,
) -> anyhow::Result<()> {
    prepare_home(&loc.home)?;
    for w in &cfg.warnings {
        tracing::warn!("{w}");
    }
    for w in home::secure(&loc.home, &loc.socket) {
        tracing::warn!("{w}");
    }
    claim_socket(&loc.socket)?;
    let cfg = Arc::new(cfg);
    let store = arches_store::Store::open(&loc.home.join(STORE_FILE))
        .with_context(|| format!("cannot open {}", loc.home.join(STORE_FILE).display()))?;
    let (mut actor, published) = actor::Actor::recover(
        Arc::clone(&cfg),
        store,
        rm,
        loc.socket.display().to_string(),
    )?;
    let (tx, rx) = std::sync::mpsc::channel();
    actor.set_inbox(tx.clone());
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let actor_thread = std::thread::Builder::new()
        .name("scheduler".into())
        .spawn(move || {
            let r = actor.run(rx);
            let _ = done_tx.send(());
            r
        })
        .context("cannot start the scheduler thread")?;
    let app = http::AppState {
        tx,
        published,
        cfg,
        daemon_uid: ident::current_uid(),
    };
    let served = serve_socket(&loc.socket, app, done_rx);
    let actor_result = actor_thread
        .join()
        .map_err(|_| anyhow::anyhow!("scheduler thread panicked"))?;
    let _ = std::fs::remove_file(&loc.socket);
    served?;
    actor_result?;
    tracing::info!("moab server stopped");
    Ok(())
}

/// Serves the API of `app` on `socket` until SIGTERM/SIGINT or until the
/// owner of the state signals `done` (then it is sent [`actor::Input::Shutdown`]).
/// Used by the daemon and by the served simulation ([`simserve`]).
pub(crate) fn serve_socket(
    socket: &Path,
    app: http::AppState,
    done: tokio::sync::oneshot::Receiver<()>,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    // Many clients at once must not leave the daemon without descriptors
    // for its own files (crate::listen keeps its connections below this).
    let nofile = listen::raise_nofile();
    let socket = socket.to_path_buf();
    let tx = app.tx.clone();
    let served = runtime.block_on(async move {
        // METRICSPORT: metrics and dashboard (a port in use stops the start).
        if let Some(addr) = web::configured(&app.cfg)? {
            let listener = web::bind(addr).await?;
            tokio::spawn(web::serve(listener, app.published.clone()));
        }
        let listener = tokio::net::UnixListener::bind(&socket)
            .with_context(|| format!("cannot bind {}", socket.display()))?;
        set_mode(&socket, 0o666)?;
        tracing::info!(socket = %socket.display(), "moab server listening");
        // Type=notify: READY=1 once a real request is answered.
        notify::spawn_ready_probe(
            socket.clone(),
            arches_api::routes::SCHEDULER,
            std::time::Duration::from_secs(600),
        );
        let stop = async move {
            wait_for_stop(done).await;
            let _ = tx.send(actor::Input::Shutdown);
        };
        let limits = listen::Limits::new(&app.cfg.moab, nofile);
        let daemon_uid = app.daemon_uid;
        listen::serve(listener, http::router(app), limits, daemon_uid, stop).await;
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    served
}

async fn wait_for_stop(done: tokio::sync::oneshot::Receiver<()>) {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM received"),
                _ = int.recv() => tracing::info!("SIGINT received"),
                _ = done => {}
            }
        }
        _ => {
            let _ = done.await;
        }
    }
    notify::stopping();
}

fn prepare_home(home: &Path) -> anyhow::Result<()> {
    home::prepare(home)
}

/// Refuses to start when another daemon answers on the socket; removes a
/// stale socket file.
pub(crate) fn claim_socket(socket: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(socket).is_err() {
        if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Every user must reach the socket.
            arches_rm::fsmode::create_dir(dir, 0o755, true)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        return Ok(());
    }
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        anyhow::bail!(
            "another moab server is already running on {}",
            socket.display()
        );
    }
    std::fs::remove_file(socket)
        .with_context(|| format!("cannot remove stale socket {}", socket.display()))
}

fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", path.display()))
}

type FilterHandle =
    tracing_subscriber::reload::Handle<tracing_subscriber::EnvFilter, tracing_subscriber::Registry>;
static LOG_FILTER: std::sync::OnceLock<FilterHandle> = std::sync::OnceLock::new();

/// The tracing level of a Moab `LOGLEVEL` (0–9).
pub fn log_filter_for(level: u32) -> &'static str {
    match level {
        0 => "error",
        1 | 2 => "warn",
        3..=5 => "info",
        6 | 7 => "debug",
        _ => "trace",
    }
}

/// `mschedctl -L LEVEL`: changes the log filter of this process.
pub(crate) fn set_log_level(level: u32) {
    if let Some(h) = LOG_FILTER.get() {
        let _ = h.reload(tracing_subscriber::EnvFilter::new(log_filter_for(level)));
    }
}

/// The log file of `LOGDIR` (relative: under the home) and `LOGFILE`
/// (relative: under `LOGDIR`); by default `<home>/log/moab.log`.
pub fn log_path(home: &Path, log: &arches_config::LogConfig) -> PathBuf {
    home.join(&log.dir).join(&log.file)
}

/// Logs to stderr and to `file` (mode 0600, its directory created;
/// `RUST_LOG` filters; default `info`). No colours, and every control
/// character a logged name or message may carry is escaped
/// ([`arches_api::text`]): one event is one line. A second initialisation
/// in the same process is ignored.
fn init_logging(file: &Path) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (filter, handle) = tracing_subscriber::reload::Layer::new(filter);
    let _ = LOG_FILTER.set(handle);
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let opened = arches_rm::fsmode::open_append(file, 0o600);
    if let Err(e) = &opened {
        eprintln!("moab: cannot open the log file {}: {e}", file.display());
    }
    let file = opened;
    let registry = tracing_subscriber::registry().with(filter).with(
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| EscapeLog(std::io::stderr())),
    );
    let _ = match file {
        Ok(f) => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(std::sync::Mutex::new(EscapeLog(f))),
            )
            .try_init(),
        Err(_) => registry.try_init(),
    };
}

/// A log writer that escapes control characters (each write is one event:
/// its final line feed is kept).
struct EscapeLog<W: std::io::Write>(W);

impl<W: std::io::Write> std::io::Write for EscapeLog<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (line, end) = match text.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (&*text, ""),
        };
        // One write of the whole record: stderr is locked per write, and a
        // newline written apart let another thread's record in between.
        let mut record = arches_api::text::escape(line).into_owned();
        record.push_str(end);
        self.0.write_all(record.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod escape_log_tests {
    use std::io::Write;

    /// Counts the writes reaching the inner writer.
    struct Calls(Vec<Vec<u8>>);

    impl Write for Calls {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A record and its newline reach the writer in one write (two let a
    /// concurrent record in between), its control characters escaped.
    #[test]
    fn a_record_is_one_write() {
        let mut log = super::EscapeLog(Calls(Vec::new()));
        log.write_all(b"listening on http://127.0.0.1:1/\n")
            .unwrap();
        log.write_all(b"a\x1bb\n").unwrap();
        let calls = &log.0 .0;
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0], b"listening on http://127.0.0.1:1/\n");
        assert!(
            calls[1].ends_with(b"\n") && !calls[1].contains(&0x1b),
            "{calls:?}"
        );
    }
}
