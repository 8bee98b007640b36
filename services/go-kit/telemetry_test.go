package main

import (
	"errors"
	"fmt"
	"testing"
)

// opaque wraps a cause without putting its text in its own (as fmt.Errorf's %w always does).
type opaque struct {
	text  string
	cause error
}

func (e opaque) Error() string { return e.text }
func (e opaque) Unwrap() error { return e.cause }

// The spec's rule for a failure in a log line: the failure's text, then each cause's text that
// the text so far does not already contain, joined by ": ".
func TestDescribe(t *testing.T) {
	refused := errors.New("connect: connection refused")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", refused, "connect: connection refused"},
		{"%w: the cause is in the text already", fmt.Errorf("dial tcp 127.0.0.1:1: %w", refused),
			"dial tcp 127.0.0.1:1: connect: connection refused"},
		{"a cause not in the text", opaque{"error sending request", refused},
			"error sending request: connect: connection refused"},
		{"a cause an earlier cause already brought", opaque{"request failed", opaque{"client error: connect: connection refused", refused}},
			"request failed: client error: connect: connection refused"},
		{"each cause not yet in the text", opaque{"a", opaque{"b", opaque{"a", errors.New("c")}}}, "a: b: c"},
		{"errors.Join", opaque{"startup", errors.Join(errors.New("x"), errors.New("y"))}, "startup: x\ny"},
	}
	for _, tt := range tests {
		if got := describe(tt.err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
