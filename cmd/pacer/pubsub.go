package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/pubsub"
	"github.com/pacer-load/pacer/report"
)

func pubsubCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags, messageLoadFlags("publishing", 1)...)
	flags = append(flags,
		&cli.IntFlag{Name: "channels", Value: 1, Usage: "publish to `K` channels, message i to channel i mod K", Category: catWorkload},
		&cli.IntFlag{Name: "subscribers", Value: 10, Usage: fmt.Sprintf("`N` subscribing connections spread over the channels (fan-out: N/K per channel; at most %d)", pubsub.MaxSubscribers), Category: catWorkload},
		&cli.BoolFlag{Name: "patterns", Usage: "subscribe with PSUBSCRIBE (a pattern matching each channel's name) instead of SUBSCRIBE", Category: catWorkload},
		&cli.BoolFlag{Name: "sharded", Usage: "sharded Pub/Sub: SPUBLISH and SSUBSCRIBE (with --cluster, on the node that owns each channel's slot)", Category: catWorkload},
		&cli.StringFlag{Name: "channel-prefix", Value: pubsub.DefaultPrefix, Usage: "channels are named `PREFIX` and their number", Category: catWorkload},
		&cli.IntFlag{Name: "slow-subscribers", Usage: "the first `N` subscribers take --subscriber-delay per message", DefaultText: "all, with --subscriber-delay", Category: catWorkload},
		&cli.DurationFlag{Name: "subscriber-delay", Usage: "slow subscribers take `DURATION` per message (a subscriber slower than its channel's rate fills its socket; the server may disconnect it: client-output-buffer-limit pubsub)", Category: catWorkload},
		&cli.BoolFlag{Name: "closed", Usage: "then run a closed-loop publisher (each connection waits for its PUBLISH reply, throttled to --rate) with the same subscribers, and show both: what a closed publisher hides", Category: catLoad},
	)
	flags = append(flags, messageOutputFlags("`CLAUSES` the deliveries must meet, e.g. p99<=5ms,loss<=0 (latencies are the deliveries', from the intended publish; loss a share of the expected deliveries); a miss exits 3")...)
	return withHelp(&cli.Command{
		Name:  "pubsub",
		Usage: "Pub/Sub on the open model: publish on a timeline, measure every delivery from its intended publish instant",
		Description: "Publishers send PUBLISH (SPUBLISH with --sharded) on the timeline whatever the subscribers do; each message carries\n" +
			"its sequence number and intended instant, and each delivery is stamped with the kernel's receive time. Loss, duplicates\n" +
			"and reordering come from the sequence numbers; a subscriber the server disconnects is an event, what it missed lost.",
		Flags:  flags,
		Action: pubsubAction,
	},
		"pacer pubsub --embedded --stall 100ms --every 1s",
		"pacer pubsub -h HOST --rate 20k --duration 30s --channels 10 --subscribers 50 --slo 'p99<=5ms,loss<=0' --json pubsub.json",
	)
}

// pubsubConfig is a validated `pacer pubsub`.
type pubsubConfig struct {
	*messageLoad
	run pubsub.Config
}

func parsePubsubConfig(c *cli.Context) (*pubsubConfig, error) {
	m, err := parseMessageLoad(c)
	if err != nil {
		return nil, err
	}
	cfg := &pubsubConfig{messageLoad: m}
	r := &cfg.run
	r.Channels, r.Subscribers, r.Patterns, r.Sharded = c.Int("channels"), c.Int("subscribers"), c.Bool("patterns"), c.Bool("sharded")
	r.Prefix, r.Size, r.Publishers, r.Cluster = c.String("channel-prefix"), m.size, m.conns, m.cluster
	r.SubscriberDelay = c.Duration("subscriber-delay")
	r.SlowSubscribers = c.Int("slow-subscribers")
	if !c.IsSet("slow-subscribers") && r.SubscriberDelay > 0 {
		r.SlowSubscribers = r.Subscribers
	}
	if c.IsSet("slow-subscribers") && r.SubscriberDelay <= 0 {
		return nil, usageErrorf("--slow-subscribers needs --subscriber-delay (how long each of them takes per message)")
	}
	r.Timeline, r.Open = m.Open(m.load, m.interval, m.seed)
	// The payloads' mark, from the seed (--seed repeats it) and the shard:
	// each shard's receivers measure its own publisher's messages.
	r.Run = uint32(rand.New(rand.NewPCG(m.seed, 0x70756273+uint64(m.shard.K))).Uint32()) | 1
	if c.Bool("closed") {
		if m.Stages != nil {
			return nil, usageErrorf("--closed throttles the closed publisher to --rate: it cannot follow --stages")
		}
		if m.shard.Sharded() {
			return nil, usageErrorf("--closed: a closed publisher has no timeline to split into shards")
		}
		r.Closed, r.ClosedRate = true, m.Rate
	}
	if err := r.Validate(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	r.Name = pubsub.Title(*r)
	return cfg, nil
}

func (cfg *pubsubConfig) echo(ctx context.Context, faults string) map[string]any {
	r := cfg.run
	extra := map[string]any{"channels": r.Channels, "subscribers": r.Subscribers, "patterns": r.Patterns, "sharded": r.Sharded,
		"channel_prefix": r.Prefix, "closed": r.Closed, "pacing": cfg.load.Pacing.String(), "max_buffer": cfg.target.MaxBuffer}
	if r.SubscriberDelay > 0 {
		extra["slow_subscribers"], extra["subscriber_delay_s"] = r.SlowSubscribers, r.SubscriberDelay.Seconds()
	}
	rc := cfg.messageLoad.echo(report.RunConfig{Embedded: faults, Tests: []string{"pubsub"}}, extra)
	return echoConfig(ctx, rc, extra)
}

func pubsubAction(c *cli.Context) error {
	cfg, err := parsePubsubConfig(c)
	if err != nil {
		return err
	}
	e, err := openMessages(c, cfg.messageLoad, "pubsub", cfg.echo)
	if err != nil {
		return err
	}
	defer e.close()
	outcome, runErr := pubsub.Run(c.Context, e.experiment(cfg.out.showErrs), cfg.run)
	var open, closed *pubsub.Side
	if outcome != nil {
		open, closed = outcome.Open, outcome.Closed
	}
	openT, j, closedT, err := experiment.SideTests(cfg.run, cfg.out.slo, open, closed)
	if err != nil {
		return failed(err)
	}
	return e.endMessages(cfg.messageLoad, openT, j, closedT, runErr)
}
