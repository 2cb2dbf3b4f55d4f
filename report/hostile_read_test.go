package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
)

// hostileDoc is a small open run to be made hostile.
func hostileDoc(t *testing.T) *Document {
	t.Helper()
	return craftDoc("open", craft(t, fixture{name: "GET", mode: "open", rate: 2000, seconds: 1, base: 0.2, interval: 0.25, seed: 4}))
}

// readBack marshals doc and reads it as pacer report does.
func readBack(t *testing.T, doc *Document) (Input, error) {
	t.Helper()
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return ReadInput("hostile.json", b)
}

func encodeHist(t *testing.T, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := histo.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReadRefusesOtherGeometries: a valid histogram of a wide geometry
// (1 to 2^62, 5 digits) costs tens of MB to decode; it is refused on its
// header, before its counts are allocated.
func TestReadRefusesOtherGeometries(t *testing.T) {
	// Not parallel: it counts the process's allocations, which other
	// tests running beside it would add to (over 16 MB seen once).
	doc := hostileDoc(t)
	wide := encodeHist(t, hdrhistogram.New(1, 1<<62, 5))
	doc.Tests[0].Histograms.Response = wide
	var err error
	grew := testrun.Allocated(func() { _, err = readBack(t, doc) })
	if err == nil || !strings.Contains(err.Error(), "geometry") {
		t.Fatalf("a wide geometry read back: %v", err)
	}
	if grew > 16<<20 {
		t.Errorf("refusing it allocated %d MB", grew>>20)
	}
	// In an interval, where merge and the SLO windows decode them.
	doc = hostileDoc(t)
	doc.Tests[0].Intervals[1].Histograms.Response = wide
	in, err := readBack(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Doc.Tests[0].series(); err == nil || !strings.Contains(err.Error(), "geometry") {
		t.Fatalf("a wide interval histogram: %v", err)
	}
}

// TestReadBoundsDurations: a duration no run could have (1e308 s) is
// refused in one line rather than printed as a negative duration.
func TestReadBoundsDurations(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(d *Document){
		"test duration":     func(d *Document) { d.Tests[0].DurationS = 1e308 },
		"config duration":   func(d *Document) { d.Config["duration_s"] = 1e308 },
		"interval start":    func(d *Document) { d.Tests[0].Intervals[0].StartS = 1e300 },
		"negative interval": func(d *Document) { d.Tests[0].IntervalS = -1 },
		"rate":              func(d *Document) { r := 1e300; d.Tests[0].TargetRate = &r },
	} {
		doc := hostileDoc(t)
		change(doc)
		_, err := readBack(t, doc)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line", name, err)
		}
	}
}

// TestReadDecodesOnce: the config object is kept as its JSON text, so a
// seed above 2^53 keeps its digits.
func TestReadKeepsConfigText(t *testing.T) {
	t.Parallel()
	doc := hostileDoc(t)
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"seed": 7`), []byte(`"seed": 18446744073709551615`), 1)
	in, err := ReadInput("x", b)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range in.Config() {
		if c.Key == "seed" {
			found = c.Value == "18446744073709551615"
		}
	}
	if !found {
		js, _ := json.Marshal(in.Config())
		t.Fatalf("seed lost its digits: %s", js)
	}
}
