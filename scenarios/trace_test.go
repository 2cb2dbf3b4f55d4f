package scenarios

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rec is a record kept past Next (its Argv copied), for comparisons.
type rec struct {
	T      int64
	DB     int
	Client string
	Argv   []string
	Line   int64
}

func keep(r *TraceRecord) rec {
	k := rec{T: r.T, DB: r.DB, Client: r.Client, Line: r.Line}
	for _, a := range r.Argv {
		k.Argv = append(k.Argv, string(a))
	}
	return k
}

// readTrace reads every record of text, stopping at the first error.
func readTrace(t *testing.T, text string, opt TraceOptions) ([]rec, *TraceReader, error) {
	t.Helper()
	r, err := NewTraceReader(strings.NewReader(text), "t.txt", opt)
	if err != nil {
		return nil, nil, err
	}
	out, err := records(r)
	return out, r, err
}

// records reads r to the end or the first error.
func records(r *TraceReader) ([]rec, error) {
	var out []rec
	for {
		x, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, keep(x))
	}
}

func argv(s ...string) []string { return s }

func TestMonitorLines(t *testing.T) {
	const sec = 1339518083107412000
	for _, c := range []struct {
		name, line string
		want       rec
	}{
		{"tcp", `1339518083.107412 [0 127.0.0.1:60866] "SET" "k" "v"`,
			rec{T: sec, Client: "127.0.0.1:60866", Argv: argv("SET", "k", "v")}},
		{"every escape", `1339518083.107412 [15 127.0.0.1:1] "a\\b\"c" "\n\r\t\a\b" "\x00\xff\xAb\x7f" "it's ok"`,
			rec{T: sec, DB: 15, Client: "127.0.0.1:1", Argv: argv(`a\b"c`, "\n\r\t\a\b", "\x00\xff\xab\x7f", "it's ok")}},
		{"utf-8 comes as \\x", `1.000001 [0 a:1] "SET" "u" "h\xc3\xa9llo \xe2\x9c\x93"`,
			rec{T: 1000001000, Client: "a:1", Argv: argv("SET", "u", "héllo ✓")}},
		{"spaces and empty", `1.5 [0 a:1] "SET" "a b  c" ""`,
			rec{T: 1500000000, Client: "a:1", Argv: argv("SET", "a b  c", "")}},
		{"unix socket", `1.000002 [3 unix:/tmp/r.sock] "incr" "5"`,
			rec{T: 1000002000, DB: 3, Client: "unix:/tmp/r.sock", Argv: argv("incr", "5")}},
		{"ipv6", `1.000002 [0 [::1]:35274] "ping"`,
			rec{T: 1000002000, Client: "[::1]:35274", Argv: argv("ping")}},
		{"a script's command, kept", `1.000003 [0 lua] "set" "lk" "lv"`,
			rec{T: 1000003000, Client: "lua", Argv: argv("set", "lk", "lv")}},
		{"raw status reply", `+1.000004 [0 a:1] "PING"`,
			rec{T: 1000004000, Client: "a:1", Argv: argv("PING")}},
		{"no bracket (before Redis 2.6)", `1.000004 "PING"`,
			rec{T: 1000004000, Argv: argv("PING")}},
		{"nanoseconds", `1.123456789 [0 a:1] "PING"`,
			rec{T: 1123456789, Client: "a:1", Argv: argv("PING")}},
		{"CRLF and trailing blanks", "1.5 [0 a:1] \"PING\" \r",
			rec{T: 1500000000, Client: "a:1", Argv: argv("PING")}},
		{"brackets and quotes in arguments", `1.5 [0 a:1] "SET" "] \"x" "[0 b:2]"`,
			rec{T: 1500000000, Client: "a:1", Argv: argv("SET", `] "x`, "[0 b:2]")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantSecondLine(t, "OK\n"+c.line+"\n", TraceOptions{}, c.want)
		})
	}
}

