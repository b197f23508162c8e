//! Checks every request passes before it is decoded: a body announced
//! larger than [`crate::http::MAX_BODY_BYTES`] is refused at once (413,
//! without waiting for the body), and a request carrying a NUL character —
//! in a JSON string (`\u0000`) or in the query string (`%00`) — is refused
//! (400): no name, path, script or environment value may contain one (the
//! operating system cannot use them, and C code downstream would cut them).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;

use arches_api::ApiError;

/// The refusal of a request that contains a NUL character.
pub const NUL_REFUSED: &str = "request contains a NUL character";

/// Middleware: refuses oversized announced bodies and NULs in the query.
pub async fn screen(req: Request<Body>, next: Next) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > crate::http::MAX_BODY_BYTES as u64) {
        let mut resp = refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "ERROR:  invalid request (request body larger than {} bytes)",
                crate::http::MAX_BODY_BYTES
            ),
        );
        // The body is never read: the connection cannot be reused.
        resp.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        return resp;
    }
    if req
        .uri()
        .query()
        .is_some_and(|q| q.to_ascii_lowercase().contains("%00"))
    {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!("ERROR:  invalid request ({NUL_REFUSED})"),
        );
    }
    next.run(req).await
}

fn refuse(status: StatusCode, message: String) -> Response {
    (status, Json(ApiError { message })).into_response()
}

/// Whether a JSON text holds a NUL character in a string (`\u0000`) or a
/// raw NUL byte. Escapes are read left to right, so `\\u0000` (an escaped
/// backslash followed by `u0000`) is not one.
pub fn json_has_nul(body: &[u8]) -> bool {
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            0 => return true,
            b'\\' => {
                if body.get(i + 1) == Some(&b'u') && body.get(i + 2..i + 6) == Some(b"0000") {
                    return true;
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_escapes_are_found_and_escaped_backslashes_are_not() {
        assert!(json_has_nul(br#"{"name":"a\u0000b"}"#));
        assert!(json_has_nul(b"{\"name\":\"a\0\"}"));
        assert!(!json_has_nul(br#"{"name":"a\\u0000b"}"#));
        assert!(json_has_nul(br#"{"name":"a\\\u0000b"}"#));
        assert!(!json_has_nul(br#"{"name":"\u0001 \n"}"#));
        assert!(!json_has_nul(b"\\"));
    }
}
