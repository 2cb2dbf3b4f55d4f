package scenarios_test

import (
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/pacer-load/pacer/scenarios"
)

// A template is compiled once into RESP with fixed-width slots; a Stream
// fills them in place for each request. __rand_int__ is always 12 digits,
// so the command's length never changes.
func ExampleCompile() {
	o := scenarios.Options{Keyspace: 1000, Sizes: scenarios.FixedSize(4)}
	t, err := scenarios.Compile("set", []string{"SET", "key:__rand_int__", "__data__"}, o)
	if err != nil {
		log.Fatal(err)
	}
	s := scenarios.NewStream(t, 1) // the same seed, the same commands
	for range 2 {
		cmd, kind := s.Next()
		fmt.Printf("%d %q\n", kind, cmd)
	}
	// Output:
	// 0 "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000930\r\n$4\r\nVXKe\r\n"
	// 0 "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000729\r\n$4\r\nVXKe\r\n"
}

// A mix sends several commands from one timeline, by weight; each
// command's kind is its index in the mix, so results are kept per command.
func ExampleBuildRecipe() {
	r, err := scenarios.BuildRecipe("get:9,set:1", nil, scenarios.Options{Keyspace: 100})
	if err != nil {
		log.Fatal(err)
	}
	m, err := r.Build()
	if err != nil {
		log.Fatal(err)
	}
	s := scenarios.NewMixStream(m, 1, scenarios.Uniform{N: 100})
	var n [2]int
	for range 10000 {
		_, kind := s.Next()
		n[kind]++
	}
	fmt.Println(m.Title())
	for i, name := range m.Names() {
		fmt.Printf("%s %.0f%%: %d of 10000\n", name, 100*m.Share(i), n[i])
	}
	// Output:
	// MIX get:9,set:1
	// get 90%: 9017 of 10000
	// set 10%: 983 of 10000
}

// Select picks redis-benchmark's tests as its -t does: "lrange" is a
// family, the LPUSH that fills its list included.
func ExampleSelect() {
	tests, err := scenarios.Select("get,lrange")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tests {
		fmt.Println(t.ID(), "|", t.Title)
	}
	// Output:
	// get | GET
	// lpush_for_lrange | LPUSH (needed to benchmark LRANGE)
	// lrange_100 | LRANGE_100 (first 100 elements)
	// lrange_300 | LRANGE_300 (first 300 elements)
	// lrange_500 | LRANGE_500 (first 500 elements)
	// lrange_600 | LRANGE_600 (first 600 elements)
}

// A trace reader reads MONITOR output one record at a time; timestamps are
// in nanoseconds on the trace's own clock.
func ExampleNewTraceReader() {
	monitor := `1700000000.000000 [0 127.0.0.1:50000] "SET" "k" "v"
1700000000.002500 [0 127.0.0.1:50000] "GET" "k"
`
	r, err := scenarios.NewTraceReader(strings.NewReader(monitor), "monitor.txt", scenarios.TraceOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var t0 int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if t0 == 0 {
			t0 = rec.T
		}
		fmt.Printf("+%dµs db %d %s %q\n", (rec.T-t0)/1000, rec.DB, rec.Client, rec.Argv)
	}
	// Output:
	// +0µs db 0 127.0.0.1:50000 ["SET" "k" "v"]
	// +2500µs db 0 127.0.0.1:50000 ["GET" "k"]
}
