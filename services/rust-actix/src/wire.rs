//! The contract's HTTP layer ("What the HTTP layer accepts") on each TCP connection.
//!
//! actix-http answers every request it cannot parse with an empty 400 (or 431 past 128 KiB of
//! head) that never reaches the app, accepts some that the contract calls malformed (bare LF
//! line ends, 64–128 KiB header sections) and refuses some it calls fine (raw `"` `<` `{` or
//! UTF-8 in the target; `http::Uri` rejects them). None of this is configurable in actix-http
//! 3.20 (`h1::decoder::MAX_BUFFER_SIZE`, `h1::dispatcher` pushes `Response::bad_request()`), and
//! the contract demands exact bytes, so each connection is wrapped in [`TargetLimit`], which
//! reads every request head before actix-http does, checks it against the contract's rules, and
//! holds it back until it is complete:
//!
//! * a well-formed head goes on with raw target bytes percent-encoded, and without its framing
//!   headers: the wrapper reads and discards bodies (`Content-Length` and chunked) itself, so a
//!   body never closes a keep-alive connection and is never taken for a request;
//! * a target over 8192 bytes is cut to its first 8192 bytes and marked (414);
//! * a malformed head, or one whose header section passes 65536 bytes, is replaced by a stand-in
//!   request (`Connection: close`, marked 400 or 431), and nothing after it is read as a request.
//!
//! Marks are the header `x-cityref-wire: <per-process secret> <code>`; the app answers them with
//! the contract's JSON (`handler::limit_request_target`), logged and counted like any other
//! request. The per-byte work is what the 414 check already did: one state-machine step per head
//! byte; bodies are skipped in bulk. After a `CONNECT` head it passes the rest of the
//! connection through untouched, as actix-http takes it all for a tunnel.

use std::collections::VecDeque;
use std::hash::{BuildHasher, RandomState};
use std::io;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll, Waker, ready};

use actix_web::http::header::HeaderMap;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub const MARKER_HEADER: &str = "x-cityref-wire";

/// Longest request target (path and query as sent) answered normally; longer ones are 414.
pub const MAX_REQUEST_TARGET: usize = 8192;

/// A header section (the field lines) longer than this is answered 431.
const MAX_HEADER_SECTION: usize = 65536;

/// Unguessable per process, so a client cannot ask for an answer by sending the header itself.
static MARKER: LazyLock<String> = LazyLock::new(|| {
    let random = || RandomState::new().hash_one(std::process::id());
    format!("{:016x}{:016x}", random(), random())
});

/// What the wrapper decided about a request, for the app to answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Target over 8192 bytes (cut): 414.
    TargetTooLong,
    /// Target within 8192 bytes as sent, longer once percent-encoded: serve it.
    TargetFits,
    /// A stand-in for a malformed request: 400, close.
    Malformed,
    /// A stand-in for a header section over 65536 bytes: 431, close.
    HeadTooLarge,
}

const VERDICTS: [(Verdict, &str); 4] = [
    (Verdict::TargetTooLong, "414"),
    (Verdict::TargetFits, "fits"),
    (Verdict::Malformed, "400"),
    (Verdict::HeadTooLarge, "431"),
];

impl Verdict {
    fn code(self) -> &'static str {
        VERDICTS.iter().find(|(v, _)| *v == self).map_or("", |(_, code)| code)
    }

    fn header_line(self) -> String {
        format!("{MARKER_HEADER}: {} {}\r\n", *MARKER, self.code())
    }
}

/// The wrapper's verdict on this request, if it marked it.
pub fn verdict(headers: &HeaderMap) -> Option<Verdict> {
    let value = headers.get(MARKER_HEADER)?.as_bytes();
    let code = value.strip_prefix(MARKER.as_bytes())?.strip_prefix(b" ")?;
    VERDICTS.iter().find(|(_, c)| c.as_bytes() == code).map(|(v, _)| *v)
}

