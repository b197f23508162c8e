//! Job expressions: the ONE place where what a user typed to name jobs
//! becomes job ids — for every job action (mjobctl, canceljob, sethold,
//! releasehold, runjob, setspri) and every job query (checkjob, mjobctl -q,
//! mdiag -j, showstart).
//!
//! An expression is a comma list of tokens (commas inside `[]`, `{}` or
//! `()` belong to a regular expression). A token is
//!
//! * `ALL`: every job in scope;
//! * a job id: `17`, `Moab.17` (`<scheduler>.<id>`) or `17.<host>` (an RM id);
//! * `jobname:<NAME>`: the jobs with that name;
//! * a regular expression (Moab: "quote it", `"80.*"`, `"74[3-5]"`), when
//!   the token holds a regex metacharacter or `USEJOBREGEX` is set. It must
//!   match a job's whole id (`802`) or whole `<scheduler>.<id>` — anchored,
//!   so `80.*` never reaches job 1802, and never a single "nearby" job.
//!
//! Then `-n NAME` and the `-w` constraints ([`arches_api::JobSelect`])
//! keep the jobs that satisfy all of them; with no token they select among
//! every job in scope. A token that matches nothing is an error
//! (`ERROR:  invalid job specified (<token>)`), and so is a selection that
//! leaves nothing (`ERROR:    no jobs selected`). Each job is listed once,
//! where it is first named, in the order named (a regex or `ALL` yields
//! its jobs in id order).
//!
//! Scope: finished jobs only when asked for ([`Scope::completed`], or a
//! `-w` constraint about completion); for a non-administrator `ALL`,
//! regular expressions and selections reach only the caller's own jobs
//! (an id of someone else's job is still resolved, and the action then
//! refuses it by name).
//!
//! Job arrays (`ID[INDEX]`) extend [`exact`]: that is where a token naming
//! specific jobs is recognised.

use arches_api::JobSelect;
use arches_core::{Job, JobId, State, Time};

/// Which jobs a resolution may reach.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// Include finished jobs (checkjob, `mjobctl -q diag --flags=completed`,
    /// `mjobctl -R` of a completed job).
    pub completed: bool,
    /// `Some(user)`: the caller is not an administrator; `ALL`, regexes and
    /// `-n`/`-w` selections reach only this user's jobs.
    pub owner: Option<&'a str>,
    /// `USEJOBREGEX TRUE`: every token (but `ALL`) is a regular expression.
    pub regex_always: bool,
    /// The scheduler name of `<scheduler>.<id>` ids.
    pub scheduler: &'a str,
}

/// The jobs an expression names, the tokens that named nothing, and other
/// errors (bad regex or constraint, nothing selected), as complete lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub ids: Vec<JobId>,
    /// The jobs named by their id (not reached through `ALL`, a regular
    /// expression or a selection): a read route refuses those the caller
    /// may not see by name.
    pub named: std::collections::BTreeSet<JobId>,
    pub unmatched: Vec<String>,
    pub errors: Vec<String>,
}

impl Selection {
    /// Every error as a line: `ERROR:  invalid job specified (<token>)`
    /// per unmatched token, then the others.
    pub fn error_lines(&self) -> Vec<String> {
        self.unmatched
            .iter()
            .map(|t| invalid_job(t))
            .chain(self.errors.iter().cloned())
            .collect()
    }
}

/// The message of a token that names no job.
pub fn invalid_job(token: &str) -> String {
    format!("ERROR:  invalid job specified ({token})")
}

/// The message of a selection that leaves no job.
pub const NO_JOBS_SELECTED: &str = "ERROR:    no jobs selected";

/// The message of an action without any expression or selection.
pub const NO_EXPRESSION: &str = "ERROR:  no job expression specified";

