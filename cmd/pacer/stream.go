package main

import (
	"context"
	"math/rand/v2"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/report"

	"github.com/pacer-load/pacer/stream"
)

func streamCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags, messageLoadFlags("producing", 1)...)
	flags = append(flags,
		&cli.IntFlag{Name: "streams", Value: 1, Usage: "add to `K` streams, entry i to stream i mod K", Category: catWorkload},
		&cli.Int64Flag{Name: "maxlen", Usage: "trim each stream to about `N` entries as it grows (XADD MAXLEN ~ N); an entry trimmed before a group read it is never delivered", DefaultText: "no trimming", Category: catWorkload},
		&cli.IntFlag{Name: "groups", Value: 1, Usage: "`G` consumer groups, each reading every entry", Category: catWorkload},
		&cli.IntFlag{Name: "consumers", Value: 4, Usage: "`C` consumers in each group, spread over the streams (each on its own connection)", Category: catWorkload},
		&cli.DurationFlag{Name: "consumer-delay", Usage: "each consumer takes `DURATION` per entry before acknowledging it (a group slower than the rate falls behind)", Category: catWorkload},
		&cli.IntFlag{Name: "count", Value: stream.DefaultCount, Usage: "a consumer reads at most `N` entries at a time (XREADGROUP COUNT)", Category: catTuning},
		&cli.DurationFlag{Name: "block", Value: stream.DefaultBlock, Usage: "a consumer with nothing to read waits at most `DURATION` (XREADGROUP BLOCK) before asking again", Category: catTuning},
		&cli.StringFlag{Name: "stream-prefix", Value: stream.DefaultPrefix, Usage: "streams are named `PREFIX` and their number (deleted and made again for the run, unless sharded)", Category: catWorkload},
	)
	flags = append(flags, messageOutputFlags("`CLAUSES` the deliveries must meet, e.g. p99<=10ms,loss<=0,lag<=1000 (latencies from the intended add; loss: entries never delivered; lag: entries added and not yet delivered, and a lag that rises through the run fails it); a miss exits 3")...)
	return withHelp(&cli.Command{
		Name:  "stream",
		Usage: "Streams on the open model: XADD on a timeline, consumer groups read with XREADGROUP and XACK, delivery latency and lag",
		Description: "Producers send XADD on the timeline whatever the consumers do; each entry carries its sequence number and intended\n" +
			"instant, each delivery is stamped with the kernel's receive time. The consumers' lag (entries added and not yet\n" +
			"delivered, and XPENDING's pending entries) is read at every interval and tested for a rising trend: unsustainable.",
		Flags:  flags,
		Action: streamAction,
	},
		"pacer stream --embedded --rate 5k --duration 20s --groups 1 --consumers 4",
		"pacer stream -h HOST --rate 5k --consumers 4 --consumer-delay 1ms --slo 'p99<=50ms,lag<=1000' --json stream.json",
	)
}

// streamConfig is a validated `pacer stream`.
type streamConfig struct {
	*messageLoad
	run stream.Config
}

func parseStreamConfig(c *cli.Context) (*streamConfig, error) {
	m, err := parseMessageLoad(c)
	if err != nil {
		return nil, err
	}
	cfg := &streamConfig{messageLoad: m}
	r := &cfg.run
	r.Streams, r.Groups, r.Consumers, r.MaxLen = c.Int("streams"), c.Int("groups"), c.Int("consumers"), c.Int64("maxlen")
	r.ConsumerDelay, r.Count, r.Block, r.Prefix = c.Duration("consumer-delay"), c.Int("count"), c.Duration("block"), c.String("stream-prefix")
	r.Size, r.Producers, r.Cluster = m.size, m.conns, m.cluster
	if m.shard.Sharded() {
		r.Shard = m.shard.K
	}
	r.Timeline, r.Open = m.Open(m.load, m.interval, m.seed)
	// The payloads' mark, from the seed (--seed repeats it) and the shard:
	// each shard's receivers measure its own publisher's messages.
	r.Run = uint32(rand.New(rand.NewPCG(m.seed, 0x73747265+uint64(m.shard.K))).Uint32()) | 1
	if err := r.Validate(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	r.Name = stream.Title(*r)
	return cfg, nil
}

func (cfg *streamConfig) echo(ctx context.Context, faults string) map[string]any {
	r := cfg.run
	extra := map[string]any{"streams": r.Streams, "groups": r.Groups, "consumers": r.Consumers, "maxlen": r.MaxLen, "count": r.Count,
		"block_s": r.Block.Seconds(), "consumer_delay_s": r.ConsumerDelay.Seconds(), "stream_prefix": r.Prefix,
		"pacing": cfg.load.Pacing.String(), "max_buffer": cfg.target.MaxBuffer}
	rc := cfg.messageLoad.echo(report.RunConfig{Embedded: faults, Tests: []string{"stream"}}, extra)
	return echoConfig(ctx, rc, extra)
}

func streamAction(c *cli.Context) error {
	cfg, err := parseStreamConfig(c)
	if err != nil {
		return err
	}
	e, err := openMessages(c, cfg.messageLoad, "stream", cfg.echo)
	if err != nil {
		return err
	}
	defer e.close()
	res, runErr := stream.Run(c.Context, e.experiment(cfg.out.showErrs), cfg.run)
	t, j, _, err := experiment.SideTests(cfg.run, cfg.out.slo, res, nil)
	if err != nil {
		return failed(err)
	}
	return e.endMessages(cfg.messageLoad, t, j, nil, runErr)
}