/// A connection whose request heads are checked on the way in.
///
/// Pipelined requests are handed to actix-http one at a time: the next head only once every
/// answer before it has been written. actix-http 3.20's codec keeps one HEAD flag per connection,
/// set when a request is decoded and read when a response is encoded (`h1/codec.rs`), and its
/// dispatcher decodes ahead; a HEAD decoded while an earlier answer was pending, or a request
/// decoded before a HEAD's answer, would get the wrong framing (a HEAD answer with a body: the
/// client takes the body for the next answer). Clients that do not pipeline never wait.
pub struct TargetLimit<S> {
    io: S,
    scanner: Scanner,
    /// Scanned bytes not yet handed to actix-http.
    pending: Vec<u8>,
    taken: usize,
    /// A head is being handed over (its first bytes are taken).
    handing: bool,
    /// Requests handed over whose answer has not been written yet.
    owed: usize,
    /// The reader waiting for an answer to be written.
    waiting: Option<Waker>,
    answers: AnswerCounter,
}

impl<S> TargetLimit<S> {
    pub fn new(io: S) -> Self {
        TargetLimit {
            io,
            scanner: Scanner::default(),
            pending: Vec::new(),
            taken: 0,
            handing: false,
            owed: 0,
            waiting: None,
            answers: AnswerCounter::default(),
        }
    }

    /// Counts the answers in `written` bytes; wakes a reader waiting for one.
    fn written(&mut self, written: impl IntoIterator<Item = u8>) {
        let answers = self.answers.count(written);
        if answers > 0 {
            self.owed = self.owed.saturating_sub(answers);
            if let Some(waker) = self.waiting.take() {
                waker.wake();
            }
        }
    }
}

/// Finds the ends of answer heads (CRLF CRLF) in the bytes written, skipping interim (1xx)
/// answers. The service's bodies (JSON, Prometheus text) never hold a CR.
#[derive(Default)]
struct AnswerCounter {
    /// The last bytes written.
    tail: [u8; 10],
    /// The head being written is an interim answer.
    interim: bool,
}

impl AnswerCounter {
    fn count(&mut self, written: impl IntoIterator<Item = u8>) -> usize {
        let mut answers = 0;
        for byte in written {
            self.tail.copy_within(1.., 0);
            self.tail[9] = byte;
            if self.tail == *b"HTTP/1.1 1" {
                self.interim = true;
            } else if self.tail[6..] == *b"\r\n\r\n" {
                answers += usize::from(!self.interim);
                self.interim = false;
            }
        }
        answers
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TargetLimit<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.pending.len() {
                let end = this.scanner.ends.front().copied();
                if !this.handing && end.is_some() && this.owed > 0 {
                    // a complete head waits until every answer before it is written
                    this.waiting = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                this.handing = true;
                let limit = end.unwrap_or(this.pending.len());
                let n = buf.remaining().min(limit - this.taken);
                buf.put_slice(&this.pending[this.taken..this.taken + n]);
                this.taken += n;
                if Some(this.taken) == end {
                    this.scanner.ends.pop_front();
                    this.handing = false;
                    this.owed += 1;
                }
                if this.taken == this.pending.len() {
                    this.pending.clear();
                    this.taken = 0;
                    this.scanner.ends.clear(); // (all passed: offsets restart with the buffer)
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
                // (After a stand-in, `Closed` discards the rest: read on so the client's bytes do
                // not sit unread when the connection closes, which would reset it.)
                this.scanner.feed(read.filled(), &mut this.pending);
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TargetLimit<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.io).poll_write(cx, buf))?;
        this.written(buf[..n].iter().copied());
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs))?;
        this.written(bufs.iter().flat_map(|b| b.iter().copied()).take(n));
        Poll::Ready(Ok(n))
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
    /// Before a request line (empty CRLF lines allowed).
    #[default]
    LineStart,
    /// The CR of an empty line before the request line.
    LeadingCr,
    Method,
    Target,
    Version,
    VersionLf,
    /// The start of a field line, or of the empty line ending the head.
    FieldStart,
    FieldName,
    FieldValue,
    FieldLf,
    EndLf,
    /// Discarding the rest of a `Content-Length` body.
    Body(u64),
    ChunkSize,
    ChunkExt,
    ChunkSizeLf,
    ChunkData(u64),
    ChunkDataCr,
    ChunkDataLf,
    /// Trailer lines after the last chunk; `empty` at the start of a line.
    Trailer {
        empty: bool,
    },
    TrailerLf {
        empty: bool,
    },
    /// After a stand-in request: everything is discarded.
    Closed,
    /// After a CONNECT: everything goes to actix-http as it is.
    PassThrough,
}

