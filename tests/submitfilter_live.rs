//! The submit filter and job XML live (issue 19 part 4): `SUBMITFILTER`
//! runs as the submitting user with the job XML on its standard input, and
//! what it prints is what is submitted — for msub and for direct API
//! clients alike. The seed's two uses: insert `STAGEIN` for jobs that name
//! their input (Moab §17.12.2: "inserted via a portal or submit filter"),
//! refuse jobs without a run time (Windows HPC: "a job submission filter
//! that checks that the runtime job property is not set to infinite").
//! Rejections, garbage, hangs and owner changes are refused with nothing
//! queued; msub also accepts a job XML as its input.

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use common::{set_mode, text, wait_until, Daemon};

fn tools() -> String {
    format!("{}/tools", env!("CARGO_MANIFEST_DIR"))
}

fn write_exec(p: &Path, body: &str) {
    std::fs::write(p, body).unwrap();
    set_mode(p, 0o755);
}

/// The seed's filter: jobs without a run time are refused; a job that
/// names its input (`-v INPUT=URL`) gets a STAGEIN of it into `scratch`;
/// the job name records who ran the filter.
fn seed_filter(scratch: &Path) -> String {
    format!(
        r#"#!/bin/sh
xml=$(cat)
case "$xml" in
  *"<WallclockDuration>"*) ;;
  *) echo "jobs must give a run time (-l walltime=...): backfill needs it" >&2; exit 1 ;;
esac
input=$(printf '%s' "$xml" | sed -n 's/.*[>;]INPUT=\([^~<]*\)~rs;.*/\1/p')
if [ -n "$input" ]; then
  xml=$(printf '%s' "$xml" | sed "s#</job>#<Extension>x=STAGEIN:$input,file://{}/</Extension></job>#")
fi
printf '%s\n' "$xml" | sed "s#<JobName>\([^<]*\)</JobName>#<JobName>\1-by-$(id -un)</JobName>#"
"#,
        scratch.display()
    )
}

fn config(filter: &Path, extra: &str) -> String {
    format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL DATARM=data\nRMPOLLINTERVAL 00:00:01\n\
         DATASTAGEMODEL LOOSE\nTOOLSDIR {}\n\
         RMCFG[data] TYPE=NATIVE RESOURCETYPE=STORAGE TIMEOUT=00:00:05 POLLINTERVAL=00:00:01\n\
         RMCFG[data] SYSTEMQUERYURL=exec://$TOOLSDIR/dstage.query\n\
         RMCFG[data] CLUSTERQUERYURL=exec://$TOOLSDIR/dstage.cluster\n\
         RMCFG[data] SYSTEMMODIFYURL=exec://$TOOLSDIR/dstage.modify\n\
         SUBMITFILTER {}\n{extra}",
        tools(),
        filter.display()
    )
}

fn scratch() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("arches-filter")
        .tempdir()
        .unwrap();
    set_mode(d.path(), 0o777);
    d
}

