package ab

import (
	"context"

	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// The fill's connections and pipeline on each side: pacer fill's defaults.
const (
	fillConns    = 16
	fillPipeline = 64
)

// FillError is a side's fill that failed.
type FillError struct {
	Side int
	Err  error
}

func (e *FillError) Error() string { return SideName(e.Side) + ": " + e.Err.Error() }

func (e *FillError) Unwrap() error { return e.Err }

// Fill prefills both sides alike before the rounds, A then B: every key
// below keys once, written with pacer fill's command, with values of sizes
// drawn from cfg's seed (the same values on both). each, when not nil,
// sees each side's fill as it ends. It returns false when ctx ended or a
// fill was interrupted; a side's failure is a *FillError.
func Fill(ctx context.Context, sides [2]Side, keys uint64, sizes scenarios.Sizes, cfg Config, each func(s int, res *scheduler.Result)) (bool, error) {
	recipe, err := experiment.FillRecipe(experiment.FillCommand, keys, sizes)
	if err != nil {
		return false, err
	}
	for s, sd := range sides {
		res, _, err := sd.Env.Fill(ctx, experiment.FillConfig{Recipe: recipe, Keys: keys, Seed: cfg.Seed,
			Conns: fillConns, Pipeline: fillPipeline, Interval: cfg.Interval})
		if err != nil {
			return false, &FillError{Side: s, Err: err}
		}
		if res == nil || res.Interrupted || ctx.Err() != nil {
			return false, nil
		}
		if each != nil {
			each(s, res)
		}
	}
	return true, nil
}
