//! Generic resources (GRES): GPUs, licences, any countable resource a node
//! declares (`NODECFG[n] GRES=gpu:4`, Slurm's `Gres=gpu:4`) and a job
//! requests (`-l gres=gpu:2` per task, Torque's `nodes=N:ppn=P:gpus=G` per
//! node).
//!
//! Why a room of its own: processors and memory are the two dimensions of
//! every [`crate::profile::Amount`], the hot type of the planner; adding
//! generic resources there would make every processor-only iteration pay for
//! them. Instead:
//!
//! - the state keeps a table of GRES names ([`GresTable`], append-only, so a
//!   [`GresId`] is stable for the life of a state) and, per node, the counts
//!   it has ([`Gres`], a small fixed array indexed by id) and the specific
//!   units (device indices) in use, so that no unit is ever given to two jobs
//!   ([`State::apply`](crate::State::apply) assigns them at a start,
//!   [`crate::job::RunInfo::gres_units`] keeps them);
//! - an allocation ([`crate::job::Alloc::gres`]) carries the counts it takes
//!   on its node;
//! - the planner counts them per node like processors in a [`GresLayer`] of
//!   its own — one availability profile per kind for the whole machine and
//!   one per node and kind — built only in iterations that consider or
//!   commit a job using them. Jobs without generic resources never see it.
//!
//! At most [`MAX_GRES`] kinds exist in one state (Maui had 4); the
//! configuration refuses more.

use std::collections::BTreeSet;

use crate::node::NodeId;
use crate::profile::{Amount, Profile};
use crate::Time;

/// Most generic-resource kinds a state knows.
pub const MAX_GRES: usize = 8;

/// Index of a kind in the state's [`GresTable`].
pub type GresId = u8;

/// Counts per generic-resource kind, indexed by [`GresId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gres(pub [u32; MAX_GRES]);

impl Gres {
    /// No generic resources.
    pub const NONE: Gres = Gres([0; MAX_GRES]);

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|c| *c == 0)
    }

    pub fn get(&self, id: GresId) -> u32 {
        self.0.get(usize::from(id)).copied().unwrap_or(0)
    }

    pub fn set(&mut self, id: GresId, n: u32) {
        if let Some(c) = self.0.get_mut(usize::from(id)) {
            *c = n;
        }
    }

    /// Whether `demand` fits in `self` for every kind.
    pub fn covers(&self, demand: &Gres) -> bool {
        self.0.iter().zip(demand.0.iter()).all(|(h, d)| h >= d)
    }

    pub fn plus(&self, o: &Gres) -> Gres {
        let mut r = *self;
        for (a, b) in r.0.iter_mut().zip(o.0.iter()) {
            *a = a.saturating_add(*b);
        }
        r
    }

    pub fn minus(&self, o: &Gres) -> Gres {
        let mut r = *self;
        for (a, b) in r.0.iter_mut().zip(o.0.iter()) {
            *a = a.saturating_sub(*b);
        }
        r
    }

    /// Each count times `n`.
    pub fn times(&self, n: u32) -> Gres {
        let mut r = *self;
        for a in r.0.iter_mut() {
            *a = a.saturating_mul(n);
        }
        r
    }

    /// How many times `per` fits in `self` (`u32::MAX` when `per` is empty).
    pub fn fits(&self, per: &Gres) -> u32 {
        self.0
            .iter()
            .zip(per.0.iter())
            .filter(|(_, p)| **p > 0)
            .map(|(h, p)| h / p)
            .min()
            .unwrap_or(u32::MAX)
    }

    /// `(id, count)` of the non-zero kinds.
    pub fn iter(&self) -> impl Iterator<Item = (GresId, u32)> + '_ {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (i as GresId, *c))
    }
}

/// The names of the generic-resource kinds a state knows, in the order
/// they were first seen. Append-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GresTable {
    names: Vec<String>,
}

