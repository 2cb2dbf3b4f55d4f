package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/scheduler"
)

// TestProgressFitsTheTerminal: on a terminal each redraw is clipped to the
// width (read at every redraw) and clears the rest of the line, so an
// 80-column pane never wraps a stale line.
func TestProgressFitsTheTerminal(t *testing.T) {
	var buf bytes.Buffer
	width := 80
	p := Terminal{W: &buf, TTY: true, Width: func() int { return width }}
	line := strings.Repeat("GET   3.0s/5.0s  sent 10000/s  completed 9998/s  oldest 412 µs ", 3)
	for _, w := range []int{80, 40, 0} {
		buf.Reset()
		width = w
		Redraw(p.W, line, p.Width())
		s := buf.String()
		if !strings.HasPrefix(s, "\r") || !strings.HasSuffix(s, "\x1b[K") {
			t.Fatalf("width %d: %q is not a redraw", w, s)
		}
		text := strings.TrimSuffix(strings.TrimPrefix(s, "\r"), "\x1b[K")
		if n := len([]rune(text)); w > 0 && n > w-1 || w == 0 && text != line {
			t.Errorf("width %d: %d characters drawn", w, n)
		}
	}
	if clip("aµb", 2) != "aµ" {
		t.Errorf("clip cuts inside a character")
	}
}

// TestLiveStartsTicksAndStops: start runs once the Live arrives, final at
// stop; a watcher stopped before its Live arrives calls neither.
func TestLiveStartsTicksAndStops(t *testing.T) {
	var calls []string
	add := func(s string) func(*scheduler.Live) { return func(*scheduler.Live) { calls = append(calls, s) } }
	ch := make(chan *scheduler.Live, 1)
	stop := Live(ch, time.Hour, add("start"), add("tick"), add("final"))
	stop()
	if len(calls) != 0 {
		t.Errorf("stopped before its Live: %q", calls)
	}
	ch <- nil // a Live the callbacks do not read
	started := make(chan struct{})
	stop = Live(ch, time.Hour, func(*scheduler.Live) { calls = append(calls, "start"); close(started) }, add("tick"), add("final"))
	<-started
	stop()
	if strings.Join(calls, ",") != "start,final" {
		t.Errorf("calls %q, want start,final", calls)
	}
	var buf bytes.Buffer
	On(&buf).draw("a line")
	if buf.String() != "a line\n" {
		t.Errorf("not a terminal: %q", buf.String())
	}
}
