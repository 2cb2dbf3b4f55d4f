package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/verdict"
)

// What pacer pubsub and pacer stream share: the publisher's timeline
// flags (run's), the payload's size and the output, SLO and tail flags.

// messageLoadFlags are the timeline's flags of a message command: --rate
// (with its default, unlike run's), --duration, --stages, --warmup, -n,
// -c (the publisher's connections), --arrival and --seed.
func messageLoadFlags(who string, defaultConns int) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "rate", Value: "1k", Usage: "publish `RATE` messages per second: 2500, 10k, 1.5M (or --stages)", Category: catLoad},
		&cli.DurationFlag{Name: "duration", Value: 10 * time.Second, Usage: "`DURATION` of the measured timeline", Category: catLoad},
		&cli.StringFlag{Name: "stages", Usage: "a rate that ramps linearly through `STAGES` DURATION:RATE,... from 0, e.g. 30s:1k,2m:10k; replaces --rate and --duration", Category: catLoad},
		&cli.DurationFlag{Name: "warmup", Usage: "publish the first `DURATION` of the timeline but leave its messages out of the results", Category: catLoad},
		&cli.Int64Flag{Name: "n", Usage: "`N` messages (instead of --duration; with both, whichever ends first)", DefaultText: "none", Category: catLoad},
		&cli.IntFlag{Name: "c", Value: defaultConns, Usage: "`N` " + who + " connections (each keeps its messages in order)", Category: catLoad},
		arrivalFlag(),
		seedFlag("seeds poisson arrivals and the payloads' run mark (the JSON records it)"),
		&cli.StringFlag{Name: "d", Value: "64", Usage: "payload `SIZE` in bytes, at least 32 (its header: run, sequence number, intended and queued instants)", Category: catWorkload},
	}
}

// messageOutputFlags are the output, SLO and tail flags of a message
// command.
func messageOutputFlags(sloUse string) []cli.Flag {
	fl := outputFlags(outputSpec{
		quietUse:  "quiet: one line per test, no progress",
		jsonUse:   "write the pacer.result/v1 JSON to `FILE` (- for stdout)",
		errorsUse: "print error replies on stderr, at most one per second",
		sloUse:    sloUse,
		latency:   true,
	})
	fl = append(fl, openLoadFlags("a message more than `DURATION` late when its turn comes (no connection, or all full) is counted unsent instead of sent")...)
	fl = append(fl, shardFlags()...)
	return append(fl, openTailFlags("the publisher's send lag is high: inconclusive (verdict generator_behind) when it is also at least 10% of the delivery p99, or could explain an --slo violation", false)...)
}

// messageLoad is a message command's timeline and publisher, parsed.
type messageLoad struct {
	experiment.Shape
	destination
	conns    int
	seed     uint64
	size     int
	load     experiment.OpenLoad
	out      outputConfig
	interval time.Duration
}

// parseMessageLoad reads the flags messageLoadFlags and messageOutputFlags
// define.
func parseMessageLoad(c *cli.Context) (*messageLoad, error) {
	m := &messageLoad{}
	var err error
	if m.destination, err = parseDestination(c); err != nil {
		return nil, err
	}
	// --rate has a default here: given or not, it is the rate unless
	// --stages replaces it.
	rate := new(c.String("rate"))
	if c.IsSet("stages") {
		if c.IsSet("rate") {
			return nil, usageErrorf("--stages replaces --rate and --duration: give one or the other")
		}
		rate = nil
	}
	shape := experiment.ShapeFlags{Duration: c.Duration("duration"), DurationSet: c.IsSet("duration"),
		Warmup: c.Duration("warmup"), WarmupSet: c.IsSet("warmup"), Rate: rate, Stages: given(c, "stages")}
	if c.IsSet("n") {
		shape.Requests = new(c.Int64("n"))
	}
	if m.Shape, err = shape.Parse(); err != nil {
		return nil, err
	}
	if m.conns, err = parseConns(c); err != nil {
		return nil, err
	}
	m.seed = parseSeed(c)
	size, err := bytesize.Parse(c.String("d"))
	if err != nil || size < messages.HeaderLen || size > scenariosMax {
		return nil, usageErrorf("-d %q: want a payload of %d bytes (its header) to %s", c.String("d"), messages.HeaderLen, bytesize.Format(scenariosMax))
	}
	m.size = int(size)
	if m.out, err = parseOutput(c); err != nil {
		return nil, err
	}
	m.interval = m.out.interval
	if m.load, err = parseOpenLoad(c, m.conns, m.out.slo); err != nil {
		return nil, err
	}
	m.target.MaxInflight, m.target.MaxBuffer = m.load.MaxInflight, m.load.MaxBuffer
	return m, nil
}

