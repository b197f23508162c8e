//! Run-time prediction for planning (Tsafrir, Etsion & Feitelson 2007,
//! "EASY++"): `RUNTIMEPREDICTION USERMEAN2` predicts a job's run time as the
//! mean of the same user's last two completed run times, rounded down, at
//! least 1 s and never above the walltime — as pyss's EASY++ does, only once
//! the user has two completed jobs (the walltime before). When a running job
//! outlives its prediction (`PREDICTIONCORRECTION`), the prediction is
//! extended stepwise (`STEPWISE`: +1 min, 5, 15, 30 min, 1, 2, 5, 10, 20, 50,
//! 100 h past the elapsed time, capped at the walltime) or replaced by the
//! walltime (`WALLTIME`, pyss's EASY++ correction). The walltime stays the
//! kill limit: predictions only go to `Job::estimate`, which the core plans
//! with (`PREDICTIONSCOPE RUNNING` restricts that to running jobs).
//!
//! A queued job's prediction is refreshed whenever its user's history
//! changes (pyss and the paper compute predictions at decision time, with the
//! most recent history, not once at submission).
//!
//! This is driver-side logic shared by the simulator loop
//! ([`crate::run::Simulation`]) and the daemon: both call [`Predictor`] at
//! submission, at completion and before each scheduling iteration. The
//! daemon keeps the history across restarts: it saves
//! [`Predictor::history_update`] in the store's metadata with the
//! completions that changed it (one commit), and at start-up
//! [`Predictor::rebuild`] restores it and folds in the stored completed jobs
//! that ended after it was saved (or all of them, when nothing was saved).

use std::collections::BTreeMap;

use arches_config::{PredictionCorrection, RuntimePrediction};
use arches_core::{Job, JobId, JobState, Secs, State, Time};

/// The stepwise extensions of an expired prediction, in seconds.
pub const EXTENSIONS: [Secs; 11] = [
    60,
    5 * 60,
    15 * 60,
    30 * 60,
    3600,
    2 * 3600,
    5 * 3600,
    10 * 3600,
    20 * 3600,
    50 * 3600,
    100 * 3600,
];

/// Per-user run-time history and per-job correction counts.
#[derive(Debug, Clone, Default)]
pub struct Predictor {
    enabled: bool,
    /// What an expired prediction becomes (`PREDICTIONCORRECTION`).
    correction: Correction,
    /// The user's last two completed run times, most recent last.
    history: BTreeMap<String, Vec<Secs>>,
    /// How many times a job's prediction was extended.
    extended: BTreeMap<JobId, usize>,
    /// Users whose history changed since the last [`Predictor::corrections`]
    /// (hashed, a fixed seed: only asked whether it holds each queued job's
    /// user).
    changed: std::collections::HashSet<String, foldhash::fast::FixedState>,
    /// The history changed since the last [`Predictor::history_update`].
    unsaved: bool,
    /// The caller reports every start ([`Predictor::track_starts`]).
    tracks_starts: bool,
    /// With `tracks_starts`: no running job's prediction expires before
    /// this time (from the last pass over the jobs, lowered by each
    /// [`Predictor::started`]); `None`: unknown (the next call looks).
    expiry_bound: Option<Time>,
}

/// What an expired prediction becomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Correction {
    /// Extended stepwise ([`EXTENSIONS`]).
    #[default]
    Stepwise,
    /// The walltime.
    Walltime,
}

/// Store metadata key of the saved history ([`Predictor::history_update`]).
pub const HISTORY_META_KEY: &str = "runtime_history";

/// The saved form of the history.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct SavedHistory {
    /// Completions up to this time are in `users`.
    at: Time,
    /// Each user's last two run times, most recent last.
    users: BTreeMap<String, Vec<Secs>>,
}

impl Predictor {
    /// A predictor for this `RUNTIMEPREDICTION` setting.
    pub fn new(kind: RuntimePrediction) -> Self {
        Predictor {
            enabled: kind == RuntimePrediction::UserMean2,
            ..Predictor::default()
        }
    }

    /// Sets what an expired prediction becomes (`PREDICTIONCORRECTION`).
    pub fn set_correction(&mut self, correction: PredictionCorrection) {
        self.correction = match correction {
            PredictionCorrection::Stepwise => Correction::Stepwise,
            PredictionCorrection::Walltime => Correction::Walltime,
        };
    }

