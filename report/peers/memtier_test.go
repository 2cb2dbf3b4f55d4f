package peers

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// writeMemtier writes a memtier_benchmark JSON whose GET has n seconds of
// series: second s completed 1000+s%7 requests with a mean of 0.3+0.1×(s%5)
// ms, min 0.1, max (1+s%9).5 and p99 (1+s%9).0 ms.
func writeMemtier(t *testing.T, n int) (string, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memtier.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"configuration":{"clients":50},"ALL STATS":{"Runtime":{"Total duration":%d},`+"\n", n*1000)
	fmt.Fprintf(w, `"Gets":{"Count":%d,"Ops/sec":1000,"Average Latency":0.5,"Min Latency":0.1,"Max Latency":9.5,"Time-Serie":{`, n*1000)
	for s := range n {
		if s > 0 {
			w.WriteString(",\n")
		}
		fmt.Fprintf(w, `"%d":{"Count":%d,"Average Latency":0.%d,"Min Latency":0.1,"Max Latency":%d.5,"p99.00":%d.0}`, s, 1000+s%7, 3+s%5, 1+s%9, 1+s%9)
	}
	w.WriteString("}}}}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, fi.Size()
}

// TestMemtierSeriesIsMerged: a series longer than maxSeriesIntervals
// seconds is merged into intervals of 2^k seconds, at most
// maxSeriesIntervals of them: counts add up exactly, min and max are the
// seconds' own, the mean is weighted by the counts, the percentiles the
// highest of the seconds', and the header says so.
func TestMemtierSeriesIsMerged(t *testing.T) {
	t.Parallel()
	const n = 10_000 // merged into intervals of 4 s
	path, _ := writeMemtier(t, n)
	ins, err := ReadInputs(context.Background(), []string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := ins[0].Doc.Tests[0]
	if len(get.Intervals) != n/4 || get.IntervalS != 4 {
		t.Fatalf("%d intervals of %g s, want %d of 4 s", len(get.Intervals), get.IntervalS, n/4)
	}
	var total uint64
	for i, iv := range get.Intervals {
		total += iv.Completed
		var count uint64
		var weighted, hi float64
		for s := 4 * i; s < 4*i+4; s++ {
			c := uint64(1000 + s%7)
			count += c
			weighted += float64(c) * (0.3 + 0.1*float64(s%5))
			hi = max(hi, float64(1+s%9))
		}
		r := iv.ResponseMs
		if iv.StartS != float64(4*i) || iv.DurationS != 4 || iv.Completed != count || r == nil ||
			r.Min != 0.1 || r.Max != hi+0.5 || r.P99 != hi || abs(r.Mean-weighted/float64(count)) > 1e-9 {
			t.Fatalf("interval %d: %+v %+v; want %d completed, mean %g, p99 %g", i, iv, r, count, weighted/float64(count), hi)
		}
	}
	var want uint64
	for s := range n {
		want += uint64(1000 + s%7)
	}
	if total != want {
		t.Errorf("the intervals completed %d, the seconds %d", total, want)
	}
	if lacks := strings.Join(ins[0].Lacks, ", "); !strings.Contains(lacks, "single seconds (a series of more than 3600 is merged into intervals of 4 s or more") {
		t.Errorf("lacks %q: want the merge said", lacks)
	}
	// An hour or less stays as memtier wrote it.
	path, _ = writeMemtier(t, 3600)
	if ins, err = ReadInputs(context.Background(), []string{path}, nil); err != nil || len(ins[0].Doc.Tests[0].Intervals) != 3600 ||
		ins[0].Doc.Tests[0].IntervalS != 1 || strings.Contains(strings.Join(ins[0].Lacks, ","), "single seconds") {
		t.Errorf("3600 seconds: %v, %d intervals", err, len(ins[0].Doc.Tests[0].Intervals))
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestMemtierLongSeriesInBoundedMemory: pacer report took 1.64 GB resident
// for a 155 MB memtier file of 2M per-second entries (each second a
// map). The file now streams through a token reader, its series merged as
// it goes: the heap's peak while reading a 400,000-second file (about 40
// MB) stays under twice the file. bench/reportmem measures the 2M case.
func TestMemtierLongSeriesInBoundedMemory(t *testing.T) {
	testrun.SkipShort(t, "writes and reads a 40 MB file")
	testrun.SkipRace(t, "measures the heap, which the detector inflates")
	path, size := writeMemtier(t, 400_000)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	ins, err := ReadInputs(context.Background(), []string{path}, nil)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(peak.Load()) - int64(base.HeapAlloc)
	t.Logf("a %d MB file: heap peak %d MB above the start", size>>20, grew>>20)
	if grew > 2*size {
		t.Errorf("reading a %d MB file took the heap %d MB higher, more than twice the file", size>>20, grew>>20)
	}
	if n := len(ins[0].Doc.Tests[0].Intervals); n > maxSeriesIntervals || n < maxSeriesIntervals/2 {
		t.Errorf("%d intervals kept", n)
	}
}
