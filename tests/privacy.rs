//! Trust (issue 14, points 2 and 3), end to end with real users: another
//! user reads nothing of a job but its showq summary, through any command,
//! output format, the raw API or any file of the home; the daemon's files
//! are private whatever the umask it starts under, and the jobs of other
//! users still run. docs/security.md is the reference.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, parse_id, text, Daemon};

const LONG: Duration = Duration::from_secs(60);
const TOKEN: &str = "s3cr3t-token-4711";
const SCRIPT_SECRET: &str = "script-secret-XYZ";

/// A local test user (created once; the tests of this file run in
/// parallel, and two concurrent `useradd` of one name would race).
fn user(name: &str) -> String {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    common::ensure_user(name)
}

/// Runs one of our commands as `user` against `socket`/`home`.
fn as_user(
    user: &str,
    home: &Path,
    socket: &Path,
    prog: &str,
    args: &[&str],
    cwd: &Path,
) -> Output {
    Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .arg(bin(prog))
        .args(args)
        .env_clear()
        .envs(common::base_env(home, socket))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("setpriv")
}

/// A directory owned by `user`, mode 0700, holding `script.sh`.
fn workdir(user: &str, script: &str) -> tempfile::TempDir {
    let wd = tempfile::Builder::new()
        .prefix("arches-priv")
        .tempdir()
        .expect("tempdir");
    std::fs::write(wd.path().join("script.sh"), script).expect("script");
    let st = Command::new("chown")
        .args(["-R", &format!("{user}:{user}")])
        .arg(wd.path())
        .status()
        .expect("chown");
    assert!(st.success());
    common::set_mode(wd.path(), 0o700);
    wd
}

fn all_output(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        out.push(p.clone());
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            out.extend(files_under(&p));
        }
    }
    out
}

/// Raw API request helper, run as another user by
/// `another_user_reads_no_job_detail_by_any_route`: prints the answer.
#[test]
#[ignore = "helper run as another user by another_user_reads_no_job_detail_by_any_route"]
fn raw_api_request() {
    use std::io::{Read, Write};
    let socket = std::env::var("ARCHES_RAW_SOCKET").expect("ARCHES_RAW_SOCKET");
    let route = std::env::var("ARCHES_RAW_ROUTE").expect("ARCHES_RAW_ROUTE");
    let body = std::env::var("ARCHES_RAW_BODY").unwrap_or_default();
    let mut s = std::os::unix::net::UnixStream::connect(socket).expect("connect");
    let method = if body.is_empty() { "GET" } else { "POST" };
    write!(
        s,
        // HTTP/1.0: the answer comes whole, not chunked.
        "{method} {route} HTTP/1.0\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read");
    println!("RAW-ANSWER-BEGIN\n{answer}\nRAW-ANSWER-END");
}

