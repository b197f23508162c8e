//! Harness: a daemon on a temporary home and socket — in-process (a thread
//! running `serve` with the fake backend) or as a child process (the
//! `fake_daemon` example, for kill -9) — and a blocking HTTP client over the
//! socket.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use arches_api::{
    routes, ActionResponse, JobAction, JobActionRequest, JobsRequest, JobsView, QueueView,
    SchedulerControl, SubmitRequest, SubmitResponse,
};
use arches_core::Node;
use arches_server::testing::FakeRm;
use arches_server::{config, serve, Locations};
use serde::de::DeserializeOwned;

/// A client of one socket.
pub struct Api {
    pub socket: PathBuf,
    client: reqwest::blocking::Client,
}

impl Api {
    pub fn new(socket: &Path) -> Api {
        let client = reqwest::blocking::Client::builder()
            .unix_socket(socket)
            .timeout(Duration::from_secs(30))
            .build()
            .expect("client");
        Api {
            socket: socket.to_path_buf(),
            client,
        }
    }

    /// Raw POST: status and body text.
    pub fn post_raw(&self, route: &str, body: Vec<u8>) -> (u16, String) {
        let r = self
            .client
            .post(format!("http://localhost{route}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .expect("send");
        (r.status().as_u16(), r.text().unwrap_or_default())
    }

    /// POST over a raw connection, tolerating the server closing before the
    /// whole body is written (oversized bodies): status line and body text.
    pub fn post_unchecked(&self, route: &str, body: &[u8]) -> (u16, String) {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(&self.socket).expect("connect");
        let head = format!(
            "POST {route} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = text
            .split_once("\r\n\r\n")
            .map(|x| x.1.to_string())
            .unwrap_or_default();
        (status, body)
    }

    pub fn get_raw(&self, route: &str) -> (u16, String) {
        let r = self
            .client
            .get(format!("http://localhost{route}"))
            .send()
            .expect("send");
        (r.status().as_u16(), r.text().unwrap_or_default())
    }

    pub fn post<T: DeserializeOwned>(
        &self,
        route: &str,
        body: &impl serde::Serialize,
    ) -> Result<T, String> {
        let (status, text) = self.post_raw(route, serde_json::to_vec(body).expect("json"));
        if status == 200 {
            Ok(serde_json::from_str(&text).expect("decode"))
        } else {
            let e: arches_api::ApiError = serde_json::from_str(&text).expect("ApiError body");
            Err(e.message)
        }
    }

    pub fn get<T: DeserializeOwned>(&self, route: &str) -> T {
        let (status, text) = self.get_raw(route);
        assert_eq!(status, 200, "{route}: {text}");
        serde_json::from_str(&text).expect("decode")
    }

    pub fn submit(&self, req: &SubmitRequest) -> Result<u64, String> {
        self.post::<SubmitResponse>(routes::SUBMIT, req)
            .map(|r| r.id)
    }

    pub fn queue(&self, completed: bool) -> QueueView {
        self.get(&format!("{}?completed={completed}", routes::QUEUE))
    }

    pub fn jobs(&self, ids: &[&str]) -> JobsView {
        let req = JobsRequest {
            ids: ids.iter().map(|s| s.to_string()).collect(),
            completed: true,
            ..Default::default()
        };
        self.post(routes::JOBS_DETAIL, &req).expect("jobs")
    }

    pub fn state(&self, id: u64) -> Option<String> {
        let v = self.jobs(&[&id.to_string()]);
        v.jobs.first().map(|j| j.summary.state.clone())
    }

    pub fn act(&self, jobs: &[&str], action: JobAction) -> ActionResponse {
        let req = JobActionRequest {
            jobs: jobs.iter().map(|s| s.to_string()).collect(),
            action,
            select: Default::default(),
        };
        self.post(routes::JOB_ACTION, &req).expect("action")
    }

    /// Polls until the job shows `state`.
    pub fn wait_state(&self, id: u64, state: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.state(id);
            if s.as_deref() == Some(state) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "job {id} stuck in {s:?}, wanted {state}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the socket answers.
    pub fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = self
                .client
                .get(format!("http://localhost{}", routes::SCHEDULER))
                .send()
            {
                if r.status().is_success() {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "daemon never answered");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A simple submission of `script` from `dir`.
pub fn job(script: &str, dir: &Path) -> SubmitRequest {
    SubmitRequest {
        script: script.to_string(),
        submit_dir: dir.to_string_lossy().into_owned(),
        submit_host: "testhost".into(),
        ..SubmitRequest::default()
    }
}

/// Nodes of every test daemon: two nodes of 4 processors.
pub fn test_nodes() -> Vec<Node> {
    vec![Node::new("n1", 4, 8000), Node::new("n2", 4, 8000)]
}

/// An in-process daemon on a temporary home.
pub struct InProcess {
    pub home: tempfile::TempDir,
    pub api: Api,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl InProcess {
    pub fn start() -> InProcess {
        InProcess::start_with(|_| {})
    }

    pub fn start_with(tweak: impl FnOnce(&mut config::DaemonConfig)) -> InProcess {
        let home = tempfile::Builder::new()
            .prefix("arches-srv")
            .tempdir()
            .expect("tempdir");
        set_mode(home.path(), 0o755);
        let mut cfg = config::embedded_default(home.path());
        cfg.nodes = test_nodes();
        tweak(&mut cfg);
        let rm = FakeRm::new(home.path().join("fake-rm"), cfg.nodes.clone(), 0).expect("rm");
        let loc = Locations {
            home: home.path().to_path_buf(),
            socket: home.path().join("moab.sock"),
        };
        let socket = loc.socket.clone();
        let thread = std::thread::spawn(move || serve(loc, cfg, Box::new(rm)));
        let api = Api::new(&socket);
        api.wait_ready();
        InProcess {
            home,
            api,
            thread: Some(thread),
        }
    }

    /// Stops through `mschedctl -k` and returns the server's result.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let r: ActionResponse = self
            .api
            .post(routes::SCHEDULER_CONTROL, &SchedulerControl::Kill)
            .expect("kill");
        assert_eq!(
            r.stdout,
            vec!["moab will be shutdown immediately".to_string()]
        );
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("no panic")
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop();
        }
    }
}

/// Path of an example binary built by `cargo test`.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let debug = exe.parent().and_then(Path::parent).expect("target dir");
    let p = debug.join("examples").join(name);
    assert!(
        p.exists(),
        "{} missing (cargo test builds examples)",
        p.display()
    );
    p
}

/// A daemon as a child process (the `fake_daemon` example).
pub struct ChildDaemon {
    pub home: PathBuf,
    pub api: Api,
    child: Option<Child>,
}

impl ChildDaemon {
    /// The daemon with the fake backend.
    pub fn spawn(home: &Path) -> ChildDaemon {
        ChildDaemon::spawn_example("fake_daemon", home)
    }

    /// The daemon with real local execution (as `moab` runs).
    pub fn spawn_local(home: &Path) -> ChildDaemon {
        ChildDaemon::spawn_example("local_daemon", home)
    }

    fn spawn_example(name: &str, home: &Path) -> ChildDaemon {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(home.join("daemon.stderr"))
            .expect("log");
        let child = Command::new(example(name))
            .arg(home)
            .stderr(log)
            .spawn()
            .expect("spawn fake_daemon");
        let api = Api::new(&home.join("moab.sock"));
        api.wait_ready();
        ChildDaemon {
            home: home.to_path_buf(),
            api,
            child: Some(child),
        }
    }

    /// SIGTERM and wait; the exit status.
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        let mut c = self.child.take()?;
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        c.wait().ok()
    }

    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for ChildDaemon {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
}

/// Whether a test that needs root (it creates users and switches to them)
/// may run. As root: yes. Otherwise it is skipped with a loud NOTICE on
/// stderr, unless `ARCHES_REQUIRE_ROOT_TESTS` is set (`.ci/run` sets it: CI
/// runs as root, so there a missing root is a failure, never a skip).
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var_os("ARCHES_REQUIRE_ROOT_TESTS").is_none(),
        "{test} needs root (ARCHES_REQUIRE_ROOT_TESTS is set)"
    );
    eprintln!(
        "NOTICE: {test} SKIPPED: it creates users and switches to them, which needs root (CI runs it as root)"
    );
    false
}