// wantSecondLine reads text, a trace whose one record is on its second
// line, and wants that record.
func wantSecondLine(t *testing.T, text string, o TraceOptions, want rec) {
	t.Helper()
	got, _, err := readTrace(t, text, o)
	if err != nil {
		t.Fatal(err)
	}
	want.Line = 2
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestMonitorErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`x.123 [0 a:1] "GET"`, `t.txt:1: bad timestamp (want seconds.microseconds): "x.123 [0 a:1] \"GET\""`},
		{`1 [0 a:1] "GET"`, `t.txt:1: bad timestamp (want seconds.microseconds): "1 [0 a:1] \"GET\""`},
		{`9223372036.000000 [0 a:1] "GET"`, `t.txt:1: bad timestamp (want seconds.microseconds): "9223372036.000000 [0 a:1] \"GET\""`},
		{`1.1234567890 [0 a:1] "GET"`, `t.txt:1: bad timestamp (want seconds.microseconds): "1.1234567890 [0 a:1] \"GET\""`},
		{`1.5[0 a:1] "GET"`, `t.txt:1: bad timestamp (want seconds.microseconds and a space): "1.5[0 a:1] \"GET\""`},
		{`1.5 [x a:1] "GET"`, `t.txt:1: bad source or arguments (want [DB ADDRESS] "ARG" ...): "[x a:1] \"GET\""`},
		{`1.5 [0 a:1] GET`, `t.txt:1: bad source or arguments (want [DB ADDRESS] "ARG" ...): "[0 a:1] GET"`},
		{`1.5 [0 a:1]`, `t.txt:1: no command after the source: "[0 a:1]"`},
		{`1.5 [0 a:1] "SET" "k" "v`, `t.txt:1: argument 3: unterminated quote: "\"v"`},
		{`1.5 [0 a:1] "a\`, `t.txt:1: argument 1: unterminated quote: "\"a\\"`},
		{`1.5 [0 a:1] "SET" "k\q"`, `t.txt:1: argument 2: bad escape at byte 21 (MONITOR writes \\ \" \n \r \t \a \b \xhh): "\\q\""`},
		{`1.5 [0 a:1] "SET" "k\x4"`, `t.txt:1: argument 2: bad escape at byte 21 (\x wants two hex digits): "\\x4\""`},
		{`1.5 [0 a:1] "SET" "k\xZZ"`, `t.txt:1: argument 2: bad escape at byte 21 (\x wants two hex digits): "\\xZZ\""`},
		{`1.5 [0 a:1] "a""b"`, `t.txt:1: after argument 1: want a space and a quoted string at byte 16, got "\"b\""`},
		{`1.5 [0 a:1] "a" x`, `t.txt:1: argument 2: want a quoted string at byte 17, got "x"`},
		{`1.5 [0 a:1] "a" `, ``}, // a trailing blank is trimmed
	} {
		wantLineError(t, c.line, TraceMonitor, c.want)
	}
}

// wantLineError reads line, a trace of one line in format, and wants the
// error want ("": none).
func wantLineError(t *testing.T, line string, format TraceFormat, want string) {
	t.Helper()
	_, _, err := readTrace(t, line+"\n", TraceOptions{Format: format})
	got := ""
	if err != nil {
		got = err.Error()
	}
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", line, got, want)
	}
}

func TestTruncatedLastLine(t *testing.T) {
	_, _, err := readTrace(t, "OK\n1.5 [0 a:1] \"SET\" \"k\" \"v", TraceOptions{})
	want := `t.txt:2: argument 3: unterminated quote: "\"v" (the last line, without a newline: is the file cut short?)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// A complete last line without a newline is a line.
	got, _, err := readTrace(t, "OK\n1.5 [0 a:1] \"GET\" \"k\"", TraceOptions{})
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %+v", err, got)
	}
}

