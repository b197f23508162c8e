//! What the backend reads from Slurm: `sinfo --json` nodes and `squeue --json`
//! jobs (Slurm 22.05, OpenAPI v0.0.38 layout), host lists, wait statuses.
//! Pure functions, tested without a cluster.

use arches_core::{Node, NodeAdminState};
use serde::Deserialize;

/// One node of `sinfo --json`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub(crate) struct SlurmNode {
    pub name: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub state_flags: Vec<String>,
    #[serde(default)]
    pub cpus: Option<u32>,
    #[serde(default)]
    pub real_memory: Option<u64>,
    #[serde(default)]
    pub features: Option<String>,
    #[serde(default)]
    pub partitions: Vec<String>,
    /// Hardware threads per core (a core reservation counts cores).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Generic resources (`gpu:4`, `gpu:tesla:2(S:0),mps:100`).
    #[serde(default)]
    pub gres: Option<String>,
}

/// An entry of the `errors` array Slurm's JSON carries: `squeue --json` and
/// `sinfo --json` exit 0 with an error here and no jobs or nodes when
/// slurmctld does not answer.
#[derive(Deserialize)]
struct JsonError {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

/// How a message about a JSON `errors` entry starts.
pub(crate) const JSON_ERROR: &str = "Slurm reported an error in its JSON";

/// The `errors` array as one message, `None` when it is empty.
fn errors_message(errors: &[JsonError], what: &str) -> Option<String> {
    if errors.is_empty() {
        return None;
    }
    let parts: Vec<String> = errors
        .iter()
        .map(|e| {
            let d = e.description.as_deref().unwrap_or("");
            let m = e.error.as_deref().unwrap_or("");
            match (d.is_empty(), m.is_empty()) {
                (false, false) => format!("{d}: {m}"),
                (false, true) => d.to_string(),
                _ => m.to_string(),
            }
        })
        .collect();
    // Slurm says no more than "Unspecified error" when the controller is
    // unreachable: `unreachable()` treats this message as such.
    Some(format!(
        "{what}: {JSON_ERROR} (slurmctld not answering?): {}",
        parts.join("; ")
    ))
}

#[derive(Deserialize)]
struct NodesDoc {
    #[serde(default)]
    nodes: Vec<SlurmNode>,
    #[serde(default)]
    errors: Vec<JsonError>,
}

/// One job of `squeue --json` (only the fields the backend uses).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub(crate) struct SlurmJob {
    pub job_id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub comment: Option<String>,
    #[serde(default)]
    pub job_state: String,
    #[serde(default)]
    pub state_reason: Option<String>,
    /// The raw wait status (`exit 3` is 768).
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub nodes: Option<String>,
    #[serde(default)]
    pub restart_cnt: Option<u32>,
    #[serde(default)]
    pub end_time: Option<i64>,
    #[serde(default)]
    pub start_time: Option<i64>,
    /// Minutes (`null`: UNLIMITED).
    #[serde(default)]
    pub time_limit: Option<i64>,
}

#[derive(Deserialize)]
struct JobsDoc {
    #[serde(default)]
    jobs: Vec<SlurmJob>,
    #[serde(default)]
    errors: Vec<JsonError>,
}

/// Parses `sinfo --json`; an error when Slurm reports one.
pub(crate) fn parse_nodes(text: &str) -> Result<Vec<SlurmNode>, String> {
    let doc = serde_json::from_str::<NodesDoc>(text)
        .map_err(|e| format!("cannot parse sinfo --json: {e}"))?;
    match errors_message(&doc.errors, "sinfo --json") {
        Some(e) => Err(e),
        None => Ok(doc.nodes),
    }
}

/// Parses `squeue --json`; an error when Slurm reports one (an empty job
/// list then means nothing).
pub(crate) fn parse_jobs(text: &str) -> Result<Vec<SlurmJob>, String> {
    let doc = serde_json::from_str::<JobsDoc>(text)
        .map_err(|e| format!("cannot parse squeue --json: {e}"))?;
    match errors_message(&doc.errors, "squeue --json") {
        Some(e) => Err(e),
        None => Ok(doc.jobs),
    }
}

/// The `squeue -o` format of the cheap poll, run with
/// `SLURM_TIME_FORMAT=%s` so that the start time is in epoch seconds (no
/// exit code: when a job of ours has ended, the worker reads `squeue
/// --json` once for the statuses).
pub(crate) const SQUEUE_FORMAT: &str = "%i|%T|%r|%N|%S|%k";