/// Largest compiled regular expression accepted (bytes; the regex crate
/// matches in linear time, this bounds its memory).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Resolves job expressions plus a `-n`/`-w` selection against `state`.
pub fn select(state: &State, exprs: &[String], sel: &JobSelect, scope: &Scope) -> Selection {
    let mut out = Selection::default();
    let filters = match Filters::parse(sel) {
        Ok(f) => f,
        Err(e) => {
            out.errors.push(e);
            return out;
        }
    };
    // A constraint about completion reaches finished jobs.
    let scope = Scope {
        completed: scope.completed || filters.wants_finished(),
        ..*scope
    };
    let tokens: Vec<&str> = exprs.iter().flat_map(|e| split_tokens(e)).collect();
    let mut named: Vec<JobId> = Vec::new();
    if tokens.is_empty() {
        if filters.is_empty() {
            out.errors.push(NO_EXPRESSION.to_string());
            return out;
        }
        named.extend(state.jobs().filter(|j| scope.reaches(j)).map(|j| j.id));
    }
    for tok in tokens {
        match resolve_token(state, tok, &scope) {
            Ok(ids) if ids.is_empty() => out.unmatched.push(tok.to_string()),
            Ok(ids) => {
                if !scope.regex_always && parse_id(tok).is_some() {
                    out.named.extend(ids.iter().copied());
                }
                named.extend(ids)
            }
            Err(e) => out.errors.push(e),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    named.retain(|id| seen.insert(*id));
    let before = named.len();
    named.retain(|id| state.job(*id).is_some_and(|j| filters.matches(state, j)));
    if named.is_empty()
        && (before > 0 || !filters.is_empty())
        && out.errors.is_empty()
        && out.unmatched.is_empty()
    {
        out.errors.push(NO_JOBS_SELECTED.to_string());
    }
    out.ids = named;
    out
}

/// Splits the job-array forms (`ID[INDEX]`, `ID[]`, an array's `ID`:
/// [`crate::arrays::resolve`]) off the tokens of `exprs`, before any of them
/// could be taken for a regular expression (`5[3]` is sub-job 3 of array 5,
/// never job 53). Returns them with their text, and the other tokens.
pub fn split_arrays(
    state: &State,
    exprs: &[String],
) -> (Vec<(String, crate::arrays::Target)>, Vec<String>) {
    let mut arrays = Vec::new();
    let mut rest = Vec::new();
    for tok in exprs.iter().flat_map(|e| split_tokens(e)) {
        match crate::arrays::resolve(state, tok) {
            Some(t) => arrays.push((tok.to_string(), t)),
            None => rest.push(tok.to_string()),
        }
    }
    (arrays, rest)
}

/// Resolves one job id as typed, strictly (`17`, `Moab.17`, `17.host`):
/// showstart and other single-job queries. A regular expression is never an
/// id here.
pub fn exact_id(text: &str) -> Option<JobId> {
    parse_id(text.trim())
}

impl Scope<'_> {
    /// Whether `ALL`, a regex or a selection reaches this job.
    fn reaches(&self, j: &Job) -> bool {
        (self.completed || !j.state.is_finished()) && self.owner.is_none_or(|u| j.cred.user == u)
    }
}

/// Splits an expression on the commas that are not inside `[]`, `{}` or `()`.
pub fn split_tokens(expr: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in expr.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&expr[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&expr[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

/// The jobs one token names (empty: none), or an error line.
fn resolve_token(state: &State, tok: &str, scope: &Scope) -> Result<Vec<JobId>, String> {
    if tok.eq_ignore_ascii_case("ALL") {
        return Ok(state
            .jobs()
            .filter(|j| scope.reaches(j))
            .map(|j| j.id)
            .collect());
    }
    if !scope.regex_always {
        if let Some(ids) = exact(state, tok, scope) {
            return Ok(ids);
        }
    }
    if scope.regex_always || is_regex(tok) {
        let re = regex::RegexBuilder::new(&format!("^(?:{tok})$"))
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                let why = e.to_string();
                let why = why.lines().last().unwrap_or("").trim();
                format!("ERROR:  invalid job expression '{tok}' ({why})")
            })?;
        return Ok(state
            .jobs()
            .filter(|j| scope.reaches(j))
            .filter(|j| {
                re.is_match(&j.id.to_string())
                    || re.is_match(&format!("{}.{}", scope.scheduler, j.id))
            })
            .map(|j| j.id)
            .collect());
    }
    Ok(Vec::new())
}

/// A token that names specific jobs: a job id (`17`, `Moab.17`, `17.host`)
/// or `jobname:NAME`. `None`: the token is not of these forms (it may be a
/// regular expression). `Some(empty)`: of these forms, but no such job in
/// scope.
pub fn exact(state: &State, tok: &str, scope: &Scope) -> Option<Vec<JobId>> {
    if let Some(name) = tok.strip_prefix("jobname:") {
        return Some(
            state
                .jobs()
                .filter(|j| scope.reaches(j) && j.name == name)
                .map(|j| j.id)
                .collect(),
        );
    }
    let id = parse_id(tok)?;
    Some(
        state
            .job(id)
            .filter(|j| scope.completed || !j.state.is_finished())
            .map(|j| vec![j.id])
            .unwrap_or_default(),
    )
}

/// `17`, `<name>.17` or `17.<host>`; nothing else (a regex metacharacter
/// anywhere makes it not an id).
fn parse_id(t: &str) -> Option<JobId> {
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let host = |s: &str| !s.is_empty() && s.split('.').all(word);
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok();
    }
    let (a, b) = t.split_once('.')?;
    if b.bytes().all(|c| c.is_ascii_digit()) && word(a) {
        return b.parse().ok();
    }
    if a.bytes().all(|c| c.is_ascii_digit()) && host(b) {
        return a.parse().ok();
    }
    None
}

/// Whether a token holds a regular-expression metacharacter.
fn is_regex(t: &str) -> bool {
    t.contains([
        '*', '+', '?', '[', ']', '(', ')', '|', '^', '$', '{', '}', '\\',
    ])
}

/// A string attribute of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attr {
    User,
    Group,
    Account,
    Class,
    Qos,
    State,
    Partition,
    JobName,
}

