package histo

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/testrun"
)

// libraryEncode is hdrhistogram-go's own encoding of h, the reference.
func libraryEncode(t testing.TB, h *hdrhistogram.Histogram) string {
	t.Helper()
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkEncode encodes h, compares the text with the library's encoding of
// h byte for byte, and decodes it with the library to h's geometry and
// counts.
func checkEncode(t testing.TB, name string, h *hdrhistogram.Histogram) {
	t.Helper()
	got, err := Encode(h)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if want := libraryEncode(t, h); got != want {
		t.Errorf("%s: encoding differs from the library's:\n got %.80s…\nwant %.80s…", name, got, want)
	}
	back, err := hdrhistogram.Decode([]byte(got))
	if err != nil {
		t.Fatalf("%s: the library cannot decode it: %v", name, err)
	}
	if !back.Equals(h) {
		t.Errorf("%s: decoded histogram differs: count %d vs %d, max %d vs %d", name,
			back.TotalCount(), h.TotalCount(), back.Max(), h.Max())
	}
}

// everySlot returns a histogram of geometry g with count k+1 in slot k:
// the longest payload g can have, every count a different varint length.
func everySlot(g Geometry) *hdrhistogram.Histogram {
	counts := make([]int64, g.countsLen)
	for i := range counts {
		counts[i] = int64(i) + 1
	}
	return g.histogram(counts)
}

func TestEncodeIsTheLibrarys(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cases := map[string]*hdrhistogram.Histogram{
		"empty":     New(),
		"zero":      New(),
		"one":       New(),
		"highest":   New(),
		"lognormal": New(),
		"runs":      New(), // isolated zeros between counts: a run of one is a count of 0
		"huge":      New(), // counts that take 8 and 9 varint bytes
		"everySlot": everySlot(pacerGeometry),
		"random":    randomHistogram(t, rng, 5000, 1e6),
	}
	record := func(name string, v, n int64) {
		if err := cases[name].RecordValues(v, n); err != nil {
			t.Fatal(err)
		}
	}
	record("zero", 0, 1)
	record("one", 1, 1)
	record("highest", Highest, 1)
	for range 10_000 {
		record("lognormal", lognormal(rng), 1)
	}
	for v := int64(100); v < 200; v += 2 {
		record("runs", v, 1)
	}
	record("huge", 1e6, 1<<55)
	record("huge", 2e6, 1<<62)
	record("huge", 3e6, math.MaxInt64-1<<62-1<<55) // the total is MaxInt64
	for name, h := range cases {
		checkEncode(t, name, h)
	}
	if got, err := Encode(nil); got != "" || err != nil {
		t.Errorf("Encode(nil) = %q, %v; want \"\", nil", got, err)
	}
}

// TestEncodeOtherGeometries: histograms of random geometries (lowest above
// 1 shifts every slot by the unit magnitude) with random contents.
func TestEncodeOtherGeometries(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	geometries := [][3]int64{{1, 2, 1}, {1, 1000, 1}, {10, 3_000_000, 3}, {1000, int64(time.Hour), 2},
		{1, math.MaxInt64, 2}, {64, 1 << 40, 4}, {1, 1e8, 5}, {7, 1e9, 3}}
	for range 20 {
		lo := int64(1) << rng.IntN(20)
		geometries = append(geometries, [3]int64{lo, lo * (2 + rng.Int64N(1<<30)), 1 + rng.Int64N(4)})
	}
	for _, gm := range geometries {
		h := hdrhistogram.New(gm[0], gm[1], int(gm[2]))
		checkEncode(t, "empty", h)
		n := rng.IntN(3000)
		for range n {
			v := int64(math.Exp(rng.Float64() * math.Log(float64(gm[1])/2)))
			if err := h.RecordValues(v, 1+rng.Int64N(3)); err != nil {
				t.Fatal(err)
			}
		}
		checkEncode(t, "random", h)
	}
	checkEncode(t, "everySlot 1..1e6, 2 digits", everySlot(newGeometry(1, 1e6, 2)))
}

// TestEncodeRandomHistograms is a property test: any counts, any density.
func TestEncodeRandomHistograms(t *testing.T) {
	testrun.SkipRace(t, "one goroutine's arithmetic, which the detector only slows (17 s)")
	rng := rand.New(rand.NewPCG(25, 26))
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for range rounds {
		counts := make([]int64, pacerGeometry.countsLen)
		density := rng.Float64() * rng.Float64()
		for i := range counts {
			if rng.Float64() < density {
				counts[i] = 1 + rng.Int64N(1<<uint(1+rng.IntN(40)))
			}
		}
		checkEncode(t, "random counts", pacerGeometry.histogram(counts))
	}
}

func FuzzEncode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Each 3 bytes: a slot (2 bytes, spread over the array) and a
		// count (1 byte, as a power of two below 2^50).
		counts := make([]int64, pacerGeometry.countsLen)
		for ; len(b) >= 3; b = b[3:] {
			slot := (int(b[0])<<8 | int(b[1])) * len(counts) >> 16
			counts[slot] += int64(1) << (b[2] % 50)
		}
		checkEncode(t, "fuzz", pacerGeometry.histogram(counts))
	})
}

