package timeline_test

import (
	"fmt"
	"log"
	"math"
	"time"

	"github.com/pacer-load/pacer/timeline"
)

// A timeline is arithmetic on the request index: request i is due at
// t0 + Offset(i), however late the generator runs.
func ExampleUniform() {
	rate, err := timeline.ParseRate("2.5k")
	if err != nil {
		log.Fatal(err)
	}
	tl := timeline.Uniform{Rate: rate}
	for _, i := range []uint64{0, 1, 2, 2500} {
		fmt.Println(i, time.Duration(tl.Offset(i)))
	}
	fmt.Println(timeline.Count(tl, int64(time.Second), math.MaxUint64), "requests in the first second")
	// Output:
	// 0 0s
	// 1 400µs
	// 2 800µs
	// 2500 1s
	// 2500 requests in the first second
}

// Stages ramp the rate piecewise-linearly; intended times still come from
// the index, by inverting the integral of the rate.
func ExampleNewStages() {
	list, err := timeline.ParseStages("1s:1k,1s:1k")
	if err != nil {
		log.Fatal(err)
	}
	st, err := timeline.NewStages(list)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(timeline.FormatStages(list))
	// From 0 to 1,000/s in the first second (500 requests), then 1,000/s.
	for _, i := range []uint64{0, 500, 1000} {
		fmt.Println(i, time.Duration(st.Offset(i)))
	}
	// Output:
	// 1s:1000,1s:1000
	// 0 0s
	// 500 1s
	// 1000 1.5s
}

// Shards split one timeline between processes: shard K of N sends the
// requests i with i mod N = K−1, at their global intended times.
func ExampleNewShard() {
	tl := timeline.Uniform{Rate: timeline.RatePerSecond(1000)}
	sh, err := timeline.NewShard(tl, 2, 3)
	if err != nil {
		log.Fatal(err)
	}
	for j := range uint64(3) {
		i, _ := sh.Global(j)
		fmt.Println(j, i, time.Duration(sh.Offset(j)))
	}
	// Output:
	// 0 1 1ms
	// 1 4 4ms
	// 2 7 7ms
}