/// Parses `squeue -h -t all -o SQUEUE_FORMAT` (the comment is last: it may
/// contain `|`).
pub(crate) fn parse_jobs_text(text: &str) -> Vec<SlurmJob> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.splitn(6, '|');
            let job_id = f.next()?.trim().parse().ok()?;
            let job_state = f.next()?.trim().to_string();
            let reason = f.next()?.trim();
            let nodes = f.next()?.trim();
            let start = f.next()?.trim();
            let comment = f.next().unwrap_or("").trim();
            let opt = |s: &str| (!s.is_empty() && s != "(null)").then(|| s.to_string());
            Some(SlurmJob {
                job_id,
                name: String::new(),
                comment: opt(comment),
                job_state,
                state_reason: opt(reason),
                exit_code: None,
                nodes: opt(nodes),
                restart_cnt: None,
                end_time: None,
                start_time: start.parse().ok().filter(|t| *t > 0),
                time_limit: None,
            })
        })
        .collect()
}

/// The `sacct` fields the completion-log lookup asks for (run with
/// `SLURM_TIME_FORMAT=%s`).
pub(crate) const SACCT_FIELDS: &str = "jobid,state,exitcode,start,end,nodelist";

/// The last end of Slurm job `id` in `sacct -n -P -o SACCT_FIELDS` output
/// (the completion log has a line per end of a run, a requeue included:
/// ends in a final state only; step lines `ID.batch` skipped). The exit
/// code `E:S` becomes the raw wait status `squeue --json` gives.
pub(crate) fn parse_sacct(text: &str, id: u64) -> Option<SlurmJob> {
    let want = id.to_string();
    text.lines().rev().find_map(|line| {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if f.len() < 5 || f[0] != want {
            return None;
        }
        let state = f[1].split_whitespace().next().unwrap_or("").to_string();
        let (code, sig) = f[2].split_once(':').unwrap_or((f[2], "0"));
        let (code, sig): (i64, i64) = (code.parse().ok()?, sig.parse().unwrap_or(0));
        let job = SlurmJob {
            job_id: id,
            name: String::new(),
            comment: None,
            job_state: state,
            state_reason: None,
            exit_code: Some(if sig != 0 {
                sig & 0x7f
            } else {
                (code & 0xff) << 8
            }),
            nodes: f.get(5).map(|s| s.to_string()).filter(|s| s != "(null)"),
            restart_cnt: None,
            end_time: f[4].parse().ok(),
            start_time: f[3].parse().ok(),
            time_limit: None,
        };
        (job.phase() == Phase::Ended).then_some(job)
    })
}

impl SlurmNode {
    /// The administrative state the engine should see: down (also while
    /// not responding: the engine stops using it at once), drained
    /// (draining too: running jobs finish, nothing new starts), else up.
    pub(crate) fn admin(&self) -> NodeAdminState {
        let state = self.state.to_ascii_lowercase();
        let flag = |f: &str| self.state_flags.iter().any(|s| s.eq_ignore_ascii_case(f));
        let base = state.trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-']);
        if base.starts_with("down")
            || base.starts_with("fail")
            || base == "future"
            || base == "unknown"
            || flag("NOT_RESPONDING")
            || flag("FAIL")
            || flag("POWERED_DOWN")
            || state.ends_with('*')
        {
            NodeAdminState::Down
        } else if base.starts_with("drain") || flag("DRAIN") || flag("MAINTENANCE") {
            NodeAdminState::Drained
        } else {
            NodeAdminState::Up
        }
    }

    /// Slurm does not know the node's state yet (`unknown`: for a second or
    /// two after slurmctld starts, until the node's slurmd registers).
    pub(crate) fn state_unknown(&self) -> bool {
        self.state
            .to_ascii_lowercase()
            .trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-'])
            == "unknown"
    }

    /// The node as the engine sees it; `partition` is the Arches partition
    /// (`RMCFG[x] PARTITION=`, else `DEFAULT`).
    pub(crate) fn to_node(&self, partition: &str) -> Node {
        let mut node = Node::new(
            &self.name,
            self.cpus.unwrap_or(1),
            self.real_memory.unwrap_or(0),
        );
        node.features = self
            .features
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty() && *f != "(null)")
            .map(String::from)
            .collect();
        node.partition = partition.to_string();
        node.admin = self.admin();
        node.gres = parse_gres(self.gres.as_deref().unwrap_or(""));
        node
    }
}

/// Slurm's `Gres=` of a node (`gpu:4`, `gpu:tesla:2(S:0-1),mps:100`) as
/// counts by name; typed entries of one name add up. Entries without a
/// count have one unit.
pub(crate) fn parse_gres(text: &str) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for entry in text.split(',').map(str::trim) {
        let entry = entry.split('(').next().unwrap_or("").trim();
        if entry.is_empty() || entry == "(null)" {
            continue;
        }
        let parts: Vec<&str> = entry.split(':').collect();
        let name = parts[0].trim();
        if name.is_empty() || name == "(null)" {
            continue;
        }
        let count = match parts.last().and_then(|c| c.trim().parse::<u32>().ok()) {
            Some(n) if parts.len() > 1 => n,
            _ => 1,
        };
        match out.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = e.1.saturating_add(count),
            None => out.push((name.to_string(), count)),
        }
    }
    out
}