// TestEncodeRefusesNegativeCounts: a library histogram cannot hold one
// (Import zeroes them), a Delta could only through a bug; either way there
// is no encoding for it.
func TestEncodeRefusesNegativeCounts(t *testing.T) {
	if s, err := encodeCounts(1, 1000, 2, 1, []int64{0, 5, -3, 2}); !errors.Is(err, errNegativeCount) {
		t.Fatalf("a negative count encoded as %q (%v)", s, err)
	}
}

func TestAppendZigZag(t *testing.T) {
	tests := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}},
		{-1, []byte{1}},
		{1, []byte{2}},
		{-2, []byte{3}},
		{63, []byte{0x7e}},
		{64, []byte{0x80, 0x01}},
		{-65, []byte{0x81, 0x01}},
		{1 << 55, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},       // 2^56 after the ZigZag: 9 bytes
		{1<<55 - 1, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},           // 2^56-2: still 8
		{math.MaxInt64, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // the 9th byte holds 8 bits
		{math.MinInt64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tc := range tests {
		if got := appendZigZag(nil, tc.v); !bytes.Equal(got, tc.want) {
			t.Errorf("appendZigZag(%d) = % x, want % x", tc.v, got, tc.want)
		}
	}
}

// TestEncodeHeader reads the header back by hand: the fields another
// implementation's reader looks at.
func TestEncodeHeader(t *testing.T) {
	h := hdrhistogram.New(10, 3_000_000, 3)
	h.RecordValue(12345)
	s, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 || string(b[:4]) != "\x1c\x84\x93\x14" || int(be32(b[4:])) != len(b)-8 {
		t.Fatalf("outer header % x, length %d", b[:min(8, len(b))], len(b))
	}
	raw, err := appendV2(nil, 10, 3_000_000, 3, 1, h.Export().Counts)
	if err != nil {
		t.Fatal(err)
	}
	want := "\x1c\x84\x93\x13"
	if string(raw[:4]) != want || int(be32(raw[4:])) != len(raw)-v2HeaderLen || be32(raw[8:]) != 0 || be32(raw[12:]) != 3 ||
		be64(raw[16:]) != 10 || be64(raw[24:]) != 3_000_000 || math.Float64frombits(be64(raw[32:])) != 1 {
		t.Fatalf("V2 header % x", raw[:v2HeaderLen])
	}
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// TestDeltaPackIsPack: a Delta packs what Pack of its histogram packs,
// summary and text, interval after interval (empty ones too), in memory
// and spilled; and other geometries than pacer's.
func TestDeltaPackIsPack(t *testing.T) {
	sp, err := NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(27, 28))
	for _, r := range []*Recorder{NewRecorder(), NewRecorderGeometry(10, 3_000_000, 3), NewRecorderGeometry(1000, 1e9, 2)} {
		d := NewDelta(r)
		for k := range 8 {
			n := []int{0, 1, 10, 10_000, 0, 3, 50_000, 0}[k]
			for range n {
				v := lognormal(rng)
				if k == 6 {
					v = int64(math.Exp(rng.Float64() * math.Log(float64(Highest))))
				}
				r.Record(v)
			}
			d.Take()
			want, err := Pack(d.Histogram())
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Pack()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("interval %d of %d values: Delta.Pack = %+v\nPack(Histogram) = %+v", k, n, got.Summary, want.Summary)
			}
			spilled, err := sp.PackDelta(d)
			if err != nil {
				t.Fatal(err)
			}
			text, err := spilled.Text()
			if err != nil {
				t.Fatal(err)
			}
			if spilled.Summary != want.Summary || text != want.Encoded || (n > 0) != (spilled.spill != nil) {
				t.Errorf("interval %d of %d values: PackDelta differs from Pack (spilled: %v)", k, n, spilled.spill != nil)
			}
		}
	}
}

