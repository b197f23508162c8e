//! The planning context beyond processors and memory: generic resources
//! ([`crate::gres::GresLayer`]), node access policies
//! ([`crate::access::Tenancy`]), reservation binding (`ADVRES`) and the
//! general placement of [`crate::layout`].
//!
//! A job is *general* when its request has a layout (node groups, host
//! list, generic resources, an access policy, a reservation to run in) or
//! when the machine's access policies may keep it off nodes (a node or the
//! global default other than `SHARED`, or tenant-dependent policies in
//! play). General jobs always get per-node placement; the others take the
//! existing paths unchanged, so a machine without any of this pays nothing.

use std::cell::RefCell;

use crate::access::{self, NodeAccessPolicy, Tenancy};
use crate::gres::{Gres, GresLayer};
use crate::job::{Alloc, Job, Request};
use crate::layout::{self, Demand, Free};
use crate::node::{NodeAdminState, NodeId};
use crate::state::State;
use crate::{Secs, Time};

use super::{clamp_u32, release_at, Ctx};

/// A reservation a bound job may run in: its nodes, start and end.
pub(crate) type AdvresWindow = (Vec<NodeId>, Time, Option<Time>);

/// What a context keeps for the layers.
pub(super) struct Extra {
    /// No node access policy other than `SHARED` anywhere (global default,
    /// nodes) and no tenant-dependent policy in play.
    pub access_plain: bool,
    /// Generic resources, once a job using them was considered.
    pub gres: Option<GresLayer>,
    /// Usage of generic resources given back or taken before the layer
    /// existed (preemption trials): `(alloc, start, end, given back)`.
    released: Vec<(Alloc, Time, Option<Time>, bool)>,
    /// Who is on each node, when tenant-dependent policies are in play.
    pub tenancy: Option<Tenancy>,
    /// [`Ctx::ever_fits_general`]'s answers this iteration for requests
    /// without a reservation binding (it depends on the request and the
    /// configured nodes only): a queue's general jobs have few shapes.
    ever_fits: RefCell<Vec<(Request, Result<(), String>)>>,
}

/// Request shapes [`Extra::ever_fits`] remembers per iteration.
const EVER_FITS_MEMO: usize = 64;

impl Extra {
    pub fn new(state: &State, policy: &crate::policy::Policy, now: Time) -> Extra {
        let nodes = state.nodes();
        let scoped = Tenancy::needed(policy.node_access, nodes, state.scoped_jobs());
        let access_plain = !scoped
            && policy.node_access == NodeAccessPolicy::Shared
            && nodes.iter().all(|n| n.access.is_none());
        let tenancy = scoped.then(|| {
            let mut t = Tenancy::new(nodes.len());
            for j in state.active() {
                let end = if j.state == crate::job::JobState::Suspended {
                    None
                } else {
                    release_at(j, policy, now)
                };
                for a in j.run.as_ref().map(|r| r.alloc.as_slice()).unwrap_or(&[]) {
                    if let Some(n) = state.node(a.node) {
                        let p = access::effective(j.req.access(), n, policy.node_access);
                        t.add(a.node, j.id, &j.cred, p, now, end);
                    }
                }
            }
            t
        });
        Extra {
            access_plain,
            gres: None,
            released: Vec::new(),
            tenancy,
            ever_fits: RefCell::new(Vec::new()),
        }
    }
}

impl<'a> Ctx<'a> {
    /// Whether `job` takes the general placement (see the module doc).
    pub(crate) fn is_general(&self, job: &Job) -> bool {
        job.req.layout.is_some() || !self.extra.access_plain
    }

    /// Builds the generic-resource layer if this state has any and it is
    /// not built yet: running jobs released at their planned end, then
    /// this iteration's usage so far.
    pub(super) fn ensure_gres(&mut self) {
        if self.extra.gres.is_some() || self.state.gres_table().is_empty() {
            return;
        }
        let state = self.state;
        let n = state.nodes().len();
        let free: Vec<Gres> = (0..n as NodeId).map(|i| state.free_gres(i)).collect();
        let cap: Vec<Gres> = (0..n as NodeId)
            .map(|i| match state.node(i) {
                Some(x) if x.admin == NodeAdminState::Up => state.node_gres(i),
                _ => Gres::NONE,
            })
            .collect();
        let policy = self.policy;
        let now = self.now;
        let releases = state
            .active()
            .filter(|j| j.state != crate::job::JobState::Suspended)
            .filter_map(move |j| Some((j, release_at(j, policy, now)?)))
            .flat_map(|(j, end)| {
                j.run
                    .iter()
                    .flat_map(|r| r.alloc.iter())
                    .filter(|a| !a.gres.is_empty())
                    .map(move |a| (a.node, end, a.gres))
            })
            .filter(|(node, _, _)| {
                state
                    .node(*node)
                    .is_some_and(|x| x.admin == NodeAdminState::Up)
            });
        let mut layer = GresLayer::new(now, state.gres_table().len(), free, &cap, releases);
        for (alloc, start, end) in self.planned_usage() {
            for a in alloc {
                layer.apply(a.node, &a.gres, start, end, 1);
            }
        }
        for (a, start, end, freed) in std::mem::take(&mut self.extra.released) {
            layer.apply(a.node, &a.gres, start, end, if freed { -1 } else { 1 });
        }
        self.extra.gres = Some(layer);
    }

