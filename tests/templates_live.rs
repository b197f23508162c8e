//! Job templates live (issue 19 part 3): the Windows HPC seed's BigJob /
//! MediumJob / SmallJob templates with maximum run times of one day, one
//! hour and one minute, requested with `msub -l template=NAME`; a site
//! default that gives every job without a run time one, so that it can be
//! backfilled; JMAX rejections naming the template; JSET forcing a value,
//! JMIN rejecting a job below the template (naming it), FLAGS=BREAK
//! stopping the evaluation; templates that contradict a class; what
//! checkjob, `checkjob --xml` and `mdiag -j` show.

mod common;

use std::time::{Duration, Instant};

use common::{text, Daemon};

const CFG: &str = "\
NODECFG[n1] PROCS=2
RMCFG[local] TYPE=LOCAL
CLASSCFG[short] MAX.WCLIMIT=00:10:00
# The Windows HPC seed: templates with maximum run times.
JOBCFG[BigJob]        SELECT=TRUE WALLTIME=1:00:00:00
JOBCFG[MediumJob]     SELECT=TRUE WALLTIME=01:00:00
JOBCFG[SmallJob]      SELECT=TRUE WALLTIME=00:01:00
JOBCFG[BigJob.max]    WALLTIME=1:00:00:00
JOBCFG[MediumJob.max] WALLTIME=01:00:00
JOBCFG[SmallJob.max]  WALLTIME=00:01:00
JOBMATCHCFG[BigJob]    JMAX=BigJob.max
JOBMATCHCFG[MediumJob] JMAX=MediumJob.max
JOBMATCHCFG[SmallJob]  JMAX=SmallJob.max
# A site default: every job without a run time gets two hours.
JOBCFG[runtime]       WALLTIME=02:00:00
JOBMATCHCFG[default]  JDEF=runtime
";

fn msub_err(d: &Daemon, args: &[&str]) -> String {
    let out = d.run_stdin("msub", args, "sleep 1\n");
    assert!(!out.status.success(), "msub {args:?} was accepted");
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    text(&out.stderr)
}

fn msub_ok(d: &Daemon, args: &[&str], script: &str) -> u64 {
    let out = d.run_stdin("msub", args, script);
    assert!(out.status.success(), "msub {args:?}: {}", text(&out.stderr));
    common::parse_id(&out)
}

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no '{prefix}' line:\n{out}"))
}