impl GresTable {
    /// The id of `name`, if known.
    pub fn id(&self, name: &str) -> Option<GresId> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| i as GresId)
    }

    /// The id of `name`, adding it if new; `None` when the table is full.
    pub fn intern(&mut self, name: &str) -> Option<GresId> {
        if let Some(id) = self.id(name) {
            return Some(id);
        }
        if self.names.len() >= MAX_GRES {
            return None;
        }
        self.names.push(name.to_string());
        Some((self.names.len() - 1) as GresId)
    }

    pub fn name(&self, id: GresId) -> Option<&str> {
        self.names.get(usize::from(id)).map(String::as_str)
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Counts by name → [`Gres`]; `Err` names the first unknown kind.
    pub fn resolve(&self, list: &[(String, u32)]) -> Result<Gres, String> {
        let mut g = Gres::NONE;
        for (name, n) in list {
            let id = self
                .id(name)
                .ok_or_else(|| format!("no node has generic resource '{name}'"))?;
            g.set(id, g.get(id).saturating_add(*n));
        }
        Ok(g)
    }

    /// [`Gres`] → `(name, count)` of its non-zero kinds.
    pub fn named(&self, g: &Gres) -> Vec<(String, u32)> {
        g.iter()
            .filter_map(|(id, n)| self.name(id).map(|s| (s.to_string(), n)))
            .collect()
    }

    /// Moab's `name:count[,name:count]` notation.
    pub fn format(&self, g: &Gres) -> String {
        format_list(&self.named(g))
    }
}

/// `gpu:2,matlab:1` from `(name, count)` pairs.
pub fn format_list(list: &[(String, u32)]) -> String {
    list.iter()
        .map(|(n, c)| format!("{n}:{c}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses Moab's `name[:count][,name[:count]]...` (also `+` or `%`
/// between entries, as Moab accepts them); a missing count is 1.
pub fn parse_list(text: &str) -> Result<Vec<(String, u32)>, String> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for part in text.split([',', '+', '%']).map(str::trim) {
        if part.is_empty() {
            return Err(format!(
                "invalid generic resource list '{text}' (empty entry)"
            ));
        }
        let (name, count) = match part.split_once([':', '=']) {
            Some((n, c)) => (n.trim(), c.trim()),
            None => (part, "1"),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return Err(format!("invalid generic resource name '{name}'"));
        }
        let n: u32 = match count.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(format!(
                    "invalid count '{count}' for generic resource '{name}' (expected a positive integer)"
                ))
            }
        };
        match out.iter_mut().find(|(x, _)| x == name) {
            Some(e) => e.1 = e.1.saturating_add(n),
            None => out.push((name.to_string(), n)),
        }
    }
    Ok(out)
}

/// The units (device indices `0..64`) of one kind a job holds on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GresUnits {
    pub node: NodeId,
    pub kind: GresId,
    /// Bit `i` set: unit `i` is the job's.
    pub units: u64,
}

impl GresUnits {
    /// The unit indices, ascending.
    pub fn indices(&self) -> Vec<u32> {
        (0..64).filter(|i| self.units & (1u64 << i) != 0).collect()
    }
}

/// Kinds with more units than this on a node are counted only: no device
/// indices are given out for them (licences, say).
pub const MAX_UNITS: u32 = 64;

/// Picks `n` unused units below `cap` in `used` (lowest first); `None`
/// when there are not enough.
pub fn pick_units(used: u64, cap: u32, n: u32) -> Option<u64> {
    if n == 0 {
        return Some(0);
    }
    let mut got = 0u64;
    let mut left = n;
    for i in 0..cap.min(MAX_UNITS) {
        let bit = 1u64 << i;
        if used & bit == 0 {
            got |= bit;
            left -= 1;
            if left == 0 {
                return Some(got);
            }
        }
    }
    None
}

/// The planner's view of generic resources in one iteration (see the module
/// doc): per kind, a machine-wide profile of free units and the nodes with
/// some free now; per node and kind, a profile (only kinds the node has).
pub(crate) struct GresLayer {
    origin: Time,
    /// Per kind: free units of the whole machine over time.
    agg: Vec<Profile>,
    /// Per node: one profile per kind (`None`: the node has none).
    nodes: Vec<Vec<Option<Profile>>>,
    /// Per node: free units now.
    free: Vec<Gres>,
    /// Per kind: nodes with free units now.
    free_sets: Vec<BTreeSet<NodeId>>,
}

fn amt(n: u32) -> Amount {
    Amount::procs(i64::from(n))
}

