package redistest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestBinaryFoundOffPath: a test's PATH may lack the directory the
// package installed redis-server in; the integration tests must still run.
func TestBinaryFoundOffPath(t *testing.T) {
	want, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed here")
	}
	t.Setenv("PATH", t.TempDir())
	t.Setenv("PACER_REQUIRE_REDIS", "")
	var got string
	t.Run("find", func(t *testing.T) { got = Binary(t, "redis-server") })
	if filepath.Base(got) != "redis-server" || !sameFile(got, want) {
		t.Fatalf("Binary found %q with an empty PATH, want %s", got, want)
	}
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// TestBinaryNamedByEnvironment: PACER_REDIS_SERVER points at a build of
// one's own.
func TestBinaryNamedByEnvironment(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "my-redis")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PACER_REDIS_SERVER", fake)
	if got := find("redis-server"); got != fake {
		t.Fatalf("found %q, want %s", got, fake)
	}
}

// TestMissingBinarySaysSoOnce: a missing binary skips its tests and says
// so on stderr, once per binary.
func TestMissingBinarySaysSoOnce(t *testing.T) {
	var buf bytes.Buffer
	old := warnings
	warnings = &buf
	defer func() { warnings = old }()
	t.Setenv("PACER_REQUIRE_REDIS", "")
	const name = "pacer-no-such-server"
	for range 3 {
		t.Run("missing", func(t *testing.T) {
			Binary(t, name)
			t.Error("Binary returned for a missing binary")
		})
	}
	if n := strings.Count(buf.String(), name+" not found"); n != 1 {
		t.Fatalf("notice printed %d times: %q", n, buf.String())
	}
	if !strings.Contains(buf.String(), "SKIPPED") {
		t.Fatalf("notice %q does not say the tests are skipped", buf.String())
	}
}

func TestStartTLS(t *testing.T) {
	s := StartTLS(t, TLSOptions{AuthClients: true})
	if got, err := s.Do("SET", "k", "v"); err != nil || got != "OK" {
		t.Fatalf("SET over TLS: %q %v", got, err)
	}
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after restart: %q %v", got, err)
	}
}

// TestStartTLSCluster: a TLS cluster comes up with each node's own
// certificate, and a fourth TLS node joins it.
func TestStartTLSCluster(t *testing.T) {
	testrun.SkipShort(t, "starts a Redis Cluster (cmd/pacer's TestClusterTLSNodeNames uses one too, without -short)")
	c := StartTLSCluster(t, 3, func(i int) []string { return []string{"127.0.0.1", "node" + strconv.Itoa(i) + ".test"} })
	for i, s := range c.Nodes {
		if s.TLS == nil {
			t.Fatalf("node %d has no TLS", i)
		}
		pem, err := os.ReadFile(s.TLS.ServerCert)
		if err != nil || !strings.Contains(string(pem), "CERTIFICATE") {
			t.Fatalf("node %d certificate: %v", i, err)
		}
	}
	v, err := c.Nodes[1].Query("CLUSTER", "SLOTS")
	if err != nil {
		t.Fatal(err)
	}
	if arr, _ := v.([]any); len(arr) != 3 {
		t.Fatalf("CLUSTER SLOTS over TLS: %v", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Join(ctx, c.StartNode(t)); err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 4 || c.CA() == "" {
		t.Fatalf("%d nodes, CA %q", len(c.Nodes), c.CA())
	}
}

// TestServersStayOutOfTheEphemeralRange: a server's port comes from below
// the range the kernel hands out for port 0 and clients' own ends, so
// that no other test can take it while a killed server waits for Restart.
func TestServersStayOutOfTheEphemeralRange(t *testing.T) {
	first := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			first, _ = strconv.Atoi(f[0])
		}
	}
	srv := Start(t)
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.Port < 20000 || srv.Port >= first {
		t.Fatalf("server on port %d: want 20000 up to the ephemeral range, %d", srv.Port, first)
	}
	if got, err := srv.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("after Restart: %q, %v", got, err)
	}
}
