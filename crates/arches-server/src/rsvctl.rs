//! `mrsvctl -c` / `-r`: administrative reservations. Specs are parsed into
//! a core [`Reservation`] here; the state validates it (known hosts, a
//! non-empty window) and the scheduler keeps every job not on its access
//! list off it ([`arches_core::resv`]). Created and released reservations
//! are written to the store's `reservations` table in the same commit as
//! the reply, and restored at start.

use arches_api::{ActionResponse, ReservationRequest};
use arches_core::timespec::parse_duration;
use arches_core::{Acl, Reservation, State, Time};
use arches_store::ReservationRecord;

use crate::actor::{Actor, Caller};

/// Meta key of the counter behind `system.N` ids (never reused).
pub(crate) const NEXT_RSV_KEY: &str = "next_rsv_id";

impl Actor {
    pub(crate) fn reservation_control(
        &mut self,
        caller: &Caller,
        req: &ReservationRequest,
        now: Time,
    ) -> ActionResponse {
        let mut resp = ActionResponse::default();
        if let ReservationRequest::Transactions { windows } = req {
            self.remember_transactions(caller, windows, now, &mut resp);
            return resp;
        }
        if !caller.admin {
            resp.stderr.push(format!(
                "ERROR:    user '{}' is not authorized to run command",
                caller.user
            ));
            resp.failed = true;
            return resp;
        }
        let committed;
        let (specs, owner) = match req {
            ReservationRequest::Commit { tid } => match self.transactions.get(*tid) {
                Some(t) => {
                    committed = t;
                    (Some(&committed.specs), committed.owner.as_str())
                }
                None => {
                    resp.stderr
                        .push(format!("ERROR:  cannot locate transaction {tid}"));
                    resp.failed = true;
                    return resp;
                }
            },
            ReservationRequest::Create { specs } => (Some(specs), caller.user.as_str()),
            _ => (None, caller.user.as_str()),
        };
        match req {
            ReservationRequest::Create { .. } | ReservationRequest::Commit { .. } => {
                let specs = specs.expect("a create or commit has specs");
                let id = format!("system.{}", self.rsv_next);
                let classes = &self.cfg.policy.classes;
                match parse_create_with(specs, &id, owner, &self.state, classes, now) {
                    Ok(r) => {
                        let named = r.id != id;
                        let rec = ReservationRecord::from_core(&r);
                        let rid = r.id.clone();
                        match self.state.add_reservation(r) {
                            Ok(()) => {
                                if !named {
                                    self.rsv_next += 1;
                                }
                                if let ReservationRequest::Commit { tid } = req {
                                    self.transactions.take(*tid);
                                }
                                self.rsv_changes.0.push(rec);
                                self.wake = true;
                                tracing::info!(rsv = %rid, user = %caller.user, "reservation created");
                                resp.stdout
                                    .push(format!("NOTE:  reservation {rid} created"));
                            }
                            Err(e) => {
                                resp.stderr
                                    .push(format!("ERROR:  cannot create reservation: {e}"));
                                resp.failed = true;
                            }
                        }
                    }
                    Err(e) => {
                        resp.stderr
                            .push(format!("ERROR:  cannot create reservation: {e}"));
                        resp.failed = true;
                    }
                }
            }
            ReservationRequest::Release { id, group } => {
                self.release_reservations(&caller.user, id, group.as_deref(), &mut resp);
            }
            ReservationRequest::Modify { id, changes } => {
                self.modify_reservation(id, changes, now, &mut resp);
            }
            ReservationRequest::Transactions { .. } => {}
        }
        resp
    }

    /// `mshow -a --flags=tid`: each window's create specs, checked as
    /// `mrsvctl -c` would check them now, remembered under a new id.
    fn remember_transactions(
        &mut self,
        caller: &Caller,
        windows: &[Vec<String>],
        now: Time,
        resp: &mut ActionResponse,
    ) {
        if windows.len() > MAX_TRANSACTIONS {
            resp.stderr.push(format!(
                "ERROR:  too many windows for transactions ({}, at most {MAX_TRANSACTIONS})",
                windows.len()
            ));
            resp.failed = true;
            return;
        }
        let classes = &self.cfg.policy.classes;
        for specs in windows {
            if let Err(e) = parse_create_with(specs, "tid", &caller.user, &self.state, classes, now)
            {
                resp.stderr
                    .push(format!("ERROR:  cannot create transaction: {e}"));
                resp.failed = true;
                return;
            }
        }
        for specs in windows {
            let tid = self.transactions.remember(Transaction {
                owner: caller.user.clone(),
                specs: specs.clone(),
            });
            resp.stdout.push(tid.to_string());
        }
    }
}