/// The field lines the wrapper acts on.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum Field {
    #[default]
    Other,
    Host,
    ContentLength,
    TransferEncoding,
    /// Dropped: the service upgrades to nothing, and actix-http would take a websocket
    /// upgrade's following bytes for a tunnel.
    Upgrade,
}

/// Follows HTTP/1.1 request framing byte by byte (RFC 9112 as the contract narrows it).
#[derive(Default)]
struct Scanner {
    state: State,
    /// The request head being read, held back until it is complete.
    head: Vec<u8>,
    method_end: usize,
    target_start: usize,
    /// Target bytes as sent (the head holds them percent-encoded where needed).
    target_len: usize,
    version_start: usize,
    http10: bool,
    /// Where the header section starts in `head`, and where the current field line starts.
    fields_start: usize,
    line_start: usize,
    field: Field,
    value_start: usize,
    hosts: u32,
    content_length: Option<u64>,
    chunked: bool,
    /// The current chunk's size, and whether it has a digit yet.
    chunk: u64,
    chunk_digits: bool,
    /// Where each complete head (or stand-in) ends in the output, in order.
    ends: VecDeque<usize>,
}

const fn is_tchar(byte: u8) -> bool {
    matches!(
        byte,
        b'!' | b'#'..=b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
    ) || byte.is_ascii_alphanumeric()
}

/// Target bytes taken as if percent-encoded: printable ASCII that RFC 3986 does not allow
/// unencoded, and non-ASCII.
const fn needs_encoding(byte: u8) -> bool {
    matches!(
        byte,
        b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}' | 0x80..
    )
}