// TestLuaLinesAreEffects: the commands a script ran (MONITOR's lua lines)
// are read, marked as effects of the script call before them.
func TestLuaLinesAreEffects(t *testing.T) {
	text := "OK\n" +
		`1.000001 [0 a:1] "EVAL" "redis.call('set','k','v')" "0"` + "\n" +
		`1.000002 [0 lua] "set" "k" "v"` + "\n" +
		`1.000003 [0 lua] "get" "k"` + "\n" +
		`1.000004 [0 a:1] "GET" "k"` + "\n" +
		`1.000005 [0 lua] "del" "k"` + "\n" + // no script call before it
		`1.000006 [0 a:1] "fcall_ro" "f" "0"` + "\n" +
		`1.000007 [0 lua] "get" "k"` + "\n"
	r, err := NewTraceReader(strings.NewReader(text), "t.txt", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		x, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %v %d", x.Line, x.Argv[0], x.Effect, x.ScriptLine))
	}
	want := []string{"2 EVAL false 0", "3 set true 2", "4 get true 2", "5 GET false 0", "6 del true 0", "7 fcall_ro false 0", "8 get true 7"}
	if !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if s := r.Stats(); s.Lua != 4 || s.Records != 7 || s.Lines != 8 || s.Blank != 1 || s.BlankBytes != 3 {
		t.Fatalf("%+v", s)
	}
}

func TestJSONLines(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       rec
	}{
		{"all fields", `{"t": 0.000125, "db": 2, "client": "c1", "argv": ["SET", "k", "v"]}`,
			rec{T: 125000, DB: 2, Client: "c1", Argv: argv("SET", "k", "v")}},
		{"optional fields", `{"t":3,"argv":["PING"]}`, rec{T: 3e9, Argv: argv("PING")}},
		{"nulls", `{"t": 1, "db": null, "client": null, "argv": ["PING"]}`, rec{T: 1e9, Argv: argv("PING")}},
		{"b64", `{"t": 1, "argv": ["SET", "k", {"b64": "AP+AwQ=="}]}`, rec{T: 1e9, Argv: argv("SET", "k", "\x00\xff\x80\xc1")}},
		{"b64 empty", `{"t": 1, "argv": ["SET", "k", {"b64": ""}]}`, rec{T: 1e9, Argv: argv("SET", "k", "")}},
		{"unicode raw and escaped", `{"t": 1, "argv": ["héllo ✓", "\u00e9\ud83d\ude00", "\ud800x"]}`,
			rec{T: 1e9, Argv: argv("héllo ✓", "é😀", "\uFFFDx")}},
		{"escapes", `{"t": 1, "argv": ["\"\\\/\b\f\n\r\t\u0000"]}`, rec{T: 1e9, Argv: argv("\"\\/\b\f\n\r\t\x00")}},
		{"unknown keys", `{"x": {"y": [1, -2.5e3, true, false, null, "s", {}]}, "t": 1, "z": [], "argv": ["PING"]}`,
			rec{T: 1e9, Argv: argv("PING")}},
		{"last key counts", `{"t": 1, "t": 2, "argv": ["A"], "argv": ["B"]}`, rec{T: 2e9, Argv: argv("B")}},
		{"exponent", `{"t": 1.5e-3, "argv": ["A"]}`, rec{T: 1500000, Argv: argv("A")}},
		{"negative", `{"t": -0.25, "argv": ["A"]}`, rec{T: -250000000, Argv: argv("A")}},
		{"epoch to the ns", `{"t": 1796335844.896912123, "argv": ["A"]}`, rec{T: 1796335844896912123, Argv: argv("A")}},
		{"below the ns is dropped", `{"t": 0.0000000019, "argv": ["A"]}`, rec{T: 1, Argv: argv("A")}},
		{"blanks", " \t{ \"t\" : 1 , \"argv\" : [ \"A\" ] } \r", rec{T: 1e9, Argv: argv("A")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantSecondLine(t, "\n"+c.line+"\n", TraceOptions{}, c.want)
		})
	}
}

func TestJSONErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"argv": ["GET"]}`, `t.txt:1: no "t" (the time in seconds)`},
		{`{"t": 1}`, `t.txt:1: no "argv" (the command)`},
		{`{"t": 1, "argv": []}`, `t.txt:1: "argv" is empty`},
		{`{"t": 1, "argv": [1]}`, `t.txt:1: "argv"[0]: want a string or {"b64": "..."}, got "1]}"`},
		{`{"t": 1, "argv": [["a"]]}`, `t.txt:1: "argv"[0]: want a string or {"b64": "..."}, got "[\"a\"]]}"`},
		{`{"t": 1, "argv": [{"b64": "!!"}]}`, `t.txt:1: "argv"[0]: "b64": not standard base64 (illegal base64 data at input byte 0)`},
		{`{"t": 1, "argv": [{"x": "YQ=="}]}`, `t.txt:1: "argv"[0]: want a string or {"b64": "..."}, got an object without "b64"`},
		{"{\"t\": 1, \"argv\": [\"a\xff\"]}", `t.txt:1: "argv"[0]: a string that is not valid UTF-8 (use {"b64": ...} for bytes): "\"a\xff\"]}"`},
		{`{"t": 1, "db": -1, "argv": ["a"]}`, `t.txt:1: "db": want a database number (an integer from 0), got "-1, \"argv\": [\"a\"]}"`},
		{`{"t": 1, "db": 1.5, "argv": ["a"]}`, `t.txt:1: "db": want a database number (an integer from 0), got "1.5, \"argv\": [\"a\"]}"`},
		{`{"t": 1, "client": 5, "argv": ["a"]}`, `t.txt:1: "client": want a string, got "5, \"argv\": [\"a\"]}"`},
		{`{"t": 1, "argv": ["a"]} x`, `t.txt:1: bad JSON: text after the object at byte 25: "x"`},
		{`{"t": 1, "argv": ["a]}`, `t.txt:1: "argv"[0]: unterminated string: "\"a]}"`},
		{"{\"t\": 1, \"argv\": [\"a\tb\"]}", `t.txt:1: "argv"[0]: a control byte in a string (escape it): "\"a\tb\"]}"`},
		{`{"t": 1, "x": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `, "argv": ["a"]}`, `t.txt:1: bad JSON: nested deeper than 64`},
		{`{"t": 1e30, "argv": ["a"]}`, `t.txt:1: "t": "1e30" is out of range (at most 292 years)`},
		{`{"t": "1", "argv": ["a"]}`, `t.txt:1: "t": want a number of seconds, got "\"1\", \"argv\": [\"a\"]}"`},
		{`{"t": 01, "argv": ["a"]}`, `t.txt:1: bad JSON: want "," or "}" at byte 8, got "1, \"argv\": [\"a\"]}"`},
		{`{"t": 1 "argv": ["a"]}`, `t.txt:1: bad JSON: want "," or "}" at byte 9, got "\"argv\": [\"a\"]}"`},
		{`{"t": 1, "argv": ["a\q"]}`, `t.txt:1: "argv"[0]: bad escape in a string: "\\q\"]}"`},
		{`{"t": 1, "argv": ["\u12"]}`, `t.txt:1: "argv"[0]: bad \u escape (want 4 hex digits): "\\u12\"]}"`},
		{`{"t": 1, "argv": ["a",]}`, `t.txt:1: "argv"[1]: want a string or {"b64": "..."}, got "]}"`},
		{`[1]`, `t.txt:1: bad JSON: want an object {...} at byte 1, got "[1]"`},
	} {
		wantLineError(t, c.line, TraceJSON, c.want)
	}
}