/// Transactions remembered at most (the oldest are dropped first).
const MAX_TRANSACTIONS: usize = 1024;

/// A reservation `mshow -a --flags=tid` offered: `mrsvctl -c -R TID`
/// creates it, owned by the user who asked. A commit that succeeds spends
/// the id; one that fails (the window was taken meanwhile) leaves it, until
/// newer transactions push it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    pub owner: String,
    pub specs: Vec<String>,
}

/// The transactions not yet committed, by id (ids are never reused while
/// the daemon runs; they start at 1).
#[derive(Debug, Clone, Default)]
pub struct Transactions {
    next: u64,
    open: std::collections::BTreeMap<u64, Transaction>,
}

impl Transactions {
    /// Remembers `t`; its id.
    pub fn remember(&mut self, t: Transaction) -> u64 {
        self.next += 1;
        self.open.insert(self.next, t);
        while self.open.len() > MAX_TRANSACTIONS {
            self.open.pop_first();
        }
        self.next
    }

    /// The transaction `tid`.
    pub fn get(&self, tid: u64) -> Option<Transaction> {
        self.open.get(&tid).cloned()
    }

    /// The transaction `tid`, spent.
    pub fn take(&mut self, tid: u64) -> Option<Transaction> {
        self.open.remove(&tid)
    }
}

/// The administrative and standing reservations in force at `s.now`, with
/// the nodes and processors each one reserves (showres, checknode, mdiag -r).
pub fn in_force(s: &crate::actor::Snapshot) -> Vec<(Reservation, Vec<(arches_core::NodeId, u32)>)> {
    arches_core::resv::in_force(&s.state, &s.cfg.policy.standing, s.now)
        .into_iter()
        .map(|r| {
            let nodes = r.resolve(&s.state);
            (r, nodes)
        })
        .collect()
}

/// showres rows for [`in_force`].
pub fn infos(s: &crate::actor::Snapshot) -> Vec<arches_api::ReservationInfo> {
    in_force(s)
        .into_iter()
        .map(|(r, nodes)| arches_api::ReservationInfo {
            id: r.id.clone(),
            kind: "User".to_string(),
            job_state: None,
            start: r.start,
            end: r.end,
            procs: nodes.iter().map(|n| n.1).sum(),
            nodes: nodes
                .iter()
                .filter_map(|(id, p)| {
                    Some(arches_api::NodeShare {
                        node: s.state.node(*id)?.name.clone(),
                        tasks: *p,
                    })
                })
                .collect(),
            owner: r.owner.clone(),
            flags: r.flags.clone(),
            acl: r.acl.describe(),
            group: r.group.clone(),
        })
        .collect()
}

/// Builds a reservation from mrsvctl's `ATTR=VALUE` specs: `starttime=`
/// (`now`, `+DURATION`, `HH:MM[:SS][_MO/DD[/YY]]` local time or epoch
/// seconds), `duration=` or `endtime=` (none: no end), `hostlist=` (comma
/// separated, `ALL`), `procs=`/`taskcount=`, `name=`, `flags=`, and the
/// access list: `users= groups= accounts= classes= qos=` (comma separated)
/// or `acl=USER==a:==b,GROUP==g` (Moab's notation).
pub fn parse_create(
    specs: &[String],
    default_id: &str,
    owner: &str,
    state: &State,
    now: Time,
) -> Result<Reservation, String> {
    parse_create_with(specs, default_id, owner, state, &Default::default(), now)
}

