package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/memlimit"
)

// fitMemory holds an open run's connection caps to the memory limit the
// process runs under (experiment.FitMemory): caps the user did not give
// are lowered to fit, with a note on stderr; a run the limit cannot hold
// is refused with one line (exit 1) before anything is dialled.
func fitMemory(c *cli.Context, conns int, load *experiment.OpenLoad, w *workload) error {
	largest := 0
	for _, t := range w.tests {
		largest = max(largest, t.Recipe.MaxCommandSize())
	}
	return fitCaps(c, conns, load, largest, c.IsSet("max-buffer"))
}

// fitReplayMemory is fitMemory for a replay, once its plan knows how many
// connections it opens (one per client with --per-client). Its
// --max-buffer is never lowered: the plan refused the commands larger than
// it, and the ones it kept must still fit.
func fitReplayMemory(c *cli.Context, conns int, load *experiment.OpenLoad) error {
	return fitCaps(c, conns, load, load.MaxBuffer, true)
}

func fitCaps(c *cli.Context, conns int, load *experiment.OpenLoad, largest int, bufferSet bool) error {
	fit, err := experiment.FitMemory(conns, *load, bufferSet, c.IsSet("max-inflight"), largest,
		memlimit.Find(), conn.DefaultMaxInflight)
	if err != nil {
		return err
	}
	load.MaxBuffer, load.MaxInflight = fit.MaxBuffer, fit.MaxInflight
	if fit.Note != nil {
		fmt.Fprintln(c.App.ErrWriter, message(fit.Note))
	}
	return nil
}
