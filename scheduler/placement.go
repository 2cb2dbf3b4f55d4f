package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/pacer-load/pacer/timeline"
)

// Placement says which part of a timeline a process sends and when each of
// its tests starts: shard K of N (--shard, see Shard) and planned
// wall-clock starts (--start-at, --start-in), so that several machines
// send one timeline together. The zero Placement sends the whole timeline
// of each test at once.
//
// Tests start one after another at planned instants: the first at the
// given start, each next one after the previous test's whole timeline and
// drain, with StartSlack to spare, so every shard computes the same
// instants without talking to the others.
type Placement struct {
	K, N int // 0, 0: the whole timeline
	// start is the wall-clock instant of the current test's timeline
	// (zero: none); after each test it moves to the next test's.
	start, first time.Time
}

// StartSlack is the time planned between one test's end (its timeline and
// drain) and the next test's start when tests start at planned instants.
const StartSlack = time.Second

// StartLead is how long before a planned start the connections are
// opened; the timeline then waits for the start instant precisely.
const StartLead = 5 * time.Second

// NewPlacement places a process's tests: shard k of n (n 0: the whole
// timeline), the first starting at start (zero: at once).
func NewPlacement(k, n int, start time.Time) *Placement {
	return &Placement{K: k, N: n, start: start, first: start}
}

// Sharded reports whether the process sends one shard of the timeline.
func (p *Placement) Sharded() bool { return p != nil && p.N > 0 }

// FirstStart is the first test's planned start (zero: none).
func (p *Placement) FirstStart() time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.first
}

// Timeline returns this process's part of tl.
func (p *Placement) Timeline(tl timeline.Timeline) (timeline.Timeline, error) {
	if !p.Sharded() {
		return tl, nil
	}
	return timeline.NewShard(tl, p.K, p.N)
}

// StreamSeed is the seed of a test's command stream. Commands and keys are
// drawn from one stream per process, not from the request index, so each
// shard draws its own (from the same distributions): the shards' intended
// times are exactly the single timeline's, their key sequences are not
// the single process's.
func (p *Placement) StreamSeed(seed uint64) uint64 {
	if p == nil || p.N <= 1 {
		return seed
	}
	return seed + uint64(p.K-1)*0x9e3779b97f4a7c15
}

// Wait sleeps until shortly before the current test's start (StartLead),
// so its connections are opened just in time; it returns ctx's error if it
// is cancelled first. Before the first wait it tells say (nil: nobody)
// what it waits for.
func (p *Placement) Wait(ctx context.Context, say func(string)) error {
	if p == nil || p.start.IsZero() {
		return nil
	}
	until := time.Until(p.start)
	if say != nil && p.start.Equal(p.first) {
		say(fmt.Sprintf("waiting until %s (in %s) to start the timeline",
			p.start.UTC().Format(time.RFC3339Nano), until.Round(100*time.Millisecond)))
	}
	if until <= StartLead {
		return ctx.Err()
	}
	return sleepCtx(ctx, until-StartLead)
}

// Instant is the current test's start on the clock the pacer uses (0: no
// planned start). Read it just before the run, so the wall clock and the
// monotonic clock are compared as late as possible.
func (p *Placement) Instant() int64 {
	if p == nil || p.start.IsZero() {
		return 0
	}
	return Now() + int64(time.Until(p.start))
}

// SleepUntil waits for the current test's planned start (none: at once),
// for a run without a timeline to start there (a closed loop); it returns
// ctx's error if it is cancelled first.
func (p *Placement) SleepUntil(ctx context.Context) error {
	if p == nil || p.start.IsZero() {
		return nil
	}
	return sleepCtx(ctx, time.Until(p.start))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Started sets a result's wall-clock start to the planned one: the
// timeline started exactly there (a shard that was late shows it as send
// lag, not as a later start).
func (p *Placement) Started(res *Result) {
	if p != nil && !p.start.IsZero() && res != nil {
		res.Started = p.start
	}
}

// Next plans the next test's start: after this test's whole timeline
// (tl, bounded by duration and requests) and its drain, with StartSlack
// to spare.
func (p *Placement) Next(tl timeline.Timeline, duration time.Duration, requests uint64, drain time.Duration) {
	if p != nil && !p.start.IsZero() {
		p.start = p.start.Add(timelineLength(tl, duration, requests) + drain + StartSlack)
	}
}

// timelineLength is how long a timeline bounded by duration and requests
// lasts (the offset of its end).
func timelineLength(tl timeline.Timeline, duration time.Duration, requests uint64) time.Duration {
	end := duration
	if requests > 0 {
		if off := time.Duration(tl.Offset(requests)); end <= 0 || off < end {
			end = off
		}
	}
	return end
}