impl GresLayer {
    /// From the capacity and current free units of every (up) node, and the
    /// releases `(node, time, units)` of running jobs.
    pub fn new(
        now: Time,
        kinds: usize,
        free_now: Vec<Gres>,
        capacity: &[Gres],
        releases: impl Iterator<Item = (NodeId, Time, Gres)>,
    ) -> Self {
        let n = free_now.len();
        let mut rel: Vec<Vec<(Time, Gres)>> = vec![Vec::new(); n];
        for (node, t, g) in releases {
            if let Some(r) = rel.get_mut(node as usize) {
                r.push((t, g));
            }
        }
        let mut agg_rel: Vec<Vec<(Time, Amount)>> = vec![Vec::new(); kinds];
        let mut agg_free = vec![0i64; kinds];
        let mut nodes = Vec::with_capacity(n);
        let mut free_sets = vec![BTreeSet::new(); kinds];
        for (i, f) in free_now.iter().enumerate() {
            let cap = capacity.get(i).copied().unwrap_or_default();
            let mut per = Vec::with_capacity(kinds);
            for k in 0..kinds {
                if cap.0[k] == 0 && rel[i].iter().all(|(_, g)| g.0[k] == 0) {
                    per.push(None);
                    continue;
                }
                let r: Vec<(Time, Amount)> = rel[i]
                    .iter()
                    .filter(|(_, g)| g.0[k] > 0)
                    .map(|(t, g)| (*t, amt(g.0[k])))
                    .collect();
                agg_rel[k].extend(r.iter().copied());
                agg_free[k] += i64::from(f.0[k]);
                if f.0[k] > 0 {
                    free_sets[k].insert(i as NodeId);
                }
                per.push(Some(Profile::from_releases(now, amt(f.0[k]), r)));
            }
            nodes.push(per);
        }
        let agg = agg_rel
            .into_iter()
            .zip(agg_free)
            .map(|(r, f)| Profile::from_releases(now, Amount::procs(f), r))
            .collect();
        GresLayer {
            origin: now,
            agg,
            nodes,
            free: free_now,
            free_sets,
        }
    }

    /// Whether `demand` (machine-wide totals) is free over `[t, end)`.
    pub fn agg_covers(&self, demand: &Gres, t: Time, end: Option<Time>) -> bool {
        demand.iter().all(|(k, n)| {
            self.agg
                .get(usize::from(k))
                .is_some_and(|p| p.free_over(t, end).procs >= i64::from(n))
        })
    }

    /// Free units of `node` over `[t, end)`.
    pub fn free_over(&self, node: NodeId, t: Time, end: Option<Time>) -> Gres {
        let mut g = Gres::NONE;
        if let Some(per) = self.nodes.get(node as usize) {
            for (k, p) in per.iter().enumerate() {
                if let Some(p) = p {
                    g.0[k] = u32::try_from(p.free_over(t, end).procs.max(0)).unwrap_or(0);
                }
            }
        }
        g
    }

    /// Nodes with free units of `kind` now (ascending).
    pub fn free_now_set(&self, kind: GresId) -> Option<&BTreeSet<NodeId>> {
        self.free_sets.get(usize::from(kind))
    }

    /// Whether `node` has units of `kind` free now.
    pub fn free_now_has(&self, node: NodeId, kind: GresId) -> bool {
        self.free
            .get(node as usize)
            .is_some_and(|f| f.get(kind) > 0)
    }

    /// Whether `node` has units of `kind` at all.
    pub fn has(&self, node: NodeId, kind: GresId) -> bool {
        self.nodes
            .get(node as usize)
            .and_then(|v| v.get(usize::from(kind)))
            .is_some_and(|p| p.is_some())
    }

    /// Takes (`sign` 1) or gives back (`sign` -1) `g` on `node` over
    /// `[start, end)`; `now` decides whether the free-now counts change.
    pub fn apply(&mut self, node: NodeId, g: &Gres, start: Time, end: Option<Time>, sign: i64) {
        if g.is_empty() {
            return;
        }
        for (k, n) in g.iter() {
            let k = usize::from(k);
            let a = Amount::procs(i64::from(n));
            if let Some(p) = self.agg.get_mut(k) {
                if sign > 0 {
                    p.force_usage(start, end, a);
                } else {
                    let _ = p.remove_usage(start, end, a);
                }
            }
            if let Some(Some(p)) = self.nodes.get_mut(node as usize).and_then(|v| v.get_mut(k)) {
                if sign > 0 {
                    p.force_usage(start, end, a);
                } else {
                    let _ = p.remove_usage(start, end, a);
                }
            }
        }
        if start <= self.origin {
            if let Some(f) = self.free.get_mut(node as usize) {
                *f = if sign > 0 { f.minus(g) } else { f.plus(g) };
                for (k, _) in g.iter() {
                    let k = usize::from(k);
                    if let Some(s) = self.free_sets.get_mut(k) {
                        if f.0[k] > 0 {
                            s.insert(node);
                        } else {
                            s.remove(&node);
                        }
                    }
                }
            }
        }
    }

