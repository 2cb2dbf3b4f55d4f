package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/experiment/replay"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

func replayCommand() *cli.Command {
	flags := targetFlags()
	flags = append(flags,
		&cli.StringFlag{Name: "speed", Value: "1", Usage: "play the trace `FACTOR` times as fast: 1, 2, 2x, 0.5 (request i at t0 + (tᵢ − t₀)/FACTOR)", Category: catLoad},
		&cli.StringFlag{Name: "rate", Usage: "choose the speed that makes the replay's mean `RATE` (2500, 10k; instead of --speed)", Category: catLoad},
		&cli.IntFlag{Name: "loop", Value: 1, Usage: "send the trace `N` times, each pass shifted by its length", Category: catLoad},
		&cli.DurationFlag{Name: "duration", Usage: "cut the replay's timeline after `DURATION` (measured part, after --warmup)", DefaultText: "the whole trace", Category: catLoad},
		&cli.Int64Flag{Name: "n", Usage: "send at most `N` measured requests (with --duration: whichever ends first)", DefaultText: "the whole trace", Category: catLoad},
		&cli.DurationFlag{Name: "warmup", Usage: "send the first `DURATION` of the replay's timeline but leave it out of the results", Category: catLoad},
		connsFlag(50),
		&cli.BoolFlag{Name: "per-client", Usage: "keep each trace client's commands on a connection of its own, in order (transactions, WATCH, blocking commands and Pub/Sub need it); -c is then ignored", Category: catLoad},
	)
	flags = append(flags, openLoadFlags("a request more than `DURATION` late when its turn comes is counted unsent instead of sent")...)
	flags = append(flags, shardFlagsFor(false)...)
	flags = append(flags,
		&cli.StringFlag{Name: "format", Value: "auto", Usage: "the trace's `FORMAT`: auto (from its first line), monitor (redis-cli monitor output) or json (pacer's JSON lines); gzip is detected", Category: catWorkload},
		&cli.StringFlag{Name: "allow", Usage: "send these refused `COMMANDS` after all (comma-separated: FLUSHDB,CONFIG SET; scripts: every EVAL, EVALSHA and FCALL, also when the trace does not show what they ran); a name with a NUL, a control byte or a blank is refused whatever this says", Category: catWorkload},
		&cli.StringFlag{Name: "skip", Usage: "leave these `COMMANDS` out of the replay (comma-separated: KEYS,INFO; scripts: every script call)", Category: catWorkload},
		&cli.StringFlag{Name: "key-prefix", Usage: "put `PREFIX` before every key argument (found by the command table, subcommands included), to replay beside other data; refuses, unless --allow names them, scripts, MOVE, COPY ... DB and commands whose keys the table cannot find", Category: catWorkload},
		&cli.IntFlag{Name: "db", Usage: "send every command to database `N` instead of the trace's", DefaultText: "the trace's", Category: catWorkload},
		&cli.BoolFlag{Name: "script-commands", Usage: "also send the commands MONITOR shows scripts running (left out by default: their EVAL or FCALL is replayed, judged by them)", Category: catWorkload},
		&cli.BoolFlag{Name: "dry-run", Usage: "read and check the trace, say what the replay would do, send nothing", Category: catWorkload},
	)
	flags = append(flags, outputFlags(outputSpec{
		quietUse:  "quiet: one line, no progress",
		jsonUse:   "write the pacer.result/v1 JSON (with the trace's record) to `FILE` (- for stdout)",
		errorsUse: "print error replies on stderr, at most one per second",
		sloUse:    "`CLAUSES` the replay must meet, e.g. p99<5ms,errors<0.1%; a miss exits 3",
		latency:   true,
	})...)
	flags = append(flags, openTailFlags("the lag is high (as for run)", false)...)
	return withHelp(&cli.Command{
		Name:      "replay",
		Usage:     "open model on a recorded trace: send each command at its instant in the trace, scaled by --speed",
		ArgsUsage: "TRACE",
		Flags:     flags,
		Action:    replayAction,
	},
		"redis-cli monitor > trace.txt   # for a bounded time: MONITOR slows the server",
		"pacer replay --dry-run trace.txt",
		"pacer replay --speed 2 --slo 'p99<2ms' --json replay.json trace.txt",
	)
}

// replayConfig is everything `pacer replay` was asked to do, validated.
type replayConfig struct {
	replay.Options
	destination // its cluster is replay.Options.Cluster's
	load        experiment.OpenLoad
	out         outputConfig
	dryRun      bool
}

