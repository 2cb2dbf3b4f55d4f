package serverinfo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/serverinfo"
)

// A Prober asks the server what it is before a run, and what it counted
// around each test, on connections of its own and outside the measured
// window.
func ExampleProber() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	o := conn.Options{Addr: srv.Addr()}
	ctx := context.Background()
	p := serverinfo.New(o)

	id := p.Identify(ctx)
	fmt.Println(id.Name, id.Mode, *id.Keys, "keys")

	before := p.Before(ctx)
	for _, k := range []string{"a", "b", "c"} { // the test
		if _, err := conn.Do(ctx, o, "SET", k, "1"); err != nil {
			log.Fatal(err)
		}
	}
	st := p.Since(ctx, before)
	set := st.Commands["set"]
	fmt.Println("set:", set.Calls, "calls,", *st.Keys, "keys after")
	// set.UsecPerCall is the server's own time per SET (INFO commandstats);
	// set.LatencyHistogram its distribution (LATENCY HISTOGRAM).
	fmt.Println("latency histogram:", set.LatencyHistogram.Calls, "calls")
	// Output:
	// pacer-embedded standalone 0 keys
	// set: 3 calls, 3 keys after
	// latency histogram: 3 calls
}
