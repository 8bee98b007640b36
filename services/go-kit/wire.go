package main

// The contract's HTTP layer ("What the HTTP layer accepts", spec/openapi.yaml) on each TCP
// connection, before net/http reads it.
//
// net/http answers the requests it cannot parse itself, in plain text, with no hook for the body
// (server.go writes "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain…" straight to the
// connection: an invalid path escape, a space or control byte in the target, a missing or second
// Host, a bad Content-Length, HTTP/2.0 as 505, a transfer coding other than chunked as 501, a
// header section over MaxHeaderBytes as 431), and it accepts some requests the contract calls
// malformed (bare-LF line ends, obs-fold lines, Content-Length together with chunked, HTTP/1.2).
// So the listener wraps each connection in a wireConn, which reads every request head before
// net/http does, checks it against the contract's rules, and holds it back until it is complete:
//
//   - a well-formed head goes on as it came, without its framing headers: the wrapper reads and
//     discards bodies (Content-Length and chunked) itself, so a body is never taken for a request
//     and never closes a keep-alive connection; a path with an invalid percent escape goes on
//     as "/%25" (it can match no route: 404);
//   - a target over 8192 bytes is cut to its first 8192 bytes and marked (414);
//   - a malformed head, or one whose header section passes 65536 bytes, is replaced by a
//     stand-in request (Connection: close, marked 400 or 431), and nothing after it is read as
//     a request.
//
// Marks are the header "X-Cityref-Wire: <per-process secret> <code>"; WireMiddleware answers
// them with the contract's JSON, logged and counted like any other request. The stand-in keeps
// responses in order on a pipelined connection, which writing an answer from here would not.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// maxHeaderSection: a header section (the field lines) longer than this is answered 431.
const maxHeaderSection = 65536

// wireHeader carries a wireConn's verdict on a request to WireMiddleware.
const wireHeader = "X-Cityref-Wire"

// The verdicts, as written after the secret.
const (
	markTargetTooLong = "414"
	markMalformed     = "400"
	markHeadTooLarge  = "431"
)

// Wire is one process's wrapper: its secret, unguessable so that a client cannot ask for an
// answer by sending the header itself.
type Wire struct{ secret string }

// NewWire draws a secret.
func NewWire() Wire {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return Wire{secret: hex.EncodeToString(b)}
}

// Listen wraps every connection l accepts.
func (w Wire) Listen(l net.Listener) net.Listener { return wireListener{l, w.secret} }

// Middleware answers the requests a wireConn marked, and strips any other X-Cityref-Wire.
func (w Wire) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		values, marked := r.Header[wireHeader]
		if !marked {
			next.ServeHTTP(rw, r)
			return
		}
		delete(r.Header, wireHeader)
		if len(values) == 1 {
			switch values[0] {
			case w.secret + " " + markTargetTooLong:
				encodeError(r.Context(), errURITooLong, rw)
				return
			case w.secret + " " + markMalformed:
				encodeError(r.Context(), errMalformed, rw)
				return
			case w.secret + " " + markHeadTooLarge:
				encodeError(r.Context(), errHeaderFieldsTooLarge, rw)
				return
			}
		}
		next.ServeHTTP(rw, r)
	})
}

type wireListener struct {
	net.Listener
	secret string
}

func (l wireListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: conn, scanner: scanner{secret: l.secret}}, nil
}

// wireConn hands net/http what its scanner let through. Reads resume where they stopped: net/http
// interrupts a pending read (a deadline in the past) when a handler finishes, and no byte read
// from the network is lost when that happens.
type wireConn struct {
	net.Conn
	scanner scanner
	in      []byte // read from the network, not scanned yet
	out     []byte // scanned, not yet handed to net/http
	buf     [4096]byte
}

func (c *wireConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if len(c.in) == 0 {
			n, err := c.Conn.Read(c.buf[:])
			if n == 0 {
				// A partial head stays where it is: after an interrupted read the next one
				// resumes it; at the end of input net/http closes the connection silently.
				return 0, err
			}
			c.in = c.buf[:n]
		}
		c.out = c.scanner.feed(c.in, c.out)
		c.in = nil
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	if len(c.out) == 0 {
		c.out = nil // do not keep a large head's array alive
	}
	return n, nil
}