fn total_jobs(d: &Daemon) -> String {
    let q = text(&d.run("showq", &[]).stdout);
    q.lines()
        .find(|l| l.starts_with("Total jobs:"))
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_seeds_filter_inserts_stagein_and_refuses_jobs_without_a_run_time() {
    let dir = scratch();
    let filter = dir.path().join("filter.sh");
    write_exec(&filter, &seed_filter(&dir.path().join("stage")));
    std::fs::create_dir_all(dir.path().join("stage")).unwrap();
    set_mode(&dir.path().join("stage"), 0o777);
    let input = dir.path().join("archive/in.dat");
    std::fs::create_dir_all(input.parent().unwrap()).unwrap();
    std::fs::write(&input, "the input data\n").unwrap();
    set_mode(&input, 0o644);
    let d = Daemon::start_with_config(Some(&config(&filter, "")));

    // No run time: refused with the filter's message, nothing queued.
    let out = d.run_stdin("msub", &[], "echo hi\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "ERROR:    cannot submit job - jobs must give a run time (-l walltime=...): backfill needs it\n"
    );
    assert_eq!(total_jobs(&d), "Total jobs:  0");

    // A job naming its input: the filter adds the STAGEIN, the data is
    // staged before the job starts, and the job reads it.
    let result = dir.path().join("result.txt");
    let script = format!(
        "#!/bin/sh\ncat {}/stage/in.dat > {}\n",
        dir.path().display(),
        result.display()
    );
    let url = format!("INPUT=file://{}", input.display());
    let out = d.run_stdin(
        "msub",
        &["-N", "reader", "-l", "walltime=1:00", "-v", &url],
        &script,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = common::parse_id(&out);
    let cj = d.checkjob(id);
    assert!(cj.contains("AName: reader-by-root\n"), "{cj}");
    assert!(
        cj.contains(&format!("StageIn:  File={}/stage/", dir.path().display())),
        "{cj}"
    );
    d.wait_state(id, "Completed", Duration::from_secs(40));
    wait_until("the job's output", || result.exists());
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        "the input data\n"
    );

    // A job giving a run time but no input goes through unchanged.
    let plain = d.submit("true\n", &["-h", "-l", "walltime=10"]);
    let cj = d.checkjob(plain);
    assert!(!cj.contains("StageIn:"), "{cj}");
    assert!(cj.contains("WallTime:   00:00:00 of 00:00:10"), "{cj}");

    // Direct API clients go through the same filter: nobody bypasses it.
    let body = r#"{"script":"echo api\n","name":"api","resources":[],"extensions":[],"class":null,"account":null,"start_after":null,"hold":false,"rerunable":null,"priority":null,"workdir":null,"submit_dir":"/tmp","output":null,"error":null,"join":false,"shell":null,"env":[],"moab_env":false,"mail_options":null,"mail_list":null,"submit_args":"","submit_host":"api"}"#;
    let (status, answer) = post(&d.socket, "/v1/jobs", body);
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("jobs must give a run time"), "{answer}");
    let with_wall = body
        .replace("\"resources\":[]", "\"resources\":[\"walltime=5\"]")
        .replace("\"hold\":false", "\"hold\":true");
    let (status, answer) = post(&d.socket, "/v1/jobs", &with_wall);
    assert_eq!(status, 200, "{answer}");
    let api_id: u64 = answer
        .trim()
        .trim_start_matches("{\"id\":")
        .trim_end_matches('}')
        .parse()
        .unwrap_or_else(|_| panic!("{answer}"));
    assert!(d.checkjob(api_id).contains("AName: api-by-root\n"));

    // A job array with script arguments keeps both through the filter
    // (<JobArray>, <Arguments> in the job XML).
    let script = format!(
        "#!/bin/sh\necho \"$PBS_ARRAYID|$#|$1|$2\" > {}/arg.$PBS_ARRAYID\n",
        dir.path().display()
    );
    d.submit(
        &script,
        &["-l", "walltime=10", "-t", "1-2", "-F", "one 'two words'"],
    );
    for i in 1..=2 {
        let f = dir.path().join(format!("arg.{i}"));
        wait_until("an array sub-job's output", || {
            std::fs::read_to_string(&f).is_ok_and(|s| s.ends_with('\n'))
        });
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            format!("{i}|2|one|two words\n")
        );
    }
}

#[test]
fn failing_hanging_and_lying_filters_queue_nothing() {
    let dir = scratch();
    let filter = dir.path().join("filter.sh");
    // What the filter does is chosen by the job's name.
    write_exec(
        &filter,
        r#"#!/bin/sh
xml=$(cat)
case "$xml" in
  *"<JobName>silent</JobName>"*) exit 3 ;;
  *"<JobName>hang</JobName>"*) sleep 30 ;;
  *"<JobName>garbage</JobName>"*) echo "this is not XML" ;;
  *"<JobName>notjob</JobName>"*) echo "<Data/>" ;;
  *"<JobName>owner</JobName>"*) printf '%s\n' "$xml" | sed 's#<UserId>[^<]*</UserId>#<UserId>nobody</UserId>#; s#<Owner>[^<]*</Owner>#<Owner>nobody</Owner>#' ;;
  *"<JobName>typo</JobName>"*) printf '%s\n' "$xml" | sed 's#</job>#<Walltime>60</Walltime></job>#' ;;
  *"<JobName>flood</JobName>"*) yes '<job>' | head -c 10000000 ;;
  *) printf '%s\n' "$xml" ;;
