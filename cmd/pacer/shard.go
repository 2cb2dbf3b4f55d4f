package main

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// Several machines, one timeline: --shard K/N makes this process send the
// requests i of the timeline with i mod N = K−1, at their global intended
// times, and --start-at (or --start-in) starts every shard's timeline at
// the same wall-clock instant. pacer merge (merge.go) adds the shards'
// results into one.

// jobIndexEnv is the variable Kubernetes sets in each pod of an Indexed
// Job, read by --shard auto/N.
const jobIndexEnv = timeline.JobIndexEnv

// shardFlags are --shard, --start-at and --start-in of a command whose
// timeline is drawn (run, compare, sweep).
func shardFlags() []cli.Flag { return shardFlagsFor(true) }

// shardFlagsFor is shardFlags for a timeline that is drawn (it needs
// --seed: every shard must draw the same) or not (a trace's).
func shardFlagsFor(drawn bool) []cli.Flag {
	seed := "; needs --seed"
	if !drawn {
		seed = ""
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "send shard `K/N` of the timeline: the requests i with i mod N = K-1, at their global intended times (auto/N: K = $" + jobIndexEnv + "+1, as in a Kubernetes Indexed Job)" + seed + "; add the shards' JSON with pacer merge", Category: catShard},
		&cli.StringFlag{Name: "start-at", Usage: "start the timeline at the wall-clock `TIME` (RFC 3339, e.g. 2030-01-02T15:04:05Z): shards given the same time start together", Category: catShard},
		&cli.DurationFlag{Name: "start-in", Usage: "start the timeline `DURATION` from now (e.g. 30s)", Category: catShard},
	}
}

// parseShard reads the flags; lookup reads the environment, now is the
// time a --start-at is checked against.
func parseShard(c *cli.Context, lookup func(string) (string, bool), now time.Time) (*scheduler.Placement, error) {
	var k, n int
	var start time.Time
	if c.IsSet("shard") {
		var err error
		if k, n, err = timeline.ParseShard(c.String("shard"), lookup); err != nil {
			return nil, err
		}
		if hasFlag(c, "seed") && !c.IsSet("seed") {
			// A drawn timeline; a trace's is the same for every shard.
			return nil, usageErrorf("--shard needs --seed: every shard must draw the same timeline (any number, the same for all shards)")
		}
	}
	switch at, in := c.IsSet("start-at"), c.IsSet("start-in"); {
	case at && in:
		return nil, usageErrorf("--start-at and --start-in both give the start: give one")
	case at:
		v := c.String("start-at")
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
		if err != nil {
			return nil, usageErrorf("--start-at %q: want an RFC 3339 time such as 2030-01-02T15:04:05Z", v)
		}
		if !t.After(now) {
			return nil, usageErrorf("--start-at %s has passed (it is now %s): give a time to come", t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
		}
		start = t
	case in:
		d := c.Duration("start-in")
		if d <= 0 {
			return nil, usageErrorf("--start-in %s: want a positive duration such as 30s", d)
		}
		start = now.Add(d)
	}
	return scheduler.NewPlacement(k, n, start), nil
}

// hasFlag reports whether c's command has the flag name.
func hasFlag(c *cli.Context, name string) bool {
	if c.Command == nil {
		return false
	}
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
