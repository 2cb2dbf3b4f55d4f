package scenarios

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jsonTrace writes records as JSON lines.
func jsonTrace(t testing.TB, recs []TraceRecord) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewTraceWriter(&b)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.Bytes()
}

func scan(t testing.TB, data []byte, p *Policy) (TraceSummary, error) {
	t.Helper()
	r, err := NewTraceReader(bytes.NewReader(data), "x.jsonl", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ScanTrace(r, p)
}

func TestScanTraceNumbers(t *testing.T) {
	const ms = int64(time.Millisecond)
	base := int64(1700000000) * 1e9
	cmd := func(tt int64, client string, db int, a string) TraceRecord {
		return TraceRecord{T: base + tt, Client: client, DB: db, Argv: args(a)}
	}
	recs := []TraceRecord{
		cmd(0, "c1", 0, "SELECT 0"), // line 1: skipped, and not the first command sent
		cmd(1*ms, "c1", 0, "GET a"), // line 2: the first sent, windows start here
		cmd(2*ms, "c1", 0, "GET b"),
		cmd(10*ms, "c2", 1, "SET a 1"), // line 4: still the first 10 ms window (1 ms + 9 ms)
		cmd(11*ms, "c2", 1, "GET a"),   // line 5: the second 10 ms window [11, 21) ms
		cmd(12*ms, "c1", 0, "get b"),
		cmd(15*ms, "c1", 0, "CONFIG GET x"),
		cmd(20*ms, "c1", 0, "GET c"),
		cmd(21*ms, "c1", 0, "GET d"),     // line 9: the third window
		cmd(500*ms, "c1", 0, "FLUSHALL"), // line 10: skipped by --skip
		cmd(1001*ms, "c3", 0, "GET e"),   // line 11: the second 1 s window
		cmd(2001*ms, "c3", 0, "GET f"),   // line 12: the third
	}
	data := jsonTrace(t, recs)
	p, _ := ParsePolicy("", "flushall")
	s, err := scan(t, data, p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	want := TraceSummary{
		Name: "x.jsonl", Format: TraceJSON, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
		Lines: 12, Records: 12, Commands: 10,
		First: base + 1*ms, Last: base + 2001*ms, Span: 2 * time.Second, MeanRate: 5,
		Peak1s:   TracePeak{Window: time.Second, Count: 8, Offset: 0, Line: 2},
		Peak10ms: TracePeak{Window: 10 * time.Millisecond, Count: 4, Offset: 10 * time.Millisecond, Line: 5},
		ByCommand: TraceTally{Distinct: 3, Top: []TraceCount{
			{Name: "GET", Count: 8, FirstLine: 2}, {Name: "CONFIG GET", Count: 1, FirstLine: 7}, {Name: "SET", Count: 1, FirstLine: 4}}},
		ByClient: TraceTally{Distinct: 3, Top: []TraceCount{
			{Name: "c1", Count: 6, FirstLine: 2}, {Name: "c2", Count: 2, FirstLine: 4}, {Name: "c3", Count: 2, FirstLine: 11}}},
		ByDB: TraceTally{Distinct: 2, Top: []TraceCount{{Name: "0", Count: 8, FirstLine: 2}, {Name: "1", Count: 2, FirstLine: 4}}},
		Skipped: []TraceDrop{
			{Name: "SELECT", Reason: "the replay selects each connection's database from the trace", Count: 1, FirstLine: 1},
			{Name: "FLUSHALL", Reason: "--skip", Count: 1, FirstLine: 10}},
		SkippedTotal: 2,
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got  %+v\nwant %+v", s, want)
	}
	if r := s.Peak10ms.Rate(); r != 400 {
		t.Errorf("peak rate %v", r)
	}
}

func TestScanTraceRefused(t *testing.T) {
	text := "OK\n" +
		"1.000001 [0 a:1] \"GET\" \"k\"\n" +
		"1.000002 [0 a:1] \"flushall\"\n" +
		"1.000003 [0 a:1] \"KEYS\" \"*\"\n" +
		"1.000004 [0 a:1] \"FLUSHALL\"\n" +
		"1.000005 [0 lua] \"FLUSHALL\"\n" // a script's: not counted
	r, _ := NewTraceReader(strings.NewReader(text), "prod.log", TraceOptions{})
	s, err := ScanTrace(r, nil)
	want := "prod.log:3: FLUSHALL is refused (deletes every key); the trace has 3 refused: FLUSHALL 2, KEYS 1: --allow NAME,... sends them, --skip NAME,... leaves them out"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if s.Commands != 1 || s.RefusedTotal != 3 || s.Lua != 1 || len(s.Refused) != 2 || s.Refused[1].FirstLine != 4 {
		t.Fatalf("%+v", s)
	}
	// --allow sends them, --skip drops them.
	allow, _ := ParsePolicy("FLUSHALL,KEYS", "")
	r, _ = NewTraceReader(strings.NewReader(text), "prod.log", TraceOptions{})
	if s, err = ScanTrace(r, allow); err != nil || s.Commands != 4 {
		t.Fatalf("%v %+v", err, s)
	}
	skip, _ := ParsePolicy("", "FLUSHALL,KEYS")
	r, _ = NewTraceReader(strings.NewReader(text), "prod.log", TraceOptions{})
	if s, err = ScanTrace(r, skip); err != nil || s.Commands != 1 || s.SkippedTotal != 3 {
		t.Fatalf("%v %+v", err, s)
	}
}

func TestScanTraceNothingToSend(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "t: no command to replay: the trace is empty"},
		{"OK\n", "t: no command to replay: the trace is empty"},
		{"OK\n1.1 [0 lua] \"GET\" \"k\"\n", "t: no command to replay: the trace has only commands run by scripts (1 lines)"},
		{"OK\n1.1 [0 a:1] \"FLUSHALL\"\n1.2 [0 a:1] \"FLUSHALL\"\n1.3 [0 a:1] \"SELECT\" \"1\"\n",
			"t:2: FLUSHALL is refused (deletes every key); the trace has 2 refused (and no command to replay without them): FLUSHALL 2: --allow NAME,... sends them, --skip NAME,... leaves them out"},
		{"OK\n1.1 [0 a:1] \"FLUSHALL\"\n1.3 [0 a:1] \"SELECT\" \"1\"\n", ""}, // skipping, below
		{"OK\n1.1 [0 a:1] \"AUTH\" \"x\"\n1.3 [0 a:1] \"SELECT\" \"1\"\n", "t: no command to replay: 2 skipped (AUTH 1, SELECT 1)"},
	} {
		r, err := NewTraceReader(strings.NewReader(c.text), "t", TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "" {
			skip, _ := ParsePolicy("", "FLUSHALL")
			if _, err := ScanTrace(r, skip); err == nil || err.Error() != "t: no command to replay: 2 skipped (FLUSHALL 1, SELECT 1)" {
				t.Errorf("%q with --skip FLUSHALL: %v", c.text, err)
			}
			continue
		}
		if _, err := ScanTrace(r, nil); err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

func TestScanTraceStopsAtABadLine(t *testing.T) {
	r, _ := NewTraceReader(strings.NewReader("OK\n1.1 [0 a:1] \"GET\" \"k\"\n1.2 [0 a:1] \"GET\" \"k\n1.3 [0 a:1] \"GET\"\n"), "t", TraceOptions{})
	s, err := ScanTrace(r, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "t:3: argument 2: unterminated quote") || s.Commands != 1 {
		t.Fatalf("%v %+v", err, s)
	}
}

func TestScanTraceTalliesAreBounded(t *testing.T) {
	var b bytes.Buffer
	w := NewTraceWriter(&b)
	n := TraceTallyCap + 5
	long := strings.Repeat("n", 200)
	for i := 0; i < n; i++ {
		w.Write(&TraceRecord{T: int64(i), Client: long + strconv.Itoa(i), Argv: [][]byte{[]byte("CMD" + strconv.Itoa(i))}})
	}
	w.Flush()
	s, err := scan(t, b.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ByCommand.Distinct != TraceTallyCap || s.ByCommand.Other != 5 || len(s.ByCommand.Top) != TraceTopN {
		t.Errorf("commands %d %d %d", s.ByCommand.Distinct, s.ByCommand.Other, len(s.ByCommand.Top))
	}
	// Names are cut: 200-byte client names all look alike past the cut.
	if s.ByClient.Distinct != 1 || len(s.ByClient.Top[0].Name) != maxTallyName {
		t.Errorf("clients %d %d", s.ByClient.Distinct, len(s.ByClient.Top[0].Name))
	}
}

func TestRefusedNamesArePrintable(t *testing.T) {
	data := jsonTrace(t, []TraceRecord{{T: 1, Argv: [][]byte{[]byte("GET"), []byte("k")}}, {T: 2, Argv: [][]byte{[]byte("KEYS"), []byte("*")}}})
	_, err := scan(t, data, nil)
	if err == nil || !strings.Contains(err.Error(), "x.jsonl:2: KEYS is refused") {
		t.Fatal(err)
	}
	if got := printable("A\x1b[2J"); got != `"A\x1b[2J"` {
		t.Errorf("%s", got)
	}
}

func TestOpenTraceMissingFile(t *testing.T) {
	_, err := OpenTrace(filepath.Join(t.TempDir(), "none"), TraceOptions{})
	if !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