    /// Records planned usage of `job` in the layers (generic resources,
    /// tenants).
    pub(super) fn layers_commit(
        &mut self,
        job: &Job,
        alloc: &[Alloc],
        start: Time,
        end: Option<Time>,
    ) {
        if let Some(layer) = self.extra.gres.as_mut() {
            for a in alloc {
                layer.apply(a.node, &a.gres, start, end, 1);
            }
        }
        if let Some(t) = self.extra.tenancy.as_mut() {
            for a in alloc {
                if let Some(n) = self.state.node(a.node) {
                    let p = access::effective(job.req.access(), n, self.policy.node_access);
                    t.add(a.node, job.id, &job.cred, p, start, end);
                }
            }
        }
    }

    /// Takes (`on`) or gives back a lock part's generic resources.
    pub(super) fn layers_lock(
        &mut self,
        alloc: &[Alloc],
        start: Time,
        end: Option<Time>,
        on: bool,
    ) {
        if let Some(layer) = self.extra.gres.as_mut() {
            for a in alloc {
                layer.apply(a.node, &a.gres, start, end, if on { 1 } else { -1 });
            }
        }
    }

    /// [`Ctx::release`] for the layers: `job`'s generic resources (unless
    /// it keeps them, suspended) and its place among the tenants.
    pub(super) fn layers_release(&mut self, job: &Job, keep: bool, reverse: bool) {
        let Some(run) = job.run.as_ref() else {
            return;
        };
        let end = release_at(job, self.policy, self.now);
        if !keep {
            for a in &run.alloc {
                if a.gres.is_empty() {
                    continue;
                }
                match self.extra.gres.as_mut() {
                    Some(layer) => {
                        layer.apply(a.node, &a.gres, self.now, end, if reverse { 1 } else { -1 })
                    }
                    None => self.extra.released.push((*a, self.now, end, !reverse)),
                }
            }
        }
        if let Some(t) = self.extra.tenancy.as_mut() {
            for a in &run.alloc {
                if reverse {
                    if let Some(n) = self.state.node(a.node) {
                        let p = access::effective(job.req.access(), n, self.policy.node_access);
                        t.add(a.node, job.id, &job.cred, p, self.now, end);
                    }
                } else {
                    t.remove(a.node, job.id);
                }
            }
        }
    }

    /// Gets the layers a general job's placement reads ready; per-node
    /// processor profiles only for a placement in the future (`later`): a
    /// start now reads the free processors now, as the other paths do.
    pub(super) fn prepare_general(&mut self, job: &Job, later: bool) {
        // A job given whole nodes takes their generic resources too.
        let uses = !job.req.gres().is_empty()
            || job.req.groups().iter().any(|g| !g.gres.is_empty())
            || !self.extra.access_plain;
        if uses {
            self.ensure_gres();
        }
        if later {
            self.ensure_nodes();
        }
    }

    /// The reservations `job` may run in under `ADVRES` (`None`: no
    /// binding): `(nodes, start, end)` of each; `Err` when it names one that
    /// does not exist or does not admit the job.
    pub(crate) fn advres_scope(&self, job: &Job) -> Option<Result<Vec<AdvresWindow>, String>> {
        let name = job.req.advres()?;
        let qos = crate::qos::effective(job, self.policy);
        let mut any_named = false;
        let mut out = Vec::new();
        for h in self.rsv.held() {
            let r = &h.rsv;
            let named = name.is_empty() || r.id == name || r.standing.as_deref() == Some(name);
            if !named {
                continue;
            }
            any_named = true;
            if !r.acl.admits(&job.cred, qos) {
                continue;
            }
            let nodes: Vec<NodeId> = r.resolve(self.state).into_iter().map(|x| x.0).collect();
            out.push((nodes, r.start, r.end));
        }
        if out.is_empty() {
            let why = if name.is_empty() {
                "job requires a reservation (ADVRES) but none it may use is in force".to_string()
            } else if any_named {
                format!("job cannot access reservation '{name}' (ADVRES)")
            } else {
                format!("reservation '{name}' (ADVRES) is not in force")
            };
            return Some(Err(why));
        }
        Some(Ok(out))
    }

