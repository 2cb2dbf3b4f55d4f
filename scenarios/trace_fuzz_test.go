package scenarios

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkErr: every error is one line of bounded length.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil || err == io.EOF {
		return
	}
	if s := err.Error(); len(s) > 400 || strings.ContainsAny(s, "\n\r") {
		t.Fatalf("error of %d bytes or lines: %q", len(s), s)
	}
}

// readAllRecs reads text to the end or the first error.
func readAllRecs(t *testing.T, text []byte, opt TraceOptions) ([]rec, error) {
	r, err := NewTraceReader(bytes.NewReader(text), "f", opt)
	if err != nil {
		return nil, err
	}
	out, err := records(r)
	for _, x := range out {
		if len(x.Argv) == 0 {
			t.Fatalf("a record without argv at line %d", x.Line)
		}
	}
	return out, err
}

// FuzzMonitorLine: any text is read or refused with a short one-line
// error; what is read, printed again as MONITOR prints it, reads back to
// the same arguments.
func FuzzMonitorLine(f *testing.F) {
	for _, s := range []string{
		"OK\n1339518083.107412 [0 127.0.0.1:60866] \"SET\" \"k\" \"v\"\n",
		`1.5 [0 lua] "a\\b\"c" "\n\r\t\a\b" "\x00\xff\xAb"`,
		`1.5 [3 unix:/tmp/r.sock] "incr" "5"`, `1.5 [0 [::1]:1] "ping"`, `+1.5 "PING"`,
		`1.5 [0 a:1] "SET" "k" "v`, `1.5 [0 a:1] "a""b"`, `1.5 [0 a:1] "\x4"`, "1.5 [0 a:1]\r\n\r\n",
		`1.5 [0 a:1] "SET" "] \"x" "[0 b:2]"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		recs, err := readAllRecs(t, []byte(text), TraceOptions{Format: TraceMonitor, MaxBackstep: -1})
		checkErr(t, err)
		for _, x := range recs {
			line := strconv.AppendInt(nil, x.T/1e9, 10)
			line = append(line, '.')
			line = append(line, strconv.FormatInt(1e9+x.T%1e9, 10)[1:]...)
			line = append(line, " ["...)
			line = strconv.AppendInt(line, int64(x.DB), 10)
			line = append(line, " c:1] "...)
			for i, a := range x.Argv {
				if i > 0 {
					line = append(line, ' ')
				}
				line = appendMonitorArg(line, []byte(a))
			}
			again, err := readAllRecs(t, line, TraceOptions{Format: TraceMonitor})
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if len(again) != 1 || again[0].T != x.T || again[0].DB != x.DB || !reflect.DeepEqual(again[0].Argv, x.Argv) {
				t.Fatalf("%q: read %+v, then %+v", line, x, again)
			}
		}
	})
}

// FuzzJSONLine: any text is read or refused with a short one-line error;
// a line read is valid JSON that encoding/json reads to the same values,
// and TraceWriter writes it back to the same record.
func FuzzJSONLine(f *testing.F) {
	for _, s := range []string{
		`{"t": 0.000125, "db": 0, "client": "c1", "argv": ["SET", "k", "v"]}`,
		`{"t": 1, "argv": ["SET", "k", {"b64": "AP+AwQ=="}]}`,
		`{"t": 1, "argv": ["héllo ✓", "\u00e9\ud83d\ude00", "\ud800x"]}`,
		`{"x": {"y": [1, -2.5e3, true, false, null, "s", {}]}, "t": 1, "z": [], "argv": ["PING"]}`,
		`{"t": 1.5e-3, "db": null, "client": null, "argv": ["A"], "argv": ["B"]}`,
		`{"t": 1, "argv": [{"b64": "!!"}]}`, `{"t": 1e30, "argv": ["a"]}`, `{"t": -0.25, "argv": ["\"\\\/\b\f\n\r\t\u0000"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		recs, err := readAllRecs(t, []byte(line), TraceOptions{Format: TraceJSON, MaxBackstep: -1})
		checkErr(t, err)
		if err != nil || len(recs) == 0 {
			return
		}
		if !strings.ContainsAny(line, "\n") {
			compareWithEncodingJSON(t, line, recs[0])
		}
		trs := make([]TraceRecord, len(recs))
		for i, x := range recs {
			trs[i] = TraceRecord{T: x.T, DB: x.DB, Client: x.Client}
			for _, a := range x.Argv {
				trs[i].Argv = append(trs[i].Argv, []byte(a))
			}
		}
		b := jsonTrace(t, trs)
		again, err := readAllRecs(t, b, TraceOptions{MaxBackstep: -1})
		if err != nil || len(again) != len(recs) {
			t.Fatalf("%q: %v", b, err)
		}
		for i := range recs {
			again[i].Line = recs[i].Line
			if !reflect.DeepEqual(again[i], recs[i]) {
				t.Fatalf("record %d: %+v, written and read %+v", i, recs[i], again[i])
			}
		}
	})
}

// compareWithEncodingJSON checks one accepted line against encoding/json.
func compareWithEncodingJSON(t *testing.T, line string, got rec) {
	t.Helper()
	line = string(trimBOM([]byte(line)))
	if !json.Valid([]byte(line)) {
		t.Fatalf("accepted invalid JSON %q", line)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	var tf float64
	if err := json.Unmarshal(m["t"], &tf); err == nil && math.Abs(tf) < 9e9 {
		if d := math.Abs(tf*1e9 - float64(got.T)); d > 1+math.Abs(tf)*1e9*1e-15 {
			t.Fatalf("%q: t %v, read as %d ns", line, tf, got.T)
		}
	}
	var argv []json.RawMessage
	if err := json.Unmarshal(m["argv"], &argv); err != nil || len(argv) != len(got.Argv) {
		t.Fatalf("%q: argv %v", line, err)
	}
	for i, raw := range argv {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s != got.Argv[i] {
				t.Fatalf("%q: argv[%d] %q, read as %q", line, i, s, got.Argv[i])
			}
			continue
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatalf("%q: argv[%d]: %v", line, i, err)
		}
		var b64 string
		json.Unmarshal(o["b64"], &b64)
		if b, err := base64.StdEncoding.DecodeString(b64); err != nil || string(b) != got.Argv[i] {
			t.Fatalf("%q: argv[%d] b64 %q, read as %q", line, i, b64, got.Argv[i])
		}
	}
	if c, ok := m["client"]; ok && string(c) != "null" {
		var s string
		if json.Unmarshal(c, &s) != nil || s != got.Client {
			t.Fatalf("%q: client %s, read as %q", line, c, got.Client)
		}
	}
}

// FuzzTraceRoundTrip: whatever a record holds, TraceWriter writes it and
// TraceReader reads the same record back.
func FuzzTraceRoundTrip(f *testing.F) {
	f.Add(int64(125000), uint16(0), "c1", []byte("SET"), []byte("v"))
	f.Add(int64(-1), uint16(15), "", []byte{0xff, 0}, []byte("héllo \"✓\"\n"))
	f.Add(int64(math.MaxInt64), uint16(1), "[::1]:6379", []byte(""), []byte{0xc3})
	f.Add(int64(math.MinInt64), uint16(1), "x", []byte("\u2028"), []byte("\\"))
	f.Fuzz(func(t *testing.T, ts int64, db uint16, client string, a, b []byte) {
		in := TraceRecord{T: ts, DB: int(db), Client: client, Argv: [][]byte{a, b}}
		var buf bytes.Buffer
		w := NewTraceWriter(&buf)
		if err := w.Write(&in); err != nil {
			if !utf8.ValidString(client) {
				return
			}
			t.Fatal(err)
		}
		w.Flush()
		got, err := readAllRecs(t, buf.Bytes(), TraceOptions{})
		if err != nil || len(got) != 1 {
			t.Fatalf("%q: %v", buf.String(), err)
		}
		want := keep(&in)
		want.Line = 1
		if !reflect.DeepEqual(got[0], want) {
			t.Fatalf("%q: read %+v, want %+v", buf.String(), got[0], want)
		}
	})
}