    /// The caller reports every start ([`Predictor::started`]) and calls
    /// [`Predictor::forget_expiry_bound`] whenever a running job's
    /// expiry may move earlier otherwise (a resume, a resize): then
    /// [`Predictor::corrections`] passes over the jobs only when a
    /// prediction may have expired or a user's history changed (the
    /// simulator; the daemon does not).
    pub fn track_starts(&mut self) {
        self.tracks_starts = true;
        self.expiry_bound = None;
    }

    /// A job started at `start` with estimate `estimate`
    /// ([`Predictor::track_starts`]).
    pub fn started(&mut self, start: Time, estimate: Option<Secs>) {
        if let (Some(b), Some(e)) = (self.expiry_bound.as_mut(), estimate) {
            *b = (*b).min(start + e);
        }
    }

    /// The next [`Predictor::corrections`] looks at every running job.
    pub fn forget_expiry_bound(&mut self) {
        self.expiry_bound = None;
    }

    /// Whether predictions are made at all (`USERMEAN2`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether [`Predictor::corrections`] at any later time gives what it
    /// gives now, for the running jobs of `state`: prediction is off, or
    /// every expired prediction becomes its job's walltime
    /// (`PREDICTIONCORRECTION WALLTIME`, every running job with a
    /// prediction having a limit). A stepwise extension depends on when it
    /// is made. A driver may then skip the instants between two events at
    /// which nothing can start ([`arches_core::quiet`]).
    pub fn corrections_timeless(&self, state: &State) -> bool {
        !self.enabled
            || (self.correction == Correction::Walltime
                && state
                    .active()
                    .all(|j| j.estimate.is_none() || j.walltime.is_some()))
    }

    /// The estimate for a new job of `user` with limit `walltime`: `None`
    /// when prediction is off or nothing is known (plan with the walltime).
    pub fn predict(&self, user: &str, walltime: Option<Secs>) -> Option<Secs> {
        if !self.enabled {
            return None;
        }
        let past = self.history.get(user).filter(|h| h.len() == 2)?;
        let mean = (past[0] + past[1]) / 2;
        let mean = mean.max(1);
        Some(walltime.map_or(mean, |w| mean.min(w)))
    }

    /// Records a finished job's actual run time and forgets its corrections.
    pub fn completed(&mut self, job: JobId, user: &str, runtime: Secs) {
        self.extended.remove(&job);
        if !self.enabled {
            return;
        }
        // The user's name is copied only the first time it is seen.
        if !self.changed.contains(user) {
            self.changed.insert(user.to_string());
        }
        self.unsaved = true;
        let h = match self.history.get_mut(user) {
            Some(h) => h,
            None => self.history.entry(user.to_string()).or_default(),
        };
        h.push(runtime.max(0));
        if h.len() > 2 {
            h.remove(0);
        }
    }

    /// The history to save (JSON) when it changed since the last call;
    /// `now` is the time of the completions it includes.
    pub fn history_update(&mut self, now: Time) -> Option<String> {
        if !self.unsaved {
            return None;
        }
        self.unsaved = false;
        let saved = SavedHistory {
            at: now,
            users: self.history.clone(),
        };
        serde_json::to_string(&saved).ok()
    }

    /// Rebuilds the history at start-up: the saved history (`saved`, from
    /// [`Predictor::history_update`]; ignored when unreadable) and then,
    /// in completion order, every job of `state` that ran and exited (not
    /// cancelled) after it was saved — all of them when nothing was saved.
    /// Queued jobs' predictions are refreshed at the next
    /// [`Predictor::corrections`]. Returns how many completed jobs were
    /// folded in.
    pub fn rebuild(&mut self, state: &State, saved: Option<&str>) -> usize {
        if !self.enabled {
            return 0;
        }
        let saved = saved.and_then(|s| serde_json::from_str::<SavedHistory>(s).ok());
        let since = saved.as_ref().map_or(Time::MIN, |s| s.at);
        if let Some(s) = saved {
            self.history = s.users;
        }
        let mut done: Vec<(Time, JobId, &str, Secs)> = state
            .jobs()
            .filter(|j| j.state.is_finished())
            .filter_map(|j| {
                let c = j.completion?;
                let run = j.run.as_ref()?;
                let exited = matches!(c.code, arches_core::CompletionCode::Exit(_));
                (exited && c.time > since).then_some((
                    c.time,
                    j.id,
                    j.cred.user.as_str(),
                    (c.time - run.start_time).max(0),
                ))
            })
            .collect();
        done.sort_unstable();
        let folded = done.len();
        for (_, job, user, ran) in done {
            self.completed(job, user, ran);
        }
        self.changed.extend(self.history.keys().cloned());
        self.unsaved = folded > 0;
        folded
    }

