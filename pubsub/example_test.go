package pubsub_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/pubsub"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// One publisher at 1000 messages a second to two channels, three
// subscribers on each: every message reaches the subscribers of its
// channel, and PUBLISH's replies say so too.
func ExampleRun() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	rate := timeline.RatePerSecond(1000)
	cfg := pubsub.Config{Name: "example", Channels: 2, Subscribers: 6, Prefix: pubsub.DefaultPrefix, Size: 64, Publishers: 1,
		Timeline: timeline.Uniform{Rate: rate}, Open: openloop.Config{Rate: rate, Requests: 200, HiccupInterval: -1}}
	out, err := pubsub.Run(context.Background(), experiment.InProcessEnv(srv.Addr()), cfg)
	if err != nil {
		log.Fatal(err)
	}
	m := out.Open.Messages
	fmt.Printf("published %d, delivered %d of %d, lost %d; PUBLISH counted %d receivers\n",
		out.Open.Published, m.Delivered, m.Expected, m.Lost, out.Open.Receivers.Sum)
	// Output: published 200, delivered 600 of 600, lost 0; PUBLISH counted 600 receivers
}
