//go:build pprof

// The profile build of scripts/profile.sh (`go build -tags pprof`): net/http/pprof's handlers on
// 127.0.0.1:6060, on a listener of their own (like the debug listener of go-kit's addsvc example,
// examples/addsvc/cmd/addsvc). The service's own binary is built without this file.
package main

import (
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"time"
)

func init() {
	server := &http.Server{Addr: "127.0.0.1:6060", ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = server.ListenAndServe() }()
}
