package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// openResult is a result as openloop.Run returns one, for a round
// trip through the JSON.
func openResult(name string, scale int64) *scheduler.Result {
	r := &scheduler.Result{
		Name: name, Mode: "open", TargetRate: timeline.RatePerSecond(2000), Arrival: "uniform", Pacing: "precise",
		Connections: 8, Window: 2 * time.Second,
		LagLimit: time.Millisecond, Response: histo.New(), Service: histo.New(), Lag: histo.New(),
		Counts:     scheduler.Counts{Scheduled: 4000, Sent: 3990, Completed: 3980, Errors: 5, Timeouts: 5, Unsent: 10},
		ErrorCodes: map[string]uint64{"ERR": 3, "WRONGTYPE": 2}, FirstError: "ERR nope",
		ConnsLost: 1, Reconnects: 1, Blocked: 20 * time.Millisecond,
	}
	for i := int64(1); i <= 3990; i++ {
		_ = r.Response.RecordValue(scale * (50_000 + i*37))
		_ = r.Service.RecordValue(scale * (30_000 + i*11))
		_ = r.Lag.RecordValue(1_000 + i)
	}
	return r
}

// A document read back prints as the run printed it: the text of the
// result rebuilt from the JSON is the text of the original result.
func TestRenderRoundTrip(t *testing.T) {
	t.Parallel()
	orig := openResult("GET", 1)
	slo, err := parseSLO("p99<1ms,errors<1%")
	if err != nil {
		t.Fatal(err)
	}
	sr := mustCheck(t, slo, orig)
	var want bytes.Buffer
	if err := Text(&want, asTest(t, orig, sr), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	in := input(t, "run.json", craftDoc("open", *asTest(t, orig, sr)))
	var got bytes.Buffer
	if err := Render(&got, in.Doc); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("re-rendered:\n%s\nprinted by the run:\n%s", got.String(), want.String())
	}
}

func TestRenderClosed(t *testing.T) {
	t.Parallel()
	test := craft(t, fixture{name: "SET", mode: "closed", rate: 10000, seconds: 1, base: 0.5, interval: 1, seed: 3})
	test.Verdict, test.VerdictReason = VerdictTargetLost, "every connection was lost"
	var b bytes.Buffer
	if err := Render(&b, input(t, "bench.json", craftDoc("closed", test)).Doc); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	testrun.Contains(t, out,
		"SET: 10000.00 requests per second, p50=0.5", // redis-benchmark's -q line
		"latency (ms)", "p99.99",
		"SET: verdict target_lost (every connection was lost)",
	)
	if strings.Contains(out, "\r") {
		t.Errorf("a progress line's carriage return in %q", out)
	}
}

func TestReadInput(t *testing.T) {
	t.Parallel()
	good, err := craftDoc("open", craft(t, fixture{name: "GET", mode: "open", rate: 100, seconds: 1, base: 0.1, interval: 1, seed: 1})).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// A seed above 2^53 keeps every digit in the configuration shown.
	seeded := bytes.Replace(good, []byte(`"seed": 7`), []byte(`"seed": 1796231323334759688`), 1)
	in, err := ReadInput("x.json", seeded)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range in.Config() {
		found = found || c.Key == "seed" && c.Value == "1796231323334759688"
	}
	if !found {
		t.Errorf("config %v: the seed lost digits", in.Config())
	}
	for name, data := range map[string]string{
		"empty":           "",
		"not json":        "hello",
		"other schema":    `{"schema":"x/v1","tests":[]}`,
		"bad histogram":   strings.Replace(string(good), `"response": "`, `"response": "!!`, 1),
		"truncated":       string(good[:len(good)/2]),
		"tests not array": `{"schema":"pacer.result/v1","tests":{}}`,
	} {
		if _, err := ReadInput("x.json", []byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error on several lines: %q", name, err)
		}
	}
}