// Write replaces the plain-text error answers net/http writes itself for requests the scanner
// let through (none is expected: this is a safety net) by the contract's JSON: 431 for its
// header limit, 400 "malformed request" for everything else (its 400, 501 and 505).
func (c *wireConn) Write(p []byte) (int, error) {
	// net/http's own answers are all 4xx or 5xx: a 2xx answer (the hot path) is not searched.
	if len(p) < 10 || !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) || (p[9] != '4' && p[9] != '5') ||
		!bytes.Contains(p, netHTTPErrorHeaders) {
		return c.Conn.Write(p)
	}
	answer := errMalformed
	if bytes.HasPrefix(p, []byte("HTTP/1.1 431 ")) {
		answer = errHeaderFieldsTooLarge
	}
	body, _ := marshalJSON(answer.Body())
	_, err := fmt.Fprintf(c.Conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		answer.Status, http.StatusText(answer.Status), len(body), body)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// netHTTPErrorHeaders: what net/http's own error answers (server.go, "errorHeaders") carry and
// the service's answers never do.
var netHTTPErrorHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

// CloseWrite lets net/http half-close the connection (it looks for the method).
func (c *wireConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close, after a stand-in, is a lingering close: bytes the client sent that nobody read (the
// rest of an oversized head, requests after a malformed one) would turn a plain close into a
// reset, which can destroy the answer before the client reads it. So the write side is
// half-closed at once (the client sees the end of the answer), and the rest is read and
// discarded for up to 500 ms (net/http's own rstAvoidanceDelay) before the connection closes.
func (c *wireConn) Close() error {
	if !c.scanner.closed {
		return c.Conn.Close()
	}
	_ = c.CloseWrite()
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, c.Conn)
		_ = c.Conn.Close()
	}()
	return nil
}

type scanState uint8

const (
	stLineStart   scanState = iota // before a request line (empty CRLF lines allowed)
	stLeadingCR                    // the CR of an empty line before the request line
	stMethod                       //
	stTarget                       //
	stVersion                      //
	stVersionLF                    //
	stFieldStart                   // a field line or the empty line ending the head
	stFieldName                    //
	stFieldValue                   //
	stFieldLF                      //
	stEndLF                        //
	stBody                         // discarding a Content-Length body
	stChunkSize                    //
	stChunkExt                     //
	stChunkSizeLF                  //
	stChunkData                    //
	stChunkDataCR                  //
	stChunkDataLF                  //
	stTrailer                      // trailer lines after the last chunk
	stTrailerLF                    //
	stClosed                       // after a stand-in: everything is discarded
)

// scanner follows HTTP/1.1 request framing byte by byte (RFC 9112 as the contract narrows it).
type scanner struct {
	secret string
	state  scanState
	closed bool

	head        []byte // the request head being read, held back until it is complete
	methodEnd   int
	targetStart int
	targetLen   int // target bytes as sent (head keeps the first maxRequestTarget)
	pathEnd     int // where the path ends in head (the target's '?', or its end)
	badEscape   bool
	versionAt   int
	fieldsStart int // where the header section starts in head
	lineStart   int // where the current field line starts
	valueStart  int
	http10      bool
	hosts       int
	length      int64 // Content-Length, -1 if none
	chunked     bool
	remaining   uint64 // body or chunk bytes left
	chunkDigits bool
	emptyLine   bool // trailer: at the start of an empty line
}

func isTchar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// feed scans input and appends what net/http may read to out.
func (s *scanner) feed(input []byte, out []byte) []byte {
	for len(input) > 0 {
		switch s.state {
		case stClosed:
			return out
		case stBody, stChunkData:
			n := uint64(len(input))
			if n > s.remaining {
				n = s.remaining
			}
			input = input[n:]
			s.remaining -= n
			if s.remaining == 0 {
				if s.state == stBody {
					s.state = stLineStart
				} else {
					s.state = stChunkDataCR
				}
			}
			continue
		}
		var err string
		out, err = s.byte(input[0], out)
		input = input[1:]
		if err != "" {
			out = s.refuse(err, out)
		}
	}
	return out
}

