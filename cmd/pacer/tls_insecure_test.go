package main

import (
	"strings"
	"testing"
)

// TestInsecureWarnsOnce: --insecure says on stderr, once per command
// however many connections it makes, that the server's certificate is not
// verified; verification kept on says nothing.
func TestInsecureWarnsOnce(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{
		{"run", "--embedded", "--rate", "1k", "-n", "100", "-c", "3", "-t", "get", "--lag-limit", "1s", "-q"},
		{"bench", "--embedded", "-n", "300", "-c", "3", "-t", "get,set", "-q"},
	} {
		for _, insecure := range []bool{false, true} {
			args := append(cmd, "--tls")
			if insecure {
				args = append(args, "--insecure")
			}
			code, stdout, stderr := pacer(t, args...)
			if code != exitOK && code != exitUntrusted {
				t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
			}
			want := 0
			if insecure {
				want = 1
			}
			if n := strings.Count(stderr, insecureWarning+"\n"); n != want {
				t.Errorf("%v: the warning %d times, want %d: %q", args, n, want, stderr)
			}
		}
	}
}
