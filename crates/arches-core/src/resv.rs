//! Administrative (`mrsvctl -c`) and standing (`SRCFG[name]`) reservations.
//!
//! A reservation sets processors on nodes aside for a time window. Jobs whose
//! credentials are on its access list (users, groups, accounts, classes,
//! QoS: any one match admits, as Moab's ACLs) may run on them; every other
//! job sees them as busy for the whole window. A standing reservation is a
//! template materialised as one instance per period (`PERIOD=DAY|WEEK`,
//! `DEPTH` periods ahead, `DAYS=`), or one endless instance
//! (`PERIOD=INFINITY`). Times of day are UTC.
//!
//! How the planner uses them ([`crate::context`]): every instance in force
//! is held in the availability profiles (per node and aggregate) as usage,
//! clipped to what the node has free, so that it never over-allocates. A
//! job on the access list *lifts* the reservations it may use for the time
//! it is considered: the held capacity becomes free to it, and what it takes
//! on a reserved node comes out of the reservation (the job runs inside it).

use std::collections::BTreeMap;

use crate::job::{Alloc, Credentials};
use crate::node::NodeId;
use crate::profile::{Amount, Profile};
use crate::state::State;
use crate::{Secs, Time};

/// Who may use a reservation. Empty lists admit nobody through that
/// credential; `ALL` in a list admits everybody.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acl {
    pub users: Vec<String>,
    pub groups: Vec<String>,
    pub accounts: Vec<String>,
    pub classes: Vec<String>,
    pub qos: Vec<String>,
}

impl Acl {
    /// Whether no credential is listed (nobody has access).
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
            && self.groups.is_empty()
            && self.accounts.is_empty()
            && self.classes.is_empty()
            && self.qos.is_empty()
    }

    /// Whether a job with these credentials, running under `qos` (its
    /// effective QoS, [`crate::qos::effective`]), may use the reservation.
    pub fn admits(&self, c: &Credentials, qos: Option<&str>) -> bool {
        fn m(list: &[String], v: Option<&str>) -> bool {
            v.is_some_and(|v| list.iter().any(|x| x == v || x == "ALL"))
        }
        m(&self.users, Some(&c.user))
            || m(&self.groups, Some(&c.group))
            || m(&self.accounts, c.account.as_deref())
            || m(&self.classes, c.class.as_deref())
            || m(&self.qos, qos)
    }

    /// Moab's ACL notation, one entry per credential type
    /// (`USER==a:==b`, `GROUP==g`, ...).
    pub fn describe(&self) -> Vec<String> {
        [
            ("USER", &self.users),
            ("GROUP", &self.groups),
            ("ACCT", &self.accounts),
            ("CLASS", &self.classes),
            ("QOS", &self.qos),
        ]
        .into_iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(k, l)| {
            let v: Vec<String> = l.iter().map(|x| format!("=={x}")).collect();
            format!("{k}{}", v.join(":"))
        })
        .collect()
    }
}

/// One reservation instance: what is reserved, when, and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// `system.N` for administrative ones, `NAME.K` for the K-th instance of
    /// a standing reservation.
    pub id: String,
    pub start: Time,
    /// `None`: no end.
    pub end: Option<Time>,
    /// Reserved hosts (empty: chosen by processor count, in node order).
    pub hosts: Vec<String>,
    /// Processors reserved (0: every processor of the hosts).
    pub procs: u32,
    pub acl: Acl,
    pub flags: Vec<String>,
    pub owner: Option<String>,
    /// The standing reservation this instance comes from.
    pub standing: Option<String>,
    /// Its reservation group (`mrsvctl -c -g`): `-l`/`-r -g` act on every
    /// reservation of the group.
    pub group: Option<String>,
}

impl Reservation {
    /// Whether the window `[start, end)` overlaps `[from, to)`.
    pub fn overlaps(&self, from: Time, to: Option<Time>) -> bool {
        self.end.is_none_or(|e| e > from) && to.is_none_or(|t| t > self.start)
    }