// TestSummarizeCountsIsSummarize: the summary from counts is the library's
// to the last bit, whatever the shape and geometry.
func TestSummarizeCountsIsSummarize(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	geometries := []Geometry{pacerGeometry, newGeometry(10, 3_000_000, 3), newGeometry(1024, 1e12, 2), newGeometry(1, 1e6, 1)}
	for round := range 300 {
		g := geometries[round%len(geometries)]
		counts := make([]int64, g.countsLen)
		switch round % 5 {
		case 0: // a few slots
			for range 1 + rng.IntN(5) {
				counts[rng.IntN(len(counts))] += 1 + rng.Int64N(1000)
			}
		case 1: // dense
			for i := range counts {
				if rng.IntN(3) == 0 {
					counts[i] = rng.Int64N(1 << 20)
				}
			}
		case 2: // slot 0 (the value 0) and the last slot
			counts[0], counts[len(counts)-1] = 1+rng.Int64N(5), 1+rng.Int64N(5)
		default: // recorded values
			h := g.histogram(counts)
			for range rng.IntN(20_000) {
				v := int64(math.Exp(math.Log(float64(g.highest)) * rng.Float64() * rng.Float64()))
				h.RecordValue(min(v, g.highest))
			}
			counts = h.Export().Counts
		}
		h := g.histogram(counts)
		if got, want := summarizeCounts(g, counts), Summarize(h); got != want {
			t.Fatalf("round %d: summarizeCounts = %+v\nSummarize = %+v", round, got, want)
		}
	}
	if got := summarizeCounts(pacerGeometry, make([]int64, pacerGeometry.countsLen)); got != (Summary{}) {
		t.Errorf("empty: %+v", got)
	}
}

// TestPackAllocations: packing a typical interval allocates a few small
// objects (its text), not the megabyte of the library's zlib writer.
// Under the race detector sync.Pool drops a quarter of what it is given,
// so the counts are checked in ordinary builds only.
func TestPackAllocations(t *testing.T) {
	testrun.SkipRace(t, "sync.Pool drops objects at random under -race")
	r := NewRecorder()
	d := NewDelta(r)
	rng := rand.New(rand.NewPCG(31, 32))
	for range 10_000 {
		r.Record(lognormal(rng))
	}
	d.Take()
	h := r.Snapshot()
	check := func(name string, maxAllocs, maxBytes float64, f func() error) {
		t.Helper()
		f() // warm the pool
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const runs = 50
		allocs := testing.AllocsPerRun(runs, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		})
		runtime.ReadMemStats(&after)
		perRun := float64(after.TotalAlloc-before.TotalAlloc) / (runs + 1)
		t.Logf("%s: %.0f allocations, %.0f bytes per call", name, allocs, perRun)
		if allocs > maxAllocs || perRun > maxBytes {
			t.Errorf("%s: %.0f allocations and %.0f bytes per call, want at most %.0f and %.0f",
				name, allocs, perRun, maxAllocs, maxBytes)
		}
	}
	// The text (a few KB) and Export's copy of the counts (270 KB).
	check("Encode", 4, 300<<10, func() error { _, err := Encode(h); return err })
	// The text only.
	check("Delta.Pack", 2, 32<<10, func() error { _, err := d.Pack(); return err })
}

// TestDeltaPackReadByJava has the Java HistogramLogProcessor read what
// Delta.Pack writes for the extremes (every slot of the range filled, and
// counts that take nine varint bytes) and compares its percentile
// distribution with WriteSpectrum's of the same histogram.
func TestDeltaPackReadByJava(t *testing.T) {
	t.Parallel()
	proc := reference.JavaLogProcessor(t)
	start := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	r, huge := NewRecorder(), NewRecorder()
	dr, dhuge := NewDelta(r), NewDelta(huge)
	for i := range pacerGeometry.countsLen {
		r.RecordN(pacerGeometry.valueAt(i), int64(i%1000)+1)
	}
	// Powers of two, so Java's percentile iteration (in doubles) ends.
	huge.RecordN(1e6, 1<<56)
	huge.RecordN(5e6, 1<<56)
	l := Log{Start: start}
	want := map[string]*hdrhistogram.Histogram{}
	for _, c := range []struct {
		tag string
		r   *Recorder
		d   *Delta
	}{{"everyslot", r, dr}, {"huge", huge, dhuge}} {
		d := c.d
		d.Take()
		p, err := d.Pack()
		if err != nil {
			t.Fatal(err)
		}
		l.Entries = append(l.Entries, LogEntry{Tag: c.tag, Start: start, Duration: time.Second, Encoded: p.Encoded})
		want[c.tag] = c.r.Snapshot()
	}
	for tag, h := range want {
		java := javaSpectrum(t, proc, l, tag)
		var ours bytes.Buffer
		if err := WriteSpectrum(&ours, h, SpectrumTicks, 1e6); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(java, ours.Bytes()) {
			t.Errorf("%s: the spectrum differs from Java's:\n--- java\n%.3000s\n--- ours\n%.3000s", tag, java, ours.Bytes())
		}
	}
}
