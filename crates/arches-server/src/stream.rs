//! Large answers (`showq` of 100,000 jobs is 57 MB of JSON) are encoded on
//! the blocking pool straight into a bounded channel of chunks that the
//! response body drains, so the daemon never holds the whole encoded answer
//! (its peak memory would otherwise grow by the answer's size, twice while
//! the buffer doubles).

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use serde::Serialize;
use tokio::sync::mpsc;

/// Size of one chunk of an answer.
const CHUNK: usize = 256 * 1024;

/// Chunks in flight between the encoder and the connection.
const IN_FLIGHT: usize = 4;

/// A response body fed by the encoder's chunks.
struct ChunkBody(mpsc::Receiver<Bytes>);

impl hyper::body::Body for ChunkBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b))))
    }
}

/// Buffers the encoder's output and hands it over in chunks; fails (and so
/// stops the encoding) once the client is gone.
struct ChunkWriter {
    buf: Vec<u8>,
    tx: mpsc::Sender<Bytes>,
    /// Bytes encoded so far.
    total: usize,
}

/// Answers at least this large are worth returning their memory for
/// ([`crate::pace::trim_heap`] walks the whole heap: not after every
/// `checkjob`).
const TRIM_ABOVE: usize = 4 * 1024 * 1024;

impl io::Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.total += data.len();
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

/// Builds a view with `f` on the blocking pool and streams it as JSON.
pub(crate) fn json<T: Serialize + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Response {
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    tokio::task::spawn_blocking(move || {
        let value = f();
        let mut w = ChunkWriter {
            buf: Vec::with_capacity(CHUNK),
            tx,
            total: 0,
        };
        let done = serde_json::to_writer(&mut w, &value)
            .and_then(|()| io::Write::flush(&mut w).map_err(serde_json::Error::io));
        if let Err(e) = done {
            tracing::debug!(error = %e, "answer not completed");
        }
        let large = w.total >= TRIM_ABOVE;
        drop(w);
        drop(value);
        if large {
            crate::pace::trim_heap();
        }
    });
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        Body::new(ChunkBody(rx)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_large_answer_arrives_whole_in_many_chunks() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let value: Vec<String> = (0..100_000).map(|i| format!("job{i}")).collect();
        let expected = value.clone();
        let body = rt.block_on(async move {
            let resp = super::json(move || value);
            axum::body::to_bytes(resp.into_body(), usize::MAX)
                .await
                .unwrap()
        });
        assert!(body.len() > 4 * super::CHUNK, "{} bytes", body.len());
        let back: Vec<String> = serde_json::from_slice(&body).unwrap();
        assert_eq!(back, expected);
    }
}
