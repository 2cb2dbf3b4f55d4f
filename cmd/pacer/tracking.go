package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/tracking"
)

func trackingCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags, messageLoadFlags("writing", 1)...)
	flags = append(flags,
		&cli.IntFlag{Name: "keys", Value: 1000, Usage: fmt.Sprintf("write `K` keys, write i to key i mod K; every reader caches every key (at most %d)", tracking.MaxKeys), Category: catWorkload},
		&cli.IntFlag{Name: "readers", Value: 10, Usage: fmt.Sprintf("`N` caching connections (RESP3, CLIENT TRACKING on): the fan-out of each write (at most %d)", tracking.MaxReaders), Category: catWorkload},
		&cli.BoolFlag{Name: "bcast", Usage: "broadcast mode: the readers get every modified key under --key-prefix (CLIENT TRACKING on BCAST PREFIX) instead of being tracked by their reads", Category: catWorkload},
		&cli.StringFlag{Name: "key-prefix", Value: tracking.DefaultPrefix, Usage: "keys are named `PREFIX` and their number (a shard adds s<K>: to it)", Category: catWorkload},
		&cli.BoolFlag{Name: "closed", Usage: "then run a closed-loop writer (each connection waits for its SET reply, throttled to --rate) with readers of its own, and show both: what a closed writer hides", Category: catLoad},
	)
	flags = append(flags, messageOutputFlags("`CLAUSES` the invalidations must meet, e.g. p99<=5ms,loss<=0 (latencies are the invalidations', from the intended write; loss a share of the expected ones); a miss exits 3")...)
	return withHelp(&cli.Command{
		Name:  "tracking",
		Usage: "client-side caching on the open model: write cached keys on a timeline, measure every invalidation from its intended write",
		Description: "Readers (RESP3, CLIENT TRACKING on) cache the keys and read a key again once it is invalidated, as a cache refetches;\n" +
			"a writer SETs them on the timeline whatever the readers do. Each invalidation push is stamped with the kernel's receive\n" +
			"time and counted from the intended instant of the write it is for. A reader left holding a value older than its key's\n" +
			"last write, with no invalidation, lost one. --bcast subscribes the readers to the key prefix instead.",
		Flags:  flags,
		Action: trackingAction,
	},
		"pacer tracking --embedded --stall 100ms --every 1s",
		"pacer tracking -h HOST --rate 5k --keys 10000 --readers 50 --slo 'p99<=5ms,loss<=0' --json tracking.json",
	)
}

// trackingConfig is a validated `pacer tracking`.
type trackingConfig struct {
	*messageLoad
	run tracking.Config
}

func parseTrackingConfig(c *cli.Context) (*trackingConfig, error) {
	m, err := parseMessageLoad(c)
	if err != nil {
		return nil, err
	}
	cfg := &trackingConfig{messageLoad: m}
	r := &cfg.run
	r.Keys, r.Readers, r.BCAST, r.Prefix = c.Int("keys"), c.Int("readers"), c.Bool("bcast"), c.String("key-prefix")
	r.Size, r.Writers, r.Cluster = m.size, m.conns, m.cluster
	if m.shard.Sharded() && r.Prefix != "" {
		// Each shard writes keys of its own: another shard's writes would
		// invalidate this one's readers.
		r.Prefix += "s" + strconv.Itoa(m.shard.K) + ":"
	}
	r.Timeline, r.Open = m.Open(m.load, m.interval, m.seed)
	if c.Bool("closed") {
		if m.Stages != nil {
			return nil, usageErrorf("--closed throttles the closed writer to --rate: it cannot follow --stages")
		}
		if m.shard.Sharded() {
			return nil, usageErrorf("--closed: a closed writer has no timeline to split into shards")
		}
		r.Closed, r.ClosedRate = true, m.Rate
	}
	// The values' mark, from the seed (--seed repeats it) and the shard.
	r.Run = uint32(rand.New(rand.NewPCG(m.seed, 0x74726163+uint64(m.shard.K))).Uint32()) | 1
	if err := r.Validate(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	r.Name = tracking.Title(*r)
	return cfg, nil
}

func (cfg *trackingConfig) echo(ctx context.Context, faults string) map[string]any {
	r := cfg.run
	extra := map[string]any{"keys": r.Keys, "readers": r.Readers, "bcast": r.BCAST, "key_prefix": r.Prefix, "closed": r.Closed,
		"pacing": cfg.load.Pacing.String(), "max_buffer": cfg.target.MaxBuffer}
	rc := cfg.messageLoad.echo(report.RunConfig{Embedded: faults, Tests: []string{"tracking"}}, extra)
	return echoConfig(ctx, rc, extra)
}

func trackingAction(c *cli.Context) error {
	cfg, err := parseTrackingConfig(c)
	if err != nil {
		return err
	}
	e, err := openMessages(c, cfg.messageLoad, "tracking", cfg.echo)
	if err != nil {
		return err
	}
	defer e.close()
	outcome, runErr := tracking.Run(c.Context, e.experiment(cfg.out.showErrs), cfg.run)
	var open, closed *tracking.Result
	if outcome != nil {
		open, closed = outcome.Open, outcome.Closed
	}
	openT, j, closedT, err := experiment.SideTests(cfg.run, cfg.out.slo, open, closed)
	if err != nil {
		return failed(err)
	}
	return e.endMessages(cfg.messageLoad, openT, j, closedT, runErr)
}