    /// Times at or after `from` where the free units of `kind` change.
    pub fn agg_change_points(&self, kind: GresId, from: Time) -> Vec<Time> {
        self.agg
            .get(usize::from(kind))
            .map(|p| p.change_points(from).collect())
            .unwrap_or_default()
    }

    /// Per node and kind: `(time, free units)` breakpoints from `now`
    /// (showbf's per-resource windows).
    pub fn node_spans(&self, node: NodeId, kind: GresId) -> Option<&[(Time, Amount)]> {
        self.nodes
            .get(node as usize)?
            .get(usize::from(kind))?
            .as_ref()
            .map(|p| p.spans())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_lists() {
        assert_eq!(
            parse_list("gpu:2,matlab").unwrap(),
            vec![("gpu".to_string(), 2), ("matlab".to_string(), 1)]
        );
        assert_eq!(parse_list("gpu:1+gpu:2").unwrap(), vec![("gpu".into(), 3)]);
        assert!(parse_list("gpu:0").is_err());
        assert!(parse_list("gpu:x").is_err());
        assert!(parse_list("gpu,,x").is_err());
        assert!(parse_list("g p u").is_err());
        assert_eq!(format_list(&[("gpu".into(), 2)]), "gpu:2");
    }

    #[test]
    fn table_is_bounded_and_resolves() {
        let mut t = GresTable::default();
        for i in 0..MAX_GRES {
            assert_eq!(t.intern(&format!("g{i}")), Some(i as GresId));
        }
        assert_eq!(t.intern("g0"), Some(0));
        assert_eq!(t.intern("overflow"), None);
        let g = t.resolve(&[("g1".into(), 2), ("g1".into(), 1)]).unwrap();
        assert_eq!(g.get(1), 3);
        assert!(t
            .resolve(&[("nope".into(), 1)])
            .unwrap_err()
            .contains("nope"));
        assert_eq!(t.format(&g), "g1:3");
    }

    #[test]
    fn arithmetic_and_units() {
        let mut a = Gres::NONE;
        a.set(0, 4);
        let mut b = Gres::NONE;
        b.set(0, 3);
        assert!(a.covers(&b) && !b.covers(&a));
        assert_eq!(a.fits(&b), 1);
        assert_eq!(Gres::NONE.fits(&Gres::NONE), u32::MAX);
        assert_eq!(a.minus(&b).get(0), 1);
        assert_eq!(pick_units(0b0101, 4, 2), Some(0b1010));
        assert_eq!(pick_units(0b0101, 4, 3), None);
        let u = GresUnits {
            node: 0,
            kind: 0,
            units: 0b1010,
        };
        assert_eq!(u.indices(), vec![1, 3]);
    }

    #[test]
    fn layer_counts_per_node_over_time() {
        let mut cap = Gres::NONE;
        cap.set(0, 4);
        let mut used = Gres::NONE;
        used.set(0, 3);
        // Node 0: 4 GPUs, 3 used until 100. Node 1: none.
        let mut layer = GresLayer::new(
            0,
            1,
            vec![cap.minus(&used), Gres::NONE],
            &[cap, Gres::NONE],
            std::iter::once((0, 100, used)),
        );
        let mut two = Gres::NONE;
        two.set(0, 2);
        assert!(!layer.agg_covers(&two, 0, Some(10)));
        assert!(layer.agg_covers(&two, 100, Some(200)));
        assert_eq!(layer.free_over(0, 0, Some(50)).get(0), 1);
        assert!(layer.free_now_set(0).unwrap().contains(&0));
        assert!(layer.free_now_has(0, 0) && !layer.free_now_has(1, 0));
        assert!(layer.has(0, 0) && !layer.has(1, 0));
        let mut one = Gres::NONE;
        one.set(0, 1);
        layer.apply(0, &one, 0, Some(50), 1);
        assert!(layer.free_now_set(0).unwrap().is_empty());
        assert_eq!(layer.free_over(0, 50, Some(100)).get(0), 1);
        layer.apply(0, &one, 0, Some(50), -1);
        assert_eq!(layer.free_over(0, 0, Some(1)).get(0), 1);
    }
}
