package main

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
)

// TestMessagesCluster: against a Redis Cluster of 3 primaries, sharded
// Pub/Sub (SPUBLISH routed to each channel's slot, SSUBSCRIBE on the
// node that owns it), Pub/Sub over the cluster bus, streams routed by key
// with their consumers on each stream's node, and client-side caching with
// readers on every primary: every message delivered.
func TestMessagesCluster(t *testing.T) {
	testrun.SkipShort(t, "starts a Redis Cluster of 3 primaries")
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	port := strconv.Itoa(c.Nodes[1].Port)
	dir := t.TempDir()
	for _, sharded := range []bool{true, false} {
		out := filepath.Join(dir, "pubsub.json")
		args := []string{"pubsub", "--cluster", "-p", port, "--rate", "2k", "-n", "2000", "--channels", "6", "--subscribers", "12", "--json", out, "--lag-limit", "1s"}
		if sharded {
			args = append(args, "--sharded")
		}
		code, stdout, stderr := pacer(t, args...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("sharded %v: exit %d\n%s\n%s", sharded, code, stdout, stderr)
		}
		tt := resultDocument(t, out).Tests[0]
		m := tt.Messages
		if m.Expected != 4000 || m.Delivered != 4000 || m.Lost != 0 || len(tt.Nodes) != 3 {
			t.Errorf("sharded %v: expected %d delivered %d lost %d, %d nodes", sharded, m.Expected, m.Delivered, m.Lost, len(tt.Nodes))
		}
		if sharded {
			// SPUBLISH counts the subscribers of the node that owns the
			// slot: all of the channel's.
			if m.PublishReceivers.Sum != 4000 {
				t.Errorf("SPUBLISH counted %d receivers, want 4000", m.PublishReceivers.Sum)
			}
		}
	}
	out := filepath.Join(dir, "stream.json")
	code, stdout, stderr := pacer(t, "stream", "--cluster", "-p", port, "--rate", "2k", "-n", "2000", "--streams", "3", "--consumers", "3", "--json", out, "--lag-limit", "1s")
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("stream: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := resultDocument(t, out).Tests[0].Messages
	if m.Delivered != 2000 || m.Lost != 0 || m.Stream.Acked != 2000 {
		t.Errorf("stream: delivered %d lost %d acked %d", m.Delivered, m.Lost, m.Stream.Acked)
	}
	wantUsageError(t, "--cluster --sharded: --subscribers 2 is fewer than --channels 6", "pubsub", "--cluster", "-p", port, "--sharded", "--channels", "6", "--subscribers", "2")
	// Client-side caching: each reader caches the keys of every primary
	// on a connection to it, the writer routes each SET to its key's.
	for _, bcast := range []bool{false, true} {
		out := filepath.Join(dir, "tracking.json")
		args := []string{"tracking", "--cluster", "-p", port, "--rate", "2k", "-n", "3000", "--keys", "30", "--readers", "2", "--json", out, "--lag-limit", "1s"}
		if bcast {
			args = append(args, "--bcast")
		}
		code, stdout, stderr := pacer(t, args...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("tracking, bcast %v: exit %d\n%s\n%s", bcast, code, stdout, stderr)
		}
		tt := resultDocument(t, out).Tests[0]
		m := tt.Messages
		if m.Delivered+m.Tracking.Uncached != 6000 || m.Lost != 0 || m.Tracking.Spurious != 0 || len(m.Receivers) != 6 || len(tt.Nodes) != 3 {
			t.Errorf("tracking, bcast %v: delivered %d + uncached %d, lost %d, spurious %d; %d receivers, %d nodes",
				bcast, m.Delivered, m.Tracking.Uncached, m.Lost, m.Tracking.Spurious, len(m.Receivers), len(tt.Nodes))
		}
	}
	wantUsageError(t, "--closed with --cluster", "tracking", "--cluster", "-p", port, "--closed")
}

// TestMessagesTLSAndAuth: subscribers, consumers and caching readers
// connect as the publisher does, over TLS and with a password.
func TestMessagesTLSAndAuth(t *testing.T) {
	testrun.SkipShort(t, "starts a TLS redis-server with a password")
	t.Parallel()
	rs := redistest.StartTLS(t, redistest.TLSOptions{}, "--requirepass", "s3cret")
	for _, cmd := range []string{"pubsub", "stream", "tracking"} {
		out := filepath.Join(t.TempDir(), cmd+".json")
		code, stdout, stderr := pacer(t, cmd, "-p", rs.PortString(), "--tls", "--cacert", rs.TLS.CA, "-a", "s3cret",
			"--rate", "2k", "-n", "1000", "--json", out, "--lag-limit", "1s")
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("%s: exit %d\n%s\n%s", cmd, code, stdout, stderr)
		}
		tt := resultDocument(t, out).Tests[0]
		if tt.Messages.Lost != 0 || tt.Messages.Delivered == 0 || tt.TLS == nil {
			t.Errorf("%s: delivered %d lost %d tls %v", cmd, tt.Messages.Delivered, tt.Messages.Lost, tt.TLS)
		}
	}
}

