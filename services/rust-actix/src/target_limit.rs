//! The 8192-byte request-target limit for targets actix-http would refuse by itself.
//!
//! actix-http parses the request line into an `http::Uri`, which refuses targets over 65534
//! bytes, and gives up on request heads over 128 KiB; both end in an empty 400 or 431 that
//! never reaches the app. So each TCP connection is wrapped in [`TargetLimit`], which watches
//! request lines as they arrive: a target over 8192 bytes is cut to its first 8192 bytes and
//! the request gets the header `x-cityref-target-too-long: <per-process secret>`. The app then
//! answers the contract's JSON 414 (`handler::limit_request_target`), logged and counted like
//! any other request. All other bytes pass through unchanged.
//!
//! To find request lines on a keep-alive connection it follows `Content-Length` bodies. After
//! anything it does not follow (a chunked body, an upgrade, CONNECT) it passes the rest of the
//! connection through untouched; the app's own length check still covers targets up to 65534
//! bytes there.

use std::hash::{BuildHasher, RandomState};
use std::io;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll, ready};

use actix_web::http::header::HeaderMap;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::handler::MAX_REQUEST_TARGET;

pub const MARKER_HEADER: &str = "x-cityref-target-too-long";

/// Unguessable per process, so a client cannot ask for a 414 by sending the header itself.
static MARKER: LazyLock<String> = LazyLock::new(|| {
    let random = || RandomState::new().hash_one(std::process::id());
    format!("{:016x}{:016x}", random(), random())
});

/// Whether [`TargetLimit`] cut this request's target.
pub fn is_marked(headers: &HeaderMap) -> bool {
    headers
        .get(MARKER_HEADER)
        .is_some_and(|value| value.as_bytes() == MARKER.as_bytes())
}

/// A header line longer than this is not a `Content-Length` we can use.
const MAX_TRACKED_LINE: usize = 256;

/// A connection whose request lines are checked on the way in.
pub struct TargetLimit<S> {
    io: S,
    scanner: Scanner,
    /// Scanned bytes not yet handed to actix-http.
    pending: Vec<u8>,
    taken: usize,
}

