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
