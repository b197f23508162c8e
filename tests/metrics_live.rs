//! `/metrics` on the daemon's optional TCP listener (`METRICSPORT`): off by
//! default, loopback by default, the OpenMetrics text format, and values that
//! follow the scheduler (jobs by state and class, cumulative counts,
//! iteration/commit/poll/queue-wait histograms, API requests by route and
//! status). The scrape by a real Prometheus server is tests/prometheus.rs.

mod common;
mod web_common;

use std::time::Duration;

use common::{text, Daemon};
use web_common::{daemon_with_listener, get, sample};

#[test]
fn metrics_follow_the_jobs_and_the_api() {
    let (d, addr) = daemon_with_listener("CLASSCFG[batch] MAXJOB=10\n");
    assert!(addr.ip().is_loopback(), "{addr}");
    let r = get(addr, "/metrics");
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/openmetrics-text")),
        "{:?}",
        r.headers
    );
    let doc = r.body;
    assert!(doc.ends_with("# EOF\n"), "{doc}");
    for family in [
        "# TYPE arches_iteration_duration_seconds histogram",
        "# TYPE arches_store_commit_duration_seconds histogram",
        "# TYPE arches_rm_poll_duration_seconds histogram",
        "# TYPE arches_job_queue_wait_seconds histogram",
        "# TYPE arches_api_requests counter",
        "# TYPE arches_utilization_ratio gauge",
        "# TYPE arches_jobs_backfilled counter",
        "# TYPE arches_jobs_preempted counter",
    ] {
        assert!(doc.contains(family), "{family} missing:\n{doc}");
    }
    let started0 = sample(&doc, "arches_jobs_started_total", &[]).expect("started");
    // The readiness poll of the harness (showq) is counted by route.
    assert!(
        sample(
            &doc,
            "arches_api_requests_total",
            &[
                "listener=\"socket\"",
                "route=\"/v1/queue\"",
                "status=\"200\""
            ]
        )
        .is_some_and(|n| n >= 1.0),
        "{doc}"
    );

    // Two jobs in class batch: one runs to completion, one stays held.
    let done = d.submit("#!/bin/sh\ntrue\n", &["-q", "batch", "-l", "walltime=60"]);
    let held = d.submit(
        "#!/bin/sh\ntrue\n",
        &["-q", "batch", "-h", "-l", "walltime=60"],
    );
    d.wait_state(done, "Completed", Duration::from_secs(60));
    let bad = d.run("checknode", &["no-such-node"]);
    assert!(!bad.status.success(), "{}", text(&bad.stdout));

    let doc = get(addr, "/metrics").body;
    assert!(doc.contains("# TYPE arches_jobs gauge"), "{doc}");
    let started = sample(&doc, "arches_jobs_started_total", &[]).expect("started");
    assert_eq!(started, started0 + 1.0, "{doc}");
    assert!(sample(&doc, "arches_jobs_completed_total", &[]).is_some_and(|n| n >= 1.0));
    assert_eq!(
        sample(
            &doc,
            "arches_jobs",
            &["state=\"Completed\"", "class=\"batch\""]
        ),
        Some(1.0),
        "{doc}"
    );
    assert_eq!(
        sample(
            &doc,
            "arches_jobs",
            &["state=\"UserHold\"", "class=\"batch\""]
        ),
        Some(1.0),
        "{doc}"
    );
    assert!(
        sample(&doc, "arches_job_queue_wait_seconds_count", &[]).is_some_and(|n| n >= 1.0),
        "{doc}"
    );
    for h in [
        "arches_iteration_duration_seconds_count",
        "arches_store_commit_duration_seconds_count",
        "arches_rm_poll_duration_seconds_count",
    ] {
        assert!(
            sample(&doc, h, &[]).is_some_and(|n| n >= 1.0),
            "{h}:\n{doc}"
        );
    }
    assert!(
        sample(
            &doc,
            "arches_api_requests_total",
            &["route=\"/v1/jobs\"", "status=\"200\""]
        )
        .is_some_and(|n| n >= 2.0),
        "{doc}"
    );
    // The refused checknode of an unknown node is counted with its status.
    assert!(
        sample(
            &doc,
            "arches_api_requests_total",
            &[
                "listener=\"socket\"",
                "route=\"/v1/nodes\"",
                "status=\"404\""
            ]
        )
        .is_some_and(|n| n >= 1.0),
        "{doc}"
    );
    // The listener's own requests, and a path it does not serve.
    assert_eq!(get(addr, "/nonexistent").status, 404);
    let doc = get(addr, "/metrics").body;
    assert!(
        sample(
            &doc,
            "arches_api_requests_total",
            &["listener=\"http\"", "route=\"/metrics\"", "status=\"200\""]
        )
        .is_some_and(|n| n >= 2.0),
        "{doc}"
    );
    let _ = held;
}

