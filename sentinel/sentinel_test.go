package sentinel

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestDiscoverSkipsSentinelsThatDoNotAnswer: a sentinel nothing listens
// on, and one that is frozen, are skipped within the timeout each; the
// next one names the primary and both replicas. With all of them gone
// Discover fails, naming each, instead of waiting.
func TestDiscoverSkipsSentinelsThatDoNotAnswer(t *testing.T) {
	testrun.SkipShort(t, "starts three servers and three sentinels")
	t.Parallel()
	set := redistest.StartReplicated(t, 2)
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{})
	if err := s.Nodes[1].Pause(); err != nil {
		t.Fatal(err)
	}
	defer s.Nodes[1].Resume()
	c := Config{Addrs: []string{deadAddr(t), s.Nodes[1].Addr, s.Nodes[2].Addr}, Master: s.Master, Timeout: 300 * time.Millisecond}
	start := time.Now()
	top, err := Discover(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if top.Primary != set.Primary.Addr || top.From != s.Nodes[2].Addr || len(top.Skipped) != 2 || top.ConfigEpoch < 0 {
		t.Fatalf("topology %+v", top)
	}
	up := upReplicas(top)
	slices.Sort(up)
	want := []string{set.Replicas[0].Addr, set.Replicas[1].Addr}
	slices.Sort(want)
	if !slices.Equal(up, want) {
		t.Fatalf("replicas %v, want %v", up, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Discover took %v", d)
	}
	c.Addrs = c.Addrs[:2]
	c.Master = s.Master
	_, err = Discover(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "no sentinel answered") || !strings.Contains(err.Error(), s.Nodes[1].Addr) {
		t.Fatalf("all sentinels gone: %v", err)
	}
	c.Addrs = []string{s.Nodes[2].Addr}
	c.Master = "nosuch"
	if _, err = Discover(context.Background(), c); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Fatalf("unknown master: %v", err)
	}
}

// TestFollowFailover: a Follower sees the forced failover's
// +switch-master, moves Primary to the promoted replica, notes one
// failover event, and keeps following on another sentinel once the one
// it listened to is killed.
func TestFollowFailover(t *testing.T) {
	testrun.SkipShort(t, "starts three servers and three sentinels, and fails over")
	t.Parallel()
	set := redistest.StartReplicated(t, 2)
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{})
	c := Config{Addrs: []string{s.Nodes[0].Addr, s.Nodes[1].Addr, s.Nodes[2].Addr}, Master: s.Master}
	top, err := Discover(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	f := Follow(context.Background(), c, top, nil)
	defer f.Close()
	log := events.NewLog()
	f.SetLog(log)
	switched := make(chan string, 4)
	f.OnSwitch(func(_, to string) { switched <- to })
	waitFor(t, func() bool { return f.Listening() == s.Nodes[0].Addr }, "the subscription")
	s.Nodes[0].Kill() // the one listened to: another takes over
	waitFor(t, func() bool { l := f.Listening(); return l != "" && l != s.Nodes[0].Addr }, "a new subscription")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := s.Failover(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case to := <-switched:
		if to != sw.To {
			t.Fatalf("followed to %s, the sentinels said %s", to, sw.To)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no switch followed")
	}
	if p, epoch := f.Primary(); p != sw.To || epoch != 1 {
		t.Fatalf("primary %s epoch %d", p, epoch)
	}
	evs, _ := log.Events()
	if len(evs) != 1 || evs[0].Kind != events.Failover || !slices.Contains(evs[0].Nodes, sw.From) || !slices.Contains(evs[0].Nodes, sw.To) {
		t.Fatalf("events %+v", evs)
	}
	for _, r := range f.Replicas() {
		if r.Addr == sw.To {
			t.Fatalf("the new primary is still a replica: %+v", f.Replicas())
		}
	}
}

// TestFollowFirstAnnouncement: the sentinel that leads a failover
// announces +switch-master last, once it has reconfigured the other
// replicas, a second or more after the others have learnt the new
// configuration from it and announced it. A Follower whose subscription
// is on the leader follows the switch from the first announcement,
// another sentinel's, not the leader's. The periodic refresh is off
// meanwhile (the test is not parallel for it), so that only the
// announcements can move it.
func TestFollowFirstAnnouncement(t *testing.T) {
	testrun.SkipShort(t, "starts three servers and three sentinels, and fails over")
	set := redistest.StartReplicated(t, 2)
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{})
	c := Config{Addrs: []string{s.Nodes[0].Addr, s.Nodes[1].Addr, s.Nodes[2].Addr}, Master: s.Master}
	top, err := Discover(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { refreshEvery = d }(refreshEvery)
	refreshEvery = time.Hour
	f := Follow(context.Background(), c, top, nil)
	defer f.Close()
	log := events.NewLog()
	f.SetLog(log)
	waitFor(t, func() bool { return f.Listening() == s.Nodes[0].Addr }, "the subscription")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := s.Failover(ctx, 0) // the sentinel listened to leads it
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { p, _ := f.Primary(); return p == sw.To }, "the switch followed")
	evs, _ := log.Events()
	if len(evs) == 0 || evs[0].Kind != events.Failover || !slices.Contains(evs[0].Seen, "+switch-master") {
		t.Fatalf("events %+v: want a failover announced by +switch-master", evs)
	}
	if strings.Contains(evs[0].Detail, "(sentinel "+s.Nodes[0].Addr+")") {
		t.Errorf("the switch was followed from the leader's announcement, the last: %s", evs[0].Detail)
	}
}

// TestDiscoverWithACLAndTLS: sentinels that speak TLS only and want an
// ACL user are asked with them; without the password they are skipped,
// each saying why.
func TestDiscoverWithACLAndTLS(t *testing.T) {
	testrun.SkipShort(t, "starts three TLS servers and three sentinels")
	t.Parallel()
	set := redistest.StartReplicatedTLS(t, 1)
	s := redistest.StartSentinels(t, set, 3, redistest.SentinelOptions{User: "watcher", Password: "sentinel-secret"})
	o := conn.Options{User: "watcher", Password: "sentinel-secret", TLS: set.Primary.TLS.Client}
	c := Config{Addrs: []string{s.Nodes[0].Addr, s.Nodes[1].Addr}, Master: s.Master, Options: o}
	top, err := Discover(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if top.Primary != set.Primary.Addr || len(upReplicas(top)) != 1 {
		t.Fatalf("%+v", top)
	}
	c.Options.Password = "wrong"
	_, err = Discover(context.Background(), c)
	if err == nil || strings.Contains(err.Error(), "wrong") || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// upReplicas is the addresses of the replicas top says are up.
func upReplicas(top Topology) []string {
	var out []string
	for _, r := range top.Replicas {
		if r.Up {
			out = append(out, r.Addr)
		}
	}
	return out
}