    /// The corrected estimate of a job running since `start` whose estimate
    /// `estimate` has expired at `now`; `None` when it has not expired (or
    /// already equals the walltime, or prediction is off).
    pub fn correction(
        &mut self,
        job: JobId,
        start: Time,
        estimate: Option<Secs>,
        walltime: Option<Secs>,
        now: Time,
    ) -> Option<Secs> {
        let estimate = estimate?;
        if !self.enabled || start + estimate > now || walltime.is_some_and(|w| estimate >= w) {
            return None;
        }
        let elapsed = (now - start).max(0);
        let n = self.extended.entry(job).or_insert(0);
        let step = EXTENSIONS[(*n).min(EXTENSIONS.len() - 1)];
        *n += 1;
        let next = (elapsed + step).max(estimate + 1);
        match (self.correction, walltime) {
            (Correction::Walltime, Some(w)) => Some(w),
            // Without a walltime there is nothing else to plan with.
            (_, None) => Some(next),
            (Correction::Stepwise, Some(w)) => Some(next.min(w)),
        }
    }
}

impl Predictor {
    /// The corrected estimates of every running job of `state` whose
    /// prediction has expired at `now`, in job order, then the refreshed
    /// predictions of queued jobs whose user's history changed since the last
    /// call; the driver applies each as
    /// `Event::Modify { change: JobChange::Estimate(Some(secs)) }` before it
    /// runs a scheduling iteration.
    pub fn corrections(&mut self, state: &State, now: Time) -> Vec<(JobId, Secs)> {
        if !self.enabled {
            return Vec::new();
        }
        if self.changed.is_empty() {
            if self.expiry_bound.is_some_and(|b| now < b) {
                // No prediction can have expired (nothing else to refresh).
                return Vec::new();
            }
            let mut bound = Time::MAX;
            let mut expired = Vec::new();
            for j in state.jobs() {
                Self::expiry(j, now, &mut expired, &mut bound);
            }
            return self.corrected(expired, now, bound);
        }
        // One pass over the jobs for both lists (each in job order).
        let changed = std::mem::take(&mut self.changed);
        let mut expired = Vec::new();
        let mut refreshed = Vec::new();
        let mut bound = Time::MAX;
        for j in state.jobs() {
            Self::expiry(j, now, &mut expired, &mut bound);
            if j.run.is_some() || j.state.is_active() || j.state.is_finished() {
                continue;
            }
            if !changed.contains(j.cred.user.as_str()) {
                continue;
            }
            if let Some(p) = self.predict(&j.cred.user, j.walltime) {
                if j.estimate != Some(p) {
                    refreshed.push((j.id, p));
                }
            }
        }
        let mut out = self.corrected(expired, now, bound);
        out.append(&mut refreshed);
        out
    }

    /// A running job whose prediction expired at `now` goes to `expired`
    /// (id, start, estimate, walltime); one that has not lowers `bound` to
    /// its expiry.
    fn expiry(
        j: &Job,
        now: Time,
        expired: &mut Vec<(JobId, Time, Option<Secs>, Option<Secs>)>,
        bound: &mut Time,
    ) {
        if j.state != JobState::Running {
            return;
        }
        let (Some(run), Some(est)) = (j.run.as_ref(), j.estimate) else {
            return;
        };
        let start = run.start_time + run.suspended_secs;
        if start + est <= now {
            expired.push((j.id, start, j.estimate, j.walltime));
        } else {
            *bound = (*bound).min(start + est);
        }
    }

