package watch

import (
	"fmt"
	"io"
	"time"

	"github.com/pacer-load/pacer/report/text"
	"github.com/pacer-load/pacer/scheduler"
)

// connsEvery is how often the connection watcher looks: at most one line
// a second, however often connections drop.
const connsEvery = time.Second

// Connections says on w when an open run's connections drop, with how
// many are open and how many were replaced so far (text.ConnectionsLine),
// and when a Redis Cluster primary joins the run (text.JoinLine), until
// the returned stop is called. A run whose connections all went and never
// came back ends as target_lost, which its verdict says.
func Connections(w io.Writer, label string, live <-chan *scheduler.Live) (stop func()) {
	var seen uint64
	joins := 0
	check := func(l *scheduler.Live) {
		for _, j := range l.Joins(joins) {
			fmt.Fprintln(w, text.JoinLine(label, l.Progress().Elapsed, j))
			joins++
		}
		c, ok := l.Connections()
		if !ok || c.Lost <= seen {
			return
		}
		fmt.Fprintln(w, text.ConnectionsLine(label, l.Progress().Elapsed, c, c.Lost-seen))
		seen = c.Lost
	}
	return Live(live, connsEvery, nil, check, check)
}
