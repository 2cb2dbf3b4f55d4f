package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// Several machines, one timeline: --shard K/N makes this process send the
// requests i of the timeline with i mod N = K−1, at their global intended
// times, and --start-at (or --start-in) starts every shard's timeline at
// the same wall-clock instant. pacer merge (merge.go) adds the shards'
// results into one.

// jobIndexEnv is the variable Kubernetes sets in each pod of an Indexed
// Job: its completion index, from 0.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// startSlack is the time planned between one test's end (its timeline and
// --drain) and the next test's start when tests start at planned instants.
const startSlack = time.Second

// startLead is how long before a planned start the connections are
// opened; the timeline then waits for the start instant precisely.
const startLead = 5 * time.Second

func shardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "send shard `K/N` of the timeline: the requests i with i mod N = K-1, at their global intended times (auto/N: K = $" + jobIndexEnv + "+1, as in a Kubernetes Indexed Job); needs --seed; add the shards' JSON with pacer merge", Category: catLoad},
		&cli.StringFlag{Name: "start-at", Usage: "start the timeline at the wall-clock `TIME` (RFC 3339, e.g. 2030-01-02T15:04:05Z): shards given the same time start together", Category: catLoad},
		&cli.DurationFlag{Name: "start-in", Usage: "start the timeline `DURATION` from now (e.g. 30s)", Category: catLoad},
	}
}

// shardConfig is --shard, --start-at and --start-in, validated.
type shardConfig struct {
	k, n int // 0, 0: the whole timeline
	// start is the wall-clock instant of the current test's timeline
	// (zero: none); after each test it moves to the next test's.
	start time.Time
	first time.Time // the first test's
}

// parseShard reads the flags; lookup reads the environment, now is the
// time a --start-at is checked against.
func parseShard(c *cli.Context, lookup func(string) (string, bool), now time.Time) (shardConfig, error) {
	var s shardConfig
	if c.IsSet("shard") {
		var err error
		if s.k, s.n, err = parseShardArg(c.String("shard"), lookup); err != nil {
			return s, err
		}
		if !c.IsSet("seed") {
			return s, usageErrorf("--shard needs --seed: every shard must draw the same timeline (any number, the same for all shards)")
		}
	}
	switch at, in := c.IsSet("start-at"), c.IsSet("start-in"); {
	case at && in:
		return s, usageErrorf("--start-at and --start-in both give the start: give one")
	case at:
		v := c.String("start-at")
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
		if err != nil {
			return s, usageErrorf("--start-at %q: want an RFC 3339 time such as 2030-01-02T15:04:05Z", v)
		}
		if !t.After(now) {
			return s, usageErrorf("--start-at %s has passed (it is now %s): give a time to come", t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
		}
		s.start = t
	case in:
		d := c.Duration("start-in")
		if d <= 0 {
			return s, usageErrorf("--start-in %s: want a positive duration such as 30s", d)
		}
		s.start = now.Add(d)
	}
	s.first = s.start
	return s, nil
}

// parseShardArg reads K/N or auto/N (K from JOB_COMPLETION_INDEX + 1).
func parseShardArg(v string, lookup func(string) (string, bool)) (k, n int, err error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(v), "/")
	n, nerr := strconv.Atoi(ns)
	if !ok || nerr != nil || n < 1 || n > scheduler.MaxShards {
		return 0, 0, usageErrorf("--shard %q: want K/N such as 2/4 (N from 1 to %d), or auto/N", v, scheduler.MaxShards)
	}
	if ks == "auto" {
		idx, set := lookup(jobIndexEnv)
		if !set {
			return 0, 0, usageErrorf("--shard %s: %s is not set (a Kubernetes Indexed Job sets it); give K/N", v, jobIndexEnv)
		}
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		if err != nil || i < 0 || i >= n {
			return 0, 0, usageErrorf("--shard %s: %s=%q is not an index from 0 to %d", v, jobIndexEnv, idx, n-1)
		}
		return i + 1, n, nil
	}
	k, err = strconv.Atoi(ks)
	if err != nil || k < 1 || k > n {
		return 0, 0, usageErrorf("--shard %q: K must be from 1 to %d", v, n)
	}
	return k, n, nil
}