esac
"#,
    );
    let d = Daemon::start_with_config(Some(&format!(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\nSUBMITFILTER {}\nSUBMITFILTERTIMEOUT 00:00:02\n",
        filter.display()
    )));
    let refused = |name: &str| {
        let out = d.run_stdin("msub", &["-N", name], "true\n");
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stdout));
        text(&out.stderr)
    };
    let f = filter.display().to_string();
    assert_eq!(
        refused("silent"),
        format!(
            "ERROR:    cannot submit job - submit filter '{f}' rejected the job (exit status 3)\n"
        )
    );
    assert_eq!(
        refused("hang"),
        format!("ERROR:    cannot submit job - submit filter '{f}' did not finish within 2s\n")
    );
    let e = refused("garbage");
    assert!(
        e.starts_with(&format!(
            "ERROR:    cannot submit job - submit filter '{f}' output refused: invalid job XML:"
        )),
        "{e}"
    );
    assert!(refused("notjob").ends_with("the root element is <Data>, not <job>\n"));
    assert!(refused("owner")
        .ends_with("the job XML names user 'nobody' but the job is submitted by 'root'\n"));
    assert!(refused("typo").ends_with("invalid job XML: unknown element <Walltime>\n"));
    assert!(refused("flood").contains("printed more than"));
    assert_eq!(total_jobs(&d), "Total jobs:  0");
    // The daemon is fine and a well-behaved submission still works.
    let id = d.submit("true\n", &["-h", "-N", "fine"]);
    assert!(d.checkjob(id).contains("AName: fine\n"));
}

#[test]
fn msub_accepts_a_job_xml_as_its_input() {
    let d = Daemon::start_with_config(Some("NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\n"));
    let dir = scratch();
    let out_file = dir.path().join("xml.out");
    let xml = format!(
        "<?xml version=\"1.0\"?>\n<job>\n  <JobName>fromxml</JobName>\n  <InitialWorkingDirectory>{}</InitialWorkingDirectory>\n  \
         <SubmitString>\\START\\23!/bin/sh\\0aecho\\20\\22$GREETING\\22\\0a</SubmitString>\n  \
         <Environment>GREETING=hello from xml~rs;</Environment>\n  <OutputFile>{}</OutputFile>\n  \
         <RequestedResources><WallclockDuration>120</WallclockDuration><Processors>2</Processors></RequestedResources>\n</job>\n",
        dir.path().display(),
        out_file.display()
    );
    let path = dir.path().join("job.xml");
    std::fs::write(&path, &xml).unwrap();
    set_mode(&path, 0o644);
    // The command line wins over the XML: -N renames, -h holds.
    let out = d.run(
        "msub",
        &["-h", "-N", "renamed", &path.display().to_string()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let held = common::parse_id(&out);
    let cj = d.checkjob(held);
    assert!(cj.contains("AName: renamed\n"), "{cj}");
    assert!(cj.contains("State: UserHold"), "{cj}");
    assert!(cj.contains("WallTime:   00:00:00 of 00:02:00"), "{cj}");
    assert!(cj.contains("Total Requested Tasks: 2"), "{cj}");
    // From standard input, as is: it runs.
    let out = d.run_stdin("msub", &[], &xml);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = common::parse_id(&out);
    assert!(d.checkjob(id).contains("AName: fromxml\n"));
    d.wait_state(id, "Completed", Duration::from_secs(40));
    wait_until("the XML job's output", || {
        std::fs::read_to_string(&out_file).is_ok_and(|s| !s.is_empty())
    });
    assert_eq!(
        std::fs::read_to_string(&out_file).unwrap(),
        "hello from xml\n"
    );
    // A job XML naming somebody else is refused.
    let other = xml.replace("<JobName>", "<Owner>nobody</Owner><JobName>");
    let out = d.run_stdin("msub", &[], &other);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("names user 'nobody'"));
}

#[test]
fn the_filter_runs_as_the_submitting_user() {
    if !common::root_or_skip("the_filter_runs_as_the_submitting_user") {
        return;
    }
    let user = common::ensure_user("archese2e");
    let dir = scratch();
    let filter = dir.path().join("filter.sh");
    write_exec(&filter, &seed_filter(dir.path()));
    let d = Daemon::start_with_config(Some(&config(&filter, "")));
    let out = common::run_as_user(
        &d,
        &user,
        "msub",
        &["-h", "-N", "mine", "-l", "walltime=10"],
        "true\n",
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = common::parse_id(&out);
    let cj = d.checkjob(id);
    assert!(cj.contains(&format!("AName: mine-by-{user}\n")), "{cj}");
    assert!(cj.contains(&format!("Creds:  user:{user}")), "{cj}");
}

/// A raw HTTP/1.1 POST over the daemon's socket: (status, body).
fn post(socket: &Path, path: &str, body: &str) -> (u16, String) {
    let mut s = std::os::unix::net::UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}
