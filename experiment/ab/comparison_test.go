package ab

import (
	"errors"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
)

// What ends a session, in order: documents that could not be made, an
// interruption, the rounds' usage error or failure, a lost target, a
// comparison that failed; else the gate decides.
func TestEndOrder(t *testing.T) {
	boom, bad := errors.New("boom"), usage.Errorf("bad")
	lost := &Lost{Side: B, Test: "get", Reason: "gone"}
	for _, c := range []struct {
		e    Ended
		want End
		err  error
	}{
		{Ended{Result: &Result{Err: boom}, Interrupted: true, DocErr: bad}, Failed, bad},
		{Ended{Result: &Result{Err: boom}, Interrupted: true, Lost: lost}, Interrupted, boom},
		{Ended{Result: &Result{Err: bad}, Lost: lost}, UsageError, bad},
		{Ended{Result: &Result{Err: boom}, Lost: lost}, Failed, boom},
		{Ended{Result: &Result{}, Lost: lost, DiffErr: boom}, TargetLost, lost},
		{Ended{Result: &Result{}, DiffErr: boom}, CompareFailed, boom},
		{Ended{Result: &Result{}}, Decided, nil},
	} {
		if got, err := c.e.End(); got != c.want || err != c.err {
			t.Errorf("%+v: End %d (%v), want %d (%v)", c.e, got, err, c.want, c.err)
		}
	}
}
