package main

import (
	"path/filepath"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

func TestStreamUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--groups 0", []string{"stream", "--embedded", "--groups", "0"}},
		{"--consumers 0", []string{"stream", "--embedded", "--consumers", "0"}},
		{"--count 0", []string{"stream", "--embedded", "--count", "0"}},
		{"--block 0s", []string{"stream", "--embedded", "--block", "0"}},
		{"--maxlen -1", []string{"stream", "--embedded", "--maxlen", "-1"}},
		{"-d \"8\"", []string{"stream", "--embedded", "-d", "8"}},
		{"--consumer-delay -1ms", []string{"stream", "--embedded", "--consumer-delay", "-1ms"}},
		{"lag", []string{"stream", "--embedded", "--slo", "lag<=x"}},
	} {
		wantUsageError(t, c.want, c.args...)
	}
}

// TestStreamEmbedded: every entry reaches one consumer of each group,
// once, and is acknowledged once; the JSON says so in stream's terms.
func TestStreamEmbedded(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "stream.json")
	code, stdout, stderr := pacer(t, "stream", "--embedded", "--rate", "2k", "-n", "1000", "--groups", "2", "--consumers", "2",
		"--slo", "loss<=0,lag<=5000", "--json", out, "--lag-limit", "1s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	d := resultDocument(t, out)
	m := d.Tests[0].Messages
	if d.Mode != "stream" || m.Kind != "stream" || m.Expected != 2000 || m.Delivered != 2000 || m.Lost != 0 || m.Stream == nil ||
		m.Stream.Added != 1000 || m.Stream.Acked != 2000 || m.Stream.Redelivered != 0 || m.Stream.Lag == nil || len(m.Receivers) != 4 {
		t.Fatalf("messages %+v stream %+v", m, m.Stream)
	}
	testrun.Contains(t, stdout, "at least once  added 1000; delivered 2000, redelivered 0, never delivered 0; acknowledged 2000", "consumer lag", "per consumer", "slo: pass")
}

// TestStreamAtLeastOnceAndLag: against redis-server, 5000 entries a
// second to one group of 4 consumers: with consumers that keep up every
// entry is delivered and acknowledged exactly once and the lag is flat;
// with consumers 20% too slow the lag grows through the run, which is
// called unsustainable and fails lag<=1000 (exit 3). (The 20 s
// runs are shortened: the trend shows in 8 intervals.)
func TestStreamAtLeastOnceAndLag(t *testing.T) {
	testrun.SkipShort(t, "starts a redis-server and runs 2 × 8 s of entries")
	rs := redistest.Start(t)
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	code, stdout, stderr := pacer(t, "stream", "-p", rs.PortString(), "--rate", "5k", "--duration", "8s", "--consumers", "4", "--slo", "lag<=1000", "--json", ok)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("keeping up: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := resultDocument(t, ok).Tests[0].Messages
	if m.Stream.Added != 40000 || m.Delivered != 40000 || m.Stream.Acked != 40000 || m.Stream.Redelivered != 0 || m.Lost != 0 || m.Stream.Lag.Rising {
		t.Errorf("keeping up: delivered %d of %d, acked %d, redelivered %d, lag %+v", m.Delivered, m.Stream.Added, m.Stream.Acked, m.Stream.Redelivered, m.Stream.Lag)
	}
	slow := filepath.Join(dir, "slow.json")
	// 4 consumers at 1 ms an entry take 4000 of the 5000 a second.
	code, stdout, stderr = pacer(t, "stream", "-p", rs.PortString(), "--rate", "5k", "--duration", "8s", "--consumers", "4", "--consumer-delay", "1ms",
		"--slo", "lag<=1000", "--json", slow, "--drain", "1s")
	if code != exitSLO {
		t.Fatalf("20%% too slow: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	l := resultDocument(t, slow).Tests[0].Messages.Stream.Lag
	if !l.Rising || l.Sustainable || l.GrowthPerS < 500 || l.MaxEntries < 4000 {
		t.Errorf("20%% too slow: lag %+v, want rising by about 1000 entries/s", l)
	}
	testrun.Contains(t, stdout, "RISING", "unsustainable")
}