// refuse replaces the request by a stand-in WireMiddleware answers with mark; nothing after it
// is read as a request. A 431 is an ordinary answer (a HEAD gets its headers only); a malformed
// request is not trusted to be a HEAD.
func (s *scanner) refuse(mark string, out []byte) []byte {
	method := "GET"
	if mark == markHeadTooLarge && s.methodEnd > 0 && string(s.head[:s.methodEnd]) == http.MethodHead {
		method = http.MethodHead
	}
	out = append(out, method+" / HTTP/1.1\r\nHost: cityref\r\nConnection: close\r\n"+
		wireHeader+": "+s.secret+" "+mark+"\r\n\r\n"...)
	s.head = nil
	s.state = stClosed
	s.closed = true
	return out
}

// byte takes one byte of a head or of a chunked body's framing; a non-empty result is a mark to
// refuse the request with.
func (s *scanner) byte(b byte, out []byte) ([]byte, string) {
	switch s.state {
	case stLineStart:
		switch {
		case b == '\r':
			s.state = stLeadingCR
		case isTchar(b):
			s.head = append(s.head[:0], b)
			s.methodEnd = 0
			s.state = stMethod
		default:
			return out, markMalformed
		}
	case stLeadingCR:
		if b != '\n' {
			return out, markMalformed
		}
		s.state = stLineStart
	case stMethod:
		switch {
		case b == ' ':
			s.methodEnd = len(s.head)
			s.head = append(s.head, b)
			s.targetStart, s.targetLen, s.pathEnd, s.badEscape = len(s.head), 0, 0, false
			s.state = stTarget
		case isTchar(b):
			s.head = append(s.head, b)
		default:
			return out, markMalformed
		}
	case stTarget:
		switch {
		case b == ' ' && s.targetLen > 0:
			s.endTarget()
			s.head = append(s.head, b)
			s.versionAt = len(s.head)
			s.state = stVersion
		case b <= ' ' || b == 0x7f:
			return out, markMalformed
		default:
			s.targetLen++
			if s.targetLen <= maxRequestTarget { // past it the request is answered 414 on its start
				s.head = append(s.head, b)
			}
		}
	case stVersion:
		switch {
		case b == '\r':
			switch string(s.head[s.versionAt:]) {
			case "HTTP/1.1":
				s.http10 = false
			case "HTTP/1.0":
				s.http10 = true
			default:
				return out, markMalformed
			}
			s.head = append(s.head, b)
			s.state = stVersionLF
		case len(s.head)-s.versionAt < len("HTTP/1.1"):
			s.head = append(s.head, b)
		default:
			return out, markMalformed
		}
	case stVersionLF:
		if b != '\n' {
			return out, markMalformed
		}
		s.head = append(s.head, b)
		if s.targetLen > maxRequestTarget {
			s.head = append(s.head, wireHeader+": "+s.secret+" "+markTargetTooLong+"\r\n"...)
		}
		s.fieldsStart, s.hosts, s.length, s.chunked = len(s.head), 0, -1, false
		s.state = stFieldStart
	case stFieldStart:
		s.lineStart = len(s.head)
		s.head = append(s.head, b)
		switch {
		case b == '\r':
			s.state = stEndLF
		case isTchar(b):
			s.state = stFieldName
		default:
			return out, markMalformed // obs-fold, bare LF, whitespace or junk
		}
	case stFieldName:
		s.head = append(s.head, b)
		switch {
		case b == ':':
			s.valueStart = len(s.head)
			s.state = stFieldValue
		case !isTchar(b):
			return out, markMalformed // no colon, whitespace before it
		case len(s.head)-s.fieldsStart > maxHeaderSection:
			return out, markHeadTooLarge
		}
	case stFieldValue:
		s.head = append(s.head, b)
		switch {
		case b == '\r':
			s.state = stFieldLF
		case b == '\t':
		case b < 0x20 || b == 0x7f:
			return out, markMalformed
		case len(s.head)-s.fieldsStart > maxHeaderSection:
			return out, markHeadTooLarge
		}
	case stFieldLF:
		if b != '\n' {
			return out, markMalformed
		}
		s.head = append(s.head, b)
		if mark := s.fieldLine(); mark != "" {
			return out, mark
		}
		s.state = stFieldStart
	case stEndLF:
		if b != '\n' {
			return out, markMalformed
		}
		s.head = append(s.head, b)
		return s.endOfHead(out)
	case stChunkSize:
		switch {
		case (b == '\r') && s.chunkDigits:
			s.state = stChunkSizeLF
		case (b == ';' || b == ' ' || b == '\t') && s.chunkDigits:
			s.state = stChunkExt
		case isHex(b) && s.remaining < 1<<56:
			s.remaining = s.remaining<<4 | uint64(unhex(b))
			s.chunkDigits = true
		default:
			return out, markMalformed
		}
	case stChunkExt:
		switch b {
		case '\r':
			s.state = stChunkSizeLF
		case '\n':
			return out, markMalformed
		}
	case stChunkSizeLF:
		switch {
		case b != '\n':
			return out, markMalformed
		case s.remaining == 0:
			s.state, s.emptyLine = stTrailer, true
		default:
			s.state = stChunkData
		}
	case stChunkDataCR:
		if b != '\r' {
			return out, markMalformed
		}
		s.state = stChunkDataLF
	case stChunkDataLF:
		if b != '\n' {
			return out, markMalformed
		}
		s.startChunk()
	case stTrailer:
		switch b {
		case '\r':
			s.state = stTrailerLF
		case '\n':
			return out, markMalformed
		default:
			s.emptyLine = false
		}
	case stTrailerLF:
		switch {
		case b != '\n':
			return out, markMalformed
		case s.emptyLine:
			s.state = stLineStart
		default:
			s.state, s.emptyLine = stTrailer, true
		}
	}
	return out, ""
}

