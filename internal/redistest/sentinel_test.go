package redistest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// TestReplicatedAndSentinelFailover: a primary with two replicas, three
// sentinels that know them all, and a forced failover that the sentinels
// announce, after which the primary they name is one of the former
// replicas and answers as a primary.
func TestReplicatedAndSentinelFailover(t *testing.T) {
	testrun.SkipShort(t, "starts three servers and three sentinels, and fails over")
	t.Parallel()
	set := StartReplicated(t, 2)
	for _, r := range set.Replicas {
		if role, err := r.Role(); err != nil || role != "slave" {
			t.Fatalf("replica %s: role %q, %v", r.Addr, role, err)
		}
	}
	if _, err := set.Primary.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	s := StartSentinels(t, set, 3, SentinelOptions{})
	if got, err := s.PrimaryAddr(1); err != nil || got != set.Primary.Addr {
		t.Fatalf("sentinel names the primary %q (%v), want %s", got, err, set.Primary.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := s.Failover(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sw.From != set.Primary.Addr || !slices.ContainsFunc(set.Replicas, func(r *Server) bool { return r.Addr == sw.To }) {
		t.Fatalf("switch %s -> %s: want from %s to a replica", sw.From, sw.To, set.Primary.Addr)
	}
	if role, err := set.Server(sw.To).Role(); err != nil || role != "master" {
		t.Fatalf("new primary %s: role %q, %v", sw.To, role, err)
	}
	if got, err := s.PrimaryAddr(0); err != nil || got != sw.To {
		t.Fatalf("after the switch the sentinel names %q (%v), want %s", got, err, sw.To)
	}
}

// TestSentinelsWithACLAndTLS: sentinels that speak TLS only and require
// an ACL user, over data nodes that speak TLS and require a password.
func TestSentinelsWithACLAndTLS(t *testing.T) {
	testrun.SkipShort(t, "starts three TLS servers and three sentinels")
	t.Parallel()
	set := StartReplicatedTLS(t, 2, "--requirepass", "data-secret")
	s := StartSentinels(t, set, 3, SentinelOptions{User: "watcher", Password: "sentinel-secret", DataPassword: "data-secret"})
	if got, err := s.PrimaryAddr(2); err != nil || got != set.Primary.Addr {
		t.Fatalf("sentinel names the primary %q (%v), want %s", got, err, set.Primary.Addr)
	}
	anon := *s.Nodes[0]
	anon.user, anon.password = "", ""
	if _, err := anon.Do("SENTINEL", "MASTERS"); err == nil {
		t.Fatal("a sentinel answered a client that did not authenticate")
	}
}

// TestPauseFor: a paused server answers once the pause is over.
func TestPauseFor(t *testing.T) {
	testrun.SkipShort(t, "pauses a server")
	t.Parallel()
	s := Start(t)
	done := make(chan error, 1)
	go func() { done <- s.PauseFor(200 * time.Millisecond) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after the pause: %q, %v", got, err)
	}
}

// TestClusterWithReplicasFailoverAndReshard: a cluster of three primaries
// with a replica each; a replica takes its primary's place, then slots
// move between primaries with redis-cli --cluster reshard.
func TestClusterWithReplicasFailoverAndReshard(t *testing.T) {
	testrun.SkipShort(t, "starts a cluster of six nodes, fails over and reshards")
	t.Parallel()
	c := StartClusterWithReplicas(t, 3, 1)
	if len(c.Nodes) != 3 || len(c.Replicas) != 3 {
		t.Fatalf("%d primaries, %d replicas", len(c.Nodes), len(c.Replicas))
	}
	r := c.ReplicaOf(1)
	if len(r) != 1 {
		t.Fatalf("primary 1 has %d replicas", len(r))
	}
	old := c.Nodes[1]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Failover(ctx, r[0]); err != nil {
		t.Fatal(err)
	}
	if c.Nodes[1] != r[0] || !slices.Contains(c.Replicas, old) {
		t.Fatal("Nodes and Replicas do not follow the failover")
	}
	if role, err := old.Role(); err != nil || role != "slave" {
		t.Fatalf("former primary: role %q, %v", role, err)
	}
	before, err := c.owned(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reshard(ctx, 1, 0, 100); err != nil {
		t.Fatal(err)
	}
	after, err := c.owned(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(before)-len(after) != 100 {
		t.Fatalf("reshard: primary 1 went from %d to %d slots, want 100 fewer", len(before), len(after))
	}
}
