package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// fillCommand is `pacer fill`: write every key of a keyspace once, with
// pipelined SETs, so that GET workloads hit.
func fillCommand() *cli.Command {
	return &cli.Command{
		Name:  "fill",
		Usage: "prefill a keyspace: SET key:000000000000 … key:<N-1> with values of -d bytes",
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "r", Usage: "number of keys `N` (required)", Category: "workload"},
			&cli.StringFlag{Name: "d", Value: "3", Usage: "value `SIZE`: 32, 32-1024 or 64:8,4096:2", Category: "workload"},
			&cli.StringFlag{Name: "command", Value: "SET key:__key__ __data__", Usage: "the `TEMPLATE` each key is written with; __key__ runs through 0 … N-1", Category: "workload"},
			&cli.IntFlag{Name: "c", Value: 16, Usage: "connections", Category: "load"},
			&cli.IntFlag{Name: "P", Value: 64, Usage: "pipeline `NUMREQ` requests per batch", Category: "load"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed for value sizes", DefaultText: "from the clock", Category: "workload"},
			&cli.BoolFlag{Name: "q", Usage: "no progress bar", Category: "output"},
		),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageErrorf("%v", err) },
		Action:       fillAction,
	}
}

func fillAction(c *cli.Context) error {
	o, err := target(c)
	if err != nil {
		return err
	}
	if !c.IsSet("r") {
		return usageErrorf("-r N is required: the number of keys to fill")
	}
	var n uint64
	if _, err := fmt.Sscan(c.String("r"), &n); err != nil || n == 0 {
		return usageErrorf("-r %q: want a number of keys above 0", c.String("r"))
	}
	sizes, err := scenarios.ParseSizes(c.String("d"))
	if err != nil {
		return usageErrorf("%v", err)
	}
	conns, pipeline := c.Int("c"), max(c.Int("P"), 1)
	if conns < 1 || conns > 10000 {
		return usageErrorf("-c %d: want 1 to 10000 connections", conns)
	}
	custom, err := scenarios.ParseCustom(c.String("command"))
	if err != nil {
		return usageErrorf("--command: %v", err)
	}
	if !strings.Contains(strings.Join(custom.Args, " "), scenarios.KeyPlaceholder) {
		return usageErrorf("--command %q has no %s: every key would be the same", c.String("command"), scenarios.KeyPlaceholder)
	}
	opts := scenarios.Options{Sizes: sizes, Keyspace: n}
	recipe, err := scenarios.BuildRecipe("", []scenarios.Custom{custom}, opts)
	if err != nil {
		return usageErrorf("%v", err)
	}
	seed := c.Uint64("seed")
	if !c.IsSet("seed") {
		seed = uint64(time.Now().UnixNano())
	}
	keys := scenarios.NewSequential(n) // shared: the connections cover 0 … N-1 once between them
	cs, err := conn.DialAll(c.Context, o, conns)
	if err != nil {
		return failed(fmt.Errorf("cannot connect: %w", err))
	}
	var buildErr error
	live := make(chan *scheduler.Live, 1)
	stopBar := func() {}
	if !c.Bool("q") {
		stopBar = fillProgress(c.App.ErrWriter, n, live)
	}
	res, err := scheduler.RunClosed(c.Context, cs, scheduler.ClosedConfig{
		Name: "fill", Requests: n, Pipeline: pipeline,
		Commands: func(i int) scheduler.Commands {
			m, err := recipe.Build()
			if err != nil {
				buildErr = err
				return nil
			}
			return scenarios.NewMixStream(m, seed+uint64(i), keys)
		},
		OnStart: func(l *scheduler.Live) { live <- l },
	})
	stopBar()
	if buildErr != nil {
		return usageErrorf("%v", buildErr)
	}
	if err != nil {
		return failed(err)
	}
	if res.Interrupted {
		fmt.Fprintf(c.App.Writer, "fill interrupted: %d of %d keys written\n", res.Counts.Completed, n)
		return exitCode(exitInterrupted)
	}
	fmt.Fprintf(c.App.Writer, "filled %d keys (%s bytes each) in %.2f s: %.0f keys/s\n",
		res.Counts.Completed, sizes, res.Window.Seconds(), res.AchievedRate())
	return nil
}

// fillProgress draws a progress bar on stderr: updated in place on a
// terminal, a line a second otherwise.
func fillProgress(w io.Writer, total uint64, live <-chan *scheduler.Live) func() {
	tty := term.IsTerminal(fdOf(w))
	every := time.Second
	if tty {
		every = 200 * time.Millisecond
	}
	draw := func(l *scheduler.Live, final bool) {
		p := l.Progress()
		frac := float64(p.Completed) / float64(total)
		const width = 30
		bar := strings.Repeat("=", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
		line := fmt.Sprintf("filling [%s] %5.1f%%  %d/%d keys  %.0f keys/s", bar, 100*frac, p.Completed, total,
			float64(p.Completed)/max(p.Elapsed.Seconds(), 1e-9))
		switch {
		case tty && final:
			fmt.Fprintf(w, "\r%s\x1b[K\n", line)
		case tty:
			fmt.Fprintf(w, "\r%s\x1b[K", line)
		default:
			fmt.Fprintln(w, line)
		}
	}
	return watchLive(live, every, nil,
		func(l *scheduler.Live) { draw(l, false) },
		func(l *scheduler.Live) {
			if tty {
				draw(l, true)
			}
		})
}