func TestMatchTests(t *testing.T) {
	t.Parallel()
	mk := func(names ...string) *Document {
		d := craftDoc("open")
		for _, n := range names {
			d.Tests = append(d.Tests, Test{Name: n, Mode: "open", Errors: map[string]uint64{}})
		}
		return d
	}
	a := input(t, "a", mk("GET", "SET", "GET"))
	b := input(t, "b", mk("SET", "GET", "INCR"))
	ms := MatchTests([]Input{a, b})
	var got []string
	for _, m := range ms {
		s := m.Name + ":"
		for _, tt := range m.Tests {
			if tt == nil {
				s += "-"
			} else {
				s += "x"
			}
		}
		got = append(got, s)
	}
	// The second GET of a has no counterpart in b; INCR is only in b.
	if strings.Join(got, " ") != "GET:xx SET:xx GET:x- INCR:-x" {
		t.Fatalf("matched %v", got)
	}
	// The open loops of two compare documents match in order, whatever
	// their rates.
	e := input(t, "e", mk("GET (closed loop)", "GET (open loop at 1000 req/s)", "GET (open loop at 1600 req/s)"))
	f := input(t, "f", mk("GET (closed loop)", "GET (open loop at 2000 req/s)", "GET (open loop at 3200 req/s)"))
	if ms := MatchTests([]Input{e, f}); len(ms) != 3 || ms[2].Tests[1] == nil || ms[2].Tests[1].Name != "GET (open loop at 3200 req/s)" {
		t.Fatalf("compare documents: %+v", ms)
	}
	// Ids, where documents have them, match tests whose names differ.
	raw := func(d *Document, ids ...string) Input {
		bs, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		s := string(bs)
		for i, id := range ids {
			s = strings.Replace(s, `"name": "`+d.Tests[i].Name+`"`, `"id": "`+id+`", "name": "`+d.Tests[i].Name+`"`, 1)
		}
		in, err := ReadInput("r", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	c := raw(mk("GET (open loop at 1000 req/s)"), "get")
	d := raw(mk("GET (open loop at 2000 req/s)"), "get")
	if ms := MatchTests([]Input{c, d}); len(ms) != 1 || ms[0].Tests[1] == nil {
		t.Fatalf("ids did not match: %+v", ms)
	}
}

func TestSideBySide(t *testing.T) {
	t.Parallel()
	a := craftDoc("open",
		craft(t, fixture{name: "GET", mode: "open", rate: 1000, seconds: 1, base: 0.1, interval: 1, seed: 1}),
		craft(t, fixture{name: "SET", mode: "open", rate: 1000, seconds: 1, base: 0.1, interval: 1, seed: 2}))
	b := craftDoc("closed",
		craft(t, fixture{name: "GET", mode: "closed", rate: 1000, seconds: 1, base: 0.2, interval: 1, seed: 3}),
		craft(t, fixture{name: "LPUSH", mode: "closed", rate: 1000, seconds: 1, base: 0.2, interval: 1, seed: 4}))
	ia, ib := input(t, "a.json", a), input(t, "b.json", b)
	var out bytes.Buffer
	if err := SideBySide(&out, []Input{ia, ib}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	p50a, p50b := a.Tests[0].ResponseMs.P50, b.Tests[0].ResponseMs.P50
	testrun.Contains(t, s,
		"[1] a.json: pacer test, open mode, 2 tests",
		"[2] b.json: pacer test, closed mode, 2 tests",
		"====== GET ======", "[2]-[1] ms (%)",
		diff(p50a, p50b),
		"No counterpart:", "SET: only in [1]", "LPUSH: only in [2]",
		"they say nothing about the run-to-run spread",
	)
}

func TestDiff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base, v float64
		want    string
	}{
		{1, 1.5, "+0.500 (+50.0%)"},
		{2, 1, "-1.000 (-50.0%)"},
		{0, 1, "+1.000"},
		{1, 1, "+0.000 (+0.0%)"},
	} {
		if got := diff(c.base, c.v); got != c.want {
			t.Errorf("diff(%v, %v) = %q, want %q", c.base, c.v, got, c.want)
		}
	}
}