    /// The nodes and processors reserved on `state`'s nodes, in node order.
    /// Unknown host names are skipped (they are refused at creation).
    pub fn resolve(&self, state: &State) -> Vec<(NodeId, u32)> {
        let nodes = state.nodes();
        let cands: Vec<NodeId> = if self.hosts.is_empty() {
            if self.procs == 0 {
                return Vec::new();
            }
            (0..nodes.len() as NodeId).collect()
        } else {
            let mut v: Vec<NodeId> = if self.hosts.len() > 8 {
                let by_name: std::collections::HashMap<&str, NodeId> = nodes
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (n.name.as_str(), i as NodeId))
                    .collect();
                self.hosts
                    .iter()
                    .filter_map(|h| by_name.get(h.as_str()).copied())
                    .collect()
            } else {
                self.hosts.iter().filter_map(|h| state.node_id(h)).collect()
            };
            v.sort_unstable();
            v.dedup();
            v
        };
        let mut left = if self.procs == 0 {
            u32::MAX
        } else {
            self.procs
        };
        let mut out = Vec::new();
        for id in cands {
            if left == 0 {
                break;
            }
            let p = nodes[id as usize].procs.min(left);
            if p > 0 {
                out.push((id, p));
                left = left.saturating_sub(p);
            }
        }
        out
    }
}

/// `SRCFG[x] PERIOD=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Period {
    #[default]
    Day,
    Week,
    Infinity,
}

impl std::str::FromStr for Period {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_uppercase().as_str() {
            "DAY" => Ok(Period::Day),
            "WEEK" => Ok(Period::Week),
            "INFINITY" => Ok(Period::Infinity),
            _ => Err(format!("invalid PERIOD '{s}' (DAY, WEEK or INFINITY)")),
        }
    }
}

/// A standing reservation (`SRCFG[name] ...`), materialised by
/// [`Standing::instances`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub name: String,
    pub period: Period,
    /// Offset into the period (`WEEK`: `D:HH:MM:SS`, day 0 = Sunday).
    pub start_time: Option<Secs>,
    pub end_time: Option<Secs>,
    pub duration: Option<Secs>,
    /// `DAYS=` as weekday numbers, 0 = Sunday; empty = every day.
    pub days: Vec<u8>,
    pub hosts: Vec<String>,
    /// `TASKCOUNT=` (processors; 0 = every processor of the hosts).
    pub tasks: u32,
    /// `DEPTH=`: periods materialised, the current one included.
    pub depth: u32,
    pub acl: Acl,
    pub flags: Vec<String>,
    pub owner: Option<String>,
}

impl Standing {
    /// A standing reservation with Moab's defaults (`PERIOD=DAY`, `DEPTH=2`).
    pub fn new(name: &str) -> Self {
        Standing {
            name: name.to_string(),
            period: Period::Day,
            start_time: None,
            end_time: None,
            duration: None,
            days: Vec::new(),
            hosts: Vec::new(),
            tasks: 0,
            depth: 2,
            acl: Acl::default(),
            flags: Vec::new(),
            owner: None,
        }
    }

    /// The instances not yet ended at `now`: one per allowed period among
    /// the `DEPTH` periods starting with the current one.
    pub fn instances(&self, now: Time) -> Vec<Reservation> {
        let day = 86_400;
        let (len, first) = match self.period {
            Period::Infinity => {
                return vec![self.instance(0, now.div_euclid(day) * day, None)];
            }
            Period::Day => (day, now.div_euclid(day) * day),
            Period::Week => {
                // Epoch day 0 was a Thursday (weekday 4, Sunday = 0).
                let d = now.div_euclid(day);
                (7 * day, (d - (d + 4).rem_euclid(7)) * day)
            }
        };
        let mut out = Vec::new();
        for k in 0..self.depth.max(1) {
            let p = first + i64::from(k) * len;
            if self.period == Period::Day && !self.days.is_empty() {
                let wd = (p.div_euclid(day) + 4).rem_euclid(7) as u8;
                if !self.days.contains(&wd) {
                    continue;
                }
            }
            let start = p + self.start_time.unwrap_or(0);
            let mut end = match (self.end_time, self.duration) {
                (Some(e), _) => p + e,
                (None, Some(d)) => start + d,
                (None, None) => p + len,
            };
            if end <= start {
                // An overnight window (e.g. 22:00 to 06:00).
                end += len;
            }
            if end > now {
                out.push(self.instance(k, start, Some(end)));
            }
        }
        out
    }