// scenariosMax is the largest payload: Redis's proto-max-bulk-len.
const scenariosMax = 512 << 20

// echo is the JSON config's common keys for a message command.
func (m *messageLoad) echo(rc report.RunConfig, extra map[string]any) report.RunConfig {
	extra["arrival"] = m.load.Arrival
	extra["payload_size"] = m.size
	if m.Stages != nil {
		extra["stages"] = m.StageArg
	}
	if m.Warmup > 0 {
		extra["warmup_s"] = m.Warmup.Seconds()
	}
	if m.cluster {
		extra["cluster"] = true
	}
	rc.Target, rc.Conns, rc.Dial, rc.Seed, rc.Rate, rc.Duration, rc.Requests = m.target.Addr, m.conns, m.target, m.seed, m.Rate, m.Duration, m.Requests
	rc.Sizes = scenarios.FixedSize(m.size) // data_size: the payload's, as -d gave it
	return rc
}

// openMessages opens a message command's environment (mode is the JSON
// document's) and notes its configuration, as echo words it.
func openMessages(c *cli.Context, m *messageLoad, mode string, echo func(context.Context, string) map[string]any) (*runEnv, error) {
	e, err := openEnv(c, envConfig{target: m.newTarget(), place: m.shard, files: m.out.files, quiet: m.out.quiet, mode: mode, banner: true})
	if err != nil {
		return nil, err
	}
	e.doc.Config = echo(c.Context, e.faults())
	e.askServer()
	e.noteConfig()
	return e, nil
}

// endMessages ends a message command: the open publisher's test (nil when
// nothing was measured) is judged, and its judgement is the exit code and
// the document's outcome; a closed publisher's test (nil without one) is
// shown beside it, not judged: its numbers are the ones that hide the
// server's stalls.
func (e *runEnv) endMessages(m *messageLoad, open *report.Test, j verdict.Judgement, closed *report.Test, runErr error) error {
	for _, t := range []*report.Test{open, closed} {
		if t != nil {
			e.doc.Tests = append(e.doc.Tests, *t)
		}
	}
	e.doc.Interrupted = e.ctx.Err() != nil || open != nil && open.Interrupted
	if open != nil && !e.doc.Interrupted {
		e.doc.Outcome = j.Outcome.String()
	}
	if err := e.writeFiles(); err != nil {
		return failed(err)
	}
	end := verdict.Ending{Err: runErr}
	if open == nil {
		return e.exit(&end)
	}
	quiet := m.out.quiet
	if !quiet {
		fmt.Fprintf(e.out, "%s\n\n", text.ServerLine(e.server.ID))
	}
	for _, t := range []*report.Test{open, closed} {
		if t == nil {
			continue
		}
		if err := text.Report(e.out, t, quiet, false, m.out.text); err != nil {
			return failed(err)
		}
	}
	if closed != nil && !quiet {
		if err := text.MessagesSideBySide(e.out, open, closed); err != nil {
			return failed(err)
		}
	}
	if !quiet {
		printSeed(e.out, m.seed)
	}
	judged(e.stderr, &end, open, j)
	return e.exit(&end)
}
