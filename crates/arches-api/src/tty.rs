//! The frames spoken on an interactive job's terminal socket (`msub -I`).
//!
//! Both directions carry frames of one kind byte, a big-endian `u32`
//! length and that many bytes of payload:
//!
//! - [`DATA`] (both ways): bytes typed by the user (to the job's terminal)
//!   or written by the job (to the user's terminal);
//! - [`WINSIZE`] (client → job): the user's terminal size, rows then
//!   columns as big-endian `u16` (the job gets `SIGWINCH`);
//! - [`EXIT`] (job → client, last): the shell's exit status as a
//!   big-endian `i32` (128+signal for a signal death).

/// Terminal bytes.
pub const DATA: u8 = b'd';
/// The client's terminal size.
pub const WINSIZE: u8 = b'w';
/// The job's exit status; nothing follows.
pub const EXIT: u8 = b'x';

/// The largest payload a frame may carry.
pub const MAX_FRAME: usize = 64 * 1024;

/// One frame, encoded.
pub fn encode(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 5);
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// A [`WINSIZE`] frame.
pub fn winsize(rows: u16, cols: u16) -> Vec<u8> {
    let mut p = rows.to_be_bytes().to_vec();
    p.extend_from_slice(&cols.to_be_bytes());
    encode(WINSIZE, &p)
}

/// Frames out of a byte stream read in arbitrary pieces.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Appends bytes read from the socket.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, if there is one; `Err` for a stream that is
    /// not made of frames (an unknown kind or an oversized length).
    pub fn next_frame(&mut self) -> Result<Option<(u8, Vec<u8>)>, String> {
        if self.buf.len() < 5 {
            return Ok(None);
        }
        let kind = self.buf[0];
        if ![DATA, WINSIZE, EXIT].contains(&kind) {
            return Err(format!("unknown terminal frame kind {kind}"));
        }
        let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
        if len > MAX_FRAME {
            return Err(format!(
                "terminal frame of {len} bytes (at most {MAX_FRAME})"
            ));
        }
        if self.buf.len() < 5 + len {
            return Ok(None);
        }
        let payload = self.buf[5..5 + len].to_vec();
        self.buf.drain(..5 + len);
        Ok(Some((kind, payload)))
    }
}

/// The rows and columns of a [`WINSIZE`] payload.
pub fn parse_winsize(p: &[u8]) -> Option<(u16, u16)> {
    match p {
        [r0, r1, c0, c1] => Some((
            u16::from_be_bytes([*r0, *r1]),
            u16::from_be_bytes([*c0, *c1]),
        )),
        _ => None,
    }
}

/// The status of an [`EXIT`] payload.
pub fn parse_exit(p: &[u8]) -> Option<i32> {
    <[u8; 4]>::try_from(p).ok().map(i32::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_any_split() {
        let mut stream = encode(DATA, b"echo hi\n");
        stream.extend(winsize(24, 80));
        stream.extend(encode(EXIT, &3i32.to_be_bytes()));
        for cut in 0..stream.len() {
            let mut d = Decoder::default();
            let mut got = Vec::new();
            for piece in [&stream[..cut], &stream[cut..]] {
                d.push(piece);
                while let Some(f) = d.next_frame().unwrap() {
                    got.push(f);
                }
            }
            assert_eq!(got.len(), 3, "cut at {cut}");
            assert_eq!(got[0], (DATA, b"echo hi\n".to_vec()));
            assert_eq!(parse_winsize(&got[1].1), Some((24, 80)));
            assert_eq!(parse_exit(&got[2].1), Some(3));
        }
    }

    #[test]
    fn garbage_is_an_error() {
        let mut d = Decoder::default();
        d.push(b"GET / HTTP/1.1\r\n");
        assert!(d.next_frame().is_err());
        let mut d = Decoder::default();
        d.push(&encode(DATA, &[])[..1]);
        d.push(&u32::MAX.to_be_bytes());
        assert!(d.next_frame().unwrap_err().contains("at most"));
    }
}
