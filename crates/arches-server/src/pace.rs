//! When the actor does its periodic work: backend observations (and the
//! checks that need a scan of every job: purges, timed wake-ups) every
//! [`TICK`], and scheduling iterations spaced so that a storm of events
//! (thousands of submissions a second) is coalesced into a few iterations
//! instead of one full iteration per turn. The gap between two iterations is
//! [`MIN_GAP`] or twice the last iteration's duration, whichever is larger,
//! so iterating never takes more than about a third of the actor's time.
//! Submissions are grouped too: once an input arrives the actor keeps
//! collecting while more keep coming ([`LINGER`]), so one commit serves all
//! the clients that were answered by the previous one.

use std::time::{Duration, Instant};

/// How often backend observations are collected.
pub const TICK: Duration = Duration::from_millis(250);

/// Shortest gap between two scheduling iterations caused by events.
pub const MIN_GAP: Duration = Duration::from_millis(50);

/// Longest gap: a long iteration never delays the next one more than this.
pub const MAX_GAP: Duration = Duration::from_secs(2);

/// How long the actor waits for one more input before it commits a turn.
pub const LINGER: Duration = Duration::from_micros(300);

/// Most time spent collecting the inputs of one turn.
pub const MAX_COLLECT: Duration = Duration::from_millis(3);

/// An iteration at least this long (a large queue) allocated enough
/// transient memory to be worth returning ([`trim_heap`]).
pub const TRIM_AFTER: Duration = Duration::from_millis(100);

/// After at least this many submissions the heap is trimmed as soon as
/// the actor is idle (a burst's request buffers and parses are scattered
/// between the jobs it keeps).
pub const TRIM_BURST: usize = 1000;

/// The actor's timers.
#[derive(Debug)]
pub struct Pace {
    last_iteration: Instant,
    last_tick: Instant,
    last_duration: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Pace::new(Instant::now())
    }
}

impl Pace {
    pub fn new(now: Instant) -> Pace {
        Pace {
            last_iteration: now - MAX_GAP,
            last_tick: now - TICK,
            last_duration: Duration::ZERO,
        }
    }

    /// The gap required after the last iteration.
    pub fn gap(&self) -> Duration {
        (self.last_duration * 2).clamp(MIN_GAP, MAX_GAP)
    }

    /// Whether an event-driven iteration may run now.
    pub fn may_iterate(&self, now: Instant) -> bool {
        now.duration_since(self.last_iteration) >= self.gap()
    }

    /// Time since the last iteration started.
    pub fn since_iteration(&self, now: Instant) -> Duration {
        now.duration_since(self.last_iteration)
    }

    /// Records an iteration that started at `start` and took `took`.
    pub fn iterated(&mut self, start: Instant, took: Duration) {
        self.last_iteration = start;
        self.last_duration = took;
    }

    /// Whether the periodic work is due; if so it counts as done.
    pub fn tick(&mut self, now: Instant) -> bool {
        if now.duration_since(self.last_tick) >= TICK {
            self.last_tick = now;
            true
        } else {
            false
        }
    }

    /// How long the actor may block waiting for input: until the next tick,
    /// or until the pending iteration may run (`wake`).
    pub fn wait(&self, now: Instant, wake: bool) -> Duration {
        let tick = TICK.saturating_sub(now.duration_since(self.last_tick));
        if wake {
            tick.min(
                self.gap()
                    .saturating_sub(now.duration_since(self.last_iteration)),
            )
        } else {
            tick
        }
    }
}

/// Allocations at least this large get their own mapping, returned to the
/// system as soon as they are freed ([`tune_allocator`]).
pub const MMAP_THRESHOLD: usize = 1024 * 1024;

/// Sets the allocator up for a daemon holding a large queue: big
/// transient buffers (a plan's decisions, a queue view, the vectors of an
/// iteration over 100,000 jobs) are mapped on their own instead of being
/// carved out of the heap between long-lived jobs, so freeing them gives
/// the memory back at once. glibc raises this threshold by itself after
/// the first large free (up to 32 MB), which then leaves every later plan
/// in the heap; a fixed value keeps it. Call once, early, in the daemon.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}

/// A large answer was sent (or dropped): trim the heap at the actor's
/// next tick ([`take_trim_request`]), once however many answers asked.
pub fn request_trim() {
    TRIM_REQUESTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a trim was asked for since the last call.
pub fn take_trim_request() -> bool {
    TRIM_REQUESTED.swap(false, std::sync::atomic::Ordering::Relaxed)
}

static TRIM_REQUESTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Returns freed heap memory to the system. The allocator keeps what a
/// large transient structure (the records read at start-up, an iteration
/// over 100,000 jobs, a full `showq` answer) used, so the resident size
/// would stay at its peak; trimming after such work keeps it near the
/// live data.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions; it only releases free
    // memory of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_are_spaced_by_their_duration() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        assert!(p.may_iterate(t0), "the first iteration is not delayed");
        p.iterated(t0, Duration::from_millis(10));
        assert_eq!(p.gap(), MIN_GAP);
        assert!(!p.may_iterate(t0 + Duration::from_millis(49)));
        assert!(p.may_iterate(t0 + MIN_GAP));
        p.iterated(t0, Duration::from_millis(400));
        assert_eq!(p.gap(), Duration::from_millis(800));
        p.iterated(t0, Duration::from_secs(5));
        assert_eq!(p.gap(), MAX_GAP);
    }

    #[test]
    fn waiting_stops_at_the_next_tick_or_pending_iteration() {
        let t0 = Instant::now();
        let mut p = Pace::new(t0);
        assert!(p.tick(t0));
        assert!(!p.tick(t0 + Duration::from_millis(10)));
        assert_eq!(p.wait(t0, false), TICK);
        p.iterated(t0, Duration::from_millis(1));
        assert_eq!(p.wait(t0, true), MIN_GAP);
        assert_eq!(p.wait(t0 + MIN_GAP, true), Duration::ZERO);
        assert!(p.tick(t0 + TICK));
    }
}