/// A time attribute of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeAttr {
    Completion,
    Start,
    Submit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Filter {
    Is(Attr, String),
    Time(TimeAttr, Cmp, Time),
}

/// The parsed `-n` and `-w` of a selection.
#[derive(Debug, Default)]
struct Filters {
    name: Option<String>,
    list: Vec<Filter>,
}

/// What `-w` accepts, for the error message.
const KNOWN: &str = "user, group, account, class, qos, state, partition, jobname, \
CompletionTime, StartTime, SubmitTime";

impl Filters {
    fn parse(sel: &JobSelect) -> Result<Filters, String> {
        let mut f = Filters {
            name: sel.name.clone(),
            list: Vec::new(),
        };
        for c in &sel.constraints {
            f.list.push(parse_constraint(c)?);
        }
        Ok(f)
    }

    fn is_empty(&self) -> bool {
        self.name.is_none() && self.list.is_empty()
    }

    fn wants_finished(&self) -> bool {
        self.list.iter().any(|f| match f {
            Filter::Time(TimeAttr::Completion, ..) => true,
            Filter::Is(Attr::State, s) => ["completed", "removed", "vacated"]
                .iter()
                .any(|x| s.eq_ignore_ascii_case(x)),
            _ => false,
        })
    }

    fn matches(&self, state: &State, j: &Job) -> bool {
        self.name.as_ref().is_none_or(|n| j.name == *n)
            && self.list.iter().all(|f| match f {
                Filter::Is(a, v) => {
                    attr_value(state, j, *a).is_some_and(|h| h.eq_ignore_ascii_case(v))
                }
                Filter::Time(a, cmp, t) => {
                    let have = match a {
                        TimeAttr::Completion => j.completion.map(|c| c.time),
                        TimeAttr::Start => j.run.as_ref().map(|r| r.start_time),
                        TimeAttr::Submit => Some(j.submit_time),
                    };
                    have.is_some_and(|h| match cmp {
                        Cmp::Lt => h < *t,
                        Cmp::Le => h <= *t,
                        Cmp::Eq => h == *t,
                        Cmp::Ge => h >= *t,
                        Cmp::Gt => h > *t,
                    })
                }
            })
    }
}