// endTarget: a path with an invalid percent escape (net/http would answer it with a plain-text
// 400) can match no route; it goes on as "/%25", which is answered 404 (414 if the target was
// cut: the cut one is checked too, as the cut may split an escape).
func (s *scanner) endTarget() {
	target := s.head[s.targetStart:]
	path := target
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		path = target[:i]
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && (i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2])) {
			s.head = append(s.head[:s.targetStart], "/%25"...)
			return
		}
	}
}

// fieldLine checks a complete field line (CRLF included) at the end of head, and drops the
// framing headers: the wrapper reads the body.
func (s *scanner) fieldLine() string {
	name := s.head[s.lineStart : s.valueStart-1]
	switch {
	case bytes.EqualFold(name, []byte("Host")):
		s.hosts++
		return ""
	case bytes.EqualFold(name, []byte("Content-Length")):
		value := bytes.Trim(s.head[s.valueStart:len(s.head)-2], " \t")
		if s.length >= 0 || len(value) == 0 || len(value) > 18 {
			return markMalformed // repeated, empty or beyond int64
		}
		s.length = 0
		for _, digit := range value {
			if digit < '0' || digit > '9' {
				return markMalformed // not one decimal number
			}
			s.length = s.length*10 + int64(digit-'0')
		}
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		value := bytes.Trim(s.head[s.valueStart:len(s.head)-2], " \t")
		if s.chunked || !bytes.EqualFold(value, []byte("chunked")) {
			return markMalformed
		}
		s.chunked = true
	default:
		return ""
	}
	s.head = s.head[:s.lineStart]
	return ""
}

// endOfHead: the empty line ending the head is at the end of head; check it, hand it on, and
// follow its body.
func (s *scanner) endOfHead(out []byte) ([]byte, string) {
	if s.length >= 0 && s.chunked || s.hosts > 1 || !s.http10 && s.hosts == 0 {
		return out, markMalformed
	}
	switch {
	case s.chunked:
		s.startChunk()
	case s.length > 0:
		s.state, s.remaining = stBody, uint64(s.length)
	default:
		s.state = stLineStart
	}
	out = append(out, s.head...)
	s.head = s.head[:0]
	return out, ""
}

func (s *scanner) startChunk() {
	s.remaining, s.chunkDigits = 0, false
	s.state = stChunkSize
}