/// How a Slurm job stands, for the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Queued in Slurm (held or released, not yet running).
    Pending,
    Running,
    Suspended,
    /// Ending; its outcome follows.
    Completing,
    /// Ended: the state name decides how.
    Ended,
}

impl SlurmJob {
    pub(crate) fn phase(&self) -> Phase {
        match self.job_state.as_str() {
            "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
            | "RESV_DEL_HOLD" => Phase::Pending,
            "RUNNING" | "SIGNALING" | "RESIZING" | "STAGE_OUT" => Phase::Running,
            "SUSPENDED" | "STOPPED" => Phase::Suspended,
            "COMPLETING" => Phase::Completing,
            _ => Phase::Ended,
        }
    }

    /// The node names it runs (ran) on.
    pub(crate) fn node_names(&self) -> Vec<String> {
        expand_hostlist(self.nodes.as_deref().unwrap_or(""))
    }
}

/// Exit status from a raw wait status: the exit code, or 128 + signal.
pub(crate) fn decode_wait_status(raw: i64) -> i32 {
    let raw = raw as i32;
    let sig = raw & 0x7f;
    if sig == 0 {
        (raw >> 8) & 0xff
    } else {
        128 + sig
    }
}

/// Expands a Slurm host list such as `n[1-3,7],gpu01,x[08-10]` into names
/// (`x08`, `x09`, `x10`: zero padding kept).
pub(crate) fn expand_hostlist(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let bytes = list.as_bytes();
    let mut items = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    for item in items.into_iter().map(str::trim).filter(|s| !s.is_empty()) {
        expand_one(item, &mut out);
    }
    out
}