fn raw_as(user: &str, socket: &Path, route: &str, body: &str) -> String {
    let out = Command::new("setpriv")
        .args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .arg(std::env::current_exe().expect("test binary"))
        .args([
            "--ignored",
            "--exact",
            "raw_api_request",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .env("ARCHES_RAW_SOCKET", socket)
        .env("ARCHES_RAW_ROUTE", route)
        .env("ARCHES_RAW_BODY", body)
        .current_dir("/")
        .output()
        .expect("raw helper");
    let s = text(&out.stdout);
    let begin = s
        .find("RAW-ANSWER-BEGIN")
        .unwrap_or_else(|| panic!("{s}{}", text(&out.stderr)));
    let end = s.find("RAW-ANSWER-END").expect("end");
    s[begin..end].to_string()
}

#[test]
fn another_user_reads_no_job_detail_by_any_route() {
    if !common::root_or_skip("another_user_reads_no_job_detail_by_any_route") {
        return;
    }
    let owner = user("archesp1");
    let other = user("archesp2");
    let helpdesk = user("archesp3");
    let d = Daemon::start_with_config(Some(&format!("ADMINCFG[3] USERS={helpdesk}\n")));
    let (home, socket) = (d.home.path(), d.socket.as_path());
    let script = format!("#!/bin/sh\necho {SCRIPT_SECRET}\nsleep 30\n");
    let wd = workdir(&owner, &script);
    let wdp = wd.path().to_string_lossy().to_string();
    let var = format!("TOKEN={TOKEN}");
    let submit = |extra: &[&str]| {
        let mut args = vec!["-v", &var, "-l", "walltime=100"];
        args.extend_from_slice(extra);
        args.push("script.sh");
        let out = as_user(&owner, home, socket, "msub", &args, wd.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
        parse_id(&out)
    };
    let held = submit(&["-h", "-N", "privheld"]);
    let running = submit(&["-N", "privrun"]);
    d.wait_state(running, "Running", LONG);
    let (h, r) = (held.to_string(), running.to_string());
    let secrets = [TOKEN, SCRIPT_SECRET, wdp.as_str()];
    let clean = |what: &str, out: &str| {
        for s in secrets {
            assert!(
                !out.contains(s),
                "{what} shows {s:?} to another user:\n{out}"
            );
        }
    };
    let root = Path::new("/");

    // Detail routes: Moab's refusal, nothing of the job.
    for (prog, args, id) in [
        ("checkjob", vec![h.as_str()], &h),
        ("checkjob", vec!["-v", "-v", &h], &h),
        ("checkjob", vec!["--format", "json", &h], &h),
        ("checkjob", vec!["--xml", &r], &r),
        ("checkjob", vec!["-A", &r], &r),
        ("mdiag", vec!["-j", &h], &h),
        ("mdiag", vec!["-j", &r, "--xml"], &r),
        ("mjobctl", vec!["-q", "diag", &h], &h),
        ("mjobctl", vec!["-q", "hostlist", &r], &r),
    ] {
        let out = as_user(&other, home, socket, prog, &args, root);
        let all = all_output(&out);
        assert_eq!(out.status.code(), Some(1), "{prog} {args:?}: {all}");
        assert!(
            text(&out.stderr).contains(&format!(
                "user {other} is not authorized to check status of job '{id}'"
            )),
            "{prog} {args:?}: {all}"
        );
        clean(&format!("{prog} {args:?}"), &all);
    }
    // Summary routes: the job is listed as Moab lists it, nothing more.
    for (prog, args) in [
        ("checkjob", vec!["ALL"]),
        ("checkjob", vec!["--format", "json", "ALL"]),
        ("mdiag", vec!["-j"]),
        ("mdiag", vec!["-j", "--format", "json"]),
        ("mdiag", vec!["-x"]),
        ("showq", vec![]),
        ("showq", vec!["-c"]),
        ("showq", vec!["-v"]),
        ("showq", vec!["-r"]),
        ("showq", vec!["-i"]),
        ("showq", vec!["--xml"]),
        ("showq", vec!["--format", "json"]),
        ("mdiag", vec!["-p", "-v"]),
        ("mdiag", vec!["-b"]),
        ("showres", vec![]),
        ("showres", vec!["-n"]),
        ("checknode", vec!["ALL"]),
        ("showstart", vec![&h]),
        ("showstats", vec!["-u"]),
        ("mdiag", vec!["-u"]),
        ("mdiag", vec!["-f"]),
    ] {
        let out = as_user(&other, home, socket, prog, &args, root);
        clean(&format!("{prog} {args:?}"), &all_output(&out));
    }
    let q = text(&as_user(&other, home, socket, "showq", &[], root).stdout);
    assert!(
        q.contains(&h) && q.contains(&owner),
        "showq lists every job:\n{q}"
    );
    // The raw API: the detail route refuses, the queue route summarises.
    let detail = format!("{{\"ids\":[\"{h}\",\"{r}\",\"ALL\"],\"completed\":true}}");
    let a = raw_as(&other, socket, "/v1/jobs/detail", &detail);
    assert!(a.contains("200 OK") && a.contains("\"denied\""), "{a}");
    assert!(a.contains("\"jobs\":[]"), "{a}");
    clean("POST /v1/jobs/detail", &a);
    let a = raw_as(&other, socket, "/v1/queue?completed=true", "");
    assert!(
        a.contains("200 OK") && a.contains(&format!("\"id\":{held}")),
        "{a}"
    );
    clean("GET /v1/queue", &a);

    // No file of the home gives the secrets away.
    for p in files_under(home) {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let m = std::fs::symlink_metadata(&p).unwrap();
        // The test harness's own files (not the daemon's).
        if !m.is_file() || name == "moab.cfg" || name == "daemon.stderr" {
            continue;
        }
        let out = Command::new("setpriv")
            .args([
                "--reuid",
                &other,
                "--regid",
                &other,
                "--init-groups",
                "--",
                "cat",
            ])
            .arg(&p)
            .output()
            .expect("cat");
        if out.status.success() {
            assert_eq!(
                name,
                "nodefile",
                "{} is readable by another user",
                p.display()
            );
            clean(&p.display().to_string(), &text(&out.stdout));
        }
    }

    // The owner and a level-3 administrator see everything (checkjob -v
    // shows the submit arguments); the administrator may not act.
    for who in [&owner, &helpdesk] {
        let out = as_user(who, home, socket, "checkjob", &["-v", &h], root);
        assert!(out.status.success(), "{who}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains(&format!("Submit Args:    -v {var}")),
            "{who}"
        );
        let out = as_user(who, home, socket, "checkjob", &["ALL"], root);
        assert!(text(&out.stdout).contains(&format!("job {held}")), "{who}");
    }
    let out = as_user(&helpdesk, home, socket, "canceljob", &[&h], root);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a level-3 administrator only reads"
    );
    let out = d.run("mjobctl", &["-c", &format!("{held},{running}")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A daemon started by this test under a given umask, on a home it creates
/// itself.
struct UmaskDaemon {
    _base: tempfile::TempDir,
    home: PathBuf,
    socket: PathBuf,
    log: PathBuf,
    child: std::process::Child,
}

impl UmaskDaemon {
    fn start(umask: &str) -> UmaskDaemon {
        let base = tempfile::Builder::new()
            .prefix("arches-umask")
            .tempdir()
            .expect("tempdir");
        common::set_mode(base.path(), 0o755);
        let home = base.path().join("home");
        let socket = home.join("moab.sock");
        let log = base.path().join("daemon.stderr");
        let child = Command::new("/bin/sh")
            .args(["-c", &format!("umask {umask} && exec \"$0\"")])
            .arg(bin("moab"))
            .env_clear()
            .envs(common::base_env(&home, &socket))
            .current_dir(base.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("spawn moab");
        let d = UmaskDaemon {
            _base: base,
            home,
            socket,
            log,
            child,
        };
        let deadline = Instant::now() + LONG;
        while !d.run("showq", &[]).status.success() {
            assert!(
                Instant::now() < deadline,
                "daemon did not answer: {}",
                d.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        d
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn run(&self, prog: &str, args: &[&str]) -> Output {
        Command::new(bin(prog))
            .args(args)
            .env_clear()
            .envs(common::base_env(&self.home, &self.socket))
            .current_dir("/")
            .stdin(Stdio::null())
            .output()
            .expect("client")
    }

    fn wait(&self, id: u64, state: &str) {
        let deadline = Instant::now() + LONG;
        loop {
            let out = text(&self.run("checkjob", &[&id.to_string()]).stdout);
            if out
                .lines()
                .any(|l| l.trim_end() == format!("State: {state}"))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "job {id} never {state}:\n{out}\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for UmaskDaemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = Command::new("pkill")
            .args(["-f", &self.home.to_string_lossy()])
            .status();
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).expect("exists").mode() & 0o7777
}

/// Starts a daemon under `umask`, runs a job of another user (it must run
/// and write its output) and checks the mode of everything in the home.
fn private_whatever_the_umask(umask: &str) {
    let user = user("archesp2");
    let d = UmaskDaemon::start(umask);
    let (home, socket) = (d.home.clone(), d.socket.clone());
    assert_eq!(mode(&home), 0o711, "home created by the daemon");
    let wd = workdir(&user, "#!/bin/sh\necho ran-as-$(id -un)\n");
    let out = as_user(
        &user,
        &home,
        &socket,
        "msub",
        &["-N", "umaskjob", "script.sh"],
        wd.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let done = parse_id(&out);
    std::fs::write(wd.path().join("long.sh"), "sleep 30\n").unwrap();
    let st = Command::new("chown")
        .arg(&user)
        .arg(wd.path().join("long.sh"))
        .status();
    assert!(st.unwrap().success());
    let out = as_user(&user, &home, &socket, "msub", &["long.sh"], wd.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let running = parse_id(&out);
    d.wait(done, "Completed");
    d.wait(running, "Running");
    let output = wd.path().join(format!("umaskjob.o{done}"));
    assert_eq!(
        std::fs::read_to_string(&output).expect("job output").trim(),
        format!("ran-as-{user}")
    );
    let m = std::fs::metadata(&output).unwrap();
    assert_eq!(
        m.uid(),
        common_uid(&user),
        "the output belongs to the job's user"
    );
    assert_eq!(
        m.mode() & 0o022,
        0,
        "job files are never writable by others"
    );

    // Every path the daemon wrote.
    let expect = [
        ("arches.db", 0o600),
        ("arches.db-wal", 0o600),
        ("arches.db-shm", 0o600),
        ("log", 0o700),
        ("log/moab.log", 0o600),
        ("spool", 0o711),
    ];
    for (p, want) in expect {
        assert_eq!(mode(&home.join(p)), want, "{p} under umask {umask}");
    }
    let job = home.join("spool").join(running.to_string());
    assert_eq!(mode(&job), 0o711);
    assert_eq!(mode(&job.join("launch.json")), 0o600);
    assert_eq!(mode(&job.join("pid")), 0o600);
    assert_eq!(mode(&job.join("script")), 0o700);
    assert_eq!(
        std::fs::metadata(job.join("script")).unwrap().uid(),
        common_uid(&user)
    );
    assert_eq!(mode(&job.join("nodefile")), 0o644);
    let c = d.run("mjobctl", &["-c", &running.to_string()]);
    assert!(c.status.success(), "{}", text(&c.stderr));
    d.wait(running, "Removed");
    let status_file = files_under(&home.join("spool"))
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "status"));
    if let Some(s) = status_file {
        assert_eq!(mode(&s), 0o600, "{}", s.display());
    }
    // The rule for everything: nothing readable or writable by others but
    // the traversable directories, the node file and the socket.
    for p in files_under(&home) {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let bits = m.mode() & 0o7777;
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()) {
            assert_eq!(bits, 0o666, "{}", p.display());
        } else if m.is_dir() {
            assert!(
                bits == 0o711 || bits & 0o077 == 0,
                "{} is {bits:04o}",
                p.display()
            );
        } else if name != "nodefile" {
            assert_eq!(bits & 0o077, 0, "{} is {bits:04o}", p.display());
        }
    }
    assert!(
        !d.log().contains("mode of"),
        "nothing to fix at start: {}",
        d.log()
    );
}

fn common_uid(user: &str) -> u32 {
    let out = Command::new("id").args(["-u", user]).output().expect("id");
    text(&out.stdout).trim().parse().expect("uid")
}

#[test]
fn files_are_private_under_umask_000() {
    if common::root_or_skip("files_are_private_under_umask_000") {
        private_whatever_the_umask("000");
    }
}

#[test]
fn files_are_private_under_umask_077_and_other_users_jobs_run() {
    if common::root_or_skip("files_are_private_under_umask_077_and_other_users_jobs_run") {
        private_whatever_the_umask("077");
    }
}

#[test]
fn too_open_files_are_fixed_at_start_with_a_warning() {
    let mut d = Daemon::start();
    d.stop();
    let db = d.home.path().join("arches.db");
    let log = d.home.path().join("log").join("moab.log");
    for p in [&db, &log] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    d.spawn();
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&log), 0o600);
    let l = d.daemon_log();
    assert!(
        l.contains(&format!(
            "mode of {} was 0644: changed to 0600",
            db.display()
        )),
        "{l}"
    );
}

/// `-W umask=` (Torque): the job's output and the files it creates get the
/// mask the user asked for — `077` keeps them from every other user —, and
/// checkjob -v shows it as Moab does (`UMask:          0077 `).
#[test]
fn a_jobs_umask_makes_its_files_private() {
    let d = Daemon::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let created = dir.path().join("created");
    let out = dir.path().join("job.out");
    let id = d.submit(
        &format!("touch {}\necho done\n", created.display()),
        &["-W", "umask=077", "-o", &out.to_string_lossy(), "-j", "oe"],
    );
    let cj = d.wait_state(id, "Completed", LONG);
    assert!(cj.contains("Completion Code: 0"), "{cj}");
    let mode = |p: &Path| std::fs::metadata(p).expect("file").mode() & 0o777;
    assert_eq!(mode(&created), 0o600, "a file the job created");
    assert_eq!(mode(&out), 0o600, "the job's output");
    let v = text(&d.run("checkjob", &["-v", &id.to_string()]).stdout);
    assert!(v.lines().any(|l| l == "UMask:          0077 "), "{v}");
    // Not a mask: refused at submission, nothing queued.
    let script = dir.path().join("s.sh");
    std::fs::write(&script, "true\n").expect("script");
    let bad = d.run("msub", &["-W", "umask=0999", &script.to_string_lossy()]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        text(&bad.stderr).trim_end(),
        "ERROR:    cannot submit job - invalid umask '0999' (an octal mask such as 022 or 0077)"
    );
}
