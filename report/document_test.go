package report

import (
	"testing"

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
