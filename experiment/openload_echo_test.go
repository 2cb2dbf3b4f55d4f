package experiment

import (
	"testing"
	"time"
)

// TestOpenLoadEcho: the open load's keys, in the config's units.
func TestOpenLoadEcho(t *testing.T) {
	e := OpenLoad{MaxInflight: 10, MaxBuffer: 2048, Drain: 1500 * time.Millisecond}.Echo(2 * time.Second)
	if e["max_inflight"] != 10 || e["max_buffer"] != 2048 || e["drain_s"] != 1.5 || e["warmup_s"] != 2.0 || e["pacing"] == "" {
		t.Errorf("%v", e)
	}
}