#[test]
fn windows_hpc_templates_with_maximum_run_times() {
    let d = Daemon::start_with_config(Some(CFG));
    // SmallJob without a run time: the template's minute.
    let small = msub_ok(&d, &["-h", "-l", "template=SmallJob"], "sleep 1\n");
    let cj = d.checkjob(small);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 00:01:00",
        "{cj}"
    );
    assert_eq!(
        line(&cj, "TemplateSets:"),
        "TemplateSets:  SmallJob",
        "{cj}"
    );
    // Half an hour is more than SmallJob allows: refused, naming the template.
    let e = msub_err(&d, &["-l", "template=SmallJob,walltime=30:00"]);
    assert_eq!(
        e,
        "ERROR:    cannot submit job - job exceeds template 'SmallJob.max' (JOBMATCHCFG[SmallJob] JMAX): walltime 00:30:00 > 00:01:00\n"
    );
    // ... but fits MediumJob; and BigJob takes a day.
    let medium = msub_ok(
        &d,
        &["-h", "-l", "template=MediumJob,walltime=30:00"],
        "sleep 1\n",
    );
    let cj = d.checkjob(medium);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 00:30:00",
        "{cj}"
    );
    assert_eq!(
        line(&cj, "TemplateSets:"),
        "TemplateSets:  MediumJob",
        "{cj}"
    );
    let e = msub_err(&d, &["-l", "template=MediumJob,walltime=2:00:00"]);
    assert!(e.contains("template 'MediumJob.max'"), "{e}");
    let big = msub_ok(&d, &["-h", "-l", "template=BigJob"], "sleep 1\n");
    assert_eq!(
        line(&d.checkjob(big), "WallTime:"),
        "WallTime:   00:00:00 of 1:00:00:00"
    );
    // Only SELECT=TRUE templates may be requested; unknown ones are named.
    let e = msub_err(&d, &["-l", "template=SmallJob.max"]);
    assert_eq!(
        e,
        "ERROR:    cannot submit job - job template 'SmallJob.max' cannot be requested (it does not have SELECT=TRUE)\n"
    );
    let e = msub_err(&d, &["-l", "template=HugeJob"]);
    assert!(e.contains("job template 'HugeJob' does not exist"), "{e}");
    // Nothing of the refused submissions was queued.
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  3"), "{q}");

    // The site default: a job without a run time gets two hours.
    let plain = msub_ok(&d, &["-h"], "sleep 1\n");
    let cj = d.checkjob(plain);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 2:00:00",
        "{cj}"
    );
    assert_eq!(line(&cj, "TemplateSets:"), "TemplateSets:  default", "{cj}");
    // A job that gave one keeps it; no template applied.
    let own = msub_ok(&d, &["-h", "-l", "walltime=5:00"], "sleep 1\n");
    let cj = d.checkjob(own);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 00:05:00",
        "{cj}"
    );
    assert_eq!(line(&cj, "TemplateSets:"), "TemplateSets:  DEFAULT", "{cj}");

    // A template that would put a job above its class's limit is a clear
    // refusal, not a job blocked forever.
    let e = msub_err(&d, &["-q", "short"]);
    assert_eq!(
        e,
        "ERROR:    cannot submit job - job template 'runtime' sets walltime 2:00:00 above MAX.WCLIMIT 00:10:00 of class short\n"
    );

    // mdiag -j and the XML name the templates.
    let mj = text(&d.run("mdiag", &["-j"]).stdout);
    assert!(
        mj.contains(&format!("  NOTE:  job {small}: job templates SmallJob\n")),
        "{mj}"
    );
    let xml = text(&d.run("checkjob", &["--xml", &medium.to_string()]).stdout);
    assert!(xml.contains("TemplateSetList=\"MediumJob\""), "{xml}");
}

#[test]
fn a_default_run_time_lets_a_job_backfill() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=2\nRMCFG[local] TYPE=LOCAL\n\
         JOBCFG[runtime] WALLTIME=00:05:00\nJOBMATCHCFG[default] JDEF=runtime\n",
    ));
    // One processor busy for an hour; a two-processor job reserves the node
    // after it; a job that gave no run time gets five minutes from the
    // site default and so fits before the reservation: it backfills.
    let long = msub_ok(&d, &["-l", "procs=1,walltime=1:00:00"], "sleep 300\n");
    d.wait_state(long, "Running", Duration::from_secs(20));
    let wide = msub_ok(&d, &["-l", "procs=2,walltime=1:00:00"], "sleep 1\n");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !d.checkjob(wide).contains("Reservation '") {
        assert!(Instant::now() < deadline, "{}", d.checkjob(wide));
        std::thread::sleep(Duration::from_millis(100));
    }
    let filler = msub_ok(&d, &[], "sleep 300\n");
    let cj = d.wait_state(filler, "Running", Duration::from_secs(20));
    assert_eq!(line(&cj, "TemplateSets:"), "TemplateSets:  default", "{cj}");
    assert!(d.checkjob(wide).contains("State: Idle"));
}