func parseReplayConfig(c *cli.Context) (*replayConfig, error) {
	o, err := replay.Flags{Args: c.Args().Slice(), Format: c.String("format"), Allow: c.String("allow"), Skip: c.String("skip"),
		KeyPrefix: c.String("key-prefix"), Speed: c.String("speed"), Rate: c.String("rate"), DB: c.Int("db"), Loop: c.Int("loop"),
		ScriptCommands: c.Bool("script-commands"), PerClient: c.Bool("per-client"), Cluster: c.Bool("cluster"), Embedded: c.Bool("embedded"),
		Duration: c.Duration("duration"), Warmup: c.Duration("warmup"), Requests: c.Int64("n"), Set: c.IsSet}.Parse()
	if err != nil {
		return nil, err
	}
	cfg := &replayConfig{Options: o, dryRun: c.Bool("dry-run")}
	cfg.cluster = o.Cluster
	if cfg.target, cfg.sentinels, err = targetOptions(c); err != nil {
		return nil, err
	}
	if cfg.shard, err = parseReplayShard(c); err != nil {
		return nil, err
	}
	if cfg.Conns, err = parseConns(c); err != nil {
		return nil, err
	}
	if cfg.out, err = parseOutput(c); err != nil {
		return nil, err
	}
	if cfg.load, err = parseOpenLoad(c, cfg.Conns, cfg.out.slo); err != nil {
		return nil, err
	}
	cfg.target.MaxInflight, cfg.target.MaxBuffer = cfg.load.MaxInflight, cfg.load.MaxBuffer
	cfg.MaxBuffer = cfg.load.MaxBuffer
	return cfg, nil
}

// parseReplayShard reads --shard, --start-at and --start-in: a replay has
// no random draws (and no --seed), so every shard has the same timeline.
func parseReplayShard(c *cli.Context) (*scheduler.Placement, error) {
	return parseShard(c, os.LookupEnv, time.Now())
}

func (cfg *replayConfig) echo(ctx context.Context, faults string, plan *replay.Plan) map[string]any {
	extra := cfg.load.Echo(cfg.Warmup)
	extra["trace"], extra["speed"], extra["loops"], extra["per_client"] = filepath.Base(cfg.Path), plan.Speed, plan.Loops, cfg.PerClient
	if cfg.KeyPrefix != "" {
		extra["key_prefix"] = true // the prefix itself is the user's: not echoed
	}
	if cfg.DBSet {
		extra["db"] = cfg.DB
	}
	if cfg.Cluster {
		extra["cluster"] = true
	}
	return echoConfig(ctx, report.RunConfig{
		Target: cfg.target.Addr, Embedded: faults, Conns: len(plan.Groups), Dial: cfg.target,
		Tests: []string{replay.ID}, Duration: cfg.Duration, Requests: cfg.Requests,
	}, extra)
}

func replayAction(c *cli.Context) error {
	cfg, err := parseReplayConfig(c)
	if err != nil {
		return err
	}
	plan, err := replay.Scan(c.Context, cfg.Config)
	if err != nil {
		return err
	}
	defer plan.Close()
	if err := plan.CheckWarmup(cfg.Warmup); err != nil {
		return err
	}
	if cfg.dryRun {
		_, err := fmt.Fprint(c.App.Writer, plan.Text())
		return err
	}
	if err := fitReplayMemory(c, len(plan.Groups), &cfg.load); err != nil {
		return failed(err)
	}
	cfg.target.MaxInflight = cfg.load.MaxInflight
	e, err := openEnv(c, envConfig{target: cfg.newTarget(), place: cfg.shard,
		files: cfg.out.files, quiet: cfg.out.quiet, mode: "open", banner: true})
	if err != nil {
		return err
	}
	defer e.close()
	ctx, out := c.Context, e.out
	if !cfg.out.quiet {
		fmt.Fprint(out, plan.Text())
	}
	e.doc.Config = cfg.echo(ctx, e.faults(), plan)
	e.doc.Trace = plan.Info()
	e.askServer()
	e.noteConfig()
	oc := cfg.load.Open(cfg.out.interval)
	oc.Duration, oc.Requests, oc.Warmup = cfg.Duration, cfg.Requests, cfg.Warmup
	res, st, runErr := replay.Run(ctx, e.experiment(cfg.out.showErrs), cfg.Config, plan, replay.Name(cfg.Path), oc)
	e.doc.Trace.Changed = plan.Changed()
	end := verdict.Ending{Err: runErr}
	if res == nil && runErr == nil {
		e.doc.Interrupted = true // interrupted waiting for its start
	}
	if res != nil {
		t, jd, terr := replay.Judge(res, st, cfg.Config, cfg.out.slo)
		if terr != nil {
			return failed(terr)
		}
		judged(c.App.ErrWriter, &end, t, jd)
		e.doc.Tests = append(e.doc.Tests, *t)
		e.doc.Interrupted = res.Interrupted || ctx.Err() != nil
		if !cfg.out.quiet {
			fmt.Fprintf(out, "\n%s\n\n", text.ServerLine(e.server.ID))
		}
		if werr := text.Report(out, t, cfg.out.quiet, false, cfg.out.text); werr != nil {
			return failed(werr)
		}
	}
	if err := e.writeFiles(); err != nil {
		return failed(err)
	}
	return e.exit(&end)
}