impl<S> TargetLimit<S> {
    pub fn new(io: S) -> Self {
        TargetLimit {
            io,
            scanner: Scanner::default(),
            pending: Vec::new(),
            taken: 0,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TargetLimit<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.pending.len() {
                let n = buf.remaining().min(this.pending.len() - this.taken);
                buf.put_slice(&this.pending[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.pending.len() {
                    this.pending.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.scanner.state == State::PassThrough {
                return Pin::new(&mut this.io).poll_read(cx, buf);
            }
            let mut chunk = [0; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.io).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // End of input: hand over whatever was held back, then the end itself.
                this.scanner.flush(&mut this.pending);
                if this.pending.is_empty() {
                    return Poll::Ready(Ok(()));
                }
            } else {
                this.scanner.feed(read.filled(), &mut this.pending);
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TargetLimit<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum State {
    /// Before a request line (empty lines allowed).
    #[default]
    LineStart,
    Method,
    /// Holding the target back until it ends or proves too long.
    Target,
    /// Dropping the rest of a too-long target.
    Overflow,
    /// The rest of the request line; `cut` if its target was cut.
    Version {
        cut: bool,
    },
    Headers,
    Body(u64),
    PassThrough,
}

/// Follows HTTP/1.x request framing byte by byte, just enough to find request lines.
#[derive(Default)]
struct Scanner {
    state: State,
    /// The method while in `Method`, then the current header line (up to `MAX_TRACKED_LINE`).
    line: Vec<u8>,
    line_too_long: bool,
    target: Vec<u8>,
    content_length: Option<u64>,
    /// The request has framing this scanner does not follow.
    untracked: bool,
}

impl Scanner {
    fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            match self.state {
                State::PassThrough => {
                    out.extend_from_slice(input);
                    return;
                }
                State::Body(left) => {
                    let n = input.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    out.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    self.state = if n as u64 == left {
                        State::LineStart
                    } else {
                        State::Body(left - n as u64)
                    };
                }
                _ => {
                    self.byte(input[0], out);
                    input = &input[1..];
                }
            }
        }
    }

    /// The input ended: whatever was held back goes out as it came.
    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.state == State::Target {
            out.append(&mut self.target);
        }
        self.state = State::PassThrough;
    }

    fn byte(&mut self, byte: u8, out: &mut Vec<u8>) {
        match self.state {
            State::LineStart => {
                out.push(byte);
                if byte != b'\r' && byte != b'\n' {
                    self.line.clear();
                    self.line.push(byte);
                    self.state = State::Method;
                }
            }
            State::Method => {
                out.push(byte);
                match byte {
                    b' ' => {
                        self.untracked = self.line == b"CONNECT";
                        self.target.clear();
                        self.state = State::Target;
                    }
                    b'\r' | b'\n' => self.state = State::PassThrough, // not HTTP/1.x: leave it to actix
                    _ => self.line.push(byte),
                }
            }
            State::Target | State::Overflow => match byte {
                b' ' => {
                    out.append(&mut self.target);
                    out.push(byte);
                    self.state = State::Version {
                        cut: self.state == State::Overflow,
                    };
                }
                b'\r' | b'\n' => {
                    out.append(&mut self.target);
                    out.push(byte);
                    self.state = State::PassThrough;
                }
                _ if self.state == State::Overflow => {}
                _ if self.target.len() == MAX_REQUEST_TARGET => self.state = State::Overflow,
                _ => self.target.push(byte),
            },
            State::Version { cut } => {
                out.push(byte);
                if byte == b'\n' {
                    if cut {
                        out.extend_from_slice(format!("{MARKER_HEADER}: {}\r\n", *MARKER).as_bytes());
                    }
                    self.line.clear();
                    self.line_too_long = false;
                    self.content_length = None;
                    self.state = State::Headers;
                }
            }
            State::Headers => {
                out.push(byte);
                if byte != b'\n' {
                    if self.line.len() < MAX_TRACKED_LINE {
                        self.line.push(byte);
                    } else {
                        self.line_too_long = true;
                    }
                    return;
                }
                let line = std::mem::take(&mut self.line);
                let line = line.strip_suffix(b"\r").unwrap_or(&line);
                if line.is_empty() {
                    self.state = match (self.untracked, self.content_length) {
                        (true, _) => State::PassThrough,
                        (false, Some(length)) if length > 0 => State::Body(length),
                        (false, _) => State::LineStart,
                    };
                } else {
                    self.header(line);
                }
                self.line_too_long = false;
            }
            State::Body(_) | State::PassThrough => unreachable!("handled in feed"),
        }
    }

    fn header(&mut self, line: &[u8]) {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return; // actix-http rejects it
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            let length = (!value.is_empty() && value.iter().all(u8::is_ascii_digit) && !self.line_too_long)
                .then(|| std::str::from_utf8(value).ok()?.parse::<u64>().ok())
                .flatten();
            match (length, self.content_length) {
                (Some(length), None) => self.content_length = Some(length),
                (Some(length), Some(seen)) if length == seen => {}
                _ => self.untracked = true,
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") || name.eq_ignore_ascii_case(b"upgrade") {
            self.untracked = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in chunks of `size` bytes and returns what actix-http would read.
    fn scan(input: &[u8], size: usize) -> Vec<u8> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        for chunk in input.chunks(size) {
            scanner.feed(chunk, &mut out);
        }
        scanner.flush(&mut out);
        out
    }

    fn marker_line() -> String {
        format!("{MARKER_HEADER}: {}\r\n", *MARKER)
    }

    #[test]
    fn short_targets_pass_unchanged() {
        let input = b"GET /city/v1/get?id=1&language=en HTTP/1.1\r\nHost: x\r\n\r\n\
            POST /health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloHEAD /health HTTP/1.1\r\n\r\n";
        for size in [1, 2, 7, 4096] {
            assert_eq!(scan(input, size), input.to_vec());
        }
    }

    #[test]
    fn long_targets_are_cut_and_marked_on_every_request() {
        let target = format!("/city/v1/get?id=1&pad={}", "p".repeat(65536));
        let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n");
        let cut = format!("GET {} HTTP/1.1\r\n{}Host: x\r\n\r\n", &target[..8192], marker_line());
        let exact = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "e".repeat(8191));
        // keep-alive: short, long, exactly 8192, long after a body
        let body = "DELETE /health HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc";
        let input = format!("GET /health HTTP/1.1\r\n\r\n{request}{exact}{body}{request}");
        let expected = format!("GET /health HTTP/1.1\r\n\r\n{cut}{exact}{body}{cut}");
        for size in [1, 3, 1000, 8192, 100_000] {
            assert_eq!(
                String::from_utf8(scan(input.as_bytes(), size)).unwrap(),
                expected,
                "chunk size {size}"
            );
        }
    }

    #[test]
    fn untracked_framing_passes_the_rest_through() {
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "l".repeat(9000));
        for head in [
            "POST /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /health HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
            "POST /health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "POST /health HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
            "CONNECT example:443 HTTP/1.1\r\n\r\n",
        ] {
            let input = format!("{head}{long}");
            assert_eq!(scan(input.as_bytes(), 5), input.as_bytes(), "{head}");
        }
    }

    #[test]
    fn truncated_input_is_handed_over_as_it_came() {
        let input = b"GET /health?partial";
        assert_eq!(scan(input, 4), input.to_vec());
    }

    #[test]
    fn only_the_secret_marks_a_request() {
        let mut headers = HeaderMap::new();
        headers.insert(MARKER_HEADER.parse().unwrap(), "guess".parse().unwrap());
        assert!(!is_marked(&headers));
        headers.insert(MARKER_HEADER.parse().unwrap(), MARKER.parse().unwrap());
        assert!(is_marked(&headers));
    }
}