/// [`parse_create`] with the configured classes (`class:` host selectors).
pub fn parse_create_with(
    specs: &[String],
    default_id: &str,
    owner: &str,
    state: &State,
    classes: &crate::rsvhosts::Classes,
    now: Time,
) -> Result<Reservation, String> {
    let mut r = Reservation {
        id: default_id.to_string(),
        start: now,
        end: None,
        hosts: Vec::new(),
        procs: 0,
        acl: Acl::default(),
        flags: Vec::new(),
        owner: Some(owner.to_string()),
        standing: None,
        group: None,
    };
    let mut duration = None;
    let mut end = None;
    let mut infinite = false;
    let mut filter = crate::rsvhosts::HostFilter::default();
    for spec in specs {
        let (k, v) = spec
            .split_once('=')
            .ok_or_else(|| format!("invalid specification '{spec}' (expected ATTR=VALUE)"))?;
        let v = v.trim();
        let list = || -> Vec<String> {
            v.split([',', ':'])
                .map(|x| {
                    x.trim()
                        .trim_start_matches("==")
                        .trim_end_matches(['+', '-'])
                        .to_string()
                })
                .filter(|x| !x.is_empty())
                .collect()
        };
        match k.trim().to_ascii_lowercase().as_str() {
            "starttime" | "start" => r.start = parse_time(v, now)?,
            "duration" if v.eq_ignore_ascii_case("INFINITY") => infinite = true,
            "endtime" | "end" if v.eq_ignore_ascii_case("INFINITY") => infinite = true,
            "duration" => {
                duration = Some(parse_duration(v).map_err(|_| format!("invalid duration '{v}'"))?)
            }
            "endtime" | "end" => end = Some(v.to_string()),
            "hostlist" | "hosts" | "hostexp" => {
                r.hosts = crate::rsvhosts::host_expr(v, state, classes)?
            }
            "procs" | "taskcount" | "tasks" if v.eq_ignore_ascii_case("ALL") => {
                r.procs = 0;
                if r.hosts.is_empty() {
                    r.hosts = state.nodes().iter().map(|n| n.name.clone()).collect();
                }
            }
            "exclusive" => r.flags.push("EXCLUSIVE".to_string()),
            "features" | "feature" => filter.features = list(),
            "partition" => filter.partition = Some(v.to_string()),
            "excludejobs" | "joblist" => filter.exclude_jobs = list(),
            "rsvgroup" | "group" => {
                if v.is_empty() || v.contains(char::is_whitespace) {
                    return Err(format!("invalid reservation group '{v}'"));
                }
                r.group = Some(v.to_string());
            }
            "procs" | "taskcount" | "tasks" => {
                let n = v.strip_prefix("PROCS:").unwrap_or(v);
                r.procs = n
                    .parse()
                    .ok()
                    .filter(|p| *p <= arches_core::limits::MAX_TOTAL_PROCS)
                    .ok_or_else(|| format!("invalid processor count '{v}'"))?;
            }
            "name" | "id" => {
                if v.is_empty()
                    || v.contains(char::is_whitespace)
                    || arches_api::text::needs_escape(v)
                {
                    return Err(format!("invalid reservation name '{v}'"));
                }
                r.id = v.to_string();
            }
            "flags" => {
                let keep_exclusive = r.flags.iter().any(|f| f == "EXCLUSIVE");
                r.flags = list().into_iter().map(|f| f.to_ascii_uppercase()).collect();
                if keep_exclusive && !r.flags.iter().any(|f| f == "EXCLUSIVE") {
                    r.flags.push("EXCLUSIVE".to_string());
                }
            }
            "users" | "userlist" => r.acl.users = list(),
            "groups" | "grouplist" => r.acl.groups = list(),
            "accounts" | "accountlist" => r.acl.accounts = list(),
            "classes" | "classlist" => r.acl.classes = list(),
            "qos" | "qoslist" => r.acl.qos = list(),
            "acl" => parse_acl(v, &mut r.acl)?,
            other => return Err(format!("unknown attribute '{other}'")),
        }
    }
    r.end = match (end, duration) {
        (Some(e), _) => Some(parse_time(&e, now)?),
        (None, Some(d)) => Some(
            r.start
                .checked_add(d)
                .filter(|t| *t <= arches_core::limits::MAX_TIME)
                .ok_or_else(|| {
                    format!("reservation end after {}", arches_core::limits::MAX_TIME)
                })?,
        ),
        (None, None) => None,
    };
    if infinite {
        r.end = None;
    }
    filter.apply(&mut r, state)?;
    if r.hosts.is_empty() && r.procs == 0 {
        return Err("a host list (-h) or a processor count (-t) is required".to_string());
    }
    Ok(r)
}

/// Moab's ACL notation: `USER==a:==b+,GROUP==g,ACCT==x,CLASS==c,QOS==q`.
fn parse_acl(text: &str, acl: &mut Acl) -> Result<(), String> {
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (kind, rest) = part
            .split_once("==")
            .ok_or_else(|| format!("invalid access list entry '{part}' (expected TYPE==NAME)"))?;
        let names: Vec<String> = rest
            .split(":==")
            .map(|n| n.trim_end_matches(['+', '-']).trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        let list = match kind.trim().to_ascii_uppercase().as_str() {
            "USER" => &mut acl.users,
            "GROUP" => &mut acl.groups,
            "ACCT" | "ACCOUNT" => &mut acl.accounts,
            "CLASS" => &mut acl.classes,
            "QOS" => &mut acl.qos,
            other => return Err(format!("unsupported access list type '{other}'")),
        };
        list.extend(names);
    }
    Ok(())
}

