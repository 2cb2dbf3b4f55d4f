package sentinel

import "testing"

// TestAnswerOlderThanTheSwitchIsIgnored: after a +switch-master from A to
// B, a sentinel that has not heard of it yet still answers A with the
// older configuration epoch: the Follower stays on B (going back sent the
// writes to the former primary for a second in .ci/run). A later
// failover back to A, with a newer epoch, is followed, and so is an
// answer without an epoch.
func TestAnswerOlderThanTheSwitchIsIgnored(t *testing.T) {
	f := &Follower{cfg: Config{Master: "m"}, now: func() int64 { return 0 }}
	f.st.Store(&state{primary: "10.0.0.1:6379", config: 3})
	f.message("s1", "+switch-master", "m 10.0.0.1 6379 10.0.0.2 6380")
	if p, n := f.Primary(); p != "10.0.0.2:6380" || n != 1 || f.st.Load().config != 4 {
		t.Fatalf("after the switch: %s, %d switches, config %d", p, n, f.st.Load().config)
	}
	f.answered(Topology{Primary: "10.0.0.1:6379", ConfigEpoch: 3})
	if p, n := f.Primary(); p != "10.0.0.2:6380" || n != 1 {
		t.Fatalf("a lagging sentinel's answer moved it to %s (%d switches)", p, n)
	}
	f.answered(Topology{Primary: "10.0.0.2:6380", ConfigEpoch: 7, Replicas: []Replica{{Addr: "10.0.0.1:6379", Up: true}}})
	if st := f.st.Load(); st.config != 7 || len(st.replicas) != 1 {
		t.Fatalf("an answer for the followed primary: config %d, replicas %v", st.config, st.replicas)
	}
	f.answered(Topology{Primary: "10.0.0.1:6379", ConfigEpoch: 8})
	if p, n := f.Primary(); p != "10.0.0.1:6379" || n != 2 {
		t.Fatalf("a newer failover back: %s, %d switches", p, n)
	}
	f.answered(Topology{Primary: "10.0.0.3:6381", ConfigEpoch: -1})
	if p, _ := f.Primary(); p != "10.0.0.3:6381" {
		t.Fatalf("an answer without an epoch: %s", p)
	}
}