/// JSET forces a value over the job's own; a JMIN rule of a selectable
/// template refuses a job too small for it, naming the template; FLAGS=BREAK
/// stops the evaluation at the first rule that matched.
#[test]
fn jset_forces_jmin_refuses_and_break_stops_matching() {
    let d = Daemon::start_with_config(Some(
        "NODECFG[n1] PROCS=4\nRMCFG[local] TYPE=LOCAL\n\
         CLASSCFG[batch] MAXJOB=100\nCLASSCFG[other] MAXJOB=100\n\
         JOBCFG[wide]      SELECT=TRUE DESCRIPTION=parallel\n\
         JOBCFG[wide.min]  PROCS=2\n\
         JOBCFG[inbatch]   CLASS=batch\n\
         JOBCFG[five]      WALLTIME=00:05:00\n\
         JOBCFG[seven]     WALLTIME=00:07:00\n\
         JOBMATCHCFG[wide]     JMIN=wide.min\n\
         JOBMATCHCFG[batchcap] JMIN=inbatch JSET=five FLAGS=BREAK\n\
         JOBMATCHCFG[later]    JSET=seven\n",
    ));
    // JMIN: a job that picked `wide` with one processor is refused, naming
    // the template and the rule; nothing is queued.
    let e = msub_err(&d, &["-l", "template=wide,procs=1,walltime=1:00:00"]);
    assert_eq!(
        e,
        "ERROR:    cannot submit job - job does not meet template 'wide.min' (JOBMATCHCFG[wide] JMIN): procs 1 < 2\n"
    );
    let q = text(&d.run("showq", &[]).stdout);
    assert!(q.contains("Total jobs:  0"), "{q}");
    // Two processors meet it; the rules after it still apply (no BREAK).
    let wide = msub_ok(
        &d,
        &["-h", "-l", "template=wide,procs=2,walltime=1:00:00"],
        "sleep 1\n",
    );
    let cj = d.checkjob(wide);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 00:07:00",
        "{cj}"
    );
    assert_eq!(
        line(&cj, "TemplateSets:"),
        "TemplateSets:  wide,later",
        "{cj}"
    );

    // JSET forces batch jobs' hour down to five minutes, and BREAK keeps
    // the next rule (which would force seven) from applying.
    let batch = msub_ok(
        &d,
        &["-h", "-q", "batch", "-l", "walltime=1:00:00"],
        "sleep 1\n",
    );
    let cj = d.checkjob(batch);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 00:05:00",
        "{cj}"
    );
    assert_eq!(
        line(&cj, "TemplateSets:"),
        "TemplateSets:  batchcap",
        "{cj}"
    );
    // A job the first rule does not match goes on to the next one.
    let other = msub_ok(
        &d,
        &["-h", "-q", "other", "-l", "walltime=1:00:00"],
        "sleep 1\n",
    );
    let cj = d.checkjob(other);
    assert_eq!(
        line(&cj, "WallTime:"),
        "WallTime:   00:00:00 of 00:07:00",
        "{cj}"
    );
    assert_eq!(line(&cj, "TemplateSets:"), "TemplateSets:  later", "{cj}");
}

