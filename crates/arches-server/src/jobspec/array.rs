//! `msub -t` (`#PBS -t`, `#MSUB -t`): a job array. Moab's and Torque's
//! forms: `1-100`, `name[1-100]`, `1-9:2`, `1,5,7`, `[0-99]%5`. Every
//! malformed or unsupported element is refused with the reason.

use arches_api::SubmitRequest;
use arches_core::ArraySpec;

use super::SubmitError;

/// The array a submission asks for, if any.
pub(super) fn parse(req: &SubmitRequest) -> Result<Option<ArraySpec>, SubmitError> {
    let Some(text) = req.array.as_deref() else {
        return Ok(None);
    };
    ArraySpec::parse(text)
        .map(Some)
        .map_err(|why| SubmitError(format!("invalid job array request '{text}' ({why})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_requests_are_parsed_or_refused_with_the_reason() {
        let req = |t: &str| SubmitRequest {
            array: Some(t.to_string()),
            ..SubmitRequest::default()
        };
        let a = parse(&req("big[1-10000]%50")).unwrap().unwrap();
        assert_eq!((a.indices.len(), a.slot_limit), (10_000, Some(50)));
        assert_eq!(parse(&SubmitRequest::default()).unwrap(), None);
        assert_eq!(
            parse(&req("1-5,3")).unwrap_err().message(),
            "ERROR:    cannot submit job - invalid job array request '1-5,3' (index 3 given twice)"
        );
        assert!(parse(&req("1-3%0")).is_err());
        assert!(parse(&req("x")).is_err());
    }
}