func TestDecimalNanos(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"1", 1e9, true}, {"0.000000001", 1, true}, {"1e-9", 1, true},
		{"1e-10", 0, true}, {"123.456", 123456000000, true}, {"1.5E+2", 150e9, true},
		{"9223372036.854775807", 1<<63 - 1, true}, {"9223372036.854775808", 0, false},
		{"-9223372036.854775807", -(1<<63 - 1), true}, {"-9223372036.854775808", -1 << 63, true}, {"-9223372036.854775809", 0, false}, {"12345678901234567890123e-20", 123456789012, true},
		{"0.00000000000000000000000000001", 0, true}, {"1e99999", 0, false}, {"0e99999", 0, true},
	} {
		got, ok := decimalNanos([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %d %v, want %d %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFormatDetection(t *testing.T) {
	mon := "OK\n1.5 [0 a:1] \"PING\"\n"
	js := "{\"t\": 1, \"argv\": [\"PING\"]}\n"
	for _, c := range []struct {
		text string
		opt  TraceOptions
		want TraceFormat
		err  string
	}{
		{mon, TraceOptions{}, TraceMonitor, ""},
		{"\n\n  " + mon, TraceOptions{}, TraceMonitor, ""},
		{"1.5 [0 a:1] \"PING\"\n", TraceOptions{}, TraceMonitor, ""},
		{js, TraceOptions{}, TraceJSON, ""},
		{"\xef\xbb\xbf" + js, TraceOptions{}, TraceJSON, ""},
		{"\xef\xbb\xbf" + mon, TraceOptions{}, TraceMonitor, ""},
		{strings.Repeat("\n", 10000) + js, TraceOptions{}, TraceJSON, ""}, // detected by Next
		{js, TraceOptions{Format: TraceMonitor}, TraceMonitor, `t.txt:1: bad timestamp (want seconds.microseconds): "{\"t\": 1, \"argv\": [\"PING\"]}"`},
		{"", TraceOptions{}, TraceAuto, ""},
		{"GET k\n", TraceOptions{}, TraceAuto, "t.txt:1: not a trace: want MONITOR output (OK, then `1339518083.107412 [0 127.0.0.1:60866] \"SET\" ...`) or JSON lines ({\"t\": ..., \"argv\": [...]}), got \"GET k\""},
	} {
		got, r, err := readTrace(t, c.text, c.opt)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != c.err {
			t.Errorf("%.20q: error %q, want %q", c.text, msg, c.err)
			continue
		}
		if err != nil {
			continue
		}
		if r.Format() != c.want || c.want != TraceAuto && len(got) != 1 {
			t.Errorf("%.20q: format %v, want %v; %+v", c.text, r.Format(), c.want, got)
		}
	}
	for _, s := range []string{"auto", "monitor", "json"} {
		if f, err := ParseTraceFormat(s); err != nil || f.String() != s {
			t.Errorf("%s: %v %v", s, f, err)
		}
	}
	if _, err := ParseTraceFormat("csv"); err == nil {
		t.Error("csv accepted")
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestGzipByContent(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, text string }{
		{"trace.txt", "OK\n1.5 [0 a:1] \"PING\"\n1.6 [0 a:1] \"GET\" \"k\"\n"},
		{"trace.json", "{\"t\": 1, \"argv\": [\"PING\"]}\n{\"t\": 2, \"argv\": [\"GET\", \"k\"]}\n"},
	} {
		for _, zip := range []bool{false, true} {
			data := []byte(c.text)
			if zip {
				data = gz(t, data)
			}
			path := filepath.Join(dir, c.name) // the name does not say gzip
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := OpenTrace(path, TraceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := records(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) > 1 && (len(recs[1].Argv) != 2 || recs[1].Argv[1] != "k") {
				t.Fatalf("%+v", recs[1])
			}
			n := len(recs)
			s := r.Stats()
			if n != 2 || s.Gzip != zip || s.Bytes != int64(len(data)) || s.SHA256 != sha256.Sum256(data) {
				t.Errorf("%s gzip=%v: %d records, %+v", c.name, zip, n, s)
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	// Concatenated gzip members are one stream (as zcat reads them).
	data := append(gz(t, []byte("OK\n1.5 [0 a:1] \"PING\"\n")), gz(t, []byte("1.6 [0 a:1] \"PING\"\n"))...)
	r, err := NewTraceReader(bytes.NewReader(data), "two.gz", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ScanTrace(r, nil); err != nil || s.Commands != 2 {
		t.Fatalf("%v %+v", err, s)
	}
	// A gzip file cut short says so.
	full := gz(t, []byte(traceText(20000)))
	r, err = NewTraceReader(bytes.NewReader(full[:len(full)/2]), "cut.gz", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ScanTrace(r, nil)
	var te *TraceError
	if !errors.As(err, &te) || te.Line < 100 || !strings.Contains(err.Error(), "cut.gz:") || !strings.Contains(err.Error(), "ends too early") {
		t.Fatalf("%v", err)
	}
}

func TestBackwardsTimestamps(t *testing.T) {
	text := "OK\n" +
		"10.000000 [0 a:1] \"A\"\n" +
		"9.999000 [0 a:1] \"B\"\n" + // 1 ms back: moved up to 10 s
		"9.999500 [0 a:1] \"C\"\n" + // still behind: moved up too
		"10.500000 [0 a:1] \"D\"\n"
	got, r, err := readTrace(t, text, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ts []int64
	for _, g := range got {
		ts = append(ts, g.T)
	}
	if !reflect.DeepEqual(ts, []int64{10e9, 10e9, 10e9, 10.5e9}) {
		t.Fatalf("%v", ts)
	}
	if s := r.Stats(); s.Backwards != 2 || s.MaxBackstep != time.Millisecond {
		t.Fatalf("%+v", s)
	}
	// More than a second back: two traces, likely.
	_, _, err = readTrace(t, "OK\n10.000000 [0 a:1] \"A\"\n8.5 [0 a:1] \"B\"\n", TraceOptions{})
	want := "t.txt:3: the timestamp goes back 1.5s from line 2: two traces concatenated? (sort the trace or replay the parts separately)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// Unless the limit is off.
	if got, _, err = readTrace(t, "OK\n10.000000 [0 a:1] \"A\"\n8.5 [0 a:1] \"B\"\n", TraceOptions{MaxBackstep: -1}); err != nil || got[1].T != 10e9 {
		t.Fatalf("%v %+v", err, got)
	}
}

func TestLineLengthBounded(t *testing.T) {
	// A line across many read buffers is read whole.
	big := strings.Repeat("x", 3*bufSize+17)
	got, _, err := readTrace(t, "OK\n1.5 [0 a:1] \"SET\" \"k\" \""+big+"\"\n1.6 [0 a:1] \"GET\" \"k\"", TraceOptions{})
	if err != nil || len(got) != 2 || got[0].Argv[2] != big || got[1].Line != 3 {
		t.Fatalf("%v %d", err, len(got))
	}
	// Past MaxLine it is refused, at its line, whether it fits the read
	// buffer or not.
	for _, n := range []int{100, 2 * bufSize} {
		line := "1.5 [0 a:1] \"SET\" \"k\" \"" + strings.Repeat("y", n) + "\"\n"
		_, _, err = readTrace(t, "OK\n"+line, TraceOptions{MaxLine: n})
		want := "t.txt:2: line longer than " + strconv.Itoa(n) + " bytes (the most a trace line may have)"
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
}

func TestErrorsAreShort(t *testing.T) {
	huge := strings.Repeat("\x01\"\\", 1<<20)
	for _, text := range []string{
		"1.5 [0 a:1] \"SET\" \"k\" \"" + huge + "\n",
		"1.5 [0 a:1] \"SET\" \"k\" " + huge + "\n",
		"1.5 [0 " + huge + "\n",
		"{\"t\": 1, \"argv\": [\"" + huge + "\"]}\n",
		"{\"t\": 1, \"argv\": [\"a\"], \"x\": " + huge + "}\n",
		huge,
	} {
		_, _, err := readTrace(t, text, TraceOptions{})
		if err == nil || len(err.Error()) > 300 || strings.ContainsAny(err.Error(), "\n\x01") {
			t.Errorf("error of %d bytes: %.300q", len(err.Error()), err)
		}
	}
}

func TestErrorsAreSticky(t *testing.T) {
	r, err := NewTraceReader(strings.NewReader("OK\nbad\n1.5 [0 a:1] \"PING\"\n"), "t.txt", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("%v, then %v", err1, err2)
	}
}

// traceText makes n MONITOR lines from a few clients.
func traceText(n int) string {
	var b strings.Builder
	b.WriteString("OK\n")
	for i := 0; i < n; i++ {
		b.WriteString("1700000000.")
		b.WriteString(strconv.Itoa(100000 + i%900000))
		b.WriteString(" [0 127.0.0.1:")
		b.WriteString(strconv.Itoa(50000 + i%7))
		b.WriteString("] \"SET\" \"key:")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("\" \"va\\\"lue\\x00\"\n")
	}
	return b.String()
}

func TestReadingAllocatesNothingPerRecord(t *testing.T) {
	var js bytes.Buffer
	w := NewTraceWriter(&js)
	for i := 0; i < 3000; i++ {
		w.Write(&TraceRecord{T: int64(i) * 1000, Client: "c" + strconv.Itoa(i%5), Argv: [][]byte{[]byte("SET"), []byte("k" + strconv.Itoa(i)), {0xff, 0}}})
	}
	w.Flush()
	for _, text := range []string{traceText(3000), js.String()} {
		r, err := NewTraceReader(strings.NewReader(text), "t", TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ { // warm the buffers
			r.Next()
		}
		var p Policy
		allocs := testing.AllocsPerRun(2000, func() {
			x, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			p.Classify(x.Argv)
		})
		if allocs != 0 {
			t.Errorf("%v: %.2f allocations per record", r.Format(), allocs)
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	in := []TraceRecord{
		{T: 0, Argv: [][]byte{[]byte("PING")}},
		{T: 125000, DB: 3, Client: "c1", Argv: [][]byte{[]byte("SET"), []byte("k"), []byte("héllo \"✓\"\n\t\\ \x01\x7f")}},
		{T: 1796335844896912123, Client: "[::1]:6379", Argv: [][]byte{[]byte("SET"), []byte(""), all}},
		{T: -5, Argv: [][]byte{{0xc3}}},
	}
	b := jsonTrace(t, in)
	if first, _, _ := bytes.Cut(b, []byte("\n")); string(first) != `{"t": 0, "db": 0, "argv": ["PING"]}` {
		t.Errorf("first line %s", first)
	}
	got, _, err := readTrace(t, string(b), TraceOptions{MaxBackstep: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		want := keep(&in[i])
		want.Line = int64(i + 1)
		if i == 3 {
			want.T = got[2].T // a step back is mended
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("record %d: got %+v\nwant %+v", i, got[i], want)
		}
	}
	w := NewTraceWriter(io.Discard)
	if err := w.Write(&TraceRecord{}); err == nil {
		t.Error("empty argv written")
	}
	if err := w.Write(&TraceRecord{Client: "\xff", Argv: [][]byte{[]byte("A")}}); err == nil {
		t.Error("client of invalid UTF-8 written")
	}
}

func TestAppendMonitorArgMatchesParser(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	line := appendMonitorArg([]byte(`1.5 [0 a:1] `), all)
	got, _, err := readTrace(t, string(line)+"\n", TraceOptions{})
	if err != nil || len(got) != 1 || got[0].Argv[0] != string(all) {
		t.Fatalf("%v %+v", err, got)
	}
}

// TestMonitorFixture reads a real capture of `redis-cli monitor` (Redis
// 7.0, made by TestMonitorCaptureOfARealServer with -update) and checks it
// against its JSON lines, written from the same capture then: the reader
// of each format and the writer agree, without a server.
func TestMonitorFixture(t *testing.T) {
	mon, err := OpenTrace("testdata/trace/monitor-redis7.txt", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	js, err := OpenTrace("testdata/trace/monitor-redis7.jsonl", TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	n := 0
	for {
		a, errA := mon.Next()
		b, errB := js.Next()
		if errA == io.EOF && errB == io.EOF {
			break
		}
		if errA != nil || errB != nil {
			t.Fatalf("%v %v", errA, errB)
		}
		ka, kb := keep(a), keep(b)
		kb.Line = ka.Line
		if !reflect.DeepEqual(ka, kb) {
			t.Fatalf("monitor %+v\njson    %+v", ka, kb)
		}
		if ka.Argv[0] == "SET" && ka.Argv[1] == "bin" && ka.Argv[2] != string(all) {
			t.Fatalf("every byte: %q", ka.Argv[2])
		}
		n++
	}
	if n != 15 || mon.Stats().Records != 15 {
		t.Fatalf("%d records", n)
	}
}
