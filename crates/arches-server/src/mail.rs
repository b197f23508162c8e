//! Job notifications: mail on begin, end and abort (`msub -m abe -M list`)
//! through the mail transfer agent (`MAILPROGRAM`, default
//! `/usr/sbin/sendmail`), and Moab's `NOTIFICATIONPROGRAM` site hook for
//! every job event.
//!
//! Events, as Moab names them (checkjob's `Notification Events:`):
//! - `JobStart` (`-m b`): the job began executing (`Running`; a backend
//!   that confirms starts confirmed it; not a resume);
//! - `JobEnd` (`-m e`): it terminated by itself (any exit status);
//! - `JobFail` (`-m a`, the default when `-m` is not given): it was
//!   aborted — cancelled, killed at its wall-clock limit, or removed.
//!
//! Mail goes to the `-M` addresses, or to the job's owner (local
//! delivery). The mail program is called as `MAILPROGRAM ADDRESS...` with
//! the message (`To:`, `Subject:`, a body after Torque's) on its standard
//! input; the notification program as `NOTIFICATIONPROGRAM EVENT job JOBID
//! USER MESSAGE`. Both run as the daemon's user on one background thread,
//! each with a timeout, so a slow or hung mail system never delays the
//! scheduler; a notification is best effort (not persisted: one pending
//! when the daemon stops is lost, and the daemon log says so).
//!
//! `-M` addresses are checked at submission ([`check_mail`]): no address
//! may start with `-` (it would be an option to the mail program) or hold
//! anything but the characters of a mail address.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::Duration;

use arches_core::{CompletionCode, JobId, JobState};
use arches_rm::program::{self, Invocation};

use crate::actor::Actor;

/// How long one mail or notification program may run.
pub const PROGRAM_TIMEOUT: Duration = Duration::from_secs(30);

/// Notifications waiting to be sent at most (further ones are dropped,
/// and logged).
pub const MAX_QUEUED: usize = 10_000;

/// A job event worth telling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEvent {
    Start,
    End,
    Fail,
}

impl JobEvent {
    /// Moab's name (`NOTIFICATIONPROGRAM`'s first argument).
    pub fn as_str(self) -> &'static str {
        match self {
            JobEvent::Start => "JobStart",
            JobEvent::End => "JobEnd",
            JobEvent::Fail => "JobFail",
        }
    }

    /// The `-m` letter that asks for it.
    fn letter(self) -> char {
        match self {
            JobEvent::Start => 'b',
            JobEvent::End => 'e',
            JobEvent::Fail => 'a',
        }
    }
}

/// One program call to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Send {
    pub program: String,
    pub args: Vec<String>,
    pub stdin: Option<String>,
}

/// The background sender.
#[derive(Debug, Default)]
pub struct Notifier {
    tx: Option<SyncSender<Send>>,
}

impl Notifier {
    /// Queues a call; never blocks.
    fn push(&mut self, s: Send) {
        if self.tx.is_none() {
            let (tx, rx) = mpsc::sync_channel(MAX_QUEUED);
            let spawned = std::thread::Builder::new()
                .name("mail".into())
                .spawn(move || sender(rx));
            match spawned {
                Ok(_) => self.tx = Some(tx),
                Err(e) => {
                    tracing::error!(error = %e, "cannot start the notification thread");
                    return;
                }
            }
        }
        if let Some(tx) = &self.tx {
            match tx.try_send(s) {
                Ok(()) => {}
                Err(TrySendError::Full(s)) => {
                    tracing::warn!(program = s.program, "notification queue full: dropped")
                }
                Err(TrySendError::Disconnected(_)) => self.tx = None,
            }
        }
    }
}

