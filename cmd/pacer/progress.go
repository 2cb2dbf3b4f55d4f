package main

import (
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// progress prints a line about a running test every interval on w (stderr):
// elapsed/total, sent and completed rates, p50 and p99 of the last
// interval, requests in flight, the age of the oldest unanswered request
// (so a stall shows while it happens) and errors. On a terminal the line
// updates in place, clipped to the terminal's width (a wrapped line would
// leave a stale copy above each redraw); otherwise there is one line per
// interval.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	// width returns the terminal's columns, read again at every redraw
	// (the window may be resized); 0 when unknown.
	width func() int
}

func newProgress(w io.Writer) *progress {
	fd := fdOf(w)
	return &progress{w: w, tty: term.IsTerminal(fd), every: time.Second, width: func() int { return termWidth(fd) }}
}

// termWidth is the width of the terminal on fd, 0 if unknown.
func termWidth(fd int) int {
	if fd < 0 {
		return 0
	}
	w, _, err := term.GetSize(fd)
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// redraw writes line over the current terminal line: clipped to one
// column less than the width (writing the last column makes some
// terminals wrap), then cleared to the end of the line.
func redraw(w io.Writer, line string, width int) {
	fmt.Fprintf(w, "\r%s\x1b[K", clip(line, width-1))
}

// clip cuts s to at most n characters (n <= 0: no limit).
func clip(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// watchLive calls start once the test's Live arrives on live, then tick
// every interval, and at stop (if the Live ever arrived) final; both may be
// nil. The returned stop waits for the watcher to finish.
func watchLive(live <-chan *scheduler.Live, every time.Duration, start, tick, final func(*scheduler.Live)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var l *scheduler.Live
		select {
		case l = <-live:
		case <-done:
			return
		}
		if start != nil {
			start(l)
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if final != nil {
					final(l)
				}
				return
			case <-t.C:
				tick(l)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// watch starts reporting on the test whose Live arrives on live, until the
// returned stop is called.
func (p *progress) watch(label string, live <-chan *scheduler.Live) (stop func()) {
	var last scheduler.Progress
	var prev *hdrhistogram.Histogram
	printed := false
	return watchLive(live, p.every,
		func(l *scheduler.Live) { prev = l.Latency.Snapshot() },
		func(l *scheduler.Live) {
			now := l.Progress()
			interval, snap := l.Latency.Interval(prev)
			prev = snap
			line := report.ProgressLine(label, l, last, now, interval.ValueAtQuantile(50), interval.ValueAtQuantile(99))
			last = now
			if p.tty {
				redraw(p.w, line, p.width())
			} else {
				fmt.Fprintln(p.w, line)
			}
			printed = true
		},
		func(*scheduler.Live) {
			if printed && p.tty {
				fmt.Fprint(p.w, "\r\x1b[K")
			}
		})
}
