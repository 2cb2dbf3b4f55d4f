package report_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/reference"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/plots"
	"github.com/pacer-load/pacer/verdict"
)

func htmlFixture(t *testing.T) []byte {
	t.Helper()
	doc := report.CompareFixture(t)
	doc.Tests[1].Name = `GET <b>"bold"</b> & co`
	slo, err := verdict.ParseSLO("p99<5ms")
	if err != nil {
		t.Fatal(err)
	}
	doc.Tests[1].SLO = &report.SLOResult{Spec: slo.Spec, Pass: false, Violations: []string{"p99 95.000 ms >= 5.000 ms (wanted p99<5ms)"}}
	in := report.InputOf(t, "compare.json", doc)
	b, err := plots.HTML(plots.Page{Inputs: []report.Input{in}, Text: "the text report <with> & markup"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHTMLSelfContainedAndEscaped(t *testing.T) {
	t.Parallel()
	b := htmlFixture(t)
	keepPlots(t, "page.html", b)
	s := string(b)
	testrun.Contains(t, s,
		"<title>pacer report: compare.json</title>",
		"GET &lt;b&gt;&#34;bold&#34;&lt;/b&gt; &amp; co", // a test name, escaped
		"the text report &lt;with&gt; &amp; markup",
		"Latency by percentile", "Latency per interval", "Configuration", "Verdicts",
		"violated", "p99 95.000 ms &gt;= 5.000 ms",
	)
	if n := strings.Count(s, "<svg"); n != 2 {
		t.Errorf("%d inline svg drawings, want 2", n)
	}
	if strings.Contains(s, "<b>") || strings.Contains(s, "<?xml") {
		t.Error("unescaped markup or an xml prologue in the page")
	}
	// Nothing is fetched: no src or href attribute, no CSS import or url().
	if m := regexp.MustCompile(`(?i)[\s:](src|href)\s*=|@import|url\(`).FindString(s); m != "" {
		t.Errorf("the page fetches something: %q", m)
	}
}

// TestHTMLInBrowser renders the page in headless chromium: the screenshot
// is not blank and the DOM holds the title.
func TestHTMLInBrowser(t *testing.T) {
	t.Parallel()
	testrun.SkipShort(t, "starts Chromium, which takes seconds on its own; .ci/run runs it")
	bin := reference.Chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := report.WriteOutput(page, htmlFixture(t)); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	chromium := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"),
			"--window-size=1200,2000"}
		cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.Bytes()
	}
	chromium("--screenshot=" + shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	notBlank(t, img)
	dom := string(chromium("--dump-dom"))
	testrun.Contains(t, dom, "pacer report: compare.json", "Latency by percentile", "<svg")
}