    fn instance(&self, k: u32, start: Time, end: Option<Time>) -> Reservation {
        let mut flags = vec!["STANDINGRSV".to_string()];
        flags.extend(self.flags.iter().filter(|f| *f != "STANDINGRSV").cloned());
        Reservation {
            id: format!("{}.{k}", self.name),
            start,
            end,
            hosts: self.hosts.clone(),
            procs: self.tasks,
            acl: self.acl.clone(),
            flags,
            owner: self.owner.clone(),
            standing: Some(self.name.clone()),
            group: None,
        }
    }
}

/// Weekday number (0 = Sunday) of a `DAYS=` name (`Mon`, `tuesday`, ...).
pub fn weekday(name: &str) -> Option<u8> {
    let n = name.trim().to_ascii_lowercase();
    let days = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    days.iter()
        .position(|d| n.len() >= 3 && n.starts_with(d))
        .map(|i| i as u8)
}

/// Every reservation in force at `now` (not yet ended): the administrative
/// ones of the state, then the standing instances of the policy, ordered by
/// start then id.
pub fn in_force(state: &State, standing: &[Standing], now: Time) -> Vec<Reservation> {
    let mut out: Vec<Reservation> = state
        .reservations()
        .filter(|r| r.end.is_none_or(|e| e > now))
        .cloned()
        .collect();
    for s in standing {
        out.extend(s.instances(now));
    }
    out.sort_by(|a, b| (a.start, &a.id).cmp(&(b.start, &b.id)));
    out
}

/// A reservation held in the planning profiles: its usage segments
/// `(node, start, end, procs)`.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub rsv: Reservation,
    pub segs: Vec<(NodeId, Time, Option<Time>, i64)>,
    /// The segments summed into one step function of held processors
    /// (`(time, change)`, sorted), applied to the aggregate in one pass.
    steps: Vec<(Time, i64)>,
}

impl Held {
    /// Holds `rsv` on the node profiles: on each reserved node the
    /// reservation takes, at every time of its window, what it reserves or
    /// what the node has free if less.
    pub fn new(rsv: Reservation, state: &State, profiles: &[Profile], now: Time) -> Held {
        let mut segs = Vec::new();
        let start = rsv.start.max(now);
        if rsv.end.is_some_and(|e| e <= start) {
            return Held {
                rsv,
                segs,
                steps: Vec::new(),
            };
        }
        for (node, procs) in rsv.resolve(state) {
            let Some(p) = profiles.get(node as usize) else {
                continue;
            };
            let spans = p.spans();
            for (k, (t, free)) in spans.iter().enumerate() {
                let s = (*t).max(start);
                let e = spans.get(k + 1).map(|x| x.0);
                let e = match (e, rsv.end) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                if e.is_some_and(|e| e <= s) {
                    continue;
                }
                let take = i64::from(procs).min(free.procs);
                if take > 0 {
                    segs.push((node, s, e, take));
                }
            }
        }
        let mut h = Held {
            rsv,
            segs,
            steps: Vec::new(),
        };
        h.rebuild_steps();
        h
    }

    fn rebuild_steps(&mut self) {
        let mut ev: Vec<(Time, i64)> = Vec::with_capacity(self.segs.len() * 2);
        for &(_, s, e, p) in &self.segs {
            ev.push((s, p));
            if let Some(e) = e {
                ev.push((e, -p));
            }
        }
        ev.sort_unstable_by_key(|x| x.0);
        let mut steps: Vec<(Time, i64)> = Vec::with_capacity(ev.len());
        for (t, d) in ev {
            match steps.last_mut() {
                Some(l) if l.0 == t => l.1 += d,
                _ => steps.push((t, d)),
            }
        }
        steps.retain(|x| x.1 != 0);
        self.steps = steps;
    }

    /// Adds (`sign` 1) or removes (`sign` -1) the held usage.
    pub fn apply(&self, agg: &mut Profile, nodes: &mut [Profile], sign: i64) {
        // Held usage lowers the free amount: the steps enter negated.
        let steps: Vec<(Time, i64)> = self.steps.iter().map(|(t, d)| (*t, -d * sign)).collect();
        agg.add_steps(&steps);
        if nodes.is_empty() {
            return;
        }
        for &(node, s, e, p) in &self.segs {
            if let Some(n) = nodes.get_mut(node as usize) {
                n.force_usage(s, e, Amount::procs(p * sign));
            }
        }
    }

