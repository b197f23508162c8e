//! Site programs: `SUBMITFILTER`, `ACTIVATIONFILTER`, `MAILPROGRAM`,
//! `NOTIFICATIONPROGRAM` and their timeouts.

use super::scalars::param;
use super::{IndexKind, ParamDef};
use crate::value::{Value, ValueType};

/// An absolute program path (`NONE`/empty: none).
fn program(v: &Value) -> Result<Option<String>, String> {
    let t = v.text()?.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("NONE") {
        return Ok(None);
    }
    if !t.starts_with('/') {
        return Err(format!("'{t}' is not an absolute path"));
    }
    Ok(Some(t.to_string()))
}

fn timeout(v: &Value) -> Result<i64, String> {
    let t = v.duration()?;
    if t <= 0 {
        return Err("a timeout must be positive".to_string());
    }
    Ok(t)
}

#[rustfmt::skip]
pub(super) static HOOKS: &[ParamDef] = &[
    param("SUBMITFILTER", ValueType::Text, IndexKind::None, None,
        "Program every submission goes through (msub and the API alike): run as the submitting user with the job's XML (Moab's \"Submitting Jobs via msub in XML\") on its standard input, it prints the job XML to submit; a non-zero exit rejects the job with its standard error, invalid XML or a changed owner rejects it.", "submission",
        |c, _, v| { c.hooks.submit_filter = program(v)?; Ok(()) }),
    param("SUBMITFILTERTIMEOUT", ValueType::Duration, IndexKind::None, Some("00:00:30"),
        "A submit filter that has not finished this long after it started is killed and the submission rejected (Arches).", "submission",
        |c, _, v| { c.hooks.submit_filter_timeout = timeout(v)?; Ok(()) }),
    param("ACTIVATIONFILTER", ValueType::Text, IndexKind::None, None,
        "Program called just before a job starts (Arches, after Windows HPC's activation filter), with the job id, user, processors and wall-clock limit as arguments and the job's XML on its standard input, off the scheduling thread: exit 0 lets the job start, 1 defers it for DEFERTIME, 2 puts a batch hold on it; its first output line is the reason checkjob shows. Any other status, a crash or a timeout defers the job.", "job start",
        |c, _, v| { c.hooks.activation_filter = program(v)?; Ok(()) }),
    param("ACTIVATIONFILTERTIMEOUT", ValueType::Duration, IndexKind::None, Some("00:00:30"),
        "An activation filter that has not answered this long after it started is killed and the job deferred (Arches).", "job start",
        |c, _, v| { c.hooks.activation_filter_timeout = timeout(v)?; Ok(()) }),
    param("MAILPROGRAM", ValueType::Text, IndexKind::None, Some("/usr/sbin/sendmail"),
        "Mail transfer agent for job notifications (msub -m abe -M list): called as 'MAILPROGRAM ADDRESS...' with the message (To:, Subject: headers and a body) on its standard input; NONE disables mail.", "notifications",
        |c, _, v| { c.hooks.mail_program = program(v)?.unwrap_or_default(); Ok(()) }),
    param("NOTIFICATIONPROGRAM", ValueType::Text, IndexKind::None, None,
        "Site program called for every job event, whatever the job's -m options: 'NOTIFICATIONPROGRAM EVENT job JOBID USER MESSAGE' with EVENT JobStart, JobEnd or JobFail.", "notifications",
        |c, _, v| { c.hooks.notification_program = program(v)?; Ok(()) }),
    param("MALLEABLEGROWTH", ValueType::Choice(word_choices!("NONE", "BEFOREBACKFILL", "AFTERBACKFILL")), IndexKind::None, Some("BEFOREBACKFILL"),
        "When running malleable jobs (msub -l procs=MIN-MAX) grow toward their maximum, in priority order, with idle processors no reservation needs before they end (Arches, after Windows HPC): BEFOREBACKFILL (the seed: before backfill), AFTERBACKFILL (with what backfill leaves), NONE (they grow only on a resize request, mjobctl -m proccount+=N).", "malleable jobs",
        |c, _, v| { c.policy.growth = v.choice()?.parse()?; Ok(()) }),
    param("RESIZESIGNAL", ValueType::Text, IndexKind::None, Some("SIGWINCH"),
        "Signal a running job gets when it grew or shrank, after its PBS_NODEFILE and the environment file MOAB_RESIZEFILE were rewritten (Arches); NONE: no signal.", "malleable jobs",
        |c, _, v| {
            let t = v.text()?.trim();
            c.hooks.resize_signal = if t.eq_ignore_ascii_case("NONE") {
                None
            } else {
                Some(crate::value::signal_number(t)?)
            };
            Ok(())
        }),
];