    /// Whether the general job could ever run on the configured up nodes.
    pub(super) fn ever_fits_general(&self, job: &Job) -> Result<(), String> {
        if self.advres_scope(job).is_some() {
            return self.ever_fits_general_inner(job);
        }
        let memo = self
            .extra
            .ever_fits
            .borrow()
            .iter()
            .find(|(req, _)| *req == job.req)
            .map(|(_, r)| r.clone());
        if let Some(r) = memo {
            return r;
        }
        let r = self.ever_fits_general_inner(job);
        let mut memo = self.extra.ever_fits.borrow_mut();
        if memo.len() < EVER_FITS_MEMO {
            memo.push((job.req.clone(), r.clone()));
        }
        r
    }

    fn ever_fits_general_inner(&self, job: &Job) -> Result<(), String> {
        let dem = Demand::resolve(self.state, &job.req)?;
        // Feasibility is checked in index order (the cheapest: candidates
        // are read only until the job fits), contiguity kept.
        let pol = match self.policy.node_allocation {
            crate::policy::NodeAllocationPolicy::Contiguous => {
                crate::policy::NodeAllocationPolicy::Contiguous
            }
            _ => crate::policy::NodeAllocationPolicy::FirstAvailable,
        };
        let state = self.state;
        let full = |id: NodeId| {
            let n = state.node(id)?;
            Some(Free {
                procs: n.procs,
                mem: n.mem_mb,
                gres: state.node_gres(id),
            })
        };
        let n = state.nodes().len() as NodeId;
        if let Some(scope) = self.advres_scope(job) {
            let scope = scope?;
            let dur = crate::eligibility::planning_duration(job, self.policy);
            let long_enough = |start: Time, end: Option<Time>| match (end, dur) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(e), Some(d)) => e - start.max(self.now) >= d.max(1),
            };
            if !scope.iter().any(|(_, s, e)| long_enough(*s, *e)) {
                return Err(
                    "the job's wall-clock limit outlasts the reservations it must run in (ADVRES)"
                        .to_string(),
                );
            }
            let fits = scope.iter().any(|(nodes, _, _)| {
                layout::place(
                    state,
                    &job.req,
                    &dem,
                    self.policy.node_access,
                    pol,
                    nodes.iter().copied(),
                    full,
                )
                .is_some()
            });
            return if fits {
                Ok(())
            } else {
                Err("the reservations the job must run in (ADVRES) cannot hold it".to_string())
            };
        }
        layout::place(
            state,
            &job.req,
            &dem,
            self.policy.node_access,
            pol,
            0..n,
            full,
        )
        .map(|_| ())
        .ok_or_else(|| "no set of nodes satisfies the request".to_string())
    }

    /// The general placement of `job` over `[t, end)` (see
    /// [`Ctx::place_at`]).
    pub(super) fn place_general(
        &self,
        job: &Job,
        t: Time,
        end: Option<Time>,
        clear_until: Option<Time>,
    ) -> Option<Vec<Alloc>> {
        let state = self.state;
        let dem = Demand::resolve(state, &job.req).ok()?;
        let uses_gres = dem.uses_gres();
        if uses_gres {
            let layer = self.extra.gres.as_ref()?;
            if !layer.agg_covers(&dem.total_gres(&job.req), t, end) {
                return None;
            }
        }
        let scope = match self.advres_scope(job) {
            None => None,
            Some(Ok(s)) => Some(s),
            Some(Err(_)) => return None,
        };
        let now = self.now;
        let starts_now = t <= now;
        let layer = self.extra.gres.as_ref().filter(|_| uses_gres);
        // Kinds the job needs on a node (per task, per node of a group):
        // candidates have at least one of them (free, for a start now).
        let mut need = dem.per_task;
        for g in &dem.groups {
            need = need.plus(&g.per_node);
        }
        let kinds: Vec<crate::gres::GresId> = need.iter().map(|(k, _)| k).collect();
        let has_kind = |id: NodeId| match layer {
            None => true,
            Some(l) => kinds.iter().any(|&k| {
                if starts_now {
                    l.free_now_has(id, k)
                } else {
                    l.has(id, k)
                }
            }),
        };
        // Candidates: nodes with free processors when the start is now.
        let keep = |id: NodeId| {
            (!starts_now || self.free_set.contains(&id))
                && has_kind(id)
                && dem
                    .hosts
                    .as_ref()
                    .is_none_or(|h| h.binary_search(&id).is_ok())
        };
        // The smallest set to walk (lazily, ascending), filtered by `keep`.
        let base = || -> Box<dyn DoubleEndedIterator<Item = NodeId> + '_> {
            if let Some(h) = dem.hosts.as_ref() {
                return Box::new(h.clone().into_iter());
            }
            match (layer, kinds.as_slice()) {
                // The smaller of the two sets a candidate must be in (the
                // same nodes in the same order either way: `keep` checks
                // both); on a busy machine with GPUs to spare it is the
                // nodes with free processors.
                (Some(l), [k]) if starts_now => match l.free_now_set(*k) {
                    Some(s) if s.len() <= self.free_set.len() => Box::new(s.iter().copied()),
                    Some(_) => Box::new(self.free_set.iter()),
                    None => Box::new(std::iter::empty()),
                },
                _ if starts_now => Box::new(self.free_set.iter()),
                _ => Box::new(0..state.nodes().len() as NodeId),
            }
        };
        let clear = |id: NodeId, procs: u32| match clear_until {
            Some(c) if !self.rsv.is_empty() => procs.min(
                self.free[id as usize]
                    .0
                    .saturating_sub(self.rsv.blocked(id, t, Some(c))),
            ),
            _ => procs,
        };
        let until = clear_until.or(end);
        let avail = |id: NodeId| -> Option<Free> {
            let (procs, mem) = match &self.nodes {
                Some(profiles) => {
                    let a = profiles[id as usize].free_over(t, end);
                    (
                        clear(id, clamp_u32(a.procs)),
                        u64::try_from(a.mem.max(0)).unwrap_or(0),
                    )
                }
                None => {
                    let (p, m) = self.free[id as usize];
                    (p.saturating_sub(self.rsv.blocked(id, t, until)), m)
                }
            };
            if let Some(tn) = self.extra.tenancy.as_ref() {
                let n = state.node(id)?;
                let p = access::effective(job.req.access(), n, self.policy.node_access);
                if !tn.admits(id, job.id, &job.cred, p, t, end) {
                    return None;
                }
            }
            let gres = match self.extra.gres.as_ref() {
                Some(layer) => layer.free_over(id, t, end),
                None => Gres::NONE,
            };
            Some(Free { procs, mem, gres })
        };
        let place = |nodes: &mut dyn DoubleEndedIterator<Item = NodeId>| {
            layout::place(
                state,
                &job.req,
                &dem,
                self.policy.node_access,
                self.policy.node_allocation,
                nodes,
                avail,
            )
        };
        if let Some(scope) = scope {
            // ADVRES: inside one reservation, for the whole run.
            for (nodes, start, rend) in scope {
                if t < start || rend.is_some_and(|e| end.is_none_or(|x| x > e)) {
                    continue;
                }
                let mut inside = nodes.into_iter().filter(|&n| keep(n));
                if let Some(a) = place(&mut inside) {
                    return Some(a);
                }
            }
            return None;
        }
        // A job inside reservations it may use prefers their nodes.
        let inside = self.rsv.lifted_nodes();
        if !inside.is_empty() {
            let mut it = inside.into_iter().filter(|&n| keep(n));
            if let Some(a) = place(&mut it) {
                return Some(a);
            }
        }
        place(&mut base().filter(|&n| keep(n)))
    }

    /// Extra candidate start times for a general job's earliest start:
    /// where generic resources come back, where its reservations begin.
    pub(super) fn general_times(&self, job: &Job, from: Time) -> Vec<Time> {
        let mut v = Vec::new();
        if let Some(layer) = self.extra.gres.as_ref() {
            if let Ok(dem) = Demand::resolve(self.state, &job.req) {
                let total = dem.total_gres(&job.req);
                for (k, _) in total.iter() {
                    v.extend(layer.agg_change_points(k, from));
                }
            }
        }
        if let Some(Ok(scope)) = self.advres_scope(job) {
            v.extend(scope.iter().map(|s| s.1).filter(|t| *t >= from));
        }
        v
    }

    /// Free units of generic resource `kind` on each node over time
    /// (`(time, free from then on)` breakpoints; `None` for nodes without
    /// it): showbf's per-resource windows.
    pub(crate) fn gres_spans(
        &mut self,
        kind: crate::gres::GresId,
    ) -> Vec<Option<Vec<(Time, i64)>>> {
        self.ensure_gres();
        let n = self.state.nodes().len() as NodeId;
        let Some(layer) = self.extra.gres.as_ref() else {
            return vec![None; n as usize];
        };
        (0..n)
            .map(|i| {
                layer
                    .node_spans(i, kind)
                    .map(|s| s.iter().map(|(t, a)| (*t, a.procs)).collect())
            })
            .collect()
    }

    /// Whether the generic resources of `job` could be free over
    /// `[t, t + dur)` machine-wide (a cheap necessary condition).
    pub(super) fn gres_may_fit(&self, job: &Job, t: Time, dur: Option<Secs>) -> bool {
        let Some(layer) = self.extra.gres.as_ref() else {
            return true;
        };
        match Demand::resolve(self.state, &job.req) {
            Ok(dem) if dem.uses_gres() => {
                layer.agg_covers(&dem.total_gres(&job.req), t, dur.map(|d| t + d.max(1)))
            }
            _ => true,
        }
    }
}
