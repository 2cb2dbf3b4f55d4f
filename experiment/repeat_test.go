package experiment

import (
	"context"
	"errors"
	"testing"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// TestRepeat: the runs are pooled and each is seen; a run's error stops
// the loop with the runs so far, an interrupted run or start stops it as
// interrupted, and an error from each ends Repeat.
func TestRepeat(t *testing.T) {
	ctx := context.Background()
	ok := func(int) (*scheduler.Result, *serverinfo.Stats, error) { return &scheduler.Result{}, nil, nil }
	seen := 0
	r, err := Repeat(ctx, 3, ok, func(*scheduler.Result) error { seen++; return nil })
	if err != nil || r.Len() != 3 || len(r.List()) != 3 || seen != 3 || r.Interrupted || r.Err != nil {
		t.Fatalf("three runs: %+v %v, seen %d", r, err, seen)
	}
	boom := errors.New("lost")
	r, _ = Repeat(ctx, 3, func(k int) (*scheduler.Result, *serverinfo.Stats, error) {
		if k == 1 {
			return &scheduler.Result{}, nil, boom
		}
		return ok(k)
	}, nil)
	if r.Len() != 2 || r.Err != boom {
		t.Errorf("an error in run 2: %d runs, %v", r.Len(), r.Err)
	}
	r, _ = Repeat(ctx, 3, func(int) (*scheduler.Result, *serverinfo.Stats, error) { return nil, nil, nil }, nil)
	if r.Len() != 0 || !r.Interrupted {
		t.Errorf("interrupted before the start: %+v", r)
	}
	r, _ = Repeat(ctx, 3, func(int) (*scheduler.Result, *serverinfo.Stats, error) {
		return &scheduler.Result{Interrupted: true}, nil, nil
	}, nil)
	if r.Len() != 1 || !r.Interrupted {
		t.Errorf("an interrupted run: %d runs, %v", r.Len(), r.Interrupted)
	}
	if _, err := Repeat(ctx, 2, ok, func(*scheduler.Result) error { return boom }); err != boom {
		t.Errorf("each's error: %v", err)
	}
}
