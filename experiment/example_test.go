package experiment_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// An Env runs what a command runs, for any Go program: here a prefill of
// 1,000 keys, then an open run of GETs over them at 1,000/s for 100 ms,
// each with what the server counted meanwhile.
func ExampleEnv() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	ctx := context.Background()
	tgt := &endpoint.Target{Options: conn.Options{Addr: srv.Addr(), Now: scheduler.Now}}
	env := &experiment.Env{
		Target:    tgt,
		Server:    endpoint.AskServer(ctx, tgt.Options, nil, nil), // the server's side of each run
		InProcess: true,                                           // the embedded target shares pacer's process
	}

	const keys = 1000
	o := scenarios.Options{Keyspace: keys, Sizes: scenarios.FixedSize(32)}
	set, err := scenarios.ParseCustom("SET key:__key__ __data__")
	if err != nil {
		log.Fatal(err)
	}
	recipe, err := scenarios.BuildRecipe("", []scenarios.Custom{set}, o)
	if err != nil {
		log.Fatal(err)
	}
	filled, st, err := env.Fill(ctx, experiment.FillConfig{Recipe: recipe, Keys: keys, Conns: 2, Pipeline: 16})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fill:", filled.Counts.Completed, "completed,", *st.Keys, "keys")

	get, err := scenarios.Compile("get", []string{"GET", "key:__rand_int__"}, o)
	if err != nil {
		log.Fatal(err)
	}
	rate := timeline.RatePerSecond(1000)
	res, st, err := env.RunOpen(ctx, experiment.Open{
		Name: "GET", Timeline: timeline.Uniform{Rate: rate}, Conns: 4, Stream: scenarios.NewStream(get, 1),
		Config: openloop.Config{Rate: rate, Duration: 100 * time.Millisecond},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", res.Counts.Completed, "completed, the server ran", st.Commands["get"].Calls, "GETs")
	// Output:
	// fill: 1000 completed, 1000 keys
	// run: 100 completed, the server ran 100 GETs
}