/// `showstats -j` (issue 16): statistics templates (`JOBMATCHCFG[...]
/// JSTAT=NAME`) count the jobs their rule matched — completed ones and
/// running ones (now) —, one row each in the credential table layout;
/// kept across a restart and in the profile (`-t`); a job that never ran
/// counts nowhere; a template without statistics has no row; unknown
/// templates are Moab's error.
#[test]
fn showstats_j_reports_the_jobs_each_statistics_template_matched() {
    let cfg = "\
NODECFG[n1] PROCS=2
RMCFG[local] TYPE=LOCAL
RMPOLLINTERVAL 1
JOBCFG[big.min]     PROCS=2
JOBCFG[other]       WALLTIME=01:00:00
JOBMATCHCFG[big]    JMIN=big.min JSTAT=bigjobs
JOBMATCHCFG[every]  JSTAT=alljobs
";
    let mut d = Daemon::start_with_config(Some(cfg));
    let one = msub_ok(&d, &["-l", "walltime=1:00"], "true\n");
    let two = msub_ok(&d, &["-l", "nodes=1:ppn=2,walltime=1:00"], "true\n");
    for id in [one, two] {
        d.wait_state(id, "Completed", Duration::from_secs(30));
    }
    // checkjob names the statistics templates (Moab's TemplateStats:).
    assert_eq!(
        line(&d.checkjob(two), "TemplateStats:"),
        "TemplateStats: bigjobs,alljobs"
    );
    assert_eq!(
        line(&d.checkjob(one), "TemplateStats:"),
        "TemplateStats: alljobs"
    );
    // Held: never runs, counts nowhere.
    msub_ok(&d, &["-h", "-l", "walltime=1:00"], "true\n");
    // Running now: counted in the Running columns of alljobs.
    let running = msub_ok(&d, &["-l", "walltime=10:00"], "sleep 60\n");
    d.wait_state(running, "Running", Duration::from_secs(30));
    let row = |out: &str, name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row:\n{out}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let (c, o, e) = common::run(&d, "showstats", &["-j"]);
    assert_eq!(c, 0, "{e}");
    let lines: Vec<&str> = o.lines().collect();
    assert!(
        lines[0].starts_with("Template Statistics Initialized "),
        "{o}"
    );
    assert_eq!(
        lines[3],
        "   Template   Jobs Procs ProcHours Jobs    %   PHReq    %    PHDed    %   FSTgt  AvgXF  MaxXF  AvgQH  Effic  WCAcc",
        "{o}"
    );
    // name, running jobs, procs, proc-hours, completed jobs, % of all jobs.
    let all = row(&o, "alljobs");
    assert_eq!(all[1..3], ["1", "1"], "{o}");
    assert_eq!(all[4..6], ["2", "100.00"], "{o}");
    let big = row(&o, "bigjobs");
    assert_eq!(big[1..3], ["0", "0"], "{o}");
    assert_eq!(big[4..6], ["1", "50.00"], "{o}");
    assert_eq!(lines.len(), 6, "two templates, nothing else:\n{o}");
    // One template; a template without statistics: the header only.
    let (_, o, _) = common::run(&d, "showstats", &["-j", "bigjobs"]);
    assert_eq!(o.lines().count(), 5, "{o}");
    row(&o, "bigjobs");
    let (c, o, _) = common::run(&d, "showstats", &["-j", "other"]);
    assert_eq!((c, o.lines().count()), (0, 4), "{o}");
    let (c, _, e) = common::run(&d, "showstats", &["-j", "nosuch"]);
    assert_eq!(
        (c, e.trim()),
        (1, "ERROR:    cannot locate specified job template 'nosuch'")
    );
    let (c, _, e) = common::run(&d, "mjobctl", &["-c", &running.to_string()]);
    assert_eq!(c, 0, "{e}");
    d.wait_state(running, "Removed", Duration::from_secs(30));
    // Kept across a restart, and in the profile history (-t).
    d.stop();
    d.spawn();
    let (c, o, e) = common::run(&d, "showstats", &["-j", "--format=json"]);
    assert_eq!(c, 0, "{e}");
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    let jobs = |v: &serde_json::Value, name: &str| {
        v["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "template" && c["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {v}"))["completed"]["jobs"]
            .as_u64()
            .unwrap()
    };
    // The canceled running job ran: it counts as completed now.
    assert_eq!((jobs(&v, "alljobs"), jobs(&v, "bigjobs")), (3, 1), "{o}");
    assert_eq!(
        v["job_templates"],
        serde_json::json!(["alljobs", "big.min", "bigjobs", "other"]),
        "{o}"
    );
    let (c, o, e) = common::run(&d, "showstats", &["-j", "-t", "-1:00:00", "--format=json"]);
    assert_eq!(c, 0, "{e}");
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(jobs(&v, "alljobs"), 3, "{o}");
    let (_, o, _) = common::run(
        &d,
        "showstats",
        &["-j", "-t", "-3:00:00,-2:00:00", "--format=json"],
    );
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert_eq!(jobs(&v, "alljobs"), 0, "{o}");
}

/// Without any job template, `showstats -j` is Moab's error.
#[test]
fn showstats_j_without_templates_is_an_error() {
    let d = Daemon::start_with_config(Some("NODECFG[n1] PROCS=1\nRMCFG[local] TYPE=LOCAL\n"));
    let (c, o, e) = common::run(&d, "showstats", &["-j"]);
    assert_eq!(
        (c, o.as_str(), e.trim()),
        (1, "", "ERROR:    no job templates defined")
    );
}