fn sender(rx: Receiver<Send>) {
    while let Ok(s) = rx.recv() {
        let r = program::run(&Invocation {
            program: &s.program,
            args: &s.args,
            stdin: s.stdin.as_deref().map(str::as_bytes),
            caller: None,
            timeout: PROGRAM_TIMEOUT,
            env: &[],
            output_limit: 65536,
        });
        match r {
            Ok(o) if o.success() => {}
            Ok(o) => tracing::warn!(
                program = s.program,
                status = o.status_text(),
                stderr = program::last_line(&o.stderr),
                "notification program failed"
            ),
            Err(e) => tracing::warn!(error = %e, "notification not sent"),
        }
    }
}

/// Checks `-m` and `-M` at submission.
pub fn check_mail(options: Option<&str>, list: Option<&str>) -> Result<(), String> {
    if let Some(o) = options {
        let o = o.trim();
        let ok = o == "n" || (!o.is_empty() && o.chars().all(|c| "abe".contains(c)));
        if !ok {
            return Err(format!("invalid mail options '{o}' (n, or any of a, b, e)"));
        }
    }
    for a in list.unwrap_or("").split(',') {
        let a = a.trim();
        if list.is_some() && a.is_empty() {
            return Err("empty mail recipient in the -M list".to_string());
        }
        let ok = !a.starts_with('-')
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._%+-@=".contains(c));
        if !ok {
            return Err(format!("invalid mail recipient '{a}'"));
        }
    }
    Ok(())
}

/// Header- and line-safe text (no control characters).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// What happened, in a few words (the notification program's MESSAGE).
fn summary(event: JobEvent, exit: Option<i32>, why: &str) -> String {
    match event {
        JobEvent::Start => "job started".to_string(),
        JobEvent::End => format!("job completed with exit status {}", exit.unwrap_or(0)),
        JobEvent::Fail => format!("job aborted: {why}"),
    }
}

/// One notification mail.
#[derive(Debug, Clone)]
pub struct Mail<'a> {
    pub to: &'a [String],
    pub id: JobId,
    /// The scheduler's host (the `.host` of the job id).
    pub host: &'a str,
    pub name: &'a str,
    pub event: JobEvent,
    pub exit: Option<i32>,
    /// Why the job was aborted.
    pub why: &'a str,
    /// Allocated nodes, `+`-separated.
    pub exec_hosts: &'a str,
}

impl Mail<'_> {
    /// The message (Torque's wording), headers first.
    pub fn message(&self) -> String {
        let (id, host) = (self.id, self.host);
        let mut m = format!(
            "To: {}\nSubject: PBS JOB {id}.{host}\n\nPBS Job Id: {id}.{host}\nJob Name:   {}\n",
            self.to.join(", "),
            clean(self.name)
        );
        if !self.exec_hosts.is_empty() {
            m.push_str(&format!("Exec host:  {}\n", self.exec_hosts));
        }
        match self.event {
            JobEvent::Start => m.push_str("Begun execution\n"),
            JobEvent::End => m.push_str(&format!(
                "Execution terminated\nExit_status={}\n",
                self.exit.unwrap_or(0)
            )),
            JobEvent::Fail => m.push_str(&format!("Aborted by Moab: {}\n", clean(self.why))),
        }
        m
    }
}

