// net/http alone: a hello-world server on 127.0.0.1:$PORT (default 18913) whose one handler answers
// every request with its method, its path and what net/http handed over of its framing (the body it
// read, TransferEncoding, and whether a Content-Length header is still there). Standard library only.
// Run by repro.sh (`go run .`); see ../../go-net-http-te-cl-keep-alive.md.
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
)

func hello(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprintf(w, "hello %s %s: body %q, TransferEncoding %q, Content-Length header %q\n",
		r.Method, r.URL.Path, body, r.TransferEncoding, r.Header.Get("Content-Length"))
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "18913"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		log.Fatal(err)
	}
	// repro.sh waits for this line, and stops the server by this pid (`go run` does not pass
	// SIGTERM on to the program it built).
	fmt.Printf("listening on %s (%s) pid %d\n", ln.Addr(), runtime.Version(), os.Getpid())
	log.Fatal(http.Serve(ln, http.HandlerFunc(hello)))
}
