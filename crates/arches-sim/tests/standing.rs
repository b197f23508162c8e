//! Standing reservations (`SRCFG`) in a replay: jobs outside the access list
//! wait for the window to end even with nothing else to wake the replay, and
//! jobs on it run inside the window.

use arches_core::{Node, Policy, Standing};
use arches_sim::run::Simulation;
use arches_sim::workload::SimJob;

#[test]
fn srcfg_window_holds_jobs_until_it_ends_and_admits_its_users() {
    // SRCFG[morning] PERIOD=DAY STARTTIME=0:00:00 ENDTIME=12:00:00
    // HOSTLIST=n0,n1 USERLIST=alice (day 0 starts at time 0).
    let mut st = Standing::new("morning");
    st.start_time = Some(0);
    st.end_time = Some(12 * 3600);
    st.hosts = vec!["n0".into(), "n1".into()];
    st.acl.users = vec!["alice".into()];
    let policy = Policy {
        standing: vec![st],
        ..Policy::default()
    };
    let nodes = vec![Node::new("n0", 4, 0), Node::new("n1", 4, 0)];
    let bob = SimJob::new(1, 3600, 4, 3600, 1800);
    let mut alice = SimJob::new(2, 7200, 8, 3600, 600);
    alice.user = "alice".into();
    let mut sim = Simulation::new(nodes, policy, vec![bob, alice]);
    sim.run().unwrap();
    let start = |id: u64| sim.records().iter().find(|r| r.id == id).map(|r| r.start);
    assert_eq!(start(1), Some(12 * 3600), "bob waits for the window to end");
    assert_eq!(start(2), Some(7200), "alice runs inside it");
}