impl Scanner {
    fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while let Some(&byte) = input.first() {
            match self.state {
                State::PassThrough => {
                    out.extend_from_slice(input);
                    return;
                }
                State::Closed => return,
                State::Body(left) | State::ChunkData(left) => {
                    let n = input.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    input = &input[n..];
                    let left = left - n as u64;
                    self.state = match (self.state, left) {
                        (State::Body(_), 0) => State::LineStart,
                        (State::Body(_), _) => State::Body(left),
                        (_, 0) => State::ChunkDataCr,
                        (_, _) => State::ChunkData(left),
                    };
                }
                _ => {
                    if let Err(verdict) = self.byte(byte, out) {
                        self.refuse(verdict, out);
                    }
                    input = &input[1..];
                }
            }
        }
    }

    /// The input ended: a partial head goes out as it came, for actix-http to drop.
    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.state != State::Closed {
            out.append(&mut self.head);
        }
        self.state = State::PassThrough;
    }

    /// Replaces the request by a stand-in the app answers with `verdict`; closes the connection.
    fn refuse(&mut self, verdict: Verdict, out: &mut Vec<u8>) {
        // A 431 is an ordinary answer (a HEAD gets its headers only); a malformed request is
        // not trusted to be a HEAD.
        let method = if verdict == Verdict::HeadTooLarge && self.head[..self.method_end] == *b"HEAD" {
            "HEAD"
        } else {
            "GET"
        };
        out.extend_from_slice(format!("{method} / HTTP/1.1\r\nhost: cityref\r\nconnection: close\r\n").as_bytes());
        out.extend_from_slice(verdict.header_line().as_bytes());
        out.extend_from_slice(b"\r\n");
        self.ends.push_back(out.len());
        self.head = Vec::new();
        self.state = State::Closed;
    }

    fn byte(&mut self, byte: u8, out: &mut Vec<u8>) -> Result<(), Verdict> {
        use Verdict::Malformed;
        match self.state {
            State::LineStart => match byte {
                b'\r' => self.state = State::LeadingCr,
                _ if is_tchar(byte) => {
                    self.head.clear();
                    self.head.push(byte);
                    self.method_end = 0;
                    self.state = State::Method;
                }
                _ => return Err(Malformed),
            },
            State::LeadingCr if byte == b'\n' => self.state = State::LineStart,
            State::Method => match byte {
                b' ' => {
                    self.method_end = self.head.len();
                    self.head.push(byte);
                    self.target_start = self.head.len();
                    self.target_len = 0;
                    self.state = State::Target;
                }
                _ if is_tchar(byte) => self.head.push(byte),
                _ => return Err(Malformed),
            },
            State::Target => match byte {
                b' ' if self.target_len > 0 => {
                    self.head.push(byte);
                    self.version_start = self.head.len();
                    self.state = State::Version;
                }
                0..=b' ' | 0x7f => return Err(Malformed),
                _ => {
                    self.target_len += 1;
                    if self.target_len > MAX_REQUEST_TARGET {
                        // dropped: the request is answered 414 on its first 8192 bytes
                    } else if needs_encoding(byte) {
                        const HEX: &[u8; 16] = b"0123456789ABCDEF";
                        self.head
                            .extend_from_slice(&[b'%', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]]);
                    } else {
                        self.head.push(byte);
                    }
                }
            },
            State::Version => match byte {
                b'\r' => {
                    self.http10 = match &self.head[self.version_start..] {
                        b"HTTP/1.1" => false,
                        b"HTTP/1.0" => true,
                        _ => return Err(Malformed),
                    };
                    self.head.push(byte);
                    self.state = State::VersionLf;
                }
                _ if self.head.len() - self.version_start < b"HTTP/1.1".len() => self.head.push(byte),
                _ => return Err(Malformed),
            },
            State::VersionLf if byte == b'\n' => {
                self.head.push(byte);
                let encoded_len = self.version_start - 1 - self.target_start;
                if self.target_len > MAX_REQUEST_TARGET {
                    self.head
                        .extend_from_slice(Verdict::TargetTooLong.header_line().as_bytes());
                } else if encoded_len > MAX_REQUEST_TARGET {
                    self.head
                        .extend_from_slice(Verdict::TargetFits.header_line().as_bytes());
                }
                self.fields_start = self.head.len();
                self.hosts = 0;
                self.content_length = None;
                self.chunked = false;
                self.state = State::FieldStart;
            }
            State::FieldStart => {
                self.line_start = self.head.len();
                self.head.push(byte);
                match byte {
                    b'\r' => self.state = State::EndLf,
                    _ if is_tchar(byte) => self.state = State::FieldName,
                    _ => return Err(Malformed), // obs-fold, bare LF, whitespace or junk
                }
            }
            State::FieldName => {
                self.head.push(byte);
                match byte {
                    b':' => {
                        self.field = self.field_name();
                        self.value_start = self.head.len();
                        self.state = State::FieldValue;
                    }
                    _ if is_tchar(byte) => self.check_section_size()?,
                    _ => return Err(Malformed), // no colon, whitespace before it
                }
            }
            State::FieldValue => {
                self.head.push(byte);
                match byte {
                    b'\r' => self.state = State::FieldLf,
                    b'\t' => {}
                    0..=0x1f | 0x7f => return Err(Malformed),
                    _ => self.check_section_size()?,
                }
            }
            State::FieldLf if byte == b'\n' => {
                self.head.push(byte);
                self.field_line()?;
                self.state = State::FieldStart;
            }
            State::EndLf if byte == b'\n' => {
                self.head.push(byte);
                self.end_of_head(out)?;
            }
            State::ChunkSize => match byte {
                b'\r' if self.chunk_digits => self.state = State::ChunkSizeLf,
                b';' | b' ' | b'\t' if self.chunk_digits => self.state = State::ChunkExt,
                _ => {
                    let digit = (byte as char).to_digit(16).ok_or(Malformed)?;
                    self.chunk = self
                        .chunk
                        .checked_mul(16)
                        .map(|size| size + u64::from(digit))
                        .ok_or(Malformed)?;
                    self.chunk_digits = true;
                }
            },
            State::ChunkExt => match byte {
                b'\r' => self.state = State::ChunkSizeLf,
                b'\n' => return Err(Malformed),
                _ => {}
            },
            State::ChunkSizeLf if byte == b'\n' => {
                self.state = match self.chunk {
                    0 => State::Trailer { empty: true },
                    size => State::ChunkData(size),
                };
            }
            State::ChunkDataCr if byte == b'\r' => self.state = State::ChunkDataLf,
            State::ChunkDataLf if byte == b'\n' => self.start_chunk(),
            State::Trailer { empty } => match byte {
                b'\r' => self.state = State::TrailerLf { empty },
                b'\n' => return Err(Malformed),
                _ => self.state = State::Trailer { empty: false },
            },
            State::TrailerLf { empty } if byte == b'\n' => {
                self.state = if empty {
                    State::LineStart
                } else {
                    State::Trailer { empty: true }
                };
            }
            // a CR not followed by LF, or a bare LF
            State::LeadingCr
            | State::VersionLf
            | State::FieldLf
            | State::EndLf
            | State::ChunkSizeLf
            | State::ChunkDataCr
            | State::ChunkDataLf
            | State::TrailerLf { .. } => return Err(Malformed),
            State::Body(_) | State::ChunkData(_) | State::Closed | State::PassThrough => {
                unreachable!("handled in feed")
            }
        }
        Ok(())
    }

    fn check_section_size(&self) -> Result<(), Verdict> {
        match self.head.len() - self.fields_start > MAX_HEADER_SECTION {
            true => Err(Verdict::HeadTooLarge),
            false => Ok(()),
        }
    }

    fn field_name(&self) -> Field {
        let name = &self.head[self.line_start..self.head.len() - 1];
        [
            (Field::Host, &b"host"[..]),
            (Field::ContentLength, b"content-length"),
            (Field::TransferEncoding, b"transfer-encoding"),
            (Field::Upgrade, b"upgrade"),
        ]
        .into_iter()
        .find(|(_, known)| name.eq_ignore_ascii_case(known))
        .map_or(Field::Other, |(field, _)| field)
    }

    /// A complete field line (CRLF included) is at the end of `head`.
    fn field_line(&mut self) -> Result<(), Verdict> {
        let value = self.head[self.value_start..self.head.len() - 2].trim_ascii();
        let drop = match self.field {
            Field::Other => false,
            Field::Upgrade => true,
            Field::Host => {
                self.hosts += 1;
                false
            }
            Field::ContentLength => {
                let length = (!value.is_empty() && value.iter().all(u8::is_ascii_digit))
                    .then(|| std::str::from_utf8(value).ok()?.parse::<u64>().ok())
                    .flatten();
                match (length, self.content_length) {
                    (Some(length), None) => self.content_length = Some(length),
                    _ => return Err(Verdict::Malformed), // not one decimal number, or repeated
                }
                true // the wrapper reads the body
            }
            Field::TransferEncoding => {
                if self.chunked || !value.eq_ignore_ascii_case(b"chunked") {
                    return Err(Verdict::Malformed);
                }
                self.chunked = true;
                true
            }
        };
        if drop {
            self.head.truncate(self.line_start);
        }
        Ok(())
    }

    /// The empty line ending the head is at the end of `head`: check it, hand it on, follow its body.
    fn end_of_head(&mut self, out: &mut Vec<u8>) -> Result<(), Verdict> {
        if (self.content_length.is_some() && self.chunked) || self.hosts > 1 || (!self.http10 && self.hosts == 0) {
            return Err(Verdict::Malformed);
        }
        let method = &self.head[..self.method_end];
        let (connect, post) = (method == b"CONNECT", method == b"POST");
        if self.http10 && post {
            // actix-http refuses an HTTP/1.0 POST without Content-Length; its body is gone anyway
            let end = self.head.len() - 2;
            self.head.splice(end..end, *b"content-length: 0\r\n");
        }
        if connect {
            self.state = State::PassThrough; // actix-http takes the rest of the connection as a tunnel
        } else if self.chunked {
            self.start_chunk();
        } else {
            self.state = match self.content_length {
                Some(length) if length > 0 => State::Body(length),
                _ => State::LineStart,
            };
        }
        out.append(&mut self.head);
        self.ends.push_back(out.len());
        Ok(())
    }

    fn start_chunk(&mut self) {
        self.chunk = 0;
        self.chunk_digits = false;
        self.state = State::ChunkSize;
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

    /// `scan` at several chunk sizes, which must all agree; as text.
    fn scanned(input: impl AsRef<[u8]>) -> String {
        let input = input.as_ref();
        let whole = scan(input, input.len().max(1));
        for size in [1, 2, 7, 1000] {
            assert_eq!(scan(input, size), whole, "chunk size {size}");
        }
        String::from_utf8(whole).unwrap()
    }

    fn mark(verdict: Verdict) -> String {
        verdict.header_line()
    }

    fn stand_in(method: &str, verdict: Verdict) -> String {
        format!(
            "{method} / HTTP/1.1\r\nhost: cityref\r\nconnection: close\r\n{}\r\n",
            mark(verdict)
        )
    }

    const NEXT: &str = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

    #[test]
    fn well_formed_heads_pass_unchanged() {
        let input = format!(
            "GET /city/v1/get?id=1&language=en HTTP/1.1\r\nHost: x\r\nX-Name: Plze\u{148}\r\n\r\n\
             FOO /health HTTP/1.0\r\nConnection: keep-alive\r\nX-Tab: a\tb\r\n\r\n{NEXT}"
        );
        assert_eq!(scanned(&input), input);
        // empty lines before a request line are dropped
        assert_eq!(scanned(format!("\r\n\r\n{NEXT}")), NEXT);
    }

    #[test]
    fn bodies_are_read_and_discarded() {
        for body in [
            "Content-Length: 27\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
            "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1b;ext=1\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\n",
            "transfer-encoding: Chunked\r\n\r\n0\r\nTrailer: t\r\n\r\n",
            "Content-Length: 0\r\n\r\n",
        ] {
            let input = format!("GET /health HTTP/1.1\r\nHost: x\r\n{body}{NEXT}");
            assert_eq!(
                scanned(input),
                format!("GET /health HTTP/1.1\r\nHost: x\r\n\r\n{NEXT}"),
                "{body}"
            );
        }
        let post10 = "POST /health HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi";
        assert_eq!(
            scanned(format!("{post10}{NEXT}")),
            format!("POST /health HTTP/1.0\r\ncontent-length: 0\r\n\r\n{NEXT}")
        );
    }

    #[test]
    fn raw_target_bytes_are_percent_encoded() {
        let input = "GET /city/v1/get?language=\"<>\\^`{|}&x=Plze\u{148} HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(
            scanned(input),
            "GET /city/v1/get?language=%22%3C%3E%5C%5E%60%7B%7C%7D&x=Plze%C5%88 HTTP/1.1\r\nHost: x\r\n\r\n"
        );
        // within 8192 bytes as sent, longer encoded: served, marked so the app does not 414 it
        let target = format!("/health?{}", "{".repeat(8000));
        let encoded = format!("/health?{}", "%7B".repeat(8000));
        assert_eq!(
            scanned(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n")),
            format!("GET {encoded} HTTP/1.1\r\n{}Host: x\r\n\r\n", mark(Verdict::TargetFits))
        );
    }

    #[test]
    fn long_targets_are_cut_and_marked_on_every_request() {
        let target = format!("/city/v1/get?id=1&pad={}", "p".repeat(65536));
        let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n");
        let cut = format!(
            "GET {} HTTP/1.1\r\n{}Host: x\r\n\r\n",
            &target[..8192],
            mark(Verdict::TargetTooLong)
        );
        let exact = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "e".repeat(8191));
        let body = "DELETE /health HTTP/1.1\r\nHost: x\r\ncontent-length: 3\r\n\r\nabc";
        let input = format!("{NEXT}{request}{exact}{body}{request}");
        let expected = format!("{NEXT}{cut}{exact}DELETE /health HTTP/1.1\r\nHost: x\r\n\r\n{cut}");
        assert_eq!(scanned(input), expected);
    }

    #[test]
    fn malformed_requests_are_replaced_and_end_the_connection() {
        let malformed = stand_in("GET", Verdict::Malformed);
        for request in [
            "GET /health HTTP/1.1\nHost: x\n\n",
            "\n\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET  /health HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /health  HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET\t/health HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /health\tHTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /health\r\nHost: x\r\n\r\n",
            "GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /he\x01alth HTTP/1.1\r\nHost: x\r\n\r\n",
            "G(T /health HTTP/1.1\r\nHost: x\r\n\r\n",
            "HEAD /health HTTP/2.0\r\nHost: x\r\n\r\n",
            "GET /health http/1.1\r\nHost: x\r\n\r\n",
            "GET /health HTTP/1.1x\r\nHost: x\r\n\r\n",
            "GET /health HTTP/1\r\nHost: x\r\n\r\n",
            "GET /health HTTP/1.1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET /health HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Bad : 1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Bad\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Ctl: a\x01b\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Ctl: a\rb\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            // the pipelined request after it is never read
            assert_eq!(
                scanned(format!("{NEXT}{request}{NEXT}")),
                format!("{NEXT}{malformed}"),
                "{request:?}"
            );
        }
        // a broken chunked body: its request was answered; what follows is not a request
        let chunked = "GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(scanned(format!("{chunked}{NEXT}")), format!("{NEXT}{malformed}"));
    }

    #[test]
    fn header_sections_over_64_kib_are_431() {
        let pad = "p".repeat(MAX_HEADER_SECTION);
        for method in ["GET", "HEAD", "POST"] {
            let input = format!("{method} /health HTTP/1.1\r\nHost: x\r\nX-Pad: {pad}\r\n\r\n{NEXT}");
            let answer = if method == "HEAD" { "HEAD" } else { "GET" };
            assert_eq!(scanned(input), stand_in(answer, Verdict::HeadTooLarge));
        }
        let fits = format!(
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n",
            "p".repeat(16384)
        );
        assert_eq!(scanned(&fits), fits);
    }

    #[test]
    fn answers_are_counted_at_the_end_of_their_heads_and_interim_ones_are_not() {
        let mut counter = AnswerCounter::default();
        let answers = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}\
                       HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n";
        let counted: usize = answers
            .as_bytes()
            .chunks(3)
            .map(|c| counter.count(c.iter().copied()))
            .sum();
        assert_eq!(counted, 2);
        assert_eq!(counter.count(*b"HTTP/1.1 404 Not Found\r\n"), 0);
        assert_eq!(counter.count(*b"\r\n"), 1);
    }

    #[test]
    fn heads_are_handed_over_one_at_a_time() {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        let two = format!("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n{NEXT}");
        scanner.feed(two.as_bytes(), &mut out);
        assert_eq!(scanner.ends, [two.len() - NEXT.len(), two.len()]);
    }

    #[test]
    fn connect_passes_the_rest_through() {
        let input = format!("CONNECT example:443 HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03junk{NEXT}");
        assert_eq!(scanned(&input), input);
    }

    #[test]
    fn truncated_input_is_handed_over_as_it_came() {
        let input = b"GET /health?partial";
        assert_eq!(scan(input, 4), input.to_vec());
    }

    #[test]
    fn only_the_secret_marks_a_request() {
        let mut headers = HeaderMap::new();
        headers.insert(MARKER_HEADER.parse().unwrap(), "guess 400".parse().unwrap());
        assert_eq!(verdict(&headers), None);
        for (expected, _) in VERDICTS {
            let value = format!("{} {}", *MARKER, expected.code());
            headers.insert(MARKER_HEADER.parse().unwrap(), value.parse().unwrap());
            assert_eq!(verdict(&headers), Some(expected));
        }
    }
}
