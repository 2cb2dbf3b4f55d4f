package report

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
)

// TestNewDocument: a new document carries the schema, the mode, the
// tool, no tests (an empty list, not null) and, for a shard, its K/N.
func TestNewDocument(t *testing.T) {
	t.Parallel()
	d := NewDocument("open", "1.2.3", nil)
	if d.Schema != Schema || d.Mode != "open" || d.Tool.Version != "1.2.3" || d.Tests == nil || d.Shard != nil || d.StartAt != "" || d.StartedAt == "" {
		t.Errorf("one process: %+v", d)
	}
	if d := NewDocument("closed", "x", &scheduler.Placement{K: 2, N: 3}); d.Shard == nil || d.Shard.K != 2 || d.Shard.N != 3 {
		t.Errorf("shard 2/3: %+v", d.Shard)
	}
}

// TestFirstSendMs: an open test says when its first request was written,
// in ms after its start; one that wrote nothing, or a closed one, does not.
func TestFirstSendMs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode  string
		first int64
		want  any
	}{
		{"open", 1e9 + 2_500_000, 2.5},
		{"open", 0, nil},
		{"closed", 1e9 + 2_500_000, nil},
	} {
		r := &scheduler.Result{Mode: c.mode, T0: 1e9, FirstWrite: c.first, Window: time.Second, Response: histo.New(), Service: histo.New()}
		if c.mode == "open" {
			r.Lag = histo.New()
		}
		tt, err := fromResult(r, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonObject(t, tt)["first_send_ms"]; got != c.want {
			t.Errorf("%s test, first write %d: first_send_ms %v, want %v", c.mode, c.first, got, c.want)
		}
	}
}
