package metrics

import "github.com/pacer-load/pacer/scheduler"

// Hook exposes a test under the labels test and mode (ModeOpen,
// ModeClosed) from the moment its driver starts: it returns the OnStart
// to give the driver (which then calls onStart, when not nil) and the end
// to call once the run has returned. On a nil Exporter (no --metrics-addr)
// it exposes nothing and returns onStart itself.
func (s *Exporter) Hook(test, mode string, onStart func(*scheduler.Live)) (func(*scheduler.Live), func()) {
	if s == nil {
		return onStart, func() {}
	}
	end := func() {}
	return func(l *scheduler.Live) {
			end = s.Collector.Watch(test, mode, l)
			if onStart != nil {
				onStart(l)
			}
		}, func() {
			end()
		}
}