fn expand_one(item: &str, out: &mut Vec<String>) {
    let Some(open) = item.find('[') else {
        out.push(item.to_string());
        return;
    };
    let Some(close) = item[open..].find(']').map(|c| c + open) else {
        out.push(item.to_string());
        return;
    };
    let (prefix, ranges, rest) = (&item[..open], &item[open + 1..close], &item[close + 1..]);
    let mut tails = Vec::new();
    expand_one(rest, &mut tails);
    if rest.is_empty() {
        tails = vec![String::new()];
    }
    for range in ranges.split(',') {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let width = lo.len();
        match (lo.parse::<u64>(), hi.parse::<u64>()) {
            (Ok(a), Ok(b)) if a <= b && b - a < 100_000 => {
                for n in a..=b {
                    for t in &tails {
                        out.push(format!("{prefix}{n:0width$}{t}"));
                    }
                }
            }
            _ => out.push(format!("{prefix}{range}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostlists() {
        assert_eq!(expand_hostlist("n[1-3,7]"), ["n1", "n2", "n3", "n7"]);
        assert_eq!(expand_hostlist("n2"), ["n2"]);
        assert_eq!(expand_hostlist(""), Vec::<String>::new());
        assert_eq!(
            expand_hostlist("a[08-10],b1,c[1,3]"),
            ["a08", "a09", "a10", "b1", "c1", "c3"]
        );
        assert_eq!(
            expand_hostlist("r[1-2]n[1-2]"),
            ["r1n1", "r1n2", "r2n1", "r2n2"]
        );
    }

    #[test]
    fn wait_statuses() {
        assert_eq!(decode_wait_status(0), 0);
        assert_eq!(decode_wait_status(768), 3);
        assert_eq!(decode_wait_status(9), 137);
        assert_eq!(decode_wait_status(15), 143);
    }

    #[test]
    fn sinfo_nodes() {
        let text = r#"{"meta":{},"errors":[],"nodes":[
            {"name":"n1","state":"idle","state_flags":[],"cpus":8,"real_memory":4096,"features":"fast,ib","partitions":["batch"],"gres":"gpu:tesla:2(S:0),gpu:k80:1,mps:100"},
            {"name":"n2","state":"allocated","state_flags":["NOT_RESPONDING"],"cpus":8,"real_memory":4096,"features":""},
            {"name":"n3","state":"idle","state_flags":["DRAIN"],"cpus":4,"real_memory":null},
            {"name":"n4","state":"down","state_flags":[],"cpus":8}]}"#;
        let nodes = parse_nodes(text).unwrap();
        let n1 = nodes[0].to_node("DEFAULT");
        assert_eq!(
            (n1.procs, n1.mem_mb, n1.admin),
            (8, 4096, NodeAdminState::Up)
        );
        assert_eq!(n1.features, ["fast", "ib"]);
        assert_eq!(
            n1.gres,
            vec![("gpu".to_string(), 3), ("mps".to_string(), 100)]
        );
        assert!(nodes[1].to_node("p").gres.is_empty());
        assert_eq!(parse_gres("(null)"), vec![]);
        assert_eq!(parse_gres("gpu"), vec![("gpu".to_string(), 1)]);
        assert_eq!(nodes[1].admin(), NodeAdminState::Down);
        assert_eq!(nodes[2].admin(), NodeAdminState::Drained);
        assert_eq!(nodes[2].to_node("p").partition, "p");
        assert_eq!(nodes[3].admin(), NodeAdminState::Down);
        assert!(!nodes[0].state_unknown());
        let unknown = SlurmNode {
            state: "unknown".into(),
            ..nodes[0].clone()
        };
        assert!(unknown.state_unknown());
        assert!(parse_nodes("not json").is_err());
    }

    #[test]
    fn squeue_text() {
        let jobs = parse_jobs_text(
            "12|RUNNING|None|n[1-2]|1795617276|arches:t:7:1.2\n13|PENDING|JobHeldUser||N/A|a|b\nbad line\n",
        );
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].job_id, 12);
        assert_eq!(jobs[0].phase(), Phase::Running);
        assert_eq!(jobs[0].node_names(), ["n1", "n2"]);
        assert_eq!(jobs[0].comment.as_deref(), Some("arches:t:7:1.2"));
        assert_eq!(jobs[0].start_time, Some(1795617276));
        assert_eq!(jobs[1].start_time, None);
        assert_eq!(jobs[1].comment.as_deref(), Some("a|b"));
        assert_eq!(jobs[1].nodes, None);
        assert_eq!(jobs[1].state_reason.as_deref(), Some("JobHeldUser"));
    }

    #[test]
    fn squeue_jobs() {
        let text = r#"{"jobs":[{"job_id":2,"name":"arches.7","comment":"arches:t:7","job_state":"FAILED",
            "state_reason":"NonZeroExitCode","exit_code":768,"nodes":"n[2-3]","restart_cnt":0,"end_time":5},
            {"job_id":3,"job_state":"PENDING","comment":null,"nodes":""}]}"#;
        let jobs = parse_jobs(text).unwrap();
        assert_eq!(jobs[0].phase(), Phase::Ended);
        assert_eq!(jobs[0].node_names(), ["n2", "n3"]);
        assert_eq!(decode_wait_status(jobs[0].exit_code.unwrap()), 3);
        assert_eq!(jobs[1].phase(), Phase::Pending);
        assert!(jobs[1].node_names().is_empty());
    }

    #[test]
    fn json_errors_are_failures_not_empty_lists() {
        // What squeue/sinfo --json print (exit 0) while slurmctld is down.
        let down = r#"{"meta":{},"errors":[{"description":"Failed while looking for jobs",
            "error_number":-1,"error":"Unspecified error","source":"slurm_load_jobs"}],"jobs":[]}"#;
        let e = parse_jobs(down).unwrap_err();
        assert!(e.contains("Failed while looking for jobs"), "{e}");
        assert!(crate::slurm::unreachable(&e), "{e}");
        let down = r#"{"errors":[{"error":"Unspecified error","errno":-1}],"nodes":[]}"#;
        assert!(parse_nodes(down).is_err());
        assert_eq!(parse_jobs(r#"{"errors":[],"jobs":[]}"#), Ok(vec![]));
    }

    #[test]
    fn completion_log_lines() {
        // sacct -c -n -P -o SACCT_FIELDS, SLURM_TIME_FORMAT=%s: a requeue
        // (PENDING), then the final end; other jobs and steps ignored.
        let text = "7|PENDING|0:0|100|110|n3\n7|FAILED|3:0|120|130|n1\n7.batch|FAILED|3:0|120|130|n1\n                    8|FAILED|0:9|5|6|n2\n9|CANCELLED by 0|0:15|5|9|(null)\n";
        let j = parse_sacct(text, 7).unwrap();
        assert_eq!(
            (j.job_state.as_str(), j.start_time, j.end_time),
            ("FAILED", Some(120), Some(130))
        );
        assert_eq!(decode_wait_status(j.exit_code.unwrap()), 3);
        assert_eq!(j.node_names(), ["n1"]);
        let j = parse_sacct(text, 8).unwrap();
        assert_eq!(decode_wait_status(j.exit_code.unwrap()), 137);
        let j = parse_sacct(text, 9).unwrap();
        assert_eq!(j.job_state, "CANCELLED");
        assert_eq!(decode_wait_status(j.exit_code.unwrap()), 143);
        assert_eq!(j.nodes, None);
        assert_eq!(parse_sacct(text, 10), None);
        assert_eq!(parse_sacct("7|PENDING|0:0|1|2|n1\n", 7), None);
    }
}
