// Command promquantile measures how far Prometheus's histogram_quantile,
// read over pacer's metrics buckets, lands from the percentiles of the
// HdrHistogram recorders the buckets are filled from (the JSON's). For
// each run it fills the buckets exactly as the metrics package does (a
// value counts below a bound when its recorder slot starts below it) and
// interpolates as Prometheus does for classic histograms: linearly inside
// the bucket that holds the rank, from 0 for the first bucket, the highest
// finite bound for the +Inf bucket.
//
// It runs pacer -runs times on the embedded target with exponential
// service times (a p99 of a few ms on an idle machine), or reads the
// result files given, and prints, per percentile, the JSON's value and
// each bucket list's estimate with its error: the default buckets
// (metrics.DefaultBuckets) and the 21 powers of two pacer served before.
//
//	go build -o /tmp/pacer ./cmd/pacer
//	go run ./bench/promquantile -bin /tmp/pacer -runs 3
//	go run ./bench/promquantile run.json other.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/metrics"
)

func main() {
	bin := flag.String("bin", "", "the pacer binary: run it (else read the result files given)")
	runs := flag.Int("runs", 3, "runs with -bin")
	args := flag.String("args", "run --embedded --delay exp:500us --rate 500 --duration 5s -t get -c 4 -q", "pacer's arguments with -bin (--json is added)")
	flag.Parse()
	files := flag.Args()
	if *bin != "" {
		dir, err := os.MkdirTemp("", "promquantile")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		for i := range *runs {
			f := filepath.Join(dir, fmt.Sprintf("run%d.json", i))
			cmd := exec.Command("sh", "-c", *bin+" "+*args+" --json "+f)
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				if _, ok := err.(*exec.ExitError); !ok { // exit 4 (untrusted) still has numbers
					fail(err)
				}
			}
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		fail(fmt.Errorf("give -bin or result files"))
	}
	var pow2 []time.Duration
	for k := range 21 {
		pow2 = append(pow2, 10*time.Microsecond<<k)
	}
	lists := []struct {
		name   string
		bounds []time.Duration
	}{{"default(49)", metrics.DefaultBuckets()}, {"pow2(21)", pow2}}
	for _, f := range files {
		h := response(f)
		fmt.Printf("%s: %d samples\n", filepath.Base(f), h.TotalCount())
		for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
			truth := float64(h.ValueAtQuantile(q*100)) / 1e6
			fmt.Printf("  p%-5v JSON %9.3f ms", q*100, truth)
			for _, l := range lists {
				est := quantile(q, h, l.bounds) * 1e3
				fmt.Printf("   %s %9.3f ms (%+6.1f%%)", l.name, est, (est/truth-1)*100)
			}
			fmt.Println()
		}
	}
}

// response decodes the first test's response histogram of a result file.
func response(path string) *hdrhistogram.Histogram {
	raw, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	var doc struct {
		Tests []struct {
			Histograms map[string]string `json:"histograms"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Tests) == 0 {
		fail(fmt.Errorf("%s: %v, %d tests", path, err, len(doc.Tests)))
	}
	h, err := hdrhistogram.Decode([]byte(doc.Tests[0].Histograms["response"]))
	if err != nil {
		fail(fmt.Errorf("%s: %v", path, err))
	}
	return h
}

// quantile is Prometheus's histogram_quantile(q) over h's counts in the
// buckets bounds, in seconds.
func quantile(q float64, h *hdrhistogram.Histogram, bounds []time.Duration) float64 {
	cum := make([]float64, len(bounds)+1) // the last: +Inf
	for _, bar := range h.Distribution() {
		for i := range cum {
			if i == len(bounds) || bar.From < int64(bounds[i]) {
				cum[i] += float64(bar.Count)
			}
		}
	}
	rank := q * cum[len(bounds)]
	for i, c := range cum {
		if c < rank {
			continue
		}
		if i == len(bounds) {
			return bounds[len(bounds)-1].Seconds()
		}
		lo, below := 0.0, 0.0
		if i > 0 {
			lo, below = bounds[i-1].Seconds(), cum[i-1]
		}
		if c == below {
			return bounds[i].Seconds()
		}
		return lo + (bounds[i].Seconds()-lo)*(rank-below)/(c-below)
	}
	return math.NaN()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "promquantile:", err)
	os.Exit(1)
}