#[test]
fn no_listener_unless_configured_and_a_bad_address_is_an_error() {
    let d = Daemon::start();
    assert!(
        !d.daemon_log().contains("listening on http://"),
        "{}",
        d.daemon_log()
    );
    // A configuration naming a bad address does not start.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("moab.cfg"),
        "METRICSPORT 9\nMETRICSHOST nowhere\n",
    )
    .expect("cfg");
    let out = std::process::Command::new(common::bin("moab"))
        .env_clear()
        .envs(common::base_env(dir.path(), &dir.path().join("moab.sock")))
        .output()
        .expect("moab");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("moab.cfg:2") && err.contains("METRICSHOST"),
        "{err}"
    );
}

/// `arches_jobs_backfilled_total` and `arches_jobs_preempted_total` count
/// real events: a short job backfilled into the window before a reservation,
/// and a low-QoS job really suspended by a high-QoS PREEMPTOR.
#[test]
fn backfilled_and_preempted_counters_rise_with_real_backfill_and_preemption() {
    let (d, addr) = daemon_with_listener(
        "NODECFG[n1] PROCS=2\nNODECFG[n2] PROCS=2\n\
         QOSWEIGHT 1\nQOSCFG[high] QFLAGS=PREEMPTOR PRIORITY=1000\nQOSCFG[low] QFLAGS=PREEMPTEE\n\
         PREEMPTPOLICY SUSPEND\n",
    );
    let counters = || {
        let doc = get(addr, "/metrics").body;
        let bf = sample(&doc, "arches_jobs_backfilled_total", &[]).expect("backfilled");
        let pre = sample(&doc, "arches_jobs_preempted_total", &[]).expect("preempted");
        (bf, pre)
    };
    assert_eq!(counters(), (0.0, 0.0));
    const LONG: Duration = Duration::from_secs(30);

    // a fills n1 for a minute, b one processor of n2 for two: the job
    // needing all four processors is reserved at b's end, and a short job
    // backfills into the processor left idle until then.
    let a = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=2,walltime=00:01:00"]);
    let b = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:02:00"]);
    d.wait_state(a, "Running", LONG);
    d.wait_state(b, "Running", LONG);
    let big = d.submit("sleep 1\n", &["-l", "procs=4,walltime=00:01:00"]);
    d.wait_checkjob(big, "a reservation", LONG, |o| o.contains("Reservation '"));
    assert_eq!(counters(), (0.0, 0.0), "nothing backfilled yet");
    let short = d.submit("sleep 300\n", &["-l", "nodes=1:ppn=1,walltime=00:00:30"]);
    d.wait_state(short, "Running", LONG);
    assert_eq!(counters(), (1.0, 0.0));
    for id in [a, b, big, short] {
        let out = d.run("canceljob", &[&id.to_string()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    for id in [a, b, short] {
        d.wait_state(id, "Removed", LONG);
    }

    // A high-QoS PREEMPTOR suspends the running low-QoS PREEMPTEE.
    let low = d.submit(
        "sleep 300\n",
        &["-l", "procs=4,walltime=00:05:00,qos=low,flags=suspendable"],
    );
    d.wait_state(low, "Running", LONG);
    assert_eq!(counters(), (1.0, 0.0), "a plain start is not preemption");
    let high = d.submit("sleep 300\n", &["-l", "procs=4,walltime=00:01:00,qos=high"]);
    d.wait_state(low, "Suspended", LONG);
    d.wait_state(high, "Running", LONG);
    assert_eq!(counters(), (1.0, 1.0));
    for id in [low, high] {
        let _ = d.run("canceljob", &[&id.to_string()]);
    }
}