    /// Corrections of running jobs whose prediction expired at `now`; the
    /// corrected expiries lower `bound`, which becomes the expiry bound
    /// ([`Predictor::track_starts`]).
    fn corrected(
        &mut self,
        expired: Vec<(JobId, Time, Option<Secs>, Option<Secs>)>,
        now: Time,
        mut bound: Time,
    ) -> Vec<(JobId, Secs)> {
        let out = expired
            .into_iter()
            .filter_map(|(job, start, est, wall)| {
                let s = self.correction(job, start, est, wall, now)?;
                bound = bound.min(start + s);
                Some((job, s))
            })
            .collect();
        if self.tracks_starts {
            self.expiry_bound = Some(bound);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_history_plans_with_the_walltime_then_the_mean_of_the_last_two() {
        let mut p = Predictor::new(RuntimePrediction::UserMean2);
        assert_eq!(p.predict("alice", Some(3600)), None);
        // One completed job is not yet "the last two" (pyss waits for two).
        p.completed(1, "alice", 100);
        assert_eq!(p.predict("alice", Some(3600)), None);
        p.completed(2, "alice", 301);
        assert_eq!(p.predict("alice", Some(3600)), Some(200), "rounded down");
        p.completed(3, "alice", 1000);
        assert_eq!(p.predict("alice", Some(3600)), Some(650));
        // Never above the walltime, at least 1 s; other users are separate.
        assert_eq!(p.predict("alice", Some(500)), Some(500));
        p.completed(4, "bob", 0);
        p.completed(5, "bob", 1);
        assert_eq!(p.predict("bob", Some(500)), Some(1));
        assert_eq!(p.predict("carol", Some(500)), None);
    }

    #[test]
    fn walltime_correction_plans_with_the_walltime_once_a_prediction_expires() {
        let mut p = Predictor::new(RuntimePrediction::UserMean2);
        p.set_correction(PredictionCorrection::Walltime);
        assert_eq!(p.correction(7, 1000, Some(100), Some(10_000), 1099), None);
        assert_eq!(
            p.correction(7, 1000, Some(100), Some(10_000), 1100),
            Some(10_000)
        );
        // At the walltime: nothing more to correct.
        assert_eq!(
            p.correction(7, 1000, Some(10_000), Some(10_000), 11_000),
            None
        );
        // No walltime: extended stepwise (nothing else to plan with).
        assert_eq!(p.correction(8, 0, Some(10), None, 10), Some(70));
    }

    #[test]
    fn disabled_predicts_nothing() {
        let mut p = Predictor::new(RuntimePrediction::None);
        p.completed(1, "alice", 100);
        assert_eq!(p.predict("alice", Some(3600)), None);
        assert_eq!(p.correction(1, 0, Some(10), Some(3600), 50), None);
    }

    #[test]
    fn expired_predictions_grow_stepwise_up_to_the_walltime() {
        let mut p = Predictor::new(RuntimePrediction::UserMean2);
        // Not expired yet.
        assert_eq!(p.correction(7, 1000, Some(100), Some(10_000), 1099), None);
        assert_eq!(
            p.correction(7, 1000, Some(100), Some(10_000), 1100),
            Some(160)
        );
        assert_eq!(
            p.correction(7, 1000, Some(160), Some(10_000), 1160),
            Some(160 + 300)
        );
        assert_eq!(
            p.correction(7, 1000, Some(460), Some(10_000), 1460),
            Some(460 + 900)
        );
        assert_eq!(
            p.correction(7, 1000, Some(1360), Some(2000), 2360),
            Some(2000)
        );
        // At the walltime: nothing more to extend.
        assert_eq!(p.correction(7, 1000, Some(2000), Some(2000), 3000), None);
        // A completion resets the job's step count.
        p.completed(7, "u", 2000);
        assert_eq!(p.correction(7, 0, Some(10), None, 10), Some(70));
    }

    #[test]
    fn corrections_cover_only_running_jobs_past_their_prediction() {
        use arches_core::{Event, Job, Node, Request, StartKind};
        let mut state = State::new(vec![Node::new("n1", 4, 0)]);
        for (id, est) in [(1, 100), (2, 1000)] {
            let mut j = Job::new(id, "u", Request::procs(1), Some(5000), 0);
            j.estimate = Some(est);
            state.apply(Event::submit(j), 0).unwrap();
            state
                .apply(
                    Event::Start {
                        job: id,
                        alloc: vec![arches_core::Alloc {
                            node: 0,
                            tasks: 1,
                            procs: 1,
                            mem_mb: 0,
                            gres: Default::default(),
                        }],
                        kind: StartKind::Priority,
                    },
                    0,
                )
                .unwrap();
        }
        let mut idle = Job::new(3, "u", Request::procs(1), Some(5000), 0);
        idle.estimate = Some(1);
        state.apply(Event::submit(idle), 0).unwrap();
        let mut p = Predictor::new(RuntimePrediction::UserMean2);
        assert_eq!(p.corrections(&state, 150), vec![(1, 210)]);
        assert!(Predictor::new(RuntimePrediction::None)
            .corrections(&state, 150)
            .is_empty());
        // A completion of the user's job refreshes the queued job's
        // prediction once (running jobs keep theirs until they expire).
        // (Job 1 is reported again: the test does not apply corrections.)
        let idle_ones = |c: Vec<(JobId, Secs)>| -> Vec<(JobId, Secs)> {
            c.into_iter().filter(|(j, _)| *j == 3).collect()
        };
        p.completed(9, "u", 40);
        assert_eq!(idle_ones(p.corrections(&state, 160)), vec![], "one job");
        p.completed(11, "u", 60);
        assert_eq!(idle_ones(p.corrections(&state, 160)), vec![(3, 50)]);
        assert_eq!(idle_ones(p.corrections(&state, 170)), vec![]);
        // Another user's history does not touch it.
        p.completed(10, "v", 7);
        assert_eq!(idle_ones(p.corrections(&state, 180)), vec![]);
    }

    /// A predictor told of every start gives the same corrections as one
    /// that looks at every running job each time (it skips the look only
    /// while no prediction can have expired).
    #[test]
    fn tracked_starts_give_the_same_corrections() {
        use arches_core::state::JobChange;
        use arches_core::{Event, Job, Node, Request};
        let start = |state: &mut State, id: JobId, est: Secs, at: Time| {
            let mut j = Job::new(id, "u", Request::procs(1), Some(5000), at);
            j.estimate = Some(est);
            submit_and_start(state, j, at, at);
        };
        let mut state = State::new(vec![Node::new("n1", 8, 0)]);
        let mut tracked = Predictor::new(RuntimePrediction::UserMean2);
        tracked.track_starts();
        let mut every = Predictor::new(RuntimePrediction::UserMean2);
        for (id, est) in [(1, 100), (2, 1000)] {
            start(&mut state, id, est, 0);
            tracked.started(0, Some(est));
        }
        let mut all = Vec::new();
        for now in (0..400).step_by(5) {
            if now == 200 {
                // A later start with a short prediction lowers the bound.
                start(&mut state, 4, 5, now);
                tracked.started(now, Some(5));
            }
            let c = tracked.corrections(&state, now);
            assert_eq!(c, every.corrections(&state, now), "at {now}");
            for &(job, secs) in &c {
                let change = JobChange::Estimate(Some(secs));
                state.apply(Event::Modify { job, change }, now).unwrap();
            }
            all.extend(c);
        }
        assert_eq!(all, vec![(1, 160), (1, 460), (4, 65), (4, 365)]);
    }

    /// Submits `j` at `submit` and starts it at `at` on one processor of
    /// node 0.
    fn submit_and_start(state: &mut State, j: arches_core::Job, submit: Time, at: Time) {
        use arches_core::{Alloc, Event, StartKind};
        let job = j.id;
        state.apply(Event::submit(j), submit).unwrap();
        let alloc = vec![Alloc {
            node: 0,
            tasks: 1,
            procs: 1,
            mem_mb: 0,
            gres: Default::default(),
        }];
        let kind = StartKind::Priority;
        state.apply(Event::Start { job, alloc, kind }, at).unwrap();
    }

    /// A state with finished jobs (id, user, start, end, exited) and one
    /// queued job of alice.
    fn finished_state(jobs: &[(JobId, &str, Time, Time, bool)]) -> State {
        use arches_core::{CompletionCode, Event, Job, Node, Request};
        let mut state = State::new(vec![Node::new("n1", 4, 0)]);
        for &(id, user, start, end, exited) in jobs {
            let j = Job::new(id, user, Request::procs(1), Some(5000), 0);
            submit_and_start(&mut state, j, 0, start);
            let code = if exited {
                CompletionCode::Exit(0)
            } else {
                CompletionCode::Cancelled
            };
            state.apply(Event::Finish { job: id, code }, end).unwrap();
        }
        let queued = Job::new(100, "alice", Request::procs(1), Some(5000), 0);
        state.apply(Event::submit(queued), 0).unwrap();
        state
    }

    #[test]
    fn history_is_rebuilt_from_completed_jobs_and_the_saved_history() {
        let state = finished_state(&[
            (1, "alice", 0, 100, true),
            (2, "alice", 50, 350, true),
            (3, "alice", 400, 410, false), // cancelled: not history
            (4, "bob", 0, 40, true),
        ]);
        // Nothing saved: every completed job, in completion order.
        let mut p = Predictor::new(RuntimePrediction::UserMean2);
        assert_eq!(p.rebuild(&state, None), 3);
        assert_eq!(p.predict("alice", Some(3600)), Some(200));
        assert_eq!(p.predict("bob", Some(3600)), None, "one job");
        // The queued job's prediction is refreshed at the next iteration.
        assert_eq!(p.corrections(&state, 500), vec![(100, 200)]);
        // Saved at t=120 (alice: 100, 20): only job 2 (ended 350) is newer.
        let saved = r#"{"at":120,"users":{"alice":[100,20],"carol":[7,9]}}"#;
        let mut p = Predictor::new(RuntimePrediction::UserMean2);
        assert_eq!(p.rebuild(&state, Some(saved)), 1);
        assert_eq!(p.predict("alice", Some(3600)), Some(160));
        assert_eq!(p.predict("carol", Some(3600)), Some(8));
        assert_eq!(p.predict("bob", Some(3600)), None, "ended before the save");
        // What it saves round-trips.
        let text = p.history_update(600).expect("changed");
        assert_eq!(p.history_update(600), None, "saved once");
        let mut q = Predictor::new(RuntimePrediction::UserMean2);
        assert_eq!(q.rebuild(&state, Some(&text)), 0);
        assert_eq!(q.predict("alice", Some(3600)), Some(160));
        // Off: nothing rebuilt.
        let mut off = Predictor::new(RuntimePrediction::None);
        assert_eq!(off.rebuild(&state, None), 0);
        assert_eq!(off.history_update(600), None);
    }

    /// Start of job 4 (4 processors, waiting for job 3) when carol's job 5,
    /// predicted 10 s from her history but running 300 s, is a candidate to
    /// backfill beside job 3.
    fn reserved_start(scope_running: bool, correction: PredictionCorrection) -> Time {
        guarded_start(scope_running, correction, None)
    }

    /// [`reserved_start`] with `PREDICTIONGUARD`.
    fn guarded_start(
        scope_running: bool,
        correction: PredictionCorrection,
        guard: Option<Secs>,
    ) -> Time {
        use crate::{machine, SimJob, Simulation};
        let job = |id, submit, procs, wall, run, user: &str| {
            let mut j = SimJob::new(id, submit, procs, wall, run);
            j.user = user.to_string();
            j
        };
        let jobs = vec![
            job(1, 0, 1, 1000, 10, "carol"),
            job(2, 10, 1, 1000, 10, "carol"),
            job(3, 20, 3, 100, 100, "dave"),
            job(4, 21, 4, 100, 100, "bob"),
            job(5, 22, 1, 500, 300, "carol"),
        ];
        let policy = arches_core::Policy {
            estimates_running_only: scope_running,
            prediction_guard: guard,
            ..arches_core::Policy::default()
        };
        let mut sim = Simulation::new(machine(4, 4), policy, jobs);
        sim.set_runtime_prediction(RuntimePrediction::UserMean2);
        sim.set_prediction_correction(correction);
        sim.run().expect("replay");
        sim.records()
            .iter()
            .find(|r| r.id == 4)
            .expect("job 4")
            .start
    }

    #[test]
    fn prediction_scope_running_keeps_backfill_from_delaying_a_reservation() {
        // ALL: job 5 is planned to end at 32, backfills at 22, outlives its
        // prediction and holds a processor until 322: job 4 starts then.
        assert_eq!(reserved_start(false, PredictionCorrection::Stepwise), 322);
        assert_eq!(reserved_start(false, PredictionCorrection::Walltime), 322);
        // RUNNING: job 5 is planned with its 500 s walltime, which would
        // cross job 4's reservation at 120: it waits, job 4 starts on time.
        assert_eq!(reserved_start(true, PredictionCorrection::Stepwise), 120);
    }

    #[test]
    fn prediction_guard_protects_a_reservation_that_waited_it() {
        // Job 4 (submitted at 21) has waited 1 s when job 5 arrives at 22:
        // with a 1 s guard the iteration plans with walltimes, job 5's 500 s
        // would cross job 4's reservation at 120, and job 4 starts on time.
        let guarded = |g| guarded_start(false, PredictionCorrection::Walltime, Some(g));
        assert_eq!(guarded(1), 120);
        // A 10 s guard is not reached yet: EASY++ backfills job 5 (322).
        assert_eq!(guarded(10), 322);
    }

    /// Start time of each finished job of a replay on 4 processors.
    fn starts(kind: RuntimePrediction) -> Vec<(JobId, Time)> {
        use crate::{machine, SimJob, Simulation};
        let job = |id, submit, procs, wall, run, user: &str| {
            let mut j = SimJob::new(id, submit, procs, wall, run);
            j.user = user.to_string();
            j
        };
        let jobs = vec![
            // alice's history: two 10 s jobs, so her next job is predicted 10 s.
            job(1, 0, 1, 1000, 10, "alice"),
            job(2, 20, 1, 1000, 10, "alice"),
            // ...but it runs 500 s.
            job(3, 40, 3, 1000, 500, "alice"),
            // bob's 4-processor job waits for job 3 (reservation).
            job(4, 41, 4, 100, 100, "bob"),
            // carol's 100 s job backfills only if job 3 is planned to run long.
            job(5, 42, 1, 100, 100, "carol"),
        ];
        let mut sim = Simulation::new(machine(4, 4), arches_core::Policy::default(), jobs);
        sim.set_runtime_prediction(kind);
        sim.run().expect("replay");
        let mut v: Vec<(JobId, Time)> = sim.records().iter().map(|r| (r.id, r.start)).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn predictions_change_the_plan_and_expired_ones_are_extended() {
        // Planning with the walltime: job 3 ends at 1040 for the planner, so
        // job 5 backfills at once.
        let none = starts(RuntimePrediction::None);
        assert_eq!(none, vec![(1, 0), (2, 20), (3, 40), (4, 540), (5, 42)]);
        // USERMEAN2 predicts job 3 ends at 50: job 5 would delay job 4's
        // reservation, so it waits. At 50 the prediction expires and is
        // extended by 1 min (end 110, job 5 still too long); at 110 by 5 min
        // (end 410): job 5 (110..210) now backfills.
        let predicted = starts(RuntimePrediction::UserMean2);
        assert_eq!(
            predicted,
            vec![(1, 0), (2, 20), (3, 40), (4, 540), (5, 110)]
        );
    }

    /// Start times on 4 processors of two backfill candidates: A (90 s,
    /// higher priority) and B (10 s); only one fits before job 2's
    /// reservation at 100.
    fn candidate_starts(shortest_first: bool) -> Vec<(JobId, Time)> {
        use crate::{machine, SimJob, Simulation};
        let jobs = vec![
            SimJob::new(1, 0, 3, 100, 100),
            SimJob::new(10, 0, 1, 5, 5),
            SimJob::new(2, 1, 4, 100, 100),
            SimJob::new(3, 2, 1, 90, 90),
            SimJob::new(4, 3, 1, 10, 10),
        ];
        let policy = arches_core::Policy {
            bf_shortest_first: shortest_first,
            ..arches_core::Policy::default()
        };
        let mut sim = Simulation::new(machine(4, 4), policy, jobs);
        sim.run().expect("replay");
        let mut v: Vec<(JobId, Time)> = sim
            .records()
            .iter()
            .filter(|r| r.id == 3 || r.id == 4)
            .map(|r| (r.id, r.start))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn shortest_first_backfill_prefers_the_short_candidate() {
        assert_eq!(candidate_starts(false), vec![(3, 5), (4, 200)]);
        assert_eq!(candidate_starts(true), vec![(3, 200), (4, 5)]);
    }
}
