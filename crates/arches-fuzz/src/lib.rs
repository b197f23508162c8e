//! Bounded-time fuzzing of Arches' input parsers, run by `cargo test`.
//!
//! Why proptest and not cargo-fuzz: libFuzzer needs a nightly toolchain and
//! an instrumented rebuild of every dependency (tokio, axum, SQLite...),
//! many minutes on the 2-core CI machine before the first input; proptest
//! is already a dependency, runs on stable inside the ordinary test suite,
//! shrinks a failure to a minimal input, and replays it exactly from
//! `PROPTEST_RNG_SEED` (`.ci/run` fixes the seed). The generators are
//! structure-aware (valid inputs mutated with hostile values: huge and
//! negative numbers, control characters, NULs, malformed syntax) besides
//! raw bytes, which is what finds the deep bugs a byte-level fuzzer needs
//! hours for.
//!
//! [`fuzz`] first replays every saved input of `regressions/<target>/`
//! (the minimal inputs of crashes found so far: they stay as regression
//! tests), then explores new inputs until the time budget is spent:
//! `ARCHES_FUZZ_SECS` seconds per target (default 5; `.ci/run` sets it).
//! A failure panics with the minimal input in the form to save as a new
//! regression file.

use std::fmt::Debug;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Environment variable: the seconds each target explores.
pub const BUDGET_VAR: &str = "ARCHES_FUZZ_SECS";

/// Seconds each target explores when [`BUDGET_VAR`] is not set.
pub const DEFAULT_SECS: u64 = 5;

/// The exploration budget of one target.
pub fn budget() -> Duration {
    let secs = std::env::var(BUDGET_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_SECS);
    Duration::from_secs(secs)
}

/// The saved inputs of `target` (each file one JSON value of its input
/// type), by file name.
pub fn regressions<T: DeserializeOwned>(target: &str) -> Vec<(PathBuf, T)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
            let v = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not a {target} input: {e}", p.display()));
            (p, v)
        })
        .collect()
}

/// Replays the regressions of `target`, then runs `check` on inputs drawn
/// from the strategy `strategy()` builds until the budget is spent; panics
/// on the first failure (a returned error or a panic inside `check`) with
/// the minimal input.
pub fn fuzz<T, S>(
    target: &str,
    strategy: impl FnOnce() -> S + Send,
    check: impl Fn(&T) -> Result<(), String> + Sync,
) where
    S: Strategy<Value = T>,
    T: Serialize + DeserializeOwned + Debug + Clone,
{
    // Deep generator trees recurse more than a test thread's stack allows
    // in debug builds: explore on a thread with room.
    std::thread::scope(|scope| {
        let run = std::thread::Builder::new()
            .name(format!("fuzz-{target}"))
            .stack_size(256 << 20)
            .spawn_scoped(scope, || explore(target, &strategy(), &check))
            .expect("fuzz thread");
        if let Err(panic) = run.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

fn explore<T, S>(target: &str, strategy: &S, check: &(impl Fn(&T) -> Result<(), String> + Sync))
where
    S: Strategy<Value = T>,
    T: Serialize + DeserializeOwned + Debug + Clone,
{
    for (path, input) in regressions::<T>(target) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&input)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(why)) => panic!("regression {} fails again: {why}", path.display()),
            Err(_) => panic!("regression {} panics again", path.display()),
        }
    }
    let config = Config {
        failure_persistence: None,
        max_shrink_time: 60_000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let budget = budget();
    let deadline = Instant::now() + budget;
    let mut cases = 0u64;
    loop {
        let tree = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("{target}: cannot generate an input: {e}"));
        match runner.run_one(tree, |v| check(&v).map_err(TestCaseError::fail)) {
            Ok(_) => {}
            Err(TestError::Fail(why, input)) => panic!(
                "fuzz target {target} failed: {why}\nminimal input {input:?}\n\
                 save as crates/arches-fuzz/regressions/{target}/<name>.json:\n{}",
                serde_json::to_string(&input).unwrap_or_default()
            ),
            Err(TestError::Abort(why)) => panic!("fuzz target {target} aborted: {why}"),
        }
        cases += 1;
        if Instant::now() >= deadline {
            break;
        }
    }
    eprintln!("fuzz {target}: {cases} inputs in {budget:?}, no failure");
}
