package embedded_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
)

// The embedded target listens on a free loopback port and answers as Redis
// does.
func ExampleStart() {
	srv, err := embedded.Start(embedded.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	v, err := conn.Do(context.Background(), conn.Options{Addr: srv.Addr()}, "PING")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Str)
	// Output: PONG
}

// Faults make the target misbehave on purpose: here every command is
// answered with an error reply (the connection's own set-up is spared).
// MustStart panics on a Config that does not validate, instead of
// returning the error as Start does.
func ExampleFaults() {
	srv := embedded.MustStart(embedded.Config{Faults: embedded.Faults{ErrorRate: 1}})
	defer srv.Close()
	fmt.Println(srv.Faults())
	_, err := conn.Do(context.Background(), conn.Options{Addr: srv.Addr()}, "GET", "key")
	fmt.Println(err)
	// Output:
	// error rate 1
	// GET: ERR injected by pacer (--error-rate)
}

// A Delay is extra service time per command, drawn from a distribution.
// The server runs one command at a time, so its capacity is 1/mean: about
// 5,000 commands a second with each of these. A Delay prints as ParseDelay
// reads it.
func ExampleParseDelay() {
	for _, s := range []string{"200us", "exp:200us", "uniform:100us-300us"} {
		d, err := embedded.ParseDelay(s)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d)
	}
	// Output:
	// 200µs
	// exp:200µs
	// uniform:100µs-300µs
}
