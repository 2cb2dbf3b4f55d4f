// Package watch shows tests while they run: a progress line each second
// (redrawn in place on a terminal, clipped to its width, a line each
// otherwise) and a fill's progress bar. A watcher reads the test's
// scheduler.Live on a goroutine of its own, from the moment the driver
// hands it over until it is stopped; it only writes to the writer it is
// given.
package watch

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/term"

	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
)

// Live calls start once the test's Live arrives on live, then tick every
// interval, and at stop (if the Live ever arrived) final; start and final
// may be nil. The returned stop waits for the watcher to finish.
func Live(live <-chan *scheduler.Live, every time.Duration, start, tick, final func(*scheduler.Live)) (stop func()) {
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

// Terminal is where a watcher's lines go.
type Terminal struct {
	W io.Writer
	// TTY is set when W is a terminal: lines are then redrawn in place.
	TTY bool
	// Width returns the terminal's columns, read again at every redraw
	// (the window may be resized); 0 when unknown.
	Width func() int
}

// On is the Terminal of w: a terminal when w has a file descriptor (Fd)
// that is one.
func On(w io.Writer) Terminal {
	fd := -1
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		fd = int(f.Fd())
	}
	return Terminal{W: w, TTY: term.IsTerminal(fd), Width: func() int { return width(fd) }}
}

// width is the width of the terminal on fd, 0 if unknown.
func width(fd int) int {
	if fd < 0 {
		return 0
	}
	w, _, err := term.GetSize(fd)
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// draw shows line: over the current one on a terminal, on a line of its
// own otherwise.
func (t Terminal) draw(line string) {
	if t.TTY {
		Redraw(t.W, line, t.Width())
	} else {
		fmt.Fprintln(t.W, line)
	}
}

// Redraw writes line over the current terminal line: clipped to one
// column less than the width (writing the last column makes some
// terminals wrap), then cleared to the end of the line.
func Redraw(w io.Writer, line string, width int) {
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

// Progress prints a line about the test whose Live arrives on live every
// second (text.ProgressLine: elapsed, rates, p50 and p99 of the last
// second, in flight, the oldest unanswered request, errors) until the
// returned stop is called; on a terminal the line is cleared at the end.
func Progress(t Terminal, label string, live <-chan *scheduler.Live) (stop func()) {
	var last scheduler.Progress
	var prev *hdrhistogram.Histogram
	printed := false
	return Live(live, time.Second,
		func(l *scheduler.Live) { prev = l.Latency.Snapshot() },
		func(l *scheduler.Live) {
			now := l.Progress()
			interval, snap := l.Latency.Interval(prev)
			prev = snap
			t.draw(text.ProgressLine(label, l, last, now, interval.ValueAtQuantile(50), interval.ValueAtQuantile(99)))
			last = now
			printed = true
		},
		func(*scheduler.Live) {
			if printed && t.TTY {
				fmt.Fprint(t.W, "\r\x1b[K")
			}
		})
}

// FillBar draws a fill's progress bar towards total keys: updated in
// place five times a second on a terminal (and left there at the end), a
// line a second otherwise.
func FillBar(t Terminal, total uint64, live <-chan *scheduler.Live) (stop func()) {
	every := time.Second
	if t.TTY {
		every = 200 * time.Millisecond
	}
	line := func(l *scheduler.Live) string {
		p := l.Progress()
		frac := float64(p.Completed) / float64(total)
		const width = 30
		bar := strings.Repeat("=", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
		return fmt.Sprintf("filling [%s] %5.1f%%  %d/%d keys  %.0f keys/s", bar, 100*frac, p.Completed, total,
			float64(p.Completed)/max(p.Elapsed.Seconds(), 1e-9))
	}
	return Live(live, every, nil,
		func(l *scheduler.Live) { t.draw(line(l)) },
		func(l *scheduler.Live) {
			if t.TTY {
				t.draw(line(l))
				fmt.Fprintln(t.W)
			}
		})
}
