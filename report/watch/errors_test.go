package watch

import (
	"bytes"
	"strings"
	"testing"
)

// TestErrorsEscapedAndRated: an error reply's text is printed escaped
// (no raw escape sequence reaches the terminal), and a burst prints at
// most one line a second (two if it straddles a second).
func TestErrorsEscapedAndRated(t *testing.T) {
	var b bytes.Buffer
	p := Errors(&b)
	for range 100 {
		p([]byte("ERR bad\x1b[31m"))
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n < 1 || n > 2 || strings.Contains(out, "\x1b") || !strings.HasPrefix(out, "Error from server: ERR bad") {
		t.Fatalf("%q", out)
	}
}
