package experiment

import (
	"io"

	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scheduler"
)

// Hook hooks a run's live view to something that also watches it (the
// metrics endpoint): given the run and what else must see each view, it
// returns the driver's hook and what ends the watch.
type Hook func(w Watched, also func(*scheduler.Live)) (onStart func(*scheduler.Live), end func())

// Watchers is an Env's Watch that shows each run on w: progress lines
// (not when quiet), lines about an open run's connections, and hook
// (nil: none).
func Watchers(w io.Writer, quiet bool, hook Hook) func(Watched) (func(*scheduler.Live), func()) {
	return func(run Watched) (func(*scheduler.Live), func()) {
		var chans []chan *scheduler.Live
		var stops []func()
		if !quiet {
			ch := make(chan *scheduler.Live, 1)
			chans = append(chans, ch)
			stops = append(stops, watch.Progress(watch.On(w), run.Label, ch))
		}
		if run.Mode == "open" {
			ch := make(chan *scheduler.Live, 1)
			chans = append(chans, ch)
			stops = append(stops, watch.Connections(w, run.Name, ch))
		}
		fan := func(l *scheduler.Live) {
			for _, ch := range chans {
				ch <- l
			}
		}
		onStart, end := fan, func() {}
		if hook != nil {
			onStart, end = hook(run, fan)
		}
		return onStart, func() {
			end()
			for _, s := range stops {
				s()
			}
		}
	}
}