// TestMessagesShardsMerge: two shards of one pubsub timeline, started
// together, merge into one result whose counts are their sums.
func TestMessagesShardsMerge(t *testing.T) {
	testrun.SkipShort(t, "runs two shards against a redis-server")
	t.Parallel()
	rs := redistest.Start(t)
	d := mergedShards(t, "pubsub", "-p", rs.PortString(), "--rate", "2k", "-n", "2000", "--subscribers", "2")
	m := d.Tests[0].Messages
	// Each shard publishes 1000 messages, each to its own 2 subscribers.
	if d.Mode != "pubsub" || m.Published != 2000 || m.Expected != 4000 || m.Delivered != 4000 || len(m.Receivers) != 4 || d.Tests[0].Counts.Completed != 2000 {
		t.Errorf("merged: mode %s, published %d expected %d delivered %d, %d receivers", d.Mode, m.Published, m.Expected, m.Delivered, len(m.Receivers))
	}
	// Each shard's subscribers saw the other's messages, as foreign.
	if m.Foreign != 4000 {
		t.Errorf("foreign %d, want each shard's 2 subscribers to see the other's 1000 messages", m.Foreign)
	}
}

// TestTrackingShardsMerge: two shards of one tracking timeline, started
// together against one redis-server, each writing keys of its own prefix
// (another shard's writes would invalidate its readers), merge into one
// result whose counts and tracking accounting are their sums.
func TestTrackingShardsMerge(t *testing.T) {
	testrun.SkipShort(t, "runs two tracking shards against a redis-server")
	t.Parallel()
	rs := redistest.Start(t)
	d := mergedShards(t, "tracking", "-p", rs.PortString(), "--rate", "2k", "-n", "2000", "--readers", "2", "--keys", "100")
	m := d.Tests[0].Messages
	// Each shard writes 1000 times to its own 100 keys, cached by its own
	// 2 readers: 2000 invalidations each, less the uncached.
	if d.Mode != "tracking" || m.Published != 2000 || m.Delivered+m.Tracking.Uncached != 4000 || m.Lost != 0 || len(m.Receivers) != 4 ||
		m.Foreign != 0 || m.Tracking.Spurious != 0 || m.Tracking.Pushes != m.Delivered {
		t.Errorf("merged: mode %s, published %d delivered %d lost %d foreign %d, %d receivers, tracking %+v", d.Mode, m.Published, m.Delivered, m.Lost, m.Foreign, len(m.Receivers), m.Tracking)
	}
}

// mergedShards runs args (a message command and its flags) as two shards
// of one timeline (seed 7) started together, each writing its own JSON,
// and returns their merge.
func mergedShards(t *testing.T, args ...string) *report.Document {
	t.Helper()
	dir := t.TempDir()
	type res struct {
		code           int
		stdout, stderr string
	}
	done := make(chan res, 2)
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	for k := 1; k <= 2; k++ {
		go func() {
			code, stdout, stderr := pacer(t, append(append([]string{}, args...), "--seed", "7", "--shard", strconv.Itoa(k)+"/2", "--start-at", at, "-q",
				"--json", filepath.Join(dir, "s"+strconv.Itoa(k)+".json"), "--lag-limit", "1s")...)
			done <- res{code, stdout, stderr}
		}()
	}
	for range 2 {
		r := <-done
		if r.code != exitOK && r.code != exitUntrusted {
			t.Fatalf("shard: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	}
	merged := filepath.Join(dir, "merged.json")
	code, _, stderr := pacer(t, "merge", filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2.json"), "-o", merged)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("merge: exit %d %s", code, stderr)
	}
	return resultDocument(t, merged)
}
