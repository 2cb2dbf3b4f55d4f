// Package reference finds, for tests, the real programs that read or serve
// pacer's formats: HdrHistogram's Java log processor, headless Chromium
// and Prometheus. Where one is missing the test is skipped loudly, or
// failed where CI requires it (PACER_REQUIRE_JAVA, PACER_REQUIRE_CHROMIUM,
// PACER_REQUIRE_PROMETHEUS, which .ci/run sets after installing them).
package reference

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// JavaLogProcessor returns the command line that runs HdrHistogram's
// Java HistogramLogProcessor (the jar from PACER_HDRHISTOGRAM_JAR, or
// Debian's libhdrhistogram-java). -short skips the test: a JVM takes
// seconds to start on a loaded machine, and .ci/run runs every one.
func JavaLogProcessor(t testing.TB) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts Java's HdrHistogram reader, which takes seconds on its own; .ci/run runs it")
	}
	jar := os.Getenv("PACER_HDRHISTOGRAM_JAR")
	if jar == "" {
		jar = "/usr/share/java/hdrhistogram.jar"
	}
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = os.Stat(jar)
	}
	if err != nil {
		missing(t, "PACER_REQUIRE_JAVA", "the Java HdrHistogram reference is not installed (java and "+jar+
			"; Debian: default-jre-headless libhdrhistogram-java, which .ci/run installs): "+err.Error())
	}
	return []string{java, "-cp", jar, "org.HdrHistogram.HistogramLogProcessor"}
}

// Chromium returns the path of Debian's chromium.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(t, "PACER_REQUIRE_CHROMIUM", "chromium is not installed: the HTML report was not rendered in a browser (apt-get install chromium)")
	return ""
}

// Prometheus returns the path of Prometheus: PACER_PROMETHEUS, PATH,
// /usr/bin or /usr/local/bin.
func Prometheus(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PACER_PROMETHEUS"), "prometheus", "/usr/bin/prometheus", "/usr/local/bin/prometheus"} {
		if p == "" {
			continue
		}
		if full, err := exec.LookPath(p); err == nil {
			return full
		}
	}
	missing(t, "PACER_REQUIRE_PROMETHEUS", "prometheus not found (PATH, /usr/bin, $PACER_PROMETHEUS): the Prometheus scrape test did not run (apt-get install prometheus)")
	return ""
}

// missing fails t when the environment variable require is 1, and
// otherwise skips it, saying so on stderr too, where go test without -v
// still shows it.
func missing(t testing.TB, require, why string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatalf("%s, and %s=1", why, require)
	}
	fmt.Fprintln(os.Stderr, "SKIPPED: "+why)
	t.Skip("SKIPPED: " + why)
}

// GoLog reads an HdrHistogram interval log with hdrhistogram-go's own
// reader, not pacer's: its lines in order, and each tag's lines merged
// (in the geometry of the tag's first line).
func GoLog(t testing.TB, data []byte) (merged map[string]*hdrhistogram.Histogram, lines []*hdrhistogram.Histogram) {
	t.Helper()
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
	merged = map[string]*hdrhistogram.Histogram{}
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			return merged, lines
		}
		if merged[h.Tag()] == nil {
			merged[h.Tag()] = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		merged[h.Tag()].Merge(h)
		lines = append(lines, h)
	}
}

// Histogram decodes one histogram as a result document carries it
// (compressed V2, base64) with hdrhistogram-go's own decoder, failing t
// when it does not decode.
func Histogram(t testing.TB, enc string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		t.Fatalf("decode histogram %.40q: %v", enc, err)
	}
	return h
}
