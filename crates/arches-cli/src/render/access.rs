//! checkjob's access checks (`-A`, `-n`, `-q`, `-r`): what a job may use,
//! evaluated from the daemon's data with Moab's NOTE wording (moab-formats
//! §3.1).

use arches_api::{CredentialInfo, JobDetail, NodeInfo, ReservationInfo};

/// `checkjob -A`: one line of `ATTRIBUTE=VALUE;` pairs per job, Moab's
/// attribute names first and in Moab's order (`NAME` is the job id, as
/// Moab's job name is; `UNAME`, `GNAME`, `ACCOUNT`, `RCLASS`, `WCLIMIT`,
/// `QUEUETIME`, `STARTTIME` — for a queued job its reservation's start, the
/// scheduler's estimate, else 0 —, `TASKS`, `NODES`), then Arches' extras.
/// Scripts split on `;` then on the first `=`, positionally or by name.
pub fn avp(d: &JobDetail) -> String {
    let s = &d.summary;
    let mut o = String::new();
    let mut put = |k: &str, v: String| {
        o.push_str(&format!("{k}={v};"));
    };
    put("NAME", s.jobid());
    put("STATE", s.state.clone());
    put("UNAME", s.user.clone());
    put("GNAME", s.group.clone());
    put("ACCOUNT", s.account.clone().unwrap_or_default());
    put(
        "RCLASS",
        s.class
            .as_ref()
            .map_or_else(String::new, |c| format!("[{c} 1]")),
    );
    put("WCLIMIT", s.walltime.unwrap_or(0).to_string());
    put("QUEUETIME", s.submit_time.to_string());
    let start = s.start_time.or(s.reservation_start).unwrap_or(0);
    put("STARTTIME", start.to_string());
    put("TASKS", d.tasks.to_string());
    put("NODES", s.nodes.unwrap_or(1).to_string());
    put("JOBNAME", s.name.clone());
    if let Some(q) = &s.qos {
        put("QOS", q.clone());
    }
    put("PROCS", s.procs.to_string());
    put("PRIORITY", s.priority.to_string());
    if let Some(t) = s.completion_time {
        put("COMPLETIONTIME", t.to_string());
    }
    if let Some(c) = s.exit_code {
        put("COMPLETIONCODE", c.to_string());
    }
    if !d.holds.is_empty() {
        put("HOLD", d.holds.join(","));
    }
    if !d.allocated.is_empty() {
        put(
            "HOSTLIST",
            d.allocated
                .iter()
                .map(|n| n.node.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if let Some(p) = &s.partition {
        put("PARTITION", p.clone());
    }
    o.push('\n');
    o
}

/// `mjobctl -q wiki`: each job as one line of Moab's WIKI resource-manager
/// protocol: `<JOBID> ATTR=VALUE;...` with `UPDATETIME`, `STATE` (`Idle`,
/// `Hold`, `Running`, `Suspended`, `Completed`, `Removed`), `WCLIMIT`,
/// `TASKS`, `NODES`, `QUEUETIME`, `STARTTIME`, `COMPLETETIME`, `UNAME`,
/// `GNAME`, `ACCOUNT`, `RCLASS` (`[<class>:1]`), `QOS`, `RFEATURES`,
/// `PARTITIONMASK`, `TASKLIST` (one host per task), `EXITCODE`, `NAME`,
/// `IWD`; attributes without a value are left out.
pub fn wiki(v: &arches_api::JobsView) -> String {
    let mut o = String::new();
    for d in &v.jobs {
        let s = &d.summary;
        let mut pairs: Vec<(&str, String)> = Vec::new();
        pairs.push(("UPDATETIME", v.now.to_string()));
        let state = match s.state.as_str() {
            "Running" | "Starting" | "Staging" | "Staged" => "Running",
            "Suspended" => "Suspended",
            "Completed" | "Vacated" => "Completed",
            "Removed" => "Removed",
            "Idle" => "Idle",
            _ => "Hold",
        };
        pairs.push(("STATE", state.to_string()));
        if let Some(w) = s.walltime {
            pairs.push(("WCLIMIT", w.to_string()));
        }
        pairs.push(("TASKS", d.tasks.to_string()));
        if let Some(n) = s.nodes {
            pairs.push(("NODES", n.to_string()));
        }
        pairs.push(("QUEUETIME", s.submit_time.to_string()));
        if let Some(t) = s.start_time {
            pairs.push(("STARTTIME", t.to_string()));
        }
        if let Some(t) = s.completion_time {
            pairs.push(("COMPLETETIME", t.to_string()));
        }
        pairs.push(("UNAME", s.user.clone()));
        pairs.push(("GNAME", s.group.clone()));
        if let Some(a) = &s.account {
            pairs.push(("ACCOUNT", a.clone()));
        }
        if let Some(c) = &s.class {
            pairs.push(("RCLASS", format!("[{c}:1]")));
        }
        if let Some(q) = &s.qos {
            pairs.push(("QOS", q.clone()));
        }
        if !d.features.is_empty() {
            pairs.push(("RFEATURES", d.features.join(":")));
        }
        if let Some(p) = &s.partition {
            pairs.push(("PARTITIONMASK", p.clone()));
        }
        if !d.allocated.is_empty() {
            let tasks: Vec<&str> = d
                .allocated
                .iter()
                .flat_map(|n| std::iter::repeat_n(n.node.as_str(), n.tasks as usize))
                .collect();
            pairs.push(("TASKLIST", tasks.join(",")));
        }
        if let Some(c) = s.exit_code {
            pairs.push(("EXITCODE", c.to_string()));
        }
        pairs.push(("NAME", s.name.clone()));
        if !d.iwd.is_empty() {
            pairs.push(("IWD", d.iwd.clone()));
        }
        o.push_str(&s.id.to_string());
        o.push(' ');
        for (k, val) in pairs {
            o.push_str(&format!("{k}={val};"));
        }
        o.push('\n');
    }
    o
}

/// `checkjob -n NODE`: whether the job could run on the node, and the
/// preemption status of the jobs running there.
pub fn node_access(d: &JobDetail, n: &NodeInfo, jobs_on_node: &[(u64, bool)]) -> String {
    let s = &d.summary;
    let mut why = Vec::new();
    if matches!(n.state.as_str(), "Down" | "Drained" | "Draining") {
        why.push(format!("node is {}", n.state));
    }
    let missing: Vec<&str> = d
        .features
        .iter()
        .filter(|f| !n.features.contains(f))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        why.push(format!("missing features: {}", missing.join(",")));
    }
    if let Some(p) = s
        .partition
        .as_ref()
        .filter(|p| *p != "ALL" && **p != n.partition)
    {
        if s.section != arches_api::Section::Active {
            why.push(format!(
                "partition {} requested, node is in {}",
                p, n.partition
            ));
        }
    }
    let per_node = d.tasks_per_node.unwrap_or(1) * (s.procs / d.tasks.max(1)).max(1);
    if per_node > n.procs {
        why.push(format!(
            "insufficient configured procs ({} < {per_node})",
            n.procs
        ));
    }
    let mut o = if why.is_empty() {
        format!("NOTE:  job {} can access node {}\n", s.jobid(), n.name)
    } else {
        format!(
            "NOTE:  job {} cannot access node {} ({})\n",
            s.id,
            n.name,
            why.join("; ")
        )
    };
    for (id, preemptible) in jobs_on_node {
        o.push_str(&format!(
            "  job {id} on node {} is {}\n",
            n.name,
            if *preemptible {
                "preemptible"
            } else {
                "not preemptible"
            }
        ));
    }
    o
}

/// `checkjob -q QOS`: QoS access from the credentials' QLISTs (an empty
/// list allows any configured QoS).
pub fn qos_access(d: &JobDetail, qos: &str, creds: &[CredentialInfo]) -> String {
    let s = &d.summary;
    let exists = creds.iter().any(|c| c.kind == "qos" && c.name == qos);
    let own = [
        ("user", Some(&s.user)),
        ("group", Some(&s.group)),
        ("account", s.account.as_ref()),
        ("class", s.class.as_ref()),
    ];
    let denied_by = own.iter().find_map(|(kind, name)| {
        let name = (*name)?;
        let c = creds.iter().find(|c| c.kind == *kind && c.name == *name)?;
        (!c.qlist.is_empty() && !c.qlist.iter().any(|q| q == qos))
            .then(|| format!("{kind} {name} QLIST={}", c.qlist.join(",")))
    });
    match (exists, denied_by) {
        (false, _) => format!("NOTE:  job denied access to QOS '{qos}' (QOS not configured)\n"),
        (true, Some(why)) => format!("NOTE:  job denied access to QOS '{qos}' ({why})\n"),
        (true, None) => format!("NOTE:  job granted access to QOS '{qos}'\n"),
    }
}

/// Parses `USER==a:==b` access-list entries into (kind, values).
fn acl_entries(acl: &[String]) -> Vec<(String, Vec<String>)> {
    acl.iter()
        .filter_map(|e| {
            let (kind, rest) = e.split_once("==")?;
            let vals = rest
                .split(":==")
                .map(|v| v.trim_end_matches(['+', '-']).to_string())
                .collect();
            Some((kind.to_ascii_uppercase(), vals))
        })
        .collect()
}

/// `checkjob -r RSVID`: reservation access from its access list (a job
/// reservation admits only its own job).
pub fn rsv_access(d: &JobDetail, r: &ReservationInfo) -> String {
    let s = &d.summary;
    let granted = if r.kind == "Job" {
        (r.id == s.id.to_string()).then(|| "job reservation".to_string())
    } else {
        let have = |k: &str| -> Vec<&str> {
            match k {
                "USER" => vec![s.user.as_str()],
                "GROUP" => vec![s.group.as_str()],
                "ACCT" | "ACCOUNT" => s.account.as_deref().into_iter().collect(),
                "CLASS" => s.class.as_deref().into_iter().collect(),
                "QOS" => s.qos.as_deref().into_iter().collect(),
                _ => vec![],
            }
        };
        acl_entries(&r.acl).into_iter().find_map(|(k, vals)| {
            have(&k)
                .iter()
                .find(|h| vals.iter().any(|v| v == *h || v == "ALL"))
                .map(|h| format!("{k}=={h}"))
        })
    };
    match granted {
        Some(why) => format!(
            "NOTE:  job granted access to reservation '{}' w/affinity 'positive' ({why})\n",
            r.id
        ),
        None => format!(
            "NOTE:  job denied access to reservation '{}'{}\n",
            r.id,
            if r.acl.is_empty() {
                String::new()
            } else {
                format!(" (ACL: {})", r.acl.join(" "))
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_entries_parse_moab_lists() {
        let e = acl_entries(&["USER==alice:==bob".into(), "CLASS==batch+".into()]);
        assert_eq!(
            e,
            vec![
                (
                    "USER".to_string(),
                    vec!["alice".to_string(), "bob".to_string()]
                ),
                ("CLASS".to_string(), vec!["batch".to_string()])
            ]
        );
    }
}