fn attr_value(state: &State, j: &Job, a: Attr) -> Option<String> {
    match a {
        Attr::User => Some(j.cred.user.to_string()),
        Attr::Group => Some(j.cred.group.to_string()),
        Attr::Account => j.cred.account.as_deref().map(str::to_string),
        Attr::Class => j.cred.class.as_deref().map(str::to_string),
        Attr::Qos => j.cred.qos.as_deref().map(str::to_string),
        Attr::State => Some(j.display_state().as_str().to_string()),
        Attr::JobName => Some(j.name.to_string()),
        Attr::Partition => j
            .run
            .as_ref()
            .filter(|_| j.state.is_active())
            .and_then(|r| r.alloc.first())
            .and_then(|a| state.node(a.node))
            .map(|n| n.partition.clone())
            .or_else(|| j.req.partition.clone()),
    }
}

/// One `-w` constraint: `ATTR=VALUE`, or a time attribute compared with
/// `<`, `<=`, `=`, `>=`, `>` to epoch seconds.
fn parse_constraint(c: &str) -> Result<Filter, String> {
    let bad = |why: &str| format!("ERROR:  invalid constraint '{c}' ({why})");
    let pos = c
        .find(['<', '>', '='])
        .ok_or_else(|| bad("expected ATTR=VALUE"))?;
    let (attr, rest) = c.split_at(pos);
    let (cmp, value) = if let Some(v) = rest.strip_prefix("<=") {
        (Cmp::Le, v)
    } else if let Some(v) = rest.strip_prefix(">=") {
        (Cmp::Ge, v)
    } else if let Some(v) = rest.strip_prefix('<') {
        (Cmp::Lt, v)
    } else if let Some(v) = rest.strip_prefix('>') {
        (Cmp::Gt, v)
    } else {
        (Cmp::Eq, &rest[1..])
    };
    let attr = attr.trim().to_ascii_lowercase();
    let value = value.trim();
    if value.is_empty() {
        return Err(bad("no value"));
    }
    let time = match attr.as_str() {
        "completiontime" => Some(TimeAttr::Completion),
        "starttime" => Some(TimeAttr::Start),
        "submittime" | "submissiontime" => Some(TimeAttr::Submit),
        _ => None,
    };
    if let Some(t) = time {
        let at: Time = value
            .parse()
            .map_err(|_| bad("the time must be epoch seconds"))?;
        return Ok(Filter::Time(t, cmp, at));
    }
    if cmp != Cmp::Eq {
        return Err(bad("only time attributes compare with < or >"));
    }
    let a = match attr.as_str() {
        "user" => Attr::User,
        "group" => Attr::Group,
        "account" | "acct" => Attr::Account,
        "class" | "queue" => Attr::Class,
        "qos" => Attr::Qos,
        "state" => Attr::State,
        "partition" => Attr::Partition,
        "jobname" | "name" => Attr::JobName,
        _ => {
            return Err(format!(
                "ERROR:  unsupported constraint '{attr}' (one of {KNOWN})"
            ))
        }
    };
    Ok(Filter::Is(a, value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arches_core::{Event, JobState, Node, Request};

    fn state(ids: &[(u64, &str, &str)]) -> State {
        let mut s = State::new(vec![Node::new("n1", 4, 1000)]);
        for (id, user, name) in ids {
            let mut j = Job::new(*id, user, Request::procs(1), Some(60), 0);
            j.name = (*name).into();
            s.apply(Event::submit(j), 0).unwrap();
        }
        s
    }

    fn scope() -> Scope<'static> {
        Scope {
            completed: false,
            owner: None,
            regex_always: false,
            scheduler: "Moab",
        }
    }

    fn sel(s: &State, exprs: &[&str], w: &[&str]) -> Selection {
        let exprs: Vec<String> = exprs.iter().map(|e| e.to_string()).collect();
        let js = JobSelect {
            name: None,
            constraints: w.iter().map(|c| c.to_string()).collect(),
        };
        select(s, &exprs, &js, &scope())
    }

    #[test]
    fn ids_are_strict() {
        assert_eq!(parse_id("17"), Some(17));
        assert_eq!(parse_id("Moab.17"), Some(17));
        assert_eq!(parse_id("17.head.example.org"), Some(17));
        for t in ["80.*", "80.", "74[3-5]", "17.*", ".17", "a b.1", "x"] {
            assert_eq!(parse_id(t), None, "{t}");
        }
    }

    #[test]
    fn regex_is_anchored_and_never_a_nearby_job() {
        let s = state(&[
            (80, "a", "x"),
            (802, "a", "x"),
            (803, "b", "x"),
            (1802, "a", "x"),
            (743, "a", "x"),
            (744, "a", "x"),
            (746, "a", "x"),
        ]);
        assert_eq!(sel(&s, &["80.*"], &[]).ids, [80, 802, 803]);
        assert_eq!(sel(&s, &["74[3-5]"], &[]).ids, [743, 744]);
        assert_eq!(sel(&s, &["Moab\\.80.*"], &[]).ids, [80, 802, 803]);
        let none = sel(&s, &["9.*"], &[]);
        assert!(none.ids.is_empty());
        assert_eq!(none.error_lines(), ["ERROR:  invalid job specified (9.*)"]);
        let bad = sel(&s, &["7[4"], &[]);
        assert!(bad.ids.is_empty() && bad.errors[0].contains("invalid job expression"));
    }

    #[test]
    fn commas_inside_brackets_belong_to_the_regex() {
        assert_eq!(split_tokens("1,2, 3"), ["1", "2", "3"]);
        assert_eq!(split_tokens("7[0-9]{1,2},5"), ["7[0-9]{1,2}", "5"]);
    }

    #[test]
    fn constraints_intersect_and_empty_is_an_error() {
        let s = state(&[(1, "alice", "a"), (2, "bob", "b"), (3, "alice", "b")]);
        assert_eq!(sel(&s, &[], &["user=alice"]).ids, [1, 3]);
        assert_eq!(sel(&s, &[], &["user=alice", "jobname=b"]).ids, [3]);
        assert_eq!(sel(&s, &["1,2"], &["user=bob"]).ids, [2]);
        let none = sel(&s, &["1"], &["user=bob"]);
        assert_eq!(
            (none.ids.len(), none.errors[0].as_str()),
            (0, NO_JOBS_SELECTED)
        );
        assert!(sel(&s, &[], &["colour=red"]).errors[0].contains("unsupported constraint"));
        assert!(sel(&s, &[], &["StartTime>=x"]).errors[0].contains("epoch"));
        assert_eq!(sel(&s, &[], &[]).errors, [NO_EXPRESSION]);
        // ALL and repeats: each job once, where first named.
        assert_eq!(sel(&s, &["3", "ALL"], &[]).ids, [3, 1, 2]);
    }

    #[test]
    fn finished_jobs_only_when_asked() {
        let mut s = state(&[(1, "a", "x"), (2, "a", "x")]);
        s.apply(Event::Cancel { job: 1 }, 5).unwrap();
        assert_eq!(s.job(1).unwrap().state, JobState::Removed);
        assert_eq!(sel(&s, &["ALL"], &[]).ids, [2]);
        assert!(sel(&s, &["1"], &[]).ids.is_empty());
        assert_eq!(sel(&s, &[], &["CompletionTime>=5"]).ids, [1]);
        assert_eq!(
            sel(&s, &[], &["CompletionTime>5"]).errors,
            [NO_JOBS_SELECTED]
        );
    }

    #[test]
    fn non_admins_reach_only_their_jobs_by_pattern() {
        let s = state(&[(10, "alice", "x"), (11, "bob", "x")]);
        let sc = Scope {
            owner: Some("alice"),
            ..scope()
        };
        let all = select(&s, &["ALL".into()], &JobSelect::default(), &sc);
        assert_eq!(all.ids, [10]);
        let re = select(&s, &["1.*".into()], &JobSelect::default(), &sc);
        assert_eq!(re.ids, [10]);
        // An explicit id is resolved; the action refuses it by name.
        let id = select(&s, &["11".into()], &JobSelect::default(), &sc);
        assert_eq!(id.ids, [11]);
    }
}