impl Actor {
    /// Called after every applied event: a job that started, ended or was
    /// aborted is told about.
    pub(crate) fn notice(&mut self, job: JobId, before: Option<JobState>) {
        let Some(j) = self.state.job(job) else { return };
        let Some(before) = before else { return };
        let after = j.state;
        let event = if after == JobState::Running
            && !matches!(before, JobState::Running | JobState::Suspended)
        {
            JobEvent::Start
        } else if after.is_finished() && !before.is_finished() {
            let exceeded = self.exec.get(&job).is_some_and(|r| r.walltime_exceeded);
            match j.completion.map(|c| c.code) {
                Some(CompletionCode::Exit(_)) if !exceeded && after == JobState::Completed => {
                    JobEvent::End
                }
                _ => JobEvent::Fail,
            }
        } else {
            return;
        };
        let exit = match j.completion.map(|c| c.code) {
            Some(CompletionCode::Exit(c)) => Some(c),
            _ => None,
        };
        let why = match j.completion.map(|c| c.code) {
            Some(CompletionCode::Cancelled) => "job cancelled".to_string(),
            _ if self.exec.get(&job).is_some_and(|r| r.walltime_exceeded) => {
                format!(
                    "job exceeded its wall-clock limit (exit status {})",
                    exit.unwrap_or(0)
                )
            }
            _ => format!("job {}", after.as_str().to_ascii_lowercase()),
        };
        let user = j.cred.user.clone();
        let name = j.name.clone();
        let exec_hosts = j
            .run
            .as_ref()
            .map(|r| {
                r.alloc
                    .iter()
                    .filter_map(|a| self.state.node(a.node).map(|n| n.name.clone()))
                    .collect::<Vec<_>>()
                    .join("+")
            })
            .unwrap_or_default();
        let hooks = self.cfg.moab.hooks.clone();
        if let Some(p) = hooks.notification_program {
            self.notifier.push(Send {
                program: p,
                args: vec![
                    event.as_str().to_string(),
                    "job".to_string(),
                    job.to_string(),
                    user.to_string(),
                    summary(event, exit, &why),
                ],
                stdin: None,
            });
        }
        let rec = self.exec.get(&job);
        let options = rec
            .and_then(|r| r.mail_options.clone())
            .unwrap_or_else(|| "a".to_string());
        if options.contains('n') || !options.contains(event.letter()) {
            return;
        }
        if hooks.mail_program.is_empty() {
            return;
        }
        let to: Vec<String> = match rec.and_then(|r| r.mail_list.clone()) {
            Some(l) => l
                .split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect(),
            None => vec![user.to_string()],
        };
        // Checked at submission; never pass an option-like argument.
        if to.is_empty() || to.iter().any(|a| check_mail(None, Some(a)).is_err()) {
            tracing::warn!(job, "mail recipients refused: no mail sent");
            return;
        }
        let message = Mail {
            to: &to,
            id: job,
            host: &self.host,
            name: &name,
            event,
            exit,
            why: &why,
            exec_hosts: &exec_hosts,
        }
        .message();
        self.notifier.push(Send {
            program: hooks.mail_program,
            args: to,
            stdin: Some(message),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mail_options_and_recipients_are_checked() {
        assert!(check_mail(Some("abe"), Some("alice@example.org,bob")).is_ok());
        assert!(check_mail(Some("n"), None).is_ok());
        assert!(check_mail(None, None).is_ok());
        assert_eq!(
            check_mail(Some("x"), None).unwrap_err(),
            "invalid mail options 'x' (n, or any of a, b, e)"
        );
        assert_eq!(
            check_mail(None, Some("-oQ/tmp/evil")).unwrap_err(),
            "invalid mail recipient '-oQ/tmp/evil'"
        );
        assert!(check_mail(None, Some("a b")).is_err());
        assert!(check_mail(None, Some("a\nBcc: x")).is_err());
        assert!(check_mail(None, Some("a,,b")).is_err());
    }

    #[test]
    fn messages_read_like_torques() {
        let to = ["alice@example.org".to_string()];
        let mail = Mail {
            to: &to,
            id: 12,
            host: "head",
            name: "sim\nBcc: evil",
            event: JobEvent::End,
            exit: Some(3),
            why: "",
            exec_hosts: "n1+n2",
        };
        assert_eq!(
            mail.message(),
            "To: alice@example.org\nSubject: PBS JOB 12.head\n\nPBS Job Id: 12.head\nJob Name:   sim Bcc: evil\nExec host:  n1+n2\nExecution terminated\nExit_status=3\n"
        );
        let bob = ["bob".to_string()];
        let m = Mail {
            to: &bob,
            name: "x",
            event: JobEvent::Fail,
            exit: None,
            why: "job cancelled",
            exec_hosts: "",
            ..mail
        }
        .message();
        assert!(
            m.ends_with("Job Name:   x\nAborted by Moab: job cancelled\n"),
            "{m}"
        );
        assert_eq!(summary(JobEvent::Start, None, ""), "job started");
    }
}