/// A start or end time: `now`, `+DURATION`, epoch seconds (9 digits or
/// more), or `HH:MM[:SS][_MO/DD[/YY]]` in local time.
pub(crate) fn parse_time(text: &str, now: Time) -> Result<Time, String> {
    let t = text.trim();
    let bad = || format!("invalid time '{text}'");
    if t.is_empty() || t.eq_ignore_ascii_case("now") {
        return Ok(now);
    }
    if let Some(off) = t.strip_prefix('+') {
        return parse_duration(off)
            .ok()
            .and_then(|d| now.checked_add(d))
            .filter(|t| *t <= arches_core::limits::MAX_TIME)
            .ok_or_else(bad);
    }
    if t.len() >= 9 && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .ok()
            .filter(|t| *t <= arches_core::limits::MAX_TIME)
            .ok_or_else(bad);
    }
    let (clock, date) = match t.split_once('_') {
        Some((c, d)) => (c, Some(d)),
        None => (t, None),
    };
    let num = |s: &str| s.parse::<i32>().map_err(|_| bad());
    let hms: Vec<&str> = clock.split(':').collect();
    if hms.is_empty() || hms.len() > 3 {
        return Err(bad());
    }
    let tt = now as libc::time_t;
    // SAFETY: zeroed tm is a valid out-parameter; localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    if unsafe { libc::localtime_r(&tt, &mut tm) }.is_null() {
        return Err(bad());
    }
    tm.tm_hour = num(hms[0])?;
    tm.tm_min = hms.get(1).map_or(Ok(0), |m| num(m))?;
    tm.tm_sec = hms.get(2).map_or(Ok(0), |s| num(s))?;
    if let Some(d) = date {
        let p: Vec<&str> = d.split('/').collect();
        if p.len() < 2 || p.len() > 3 {
            return Err(bad());
        }
        tm.tm_mon = num(p[0])? - 1;
        tm.tm_mday = num(p[1])?;
        if let Some(y) = p.get(2) {
            let y = num(y)?;
            tm.tm_year = if y < 100 { 100 + y } else { y - 1900 };
        }
    }
    if tm.tm_hour > 23
        || tm.tm_min > 59
        || tm.tm_sec > 60
        || !(0..12).contains(&tm.tm_mon)
        || !(1..=31).contains(&tm.tm_mday)
    {
        return Err(bad());
    }
    tm.tm_isdst = -1;
    // SAFETY: tm is fully initialised.
    let at = unsafe { libc::mktime(&mut tm) };
    if at == -1 {
        return Err(bad());
    }
    Ok(at as Time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::Node;

    fn state() -> State {
        State::new(vec![Node::new("n1", 4, 0), Node::new("n2", 4, 0)])
    }

    fn specs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn create_specs_become_a_reservation() {
        let s = state();
        let r = parse_create(
            &specs(&[
                "starttime=+1:00:00",
                "duration=2:00:00",
                "hostlist=n1,n2",
                "users=alice,bob",
                "acl=GROUP==staff:==ops+,QOS==high",
            ]),
            "system.1",
            "root",
            &s,
            1000,
        )
        .unwrap();
        assert_eq!(r.id, "system.1");
        assert_eq!((r.start, r.end), (4600, Some(11_800)));
        assert_eq!(r.hosts, ["n1", "n2"]);
        assert_eq!(r.acl.users, ["alice", "bob"]);
        assert_eq!(r.acl.groups, ["staff", "ops"]);
        assert_eq!(r.acl.qos, ["high"]);
        assert_eq!(r.owner.as_deref(), Some("root"));
        let r = parse_create(
            &specs(&["procs=6", "name=maint", "hostlist=ALL"]),
            "system.2",
            "root",
            &s,
            0,
        )
        .unwrap();
        assert_eq!((r.id.as_str(), r.procs, r.end), ("maint", 6, None));
        assert_eq!(r.hosts.len(), 2);
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        let s = state();
        let e = |v: &[&str]| parse_create(&specs(v), "system.1", "root", &s, 0).unwrap_err();
        assert!(e(&["duration=1:00"]).contains("host list"));
        assert!(e(&["hostlist=n1", "duration=soon"]).contains("invalid duration"));
        assert!(e(&["hostlist=n1", "starttime=25:00"]).contains("invalid time"));
        assert!(e(&["hostlist=n1", "color=red"]).contains("unknown attribute"));
        assert!(e(&["hostlist=n1", "acl=NODE==x"]).contains("unsupported"));
        assert!(e(&["hostlist"]).contains("ATTR=VALUE"));
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("now", 5), Ok(5));
        assert_eq!(parse_time("+30", 5), Ok(35));
        assert_eq!(parse_time("1700000000", 5), Ok(1_700_000_000));
        let t = parse_time("12:30", 1_700_000_000).unwrap();
        assert!((t - 1_700_000_000).abs() < 86_400 * 2);
    }
}
