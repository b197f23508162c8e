//! Large answers (`showq` of 100,000 jobs is 57 MB of JSON; checkjob ALL
//! and mdiag -p are of the same order) are never built whole: the handler
//! computes which jobs the answer lists, in order (a vector of ids, on the
//! blocking pool), and the response body encodes them a few at a time as
//! the connection drains it, [`CHUNK`] bytes per step. So the memory an
//! answer holds is its id list, one chunk and hyper's write buffer
//! ([`crate::listen::MAX_BUF`]), however large the queue and however slowly
//! (or never) the client reads: 300 clients that never read cost a few
//! tens of megabytes, where building each answer first cost gigabytes. A
//! client that stops reading is closed after `CLIENTTIMEOUT`
//! ([`crate::listen`]), which drops its answer.
//!
//! The answer is byte for byte what encoding the whole view would give: the
//! view is encoded with its list empty and split around that list (the
//! `"field":[]` of a top-level field, which no string or other field of
//! these views can contain), and the items are encoded in between.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use serde::Serialize;

/// Bytes encoded per step of a large answer.
pub(crate) const CHUNK: usize = 32 * 1024;

/// Answers at least this large (or of this many items, sent whole or not:
/// a client that stopped reading is closed with its answer half sent) are
/// worth returning their memory for once done ([`crate::pace::request_trim`]).
const TRIM_ABOVE: usize = 4 * 1024 * 1024;
const TRIM_ITEMS: usize = 1000;

/// The encoding of `shell` split around its empty list `field`: what comes
/// before the list's first item and after its last. `None` when `field` is
/// not exactly once an empty top-level list of it.
pub(crate) fn split<S: Serialize>(shell: &S, field: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let text = serde_json::to_vec(shell).ok()?;
    let marker = format!("\"{field}\":[]");
    let marker = marker.as_bytes();
    let mut at = text
        .windows(marker.len())
        .enumerate()
        .filter(|(_, w)| w == &marker);
    let (i, _) = at.next()?;
    if at.next().is_some() {
        return None;
    }
    let cut = i + marker.len() - 1;
    Some((text[..cut].to_vec(), text[cut..].to_vec()))
}

/// A response body that encodes the items of a list as it is polled.
struct Lazy<K, F> {
    head: Option<Bytes>,
    keys: std::vec::IntoIter<K>,
    item: F,
    tail: Option<Bytes>,
    first: bool,
    sent: usize,
    items: usize,
}

impl<K, F, I> Lazy<K, F>
where
    F: FnMut(K) -> Option<I>,
    I: Serialize,
{
    /// The next chunk of items (empty when there are none left).
    fn encode_some(&mut self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(CHUNK + CHUNK / 4);
        while buf.len() < CHUNK {
            let Some(key) = self.keys.next() else { break };
            let Some(value) = (self.item)(key) else {
                continue;
            };
            let mark = buf.len();
            if !self.first {
                buf.push(b',');
            }
            match serde_json::to_writer(&mut buf, &value) {
                Ok(()) => self.first = false,
                Err(e) => {
                    buf.truncate(mark);
                    tracing::error!("an item of an answer could not be encoded: {e}");
                }
            }
        }
        buf
    }
}

impl<K, F, I> hyper::body::Body for Lazy<K, F>
where
    K: Unpin,
    F: FnMut(K) -> Option<I> + Unpin,
    I: Serialize,
{
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let chunk = if let Some(head) = self.head.take() {
            head
        } else {
            let items = self.encode_some();
            if items.is_empty() {
                match self.tail.take() {
                    Some(tail) => tail,
                    None => return Poll::Ready(None),
                }
            } else {
                Bytes::from(items)
            }
        };
        self.sent += chunk.len();
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.tail.is_none()
    }
}

impl<K, F> Drop for Lazy<K, F> {
    fn drop(&mut self) {
        if self.sent >= TRIM_ABOVE || self.items >= TRIM_ITEMS {
            crate::pace::request_trim();
        }
    }
}

/// A JSON answer: `shell` (the view with its list `field` empty) with the
/// list's items `item(key)` for each of `keys` in order (a key whose item
/// is `None` is left out), encoded as the client reads.
pub(crate) fn listing<S, K, F, I>(shell: &S, field: &str, keys: Vec<K>, item: F) -> Response
where
    S: Serialize,
    K: Send + Unpin + 'static,
    F: FnMut(K) -> Option<I> + Send + Unpin + 'static,
    I: Serialize + 'static,
{
    let Some((head, tail)) = split(shell, field) else {
        // Only a change of the view types can get here (see the tests).
        tracing::error!(field, "an answer's list could not be located");
        let body = serde_json::json!({ "message": "ERROR:  internal error encoding the answer" });
        return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response();
    };
    let body = Lazy {
        head: Some(Bytes::from(head)),
        items: keys.len(),
        keys: keys.into_iter(),
        item,
        tail: Some(Bytes::from(tail)),
        first: true,
        sent: 0,
    };
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        Body::new(body),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct View {
        now: i64,
        name: String,
        jobs: Vec<String>,
        unknown: Vec<String>,
    }

    fn collect(resp: Response) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async move {
            axum::body::to_bytes(resp.into_body(), usize::MAX)
                .await
                .unwrap()
                .to_vec()
        })
    }

    #[test]
    fn a_listing_is_the_whole_views_encoding_in_many_chunks() {
        let names: Vec<String> = (0..20_000).map(|i| format!("job\"{i}\"")).collect();
        let whole = View {
            now: 7,
            name: "a \"jobs\":[] b".into(),
            jobs: names.clone(),
            unknown: vec!["x".into()],
        };
        let shell = View {
            jobs: Vec::new(),
            ..whole
        };
        let keys: Vec<usize> = (0..names.len()).collect();
        let resp = listing(&shell, "jobs", keys, move |i| Some(names[i].clone()));
        let (_, body) = resp.into_parts();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (bytes, chunks) = rt.block_on(async move {
            use hyper::body::Body as _;
            let mut body = body;
            let mut out = Vec::new();
            let mut chunks = 0;
            while let Some(frame) =
                std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
            {
                let data = frame.unwrap().into_data().unwrap();
                assert!(data.len() <= CHUNK + 1024, "a chunk of {}", data.len());
                chunks += 1;
                out.extend_from_slice(&data);
            }
            (out, chunks)
        });
        let whole = View {
            jobs: (0..20_000).map(|i| format!("job\"{i}\"")).collect(),
            ..shell
        };
        assert_eq!(bytes, serde_json::to_vec(&whole).unwrap());
        assert!(chunks > 10, "{chunks} chunks");
    }

    #[test]
    fn items_that_are_gone_are_left_out_and_an_empty_list_stays_valid() {
        let shell = View {
            now: 1,
            name: String::new(),
            jobs: Vec::new(),
            unknown: Vec::new(),
        };
        let body = collect(listing(&shell, "jobs", vec![1, 2, 3], |i| {
            (i != 2).then(|| i.to_string())
        }));
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"now":1,"name":"","jobs":["1","3"],"unknown":[]}"#
        );
        let body = collect(listing(&shell, "jobs", Vec::<u8>::new(), Some));
        assert_eq!(body, serde_json::to_vec(&shell).unwrap());
    }

    #[test]
    fn a_list_that_is_not_found_once_is_an_error_not_wrong_data() {
        let shell = View {
            now: 1,
            name: String::new(),
            jobs: Vec::new(),
            unknown: Vec::new(),
        };
        assert!(split(&shell, "missing").is_none());
        let resp = listing(&shell, "missing", vec![1], Some);
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