    /// A job on the access list takes `alloc` over `[start, end)`: what it
    /// uses on reserved nodes comes out of the held segments. Returns what
    /// it took, per node, so later lifted reservations see only the rest.
    pub fn consume(&mut self, alloc: &mut BTreeMap<NodeId, i64>, start: Time, end: Option<Time>) {
        let mut out = Vec::with_capacity(self.segs.len());
        for &(node, s, e, p) in &self.segs {
            let want = alloc.get(&node).copied().unwrap_or(0);
            // Overlap of the segment and the job.
            let os = s.max(start);
            let oe = match (e, end) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if want <= 0 || oe.is_some_and(|oe| oe <= os) {
                out.push((node, s, e, p));
                continue;
            }
            let take = want.min(p);
            if os > s {
                out.push((node, s, Some(os), p));
            }
            if p - take > 0 {
                out.push((node, os, oe, p - take));
            }
            if let Some(oe) = oe {
                if e.is_none_or(|e| e > oe) {
                    out.push((node, oe, e, p));
                }
            }
        }
        self.segs = out;
        self.rebuild_steps();
        // Per-node amounts a job takes are the same over its whole run, so
        // one pass per reservation suffices; reduce what later ones see.
        for (node, want) in alloc.iter_mut() {
            let reserved = self.segs.iter().any(|(n, ..)| n == node);
            if reserved {
                *want = 0;
            }
        }
    }

    /// Processors held at `t`.
    pub fn held_at(&self, t: Time) -> i64 {
        self.segs
            .iter()
            .filter(|(_, s, e, _)| *s <= t && e.is_none_or(|e| e > t))
            .map(|x| x.3)
            .sum()
    }
}

/// The reservations one planning context holds out of its profiles, with
/// the ones currently lifted for a job on their access list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Holds {
    held: Vec<Held>,
    /// Held indices per reserved node.
    by_node: Vec<Vec<usize>>,
    /// The iteration's time, and the processors each reservation holds
    /// then (kept up to date as admitted jobs take from them).
    now: Time,
    at_now: Vec<i64>,
    /// Indices lifted (given back to the profiles) for the current job.
    lifted: Vec<usize>,
}

