package main

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// scan feeds input to a scanner in chunks of size bytes and returns what net/http would read.
func scan(input string, size int) string {
	s := scanner{secret: "s3cret"}
	var out []byte
	for start := 0; start < len(input); start += size {
		out = s.feed([]byte(input[start:min(start+size, len(input))]), out)
	}
	return string(out)
}

// scanned is scan at several chunk sizes, which must all agree.
func scanned(t *testing.T, input string) string {
	t.Helper()
	whole := scan(input, max(len(input), 1))
	for _, size := range []int{1, 2, 7, 1000} {
		if got := scan(input, size); got != whole {
			t.Fatalf("chunk size %d: %q, whole: %q", size, got, whole)
		}
	}
	return whole
}

func standIn(method, mark string) string {
	return method + " / HTTP/1.1\r\nHost: cityref\r\nConnection: close\r\nX-Cityref-Wire: s3cret " + mark + "\r\n\r\n"
}

const next = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"

func TestWellFormedHeadsPassUnchanged(t *testing.T) {
	input := "GET /city/v1/get?id=1&language=\"en\"&x=Plze\u0148 HTTP/1.1\r\nHost: x\r\nX-Name: Plze\u0148\r\n\r\n" +
		"FOO /health HTTP/1.0\r\nConnection: keep-alive\r\nX-Tab: a\tb\r\n\r\n" + next
	if got := scanned(t, input); got != input {
		t.Errorf("got %q", got)
	}
	if got := scanned(t, "\r\n\r\n"+next); got != next {
		t.Errorf("empty lines before a request line: got %q", got)
	}
}

func TestBodiesAreReadAndDiscarded(t *testing.T) {
	for _, body := range []string{
		"Content-Length: 27\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1b;ext=1\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\n",
		"transfer-encoding: Chunked\r\n\r\n0\r\nTrailer: t\r\n\r\n",
		"Content-Length: 0\r\n\r\n",
	} {
		want := "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + next
		if got := scanned(t, "GET /health HTTP/1.1\r\nHost: x\r\n"+body+next); got != want {
			t.Errorf("%q: got %q", body, got)
		}
	}
}

func TestInvalidPathEscapesBecomeAnUnknownPath(t *testing.T) {
	for _, target := range []string{"/%zz", "/city/v1/get%", "/a%4?id=%zz"} {
		want := "GET /%25 HTTP/1.1\r\nHost: x\r\n\r\n"
		if got := scanned(t, "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n"); got != want {
			t.Errorf("%s: got %q", target, got)
		}
	}
	cut := "GET /" + strings.Repeat("a", 8190) + "%zz HTTP/1.1\r\nHost: x\r\n\r\n"
	if got := scanned(t, cut); got != "GET /%25 HTTP/1.1\r\nX-Cityref-Wire: s3cret 414\r\nHost: x\r\n\r\n" {
		t.Errorf("cut: got %.100q", got)
	}
	valid := "GET /city/v1/get%00?id=%zz HTTP/1.1\r\nHost: x\r\n\r\n"
	if got := scanned(t, valid); got != valid {
		t.Errorf("got %q", got)
	}
}

func TestLongTargetsAreCutAndMarkedOnEveryRequest(t *testing.T) {
	target := "/city/v1/get?id=1&pad=" + strings.Repeat("p", 65536)
	request := "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"
	cut := "GET " + target[:8192] + " HTTP/1.1\r\nX-Cityref-Wire: s3cret 414\r\nHost: x\r\n\r\n"
	exact := "GET /" + strings.Repeat("e", 8191) + " HTTP/1.1\r\nHost: x\r\n\r\n"
	body := "DELETE /health HTTP/1.1\r\nHost: x\r\ncontent-length: 3\r\n\r\nabc"
	want := next + cut + exact + "DELETE /health HTTP/1.1\r\nHost: x\r\n\r\n" + cut
	if got := scanned(t, next+request+exact+body+request); got != want {
		t.Errorf("got %.300q", got)
	}
}

func TestMalformedRequestsAreReplacedAndEndTheConnection(t *testing.T) {
	malformed := standIn("GET", markMalformed)
	for _, request := range []string{
		"GET /health HTTP/1.1\nHost: x\n\n",
		"\n\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET  /health HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /health  HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET\t/health HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /health\tHTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /health\r\nHost: x\r\n\r\n",
		"GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /he\x01alth HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /he\x7falth HTTP/1.1\r\nHost: x\r\n\r\n",
		"G(T /health HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD /health HTTP/2.0\r\nHost: x\r\n\r\n",
		"GET /health HTTP/1.2\r\nHost: x\r\n\r\n",
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
	} {
		// the pipelined request after it is never read
		if got := scanned(t, next+request+next); got != next+malformed {
			t.Errorf("%q: got %q", request, got)
		}
	}
	// a broken chunked body: its request was answered; what follows is not a request
	chunked := "GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
	if got := scanned(t, chunked+next); got != next+malformed {
		t.Errorf("broken chunked body: got %q", got)
	}
}

func TestHeaderSectionsOver64KiBAre431(t *testing.T) {
	pad := strings.Repeat("p", maxHeaderSection)
	for method, answer := range map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "GET"} {
		input := method + " /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + pad + "\r\n\r\n" + next
		if got := scanned(t, input); got != standIn(answer, markHeadTooLarge) {
			t.Errorf("%s: got %.200q", method, got)
		}
	}
	fits := "GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 16384) + "\r\n\r\n"
	if got := scanned(t, fits); got != fits {
		t.Errorf("16384 bytes: got %.200q", got)
	}
}

// exchange writes raw bytes to the test server, half-closes, and reads to the end.
func exchange(t *testing.T, raw string) string {
	t.Helper()
	server := testServer(t, io.Discard)
	conn, err := net.Dial("tcp", server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := io.Copy(&out, conn); err != nil {
		t.Fatalf("%.60q: %v", raw, err) // the server must close: a deadline here is a failure
	}
	return out.String()
}

func TestOnTheWireMalformedAndOversizedRequestsGetTheContractsJSONAndAClose(t *testing.T) {
	got := exchange(t, next+"GET /health HTTP/2.0\r\nHost: x\r\n\r\n"+next)
	if strings.Count(got, "HTTP/1.1 200 OK") != 1 || !strings.Contains(got, "HTTP/1.1 400 Bad Request\r\n") ||
		!strings.HasSuffix(got, "\r\n\r\n"+`{"message":"Bad Request: malformed request."}`) {
		t.Errorf("malformed: %q", got)
	}
	got = exchange(t, "HEAD /health HTTP/1.1\r\nHost: x\r\nX-Pad: "+strings.Repeat("p", 70000)+"\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 431 Request Header Fields Too Large\r\n") || !strings.HasSuffix(got, "\r\n\r\n") ||
		!strings.Contains(got, "Content-Type: application/json\r\n") {
		t.Errorf("431: %q", got)
	}
	// HTTP/1.0: closed after the answer; a target net/http refuses (no leading "/") goes
	// through the safety net
	for _, raw := range []string{"GET /health HTTP/1.0\r\n\r\n", "GET health HTTP/1.1\r\nHost: x\r\n\r\n" + next} {
		if got := exchange(t, raw); !strings.Contains(got, "Content-Type: application/json\r\n") ||
			strings.Count(got, "HTTP/1.") != 1 {
			t.Errorf("%q: %q", raw, got)
		}
	}
}

func TestOnlyTheSecretMarksARequest(t *testing.T) {
	got := exchange(t, "GET /health HTTP/1.1\r\nHost: x\r\nX-Cityref-Wire: guess 400\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("got %q", got)
	}
}
