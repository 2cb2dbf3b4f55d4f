package report

import (
	"time"

	"github.com/pacer-load/pacer/scheduler"
)

// NewDocument starts the result document of a command in mode (open,
// closed or mixed) run by the given version of pacer, now: with the
// shard it sends and its planned start when p places it (p may be nil).
func NewDocument(mode, version string, p *scheduler.Placement) *Document {
	d := &Document{
		Schema:    Schema,
		Mode:      mode,
		Tool:      Tool{Name: "pacer", Version: version},
		StartedAt: time.Now().UTC().Format(time.RFC3339),
		Tests:     []Test{},
	}
	if p.Sharded() {
		d.Shard = &Shard{K: p.K, N: p.N}
	}
	if s := p.FirstStart(); !s.IsZero() {
		d.StartAt = s.UTC().Format(time.RFC3339Nano)
	}
	return d
}