// sharded reports whether the process sends one shard of the timeline.
func (s *shardConfig) sharded() bool { return s.n > 0 }

// timeline returns this process's part of tl.
func (s *shardConfig) timeline(tl scheduler.Timeline) (scheduler.Timeline, error) {
	if !s.sharded() {
		return tl, nil
	}
	return scheduler.NewShard(tl, s.k, s.n)
}

// streamSeed is the seed of a test's command stream. Commands and keys are
// drawn from one stream per process, not from the request index, so each
// shard draws its own (from the same distributions): the shards' intended
// times are exactly the single timeline's, their key sequences are not
// the single process's.
func (s *shardConfig) streamSeed(seed uint64) uint64 {
	if s.n <= 1 {
		return seed
	}
	return seed + uint64(s.k-1)*0x9e3779b97f4a7c15
}

// document records the shard and the start in the result document.
func (s *shardConfig) document(doc *report.Document) {
	if s.sharded() {
		doc.Shard = &report.Shard{K: s.k, N: s.n}
	}
	if !s.first.IsZero() {
		doc.StartAt = s.first.UTC().Format(time.RFC3339Nano)
	}
}

// wait sleeps until shortly before the current test's start, so its
// connections are opened just in time; it returns ctx's error if it is
// cancelled first. The first wait says so on w (unless quiet).
func (s *shardConfig) wait(ctx context.Context, w io.Writer, quiet bool) error {
	if s.start.IsZero() {
		return nil
	}
	until := time.Until(s.start)
	if !quiet && s.start.Equal(s.first) {
		fmt.Fprintf(w, "waiting until %s (in %s) to start the timeline\n",
			s.start.UTC().Format(time.RFC3339Nano), until.Round(100*time.Millisecond))
	}
	if until <= startLead {
		return ctx.Err()
	}
	t := time.NewTimer(until - startLead)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// instant is the current test's start on the clock the pacer uses (0: no
// planned start). It is read just before the run, so the wall clock and
// the monotonic clock are compared as late as possible.
func (s *shardConfig) instant() int64 {
	if s.start.IsZero() {
		return 0
	}
	return scheduler.Now() + int64(time.Until(s.start))
}

// sleepUntil waits for the current test's planned start (none: at once),
// for a run without a timeline to start there (a closed loop); it returns
// ctx's error if it is cancelled first.
func (s *shardConfig) sleepUntil(ctx context.Context) error {
	if s.start.IsZero() {
		return nil
	}
	t := time.NewTimer(time.Until(s.start))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// started sets a result's wall-clock start to the planned one: the
// timeline started exactly there (a shard that was late shows it as send
// lag, not as a later start).
func (s *shardConfig) started(res *scheduler.Result) {
	if !s.start.IsZero() && res != nil {
		res.Started = s.start
	}
}

// next plans the next test's start: after this test's whole timeline
// (tl, bounded by duration and requests) and its drain, with startSlack to
// spare, so every shard computes the same instant.
func (s *shardConfig) next(tl scheduler.Timeline, duration time.Duration, requests uint64, drain time.Duration) {
	if !s.start.IsZero() {
		s.start = s.start.Add(timelineLength(tl, duration, requests) + drain + startSlack)
	}
}

// timelineLength is how long a timeline bounded by duration and requests
// lasts (the offset of its end).
func timelineLength(tl scheduler.Timeline, duration time.Duration, requests uint64) time.Duration {
	end := duration
	if requests > 0 {
		if off := time.Duration(tl.Offset(requests)); end <= 0 || off < end {
			end = off
		}
	}
	return end
}
