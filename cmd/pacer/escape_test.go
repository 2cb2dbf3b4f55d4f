package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
)

// hostileText drives a terminal (ESC sequences: colour, OSC title and
// clipboard ending in BEL, a carriage return that overwrites the line),
// reorders what it shows (bidi overrides and isolates), and splits a line.
const hostileText = "\x1b[31mred\x1b]0;title\x07\x1b]52;c;aGk=\x07\rover\u202eesrever\u2066iso\u2069\x7f\u009b2J\nsplit"

// rawControls lists what in out could act on a terminal or reorder it:
// C0 controls but \n, DEL, C1 controls, bidi overrides and isolates, and
// bytes that are not UTF-8.
func rawControls(out string) []string {
	var found []string
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20 && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			found = append(found, fmt.Sprintf("%q at %d (…%q…)", out[i:i+max(size, 1)], i, out[max(0, i-30):min(len(out), i+30)]))
		}
		i += max(size, 1)
	}
	return found
}

// checkEscaped fails t when stdout or stderr of what holds a raw control.
func checkEscaped(t *testing.T, what, stdout, stderr string) {
	t.Helper()
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if raw := rawControls(out); len(raw) > 0 {
			t.Errorf("%s: %s has %d raw controls: %s", what, name, len(raw), strings.Join(raw[:min(len(raw), 5)], "; "))
		}
	}
}

// TestHostileTextIsEscaped: text from every source reaches stdout and
// stderr escaped by one function (safetext): a hostile server's error
// replies (the verdict line, -e, bench's redis-benchmark words), a
// redis-server's reply naming a trace's command, a trace's file name with
// a newline, a command's own text as a test name, and a result file's test
// names, --label and --title in pacer report. Before, raw ESC, OSC and
// BEL of a server's error reached the verdict line, and a file name's
// newline split it.
func TestHostileTextIsEscaped(t *testing.T) {
	t.Parallel()
	srv := hostile.Start(t, hostile.Serve(func(args []string) string {
		if len(args) > 0 && strings.EqualFold(args[0], "PING") {
			return "+PONG\r\n"
		}
		return "-ERR " + strings.ReplaceAll(hostileText, "\n", " ") + "\r\n"
	}))
	target := hostPort(t, srv.Addr)
	for _, args := range [][]string{
		append([]string{"run", "--rate", "1k", "-n", "20", "-c", "1"}, target...),
		append([]string{"run", "--rate", "1k", "-n", "20", "-c", "1", "-e"}, target...),
		append([]string{"bench", "-t", "get", "-n", "20", "-c", "1"}, target...),
		append([]string{"bench", "-t", "get", "-n", "20", "-c", "1", "-e"}, target...),
		append([]string{"fill", "-n", "20"}, target...),
		append([]string{"compare", "--rate", "1k", "--duration", "200ms", "-c", "1", "-t", "get"}, target...),
		append([]string{"sweep", "--rates", "1k,2k", "--step-duration", "200ms", "--settle", "100ms", "-c", "1", "-t", "get"}, target...),
		append([]string{"sweep", "--closed", "-c", "1,2", "--step-duration", "200ms", "-t", "get"}, target...),
		{"run", "--embedded", "--rate", "1k", "-n", "20", "--command", "SET k" + hostileText + " v", "--slo", "p99<=1us"},
		{"sweep", "--embedded", "--rates", "1k", "--step-duration", "200ms", "--settle", "100ms", "--command", "SET k" + hostileText + " v",
			"--slo", "p99<=1us"},
	} {
		code, stdout, stderr := pacer(t, args...)
		if code == exitOK && args[1] != "--embedded" {
			t.Errorf("%q: exit 0 against a server that answers every command with an error", args)
		}
		if args[0] == "bench" { // redis-benchmark's own blanking of its progress line
			stdout = strings.ReplaceAll(stdout, " \r", " ")
		}
		checkEscaped(t, fmt.Sprintf("%q", args), stdout, stderr)
	}
}

// TestHostileTraceIsEscaped: the verdict line of a replay whose trace
// (named with a newline and ESC) holds a command redis-server does not
// know, which its error reply quotes raw, is one line with everything
// escaped. The name holds a bidi override (a control byte in it would be
// refused at its line) and the arguments ESC, OSC and BEL.
func TestHostileTraceIsEscaped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "trace\n\x1b[31m\u202e.txt")
	trace := `1700000000.000000 [0 127.0.0.1:5000] "FOO\xe2\x80\xae" "x\x1b]0;pwned\x07"` + "\n" +
		`1700000000.001000 [0 127.0.0.1:5000] "FOO\xe2\x80\xae" "y\x1b]0;pwned\x07"` + "\n"
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := pacer(t, append(append([]string{"replay"}, hostPort(t, srv.Addr)...), path)...)
	if code != exitFailed || !strings.Contains(stderr, "target lost") || !strings.Contains(stderr, `unknown command 'FOO\u202e', with args beginning with: 'x\x1b]0;pwned\x07'`) {
		t.Errorf("exit %d, stderr %q: want the target lost, naming the command escaped", code, stderr)
	}
	checkEscaped(t, "replay", stdout, stderr)
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if strings.HasPrefix(l, "\x1b") || strings.HasPrefix(l, ".txt") {
			t.Errorf("a line of stderr begins with the rest of the file name: %q", l)
		}
	}
}

// TestHostileReportIsEscaped: pacer report of result files whose test
// names hold ESC, bidi overrides and a newline, with such a --label and
// --title: the text, stderr and the HTML page hold none of them raw (the
// page had 8 raw ESC bytes from --label, 1 from --title and 3 from the
// peers' test names). The same names stay readable, escaped once.
func TestHostileReportIsEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{a, b} {
		// A loaded machine may make the run untrustworthy (4): its file serves all the same.
		if code, _, stderr := pacer(t, "run", "--embedded", "--rate", "1k", "-n", "50", "-q", "--json", p); code != exitOK && code != exitUntrusted {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		doc := strings.ReplaceAll(string(readFile(t, p)), `"name": "GET"`, `"name": "GET`+jsonEscape(hostileText)+`"`)
		if !strings.Contains(doc, "esrever") {
			t.Fatal("no test name to make hostile")
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page := filepath.Join(dir, "page.html")
	code, stdout, stderr := pacer(t, "report", a, b, "--label", "a.json=A"+hostileText, "--title", "T"+hostileText, "--html", page)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	checkEscaped(t, "report", stdout, stderr)
	if !strings.Contains(stdout, `GET\x1b[31mred`) || !strings.Contains(stdout, `A\x1b[31mred`) || strings.Contains(stdout, `\\x1b`) {
		t.Errorf("the names are not shown escaped once: %s", stdout)
	}
	html := string(readFile(t, page))
	if raw := rawControls(strings.ReplaceAll(html, "\t", " ")); len(raw) > 0 {
		t.Errorf("the page holds %d raw controls: %s", len(raw), strings.Join(raw[:min(len(raw), 5)], "; "))
	}
}

// jsonEscape writes s as the inside of a JSON string.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