impl Holds {
    /// Holds every reservation of `list` (in order) against the per-node
    /// free profiles `profiles` (running jobs only). A reservation of a
    /// processor count is clipped to what earlier ones left (Moab: a task
    /// count allocates only accessible resources); one of named hosts is
    /// held whatever other reservations hold there (Moab: a host expression
    /// is applied regardless of existing reservations), so where two
    /// overlap a job needs access to both.
    pub fn new(
        list: Vec<Reservation>,
        state: &State,
        mut profiles: Vec<Profile>,
        now: Time,
    ) -> Self {
        let mut held = Vec::with_capacity(list.len());
        let mut by_node: Vec<Vec<usize>> = vec![Vec::new(); state.nodes().len()];
        let mut scratch = Profile::new(now, Amount::default());
        let base = profiles.clone();
        for r in list {
            let against = if r.hosts.is_empty() { &profiles } else { &base };
            let h = Held::new(r, state, against, now);
            h.apply(&mut scratch, &mut profiles, 1);
            let i = held.len();
            let mut nodes: Vec<NodeId> = h.segs.iter().map(|s| s.0).collect();
            nodes.dedup();
            for n in nodes {
                let Some(v) = by_node.get_mut(n as usize) else {
                    continue;
                };
                if v.last() != Some(&i) {
                    v.push(i);
                }
            }
            held.push(h);
        }
        let at_now = held.iter().map(|h| h.held_at(now)).collect();
        Holds {
            held,
            by_node,
            now,
            at_now,
            lifted: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// The held reservations.
    pub fn held(&self) -> impl Iterator<Item = &Held> {
        self.held.iter()
    }

    /// Processors held at `t` by the reservations admitting `c`.
    pub fn admitted_at(&self, c: &Credentials, qos: Option<&str>, t: Time) -> i64 {
        self.held
            .iter()
            .enumerate()
            .filter(|(_, h)| h.rsv.acl.admits(c, qos))
            .map(|(i, h)| {
                if t == self.now {
                    self.at_now[i]
                } else {
                    h.held_at(t)
                }
            })
            .sum()
    }

    /// Whether any reservation admits these credentials.
    pub fn admits(&self, c: &Credentials, qos: Option<&str>) -> bool {
        self.held.iter().any(|h| h.rsv.acl.admits(c, qos))
    }

    /// Applies every held reservation not lifted (`sign` 1 adds the usage).
    pub fn apply_all(&self, agg: &mut Profile, nodes: &mut [Profile], sign: i64) {
        for (i, h) in self.held.iter().enumerate() {
            if !self.lifted.contains(&i) {
                h.apply(agg, nodes, sign);
            }
        }
    }

    /// Gives the reservations admitting `c` back to the profiles.
    pub fn lift(
        &mut self,
        c: &Credentials,
        qos: Option<&str>,
        agg: &mut Profile,
        mut nodes: Option<&mut Vec<Profile>>,
    ) {
        self.unlift(agg, nodes.as_deref_mut());
        let mut none: Vec<Profile> = Vec::new();
        let nodes = nodes.map_or(&mut none[..], |v| &mut v[..]);
        for (i, h) in self.held.iter().enumerate() {
            if h.rsv.acl.admits(c, qos) {
                h.apply(agg, nodes, -1);
                self.lifted.push(i);
            }
        }
    }

    /// Gives every reservation back to the profiles (showbf -A: what any
    /// credential could use).
    pub fn lift_all(&mut self, agg: &mut Profile, mut nodes: Option<&mut Vec<Profile>>) {
        self.unlift(agg, nodes.as_deref_mut());
        let mut none: Vec<Profile> = Vec::new();
        let nodes = nodes.map_or(&mut none[..], |v| &mut v[..]);
        for (i, h) in self.held.iter().enumerate() {
            h.apply(agg, nodes, -1);
            self.lifted.push(i);
        }
    }

    /// Puts the lifted reservations back, after an admitted job took
    /// `alloc` over `[start, end)` out of them (`None`: nothing taken).
    pub fn unlift_after(
        &mut self,
        agg: &mut Profile,
        nodes: Option<&mut Vec<Profile>>,
        taken: Option<(&[Alloc], Time, Option<Time>)>,
    ) {
        if let Some((alloc, start, end)) = taken.filter(|_| !self.lifted.is_empty()) {
            let mut per = per_node(alloc);
            for &i in &self.lifted {
                self.held[i].consume(&mut per, start, end);
                self.at_now[i] = self.held[i].held_at(self.now);
            }
        }
        self.unlift(agg, nodes);
    }

    fn unlift(&mut self, agg: &mut Profile, nodes: Option<&mut Vec<Profile>>) {
        let mut none: Vec<Profile> = Vec::new();
        let nodes = nodes.map_or(&mut none[..], |v| &mut v[..]);
        for i in std::mem::take(&mut self.lifted) {
            self.held[i].apply(agg, nodes, 1);
        }
    }

    /// The nodes of the lifted reservations, ascending.
    pub fn lifted_nodes(&self) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = self
            .lifted
            .iter()
            .flat_map(|&i| self.held[i].segs.iter().map(|s| s.0))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Processors on `node` that reservations not lifted hold at some time
    /// in `[from, to)` (the sum of each one's maximum).
    pub fn blocked(&self, node: NodeId, from: Time, to: Option<Time>) -> u32 {
        let Some(list) = self.by_node.get(node as usize).filter(|l| !l.is_empty()) else {
            return 0;
        };
        let mut total = 0i64;
        for &i in list {
            if self.lifted.contains(&i) {
                continue;
            }
            let m = self.held[i]
                .segs
                .iter()
                .filter(|(n, s, e, _)| {
                    *n == node && e.is_none_or(|e| e > from) && to.is_none_or(|t| t > *s)
                })
                .map(|x| x.3)
                .max()
                .unwrap_or(0);
            total += m;
        }
        u32::try_from(total.max(0)).unwrap_or(u32::MAX)
    }

    /// Processors held now by reservations not lifted, and the first of
    /// them holding any.
    pub fn held_now(&self, now: Time) -> (i64, Option<&str>) {
        let mut total = 0;
        let mut first = None;
        for (i, h) in self.held.iter().enumerate() {
            if self.lifted.contains(&i) {
                continue;
            }
            let p = if now == self.now {
                self.at_now[i]
            } else {
                h.held_at(now)
            };
            if p > 0 {
                total += p;
                first.get_or_insert(h.rsv.id.as_str());
            }
        }
        (total, first)
    }
}

/// Processors per node of an allocation.
pub(crate) fn per_node(alloc: &[Alloc]) -> BTreeMap<NodeId, i64> {
    let mut m = BTreeMap::new();
    for a in alloc {
        *m.entry(a.node).or_insert(0) += i64::from(a.procs);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Node;

    #[test]
    fn acl_admits_any_listed_credential() {
        let acl = Acl {
            users: vec!["alice".into()],
            classes: vec!["debug".into()],
            ..Acl::default()
        };
        let mut c = Credentials {
            user: "bob".into(),
            group: "staff".into(),
            account: None,
            class: None,
            qos: None,
        };
        assert!(!acl.admits(&c, c.qos.as_deref()));
        c.class = Some("debug".into());
        assert!(acl.admits(&c, c.qos.as_deref()));
        c.class = None;
        c.user = "alice".into();
        assert!(acl.admits(&c, c.qos.as_deref()));
        assert_eq!(acl.describe(), ["USER==alice", "CLASS==debug"]);
        let all = Acl {
            groups: vec!["ALL".into()],
            ..Acl::default()
        };
        assert!(all.admits(&c, c.qos.as_deref()));
    }

    #[test]
    fn daily_instances_follow_days_and_depth() {
        let mut s = Standing::new("maint");
        s.start_time = Some(8 * 3600);
        s.end_time = Some(17 * 3600);
        s.depth = 3;
        // 1970-01-01 is a Thursday; at 10:00 the first window is in force.
        let now = 10 * 3600;
        let v = s.instances(now);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].id, "maint.0");
        assert_eq!((v[0].start, v[0].end), (8 * 3600, Some(17 * 3600)));
        assert_eq!(v[2].start, 2 * 86_400 + 8 * 3600);
        assert!(v[0].flags.contains(&"STANDINGRSV".to_string()));
        // Past 17:00 today's instance is over.
        assert_eq!(s.instances(18 * 3600).len(), 2);
        // Weekdays only: Thursday, Friday, (Saturday skipped).
        s.days = vec![1, 2, 3, 4, 5];
        let v = s.instances(now);
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].id, "maint.1");
    }

    #[test]
    fn weekly_and_overnight_and_infinite() {
        let mut s = Standing::new("w");
        s.period = Period::Week;
        s.start_time = Some(86_400 + 8 * 3600); // Monday 8:00
        s.end_time = Some(5 * 86_400 + 17 * 3600); // Friday 17:00
        s.depth = 1;
        // Thursday 1970-01-01 is in the week starting Sunday 1969-12-28.
        let v = s.instances(0);
        assert_eq!(v[0].start, -4 * 86_400 + 86_400 + 8 * 3600);
        assert_eq!(v[0].end, Some(-4 * 86_400 + 5 * 86_400 + 17 * 3600));
        let mut n = Standing::new("night");
        n.start_time = Some(22 * 3600);
        n.end_time = Some(6 * 3600);
        n.depth = 1;
        let v = n.instances(3600);
        assert_eq!((v[0].start, v[0].end), (22 * 3600, Some(30 * 3600)));
        let mut i = Standing::new("inf");
        i.period = Period::Infinity;
        assert_eq!(i.instances(100_000)[0].end, None);
    }

    #[test]
    fn showbf_and_showstart_see_reservations_by_credentials() {
        use crate::job::{Job, Request};
        use crate::windows::{backfill_windows, estimate_start, WindowQuery};
        let mut s = State::new(vec![Node::new("n0", 4, 0), Node::new("n1", 4, 0)]);
        s.add_reservation(Reservation {
            id: "system.1".into(),
            start: 0,
            end: Some(1000),
            hosts: vec!["n0".into()],
            procs: 0,
            acl: Acl {
                users: vec!["alice".into()],
                ..Acl::default()
            },
            flags: Vec::new(),
            owner: None,
            standing: None,
            group: None,
        })
        .unwrap();
        let p = crate::Policy::default();
        let shape = |q: &WindowQuery| -> Vec<(u32, u32, Option<Secs>)> {
            backfill_windows(&s, &p, 0, q)
                .iter()
                .map(|w| (w.nodes, w.procs, w.duration))
                .collect()
        };
        assert_eq!(shape(&WindowQuery::default()), vec![(1, 4, None)]);
        let alice = Credentials {
            user: "alice".into(),
            ..Credentials::default()
        };
        let q = WindowQuery {
            cred: Some(alice),
            ..WindowQuery::default()
        };
        assert_eq!(shape(&q), vec![(2, 8, None)]);
        let bob = Job::new(1, "bob", Request::procs(8), Some(100), 0);
        assert_eq!(estimate_start(&s, &p, 0, &bob), Some(1000));
        let alices = Job::new(2, "alice", Request::procs(8), Some(100), 0);
        assert_eq!(estimate_start(&s, &p, 0, &alices), Some(0));
        // Overlapping host reservations are allowed (Moab), an exclusive
        // one is not.
        let mut excl = s.reservation("system.1").unwrap().clone();
        excl.id = "system.3".into();
        excl.flags = vec!["EXCLUSIVE".into()];
        assert!(s.add_reservation(excl).is_err());
        let mut again = s.reservation("system.1").unwrap().clone();
        again.id = "system.2".into();
        again.acl = Acl {
            groups: vec!["staff".into()],
            ..Acl::default()
        };
        s.add_reservation(again).unwrap();
        // Where they overlap a job needs access to both: alice alone no
        // longer gets n0, alice in staff does.
        assert_eq!(estimate_start(&s, &p, 0, &alices), Some(1000));
        let mut both = alices.clone();
        both.cred.group = "staff".into();
        assert_eq!(estimate_start(&s, &p, 0, &both), Some(0));
        assert_eq!(estimate_start(&s, &p, 0, &bob), Some(1000));
    }

    #[test]
    fn weekdays_parse() {
        assert_eq!(weekday("Mon"), Some(1));
        assert_eq!(weekday("sunday"), Some(0));
        assert_eq!(weekday("x"), None);
    }

    #[test]
    fn resolve_by_hosts_and_by_count() {
        let s = State::new(vec![
            Node::new("a", 4, 0),
            Node::new("b", 4, 0),
            Node::new("c", 4, 0),
        ]);
        let mut r = Reservation {
            id: "system.1".into(),
            start: 0,
            end: Some(10),
            hosts: vec!["c".into(), "a".into(), "zz".into()],
            procs: 0,
            acl: Acl::default(),
            flags: Vec::new(),
            owner: None,
            standing: None,
            group: None,
        };
        assert_eq!(r.resolve(&s), vec![(0, 4), (2, 4)]);
        r.procs = 6;
        assert_eq!(r.resolve(&s), vec![(0, 4), (2, 2)]);
        r.hosts.clear();
        assert_eq!(r.resolve(&s), vec![(0, 4), (1, 2)]);
    }

    #[test]
    fn held_is_clipped_to_free_and_consumed_by_acl_jobs() {
        let s = State::new(vec![Node::new("a", 4, 0)]);
        let r = Reservation {
            id: "r".into(),
            start: 10,
            end: Some(100),
            hosts: vec!["a".into()],
            procs: 0,
            acl: Acl::default(),
            flags: Vec::new(),
            owner: None,
            standing: None,
            group: None,
        };
        // 2 procs busy until 50.
        let p = Profile::from_releases(0, Amount::procs(2), vec![(50, Amount::procs(2))]);
        let mut h = Held::new(r, &s, std::slice::from_ref(&p), 0);
        assert_eq!(h.segs, vec![(0, 10, Some(50), 2), (0, 50, Some(100), 4)]);
        assert_eq!(h.held_at(60), 4);
        let mut alloc = BTreeMap::from([(0, 3)]);
        h.consume(&mut alloc, 60, Some(70));
        assert_eq!(h.held_at(65), 1);
        assert_eq!(h.held_at(75), 4);
        assert_eq!(h.held_at(20), 2);
    }
}
