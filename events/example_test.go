package events_test

import (
	"fmt"
	"time"

	"github.com/pacer-load/pacer/events"
)

// A failover seen at 2 s: writes intended from 1.9 s failed until the new
// primary answered at 2.3 s; reads went on.
func ExampleWindows() {
	const ms = int64(time.Millisecond)
	log := events.NewLog()
	log.Note(events.Note{Kind: events.Failover, At: 2000 * ms, Node: "127.0.0.1:7001", To: "127.0.0.1:7002", Seen: "+switch-master"})
	tally := events.NewTally(0, 5*time.Second)
	for at := int64(0); at < 5000*ms; at += ms {
		tally.Completed(events.Read, at, ms/10)
		if at >= 1900*ms && at < 2300*ms {
			tally.Failed(events.Write, at, 20*ms)
		} else {
			tally.Completed(events.Write, at, ms/10)
		}
	}
	evs, _ := log.Events()
	events.Windows(evs, tally, events.WindowOptions{})
	w := evs[0].Write
	fmt.Printf("%s on %v: writes from %.1f s, unavailable about %.1f s, %d failed; reads unavailable %v\n",
		evs[0].Kind, evs[0].Nodes, float64(w.Start)/1e9, w.Unavailable().Seconds(), w.Failed, evs[0].Read.Unavailable())
	// Output: failover on [127.0.0.1:7001 127.0.0.1:7002]: writes from 1.9 s, unavailable about 0.4 s, 400 failed; reads unavailable 0s
}
