//! What happens to a submission before it is parsed: a job XML that msub
//! read as its input becomes the request, and a `SUBMITFILTER` rewrites it
//! (Moab's "Applying the msub Submit Filter").
//!
//! The filter runs in the daemon for every submission — msub and direct API
//! clients alike, so nobody bypasses it — as the submitting user (the
//! kernel's peer credentials), with the job XML ([`crate::jobxml`]) on its
//! standard input, on the blocking pool (never on the scheduler thread).
//! Moab's rules: a non-zero exit rejects the job and msub shows the
//! filter's standard error; invalid job XML rejects it. Arches adds: a
//! filter that has not finished within `SUBMITFILTERTIMEOUT` is killed and
//! the job rejected; an output that does not fit is rejected; the XML may
//! not change who the job belongs to.

use std::time::Duration;

use arches_api::SubmitRequest;
use arches_rm::program::{self, Caller, Invocation, RunError};

use crate::ident::UserInfo;
use crate::jobspec::SubmitError;
use crate::jobxml::{self, Identity};

/// Whose submission it is.
pub struct Submitter<'a> {
    pub user: &'a UserInfo,
    pub group: &'a str,
    pub groups: Vec<u32>,
}

/// The submission to parse: the job XML input resolved, the filter applied.
pub async fn prepare(
    mut req: SubmitRequest,
    who: Submitter<'_>,
    hooks: &arches_config::HooksConfig,
) -> Result<SubmitRequest, SubmitError> {
    if let Some(xml) = req.job_xml.take() {
        let (from_xml, id) = jobxml::from_xml(&xml, &req).map_err(SubmitError)?;
        check_identity(&id, &who)?;
        req = jobxml::overlay(from_xml, &req);
    }
    let Some(filter) = hooks.submit_filter.clone() else {
        return Ok(req);
    };
    let xml = jobxml::to_xml(&req, &who.user.name, who.group);
    let caller = Caller {
        name: who.user.name.clone(),
        uid: who.user.uid,
        gid: who.user.gid,
        home: who.user.home.clone(),
        groups: who.groups.clone(),
    };
    let timeout = Duration::from_secs(hooks.submit_filter_timeout.max(1) as u64);
    let run = {
        let filter = filter.clone();
        tokio::task::spawn_blocking(move || {
            program::run(&Invocation {
                program: &filter,
                args: &[],
                stdin: Some(xml.as_bytes()),
                caller: Some(&caller),
                timeout,
                env: &[],
                output_limit: jobxml::MAX_XML_BYTES + 1,
            })
        })
    };
    let out = match run.await {
        Ok(Ok(out)) => out,
        Ok(Err(RunError::Timeout { secs, .. })) => {
            return Err(SubmitError(format!(
                "submit filter '{filter}' did not finish within {secs}s"
            )))
        }
        Ok(Err(e)) => return Err(SubmitError(format!("submit filter failed: {e}"))),
        Err(e) => return Err(SubmitError(format!("submit filter failed: {e}"))),
    };
    if !out.success() {
        let why = out.stderr.trim();
        return Err(SubmitError(if why.is_empty() {
            format!(
                "submit filter '{filter}' rejected the job (exit {})",
                out.status_text()
            )
        } else {
            why.to_string()
        }));
    }
    if out.truncated {
        return Err(SubmitError(format!(
            "submit filter '{filter}' printed more than {} bytes",
            jobxml::MAX_XML_BYTES
        )));
    }
    let (filtered, id) = jobxml::from_xml(&out.stdout, &req)
        .map_err(|e| SubmitError(format!("submit filter '{filter}' output refused: {e}")))?;
    check_identity(&id, &who)?;
    // Interactive or not is msub's (-I), whatever the filter printed.
    let mut filtered = filtered;
    filtered.interactive = req.interactive;
    Ok(filtered)
}

/// A job XML may name its owner and group, but only the submitter's own.
fn check_identity(id: &Identity, who: &Submitter<'_>) -> Result<(), SubmitError> {
    if let Some(u) = id.user.as_ref().filter(|u| **u != who.user.name) {
        return Err(SubmitError(format!(
            "the job XML names user '{u}' but the job is submitted by '{}'",
            who.user.name
        )));
    }
    if let Some(g) = id.group.as_ref().filter(|g| **g != who.group) {
        return Err(SubmitError(format!(
            "the job XML names group '{g}' but the job is submitted with group '{}'",
            who.group
        )));
    }
    Ok(())
}
