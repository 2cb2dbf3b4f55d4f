package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/scenarios"
)

// FuzzCLI runs the whole CLI in-process on command lines built from the
// fuzz input: a command (every one the app defines, plus help, --version,
// no command and an unknown one), then flags drawn from that command's own
// flag definitions (so a new flag is fuzzed as soon as it exists) with
// values made of the input's bytes, positional words, "--", stray tokens and
// an optional Ctrl-C at a chosen instant.
//
// Safety: no generated argument sends traffic anywhere but loopback. The
// target flags are never given fuzzed text: -h is 127.0.0.1, localhost or
// ::1, -p the harness's embedded target or a closed port, -s a path in a
// temporary directory, -u a URI built with a loopback host; --embedded can
// only be switched on, serve only binds loopback on a free port, and every
// flag whose help placeholder is HOST:PORT or ADDRESS (--metrics-addr) a
// loopback address. A flag or argument whose placeholder names a host, a
// port, a socket or a URL the harness does not know stops the fuzzing
// before anything runs (checkPolicies), so a new one gets a policy. Every
// command line starts with pins (the target, tiny durations and counts),
// and the flags that cost time or memory are clamped after parsing their
// value the way the CLI does: --duration and --drain ≤ 50 ms, -n ≤ 2000
// (run) or 300 (bench), -c ≤ 16, -P ≤ 32, -d ≤ 256 bytes, --max-inflight ≤
// 1024, --max-buffer ≤ 64 MiB, fill -r ≤ 500, bench --rate ≥ 20k, faults
// of at most 5 ms stalls and 100 µs delays. Values the CLI must refuse
// (negative, zero, above its limits, unparsable) are kept. Paths (every
// FILE or OUT.x flag, --commands, report's files) are chosen among files of
// a temporary directory, a saved result, /dev/null, /dev/zero and "-", and
// the working directory is a temporary one. serve, bench -l and bench -I
// are stopped by cancelling their context (a Ctrl-C without the signal)
// after 150 ms.
//
// Checks: no panic; exit 0, 1, 2, 3 or 4 (130 only when the harness
// interrupted); exit 2 prints exactly one line on stderr; the run ends
// within fuzzDeadline and within fuzzAfterCancel of an interrupt; the
// harness password never appears in the output; no goroutines are left
// behind.
//
//	go test ./cmd/pacer -run '^$' -fuzz FuzzCLI -fuzztime 10m -parallel 2
func FuzzCLI(f *testing.F) {
	env := newFuzzEnv(f)
	for i, seed := range fuzzSeeds() {
		if testing.Short() && i%12 != 0 {
			continue // -short: a twelfth of the seed corpus; CI runs it all
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp := t.TempDir()
		t.Chdir(tmp) // nothing is written to the package directory, whatever a relative path says
		fc := env.build(data, tmp)
		env.flush(t)
		fc.exec(t)
	})
}

// Time bounds of one generated command line.
const (
	// fuzzDeadline: every pinned run is far shorter (the whole 21-test
	// suite at the clamped durations takes about 2 s); longer means a run
	// ignored its bounds.
	fuzzDeadline = 15 * time.Second
	// fuzzAfterCancel: Ctrl-C ends every state within the documented 2 s;
	// the rest is margin for a loaded 2-core machine.
	fuzzAfterCancel = 8 * time.Second
	// fuzzStopAfter: serve, bench -l and bench -I run until interrupted.
	fuzzStopAfter = 150 * time.Millisecond
	// fuzzOutputCap bounds what is kept of stdout and stderr.
	fuzzOutputCap = 1 << 20
)

// fuzzPassword marks the password the harness gives with -a or -u: it must
// never be printed.
const fuzzPasswordPrefix = "pw-"

// fuzzEnv is what every input of one fuzzing process shares: the embedded
// target the pinned -h/-p point at, a closed port, and read-only files.
type fuzzEnv struct {
	srv      *embedded.Server
	port     string // the harness target's
	deadPort string // nothing listens there
	dir      string // many.txt (300 templates), big.txt (over 1 MiB), longline.txt
	result   string // a --json result, for the commands that read them
	commands []*cli.Command
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	// A small dataset limit: fuzzed SETs cannot grow the process.
	srv, err := embedded.Start(embedded.Config{MaxMemory: 32 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(srv.Addr())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	_, dead, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	dir := f.TempDir()
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, "%d SET k%d:__key__ __data__\n", i%7+1, i)
	}
	var big strings.Builder
	for big.Len() <= scenarios.MaxCommandsFileSize {
		big.WriteString("1 GET k:__key__\n")
	}
	for name, text := range map[string]string{
		"many.txt":     many.String(),
		"big.txt":      big.String(),
		"longline.txt": "SET k " + strings.Repeat("v", scenarios.MaxCommandLine+1) + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	e := &fuzzEnv{srv: srv, port: port, deadPort: dead, dir: dir, commands: newApp(io.Discard, io.Discard).Commands,
		result: filepath.Join(dir, "result.json")}
	if err := checkPolicies(e.commands); err != nil {
		f.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := mainWith(context.Background(), strings.NewReader(""), []string{"pacer", "run", "--embedded", "--rate", "2k", "-n", "100",
		"-t", "get,set", "-q", "--lag-limit", "1s", "--json", e.result}, &out, &errs); code != exitOK && code != exitUntrusted {
		f.Fatalf("a result for report: exit %d: %s", code, errs.String())
	}
	return e
}

// flush empties the harness target before each input, so earlier inputs'
// data does not fill it.
func (e *fuzzEnv) flush(t *testing.T) {
	c, err := net.DialTimeout("tcp", e.srv.Addr(), time.Second)
	if err != nil {
		t.Fatalf("harness target: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "*1\r\n$8\r\nFLUSHALL\r\n"); err != nil {
		t.Fatalf("harness target: %v", err)
	}
	buf := make([]byte, 64)
	if _, err := c.Read(buf); err != nil {
		t.Fatalf("harness target: %v", err)
	}
}

// fuzzSrc hands out the input's bytes; past the end it gives zeros.
type fuzzSrc struct{ b []byte }

func (s *fuzzSrc) empty() bool { return len(s.b) == 0 }

func (s *fuzzSrc) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

// n returns a number below k (k ≥ 1).
func (s *fuzzSrc) n(k int) int { return int(s.byte()) % k }

func (s *fuzzSrc) pick(list []string) string { return list[s.n(len(list))] }

// raw returns a length byte's worth of the input (at most max bytes).
func (s *fuzzSrc) raw(max int) string {
	n := min(s.n(max+1), len(s.b))
	out := string(s.b[:n])
	s.b = s.b[n:]
	return out
}

// number returns a decimal integer of 1 to 8 bytes of the input, signed.
func (s *fuzzSrc) number() string {
	k := s.n(8) + 1
	var v uint64
	for range k {
		v = v<<8 | uint64(s.byte())
	}
	if v&1 == 1 {
		return "-" + strconv.FormatUint(v>>1, 10)
	}
	return strconv.FormatUint(v>>1, 10)
}

// Operations of the input, one byte each (op % 8), after the command and
// its pins.
const (
	opFlag    = 0 // 0 to 4: a flag; op/8 % 5 picks its form
	opWord    = 5 // a positional word
	opDashes  = 6 // "--": the rest is positional
	opSpecial = 7 // a stray token, a trailing -h, or a Ctrl-C
)

// Forms of a flag (op/8 % 5): -name v, --name v, --name=v, -name=v, and
// the name alone as the last argument (its value missing). Bool flags use
// -name, --name and --name=TEXT.
const fuzzForms = 5

// Value kinds, the byte after the flag's index.
const (
	kindGood = 0 // the flag's list of typical values
	kindEdge = 1 // the type's edge cases
	kindRaw  = 2 // bytes of the input (clamped, never for pinned flags)
	kindNum  = 3 // a number from the input
)

// fuzzPseudo are command lines that are not a subcommand.
var fuzzPseudo = []string{"help", "--help", "-h", "--version", "", "walk"}

// fuzzCase is one command line to run.
type fuzzCase struct {
	args        []string
	stdin       []byte
	cancelAfter time.Duration // 0: only the deadline interrupts
	secrets     []string
}

// item is one flag, word or token of the command line being built.
type item struct {
	tokens   []string
	nameOnly bool // the flag's name alone: must be the last argument
}

// build turns the input into a command line. tmp is this input's own
// temporary directory.
func (e *fuzzEnv) build(data []byte, tmp string) *fuzzCase {
	s := &fuzzSrc{b: data}
	fc := &fuzzCase{}
	nc := len(e.commands)
	choice := s.n(nc + len(fuzzPseudo))
	if choice >= nc {
		fc.args = e.pseudo(s, fuzzPseudo[choice-nc])
		return fc
	}
	cmd := e.commands[choice]
	g := &gen{env: e, s: s, cmd: cmd.Name, tmp: tmp, fc: fc}
	fc.args = append([]string{"pacer", cmd.Name}, g.pins(cmd)...)
	fc.stdin = []byte(s.raw(64))
	var items []item
	var last *item
	dashes, trailingH := false, false
	for !s.empty() && len(items) < 32 {
		op := s.byte()
		switch op % 8 {
		case opWord:
			var w string
			switch {
			case takesFiles(cmd):
				// Paths, never free text: report reads flags among its
				// files (after "--" too), and a path could be anything.
				w = g.inputPath()
			default:
				w = s.raw(24)
				if !dashes && strings.HasPrefix(w, "-") {
					w = "x" + w // before "--" a word must not read as a flag
				}
			}
			items = append(items, item{tokens: []string{w}})
		case opDashes:
			if !dashes {
				dashes = true
				items = append(items, item{tokens: []string{"--"}})
			}
		case opSpecial:
			switch s.n(4) {
			case 0:
				trailingH = true
			case 1:
				fc.cancelAfter = time.Duration(s.byte())*2*time.Millisecond + time.Millisecond
			default:
				items = append(items, item{tokens: []string{s.pick([]string{"--help", "--bogus", "-bogus=1", "---", "--=x", "-", "--no-such-flag", "-=", "--version"})}})
			}
		default:
			fl := cmd.Flags[s.n(len(cmd.Flags))]
			kept := len(fc.secrets)
			it := g.flag(fl, int(op/8)%fuzzForms)
			if dashes {
				// After "--" a flag is text of the command, shown as its
				// name: a password there is not one.
				fc.secrets = fc.secrets[:kept]
			}
			if it.nameOnly {
				last = &it
				continue
			}
			items = append(items, it)
		}
	}
	for _, it := range items {
		fc.args = append(fc.args, it.tokens...)
	}
	switch {
	case trailingH:
		fc.args = append(fc.args, "-h") // a trailing -h is help
	case last != nil && !dashes:
		fc.args = append(fc.args, last.tokens...)
	}
	if cmd.Name == "serve" || g.looping {
		fc.cancelAfter = fuzzStopAfter
	}
	return fc
}

// pseudo builds a command line without a subcommand.
func (e *fuzzEnv) pseudo(s *fuzzSrc, first string) []string {
	args := []string{"pacer"}
	if first != "" {
		args = append(args, first)
	}
	for range s.n(3) {
		// A command's name only after help (pacer help run): as the first
		// word it would run the command, unpinned.
		if k := s.n(len(e.commands) + 2); k < len(e.commands) && first == "help" {
			args = append(args, e.commands[k].Name)
		} else {
			args = append(args, s.pick([]string{"walk", "--help", "-h", "--bogus", ""}))
		}
	}
	return args
}

// exec runs the command line and checks the outcome.
func (fc *fuzzCase) exec(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	stdout, stderr := syncBuffer{limit: fuzzOutputCap}, syncBuffer{limit: fuzzOutputCap}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- mainWith(ctx, bytes.NewReader(fc.stdin), fc.args, &stdout, &stderr) }()
	var planned <-chan time.Time
	if fc.cancelAfter > 0 {
		tm := time.NewTimer(fc.cancelAfter)
		defer tm.Stop()
		planned = tm.C
	}
	deadline := time.NewTimer(fuzzDeadline)
	defer deadline.Stop()
	interrupted, overran := false, false
	var code int
wait:
	for {
		select {
		case code = <-done:
			break wait
		case <-planned:
			interrupted = true
			cancel()
			deadline.Reset(fuzzAfterCancel)
			planned = nil
		case <-deadline.C:
			if interrupted {
				t.Fatalf("%q: still running %v after the interrupt (at %v)\nstderr: %s", fc.args, fuzzAfterCancel, time.Since(start), clipFuzz(stderr.String()))
			}
			// A run that ignores its bounds: interrupt it, and fail.
			overran, interrupted = true, true
			cancel()
			deadline.Reset(fuzzAfterCancel)
		}
	}
	took := time.Since(start)
	out, errs := stdout.String(), stderr.String()
	t.Logf("%q: exit %d in %v", fc.args, code, took.Round(time.Millisecond))
	if overran {
		t.Fatalf("%q: ran past %v (exit %d after %v once interrupted)\nstderr: %s", fc.args, fuzzDeadline, code, took, clipFuzz(errs))
	}
	switch code {
	case exitOK, exitFailed, exitUsage, exitSLO, exitUntrusted:
	case exitInterrupted:
		if !interrupted {
			t.Fatalf("%q: exit 130 without an interrupt\nstderr: %s", fc.args, clipFuzz(errs))
		}
	default:
		t.Fatalf("%q: exit %d, want 0 to 4\nstderr: %s", fc.args, code, clipFuzz(errs))
	}
	if code == exitUsage && !oneLineUsage(errs) {
		t.Fatalf("%q: exit 2 with stderr %q: want exactly one line", fc.args, clipFuzz(errs))
	}
	for _, pw := range fc.secrets {
		if strings.Contains(errs, pw) || strings.Contains(out, pw) {
			t.Fatalf("%q: the password %s was printed\nstdout: %s\nstderr: %s", fc.args, pw, clipFuzz(out), clipFuzz(errs))
		}
	}
	// Whatever the command started has stopped (a little later, at most).
	for i := 0; runtime.NumGoroutine() > before+fuzzGoroutineSlack; i++ {
		if i == 300 {
			buf := make([]byte, 1<<20)
			t.Fatalf("%q: %d goroutines before, %d after:\n%s", fc.args, before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fuzzGoroutineSlack: goroutines that end just after Main returns (a
// closed connection's handler in the harness target).
const fuzzGoroutineSlack = 8

// oneLineUsage reports whether a usage error printed one line on stderr.
func oneLineUsage(stderr string) bool {
	return strings.HasSuffix(stderr, "\n") && strings.Count(stderr, "\n") == 1 && len(strings.TrimSpace(stderr)) > 0
}

func clipFuzz(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// seedEnc writes fuzz inputs that mean a chosen command line, for the
// seeds. Values come as the bytes g.value reads: raw(s) for a free flag's
// text, a pick index for a pinned one.
type seedEnc struct {
	b   []byte
	cmd *cli.Command
}

func seedFor(cmd string, mode, shape byte, stdin string) *seedEnc {
	cmds := newApp(io.Discard, io.Discard).Commands
	for i, c := range cmds {
		if c.Name == cmd {
			e := &seedEnc{cmd: c, b: []byte{byte(i), mode, shape, byte(len(stdin))}}
			e.b = append(e.b, stdin...)
			return e
		}
	}
	for i, p := range fuzzPseudo {
		if p == cmd {
			return &seedEnc{b: []byte{byte(len(cmds) + i), 0}}
		}
	}
	panic("seedFor: no command " + cmd)
}

// raw is the value bytes of free text.
func raw(s string) []byte { return append([]byte{kindRaw, byte(len(s))}, s...) }

// flag adds a flag in form 0 (-name v) or 2 (--name=v); value is its
// encoded value (nil for a bool).
func (e *seedEnc) flag(name string, form int, value ...byte) *seedEnc {
	for i, f := range e.cmd.Flags {
		if f.Names()[0] == name {
			e.b = append(e.b, byte(8*form+opFlag), byte(i))
			e.b = append(e.b, value...)
			return e
		}
	}
	panic("seedEnc: " + e.cmd.Name + " has no flag " + name)
}

func (e *seedEnc) word(w string) *seedEnc {
	e.b = append(append(e.b, opWord, byte(len(w))), w...)
	return e
}

// file adds a path argument (commands that take files): inputPath's
// choice k.
func (e *seedEnc) file(k byte) *seedEnc {
	e.b = append(e.b, opWord, k)
	return e
}

func (e *seedEnc) dashes() *seedEnc { e.b = append(e.b, opDashes); return e }

// special adds a stray token (k ≥ 2 picks one), a trailing -h (k = 0) or a
// Ctrl-C after 2·arg+1 ms (k = 1).
func (e *seedEnc) special(k, arg byte) *seedEnc {
	e.b = append(e.b, opSpecial, k, arg)
	return e
}

func fuzzSeeds() [][]byte {
	pw := []byte{kindGood, 0xc0, 0xff, 0xee, 0x01}
	seeds := []*seedEnc{
		seedFor("run", 0, 4, "").flag("n", 0, raw("100")...),
		seedFor("run", 4, 2, "").flag("rate", 0, raw("5k")...).flag("c", 2, raw("2")...).
			flag("arrival", 0, raw("poisson")...).flag("json", 0, 0).flag("slo", 2, raw("p99<1s,errors<1%")...),
		seedFor("run", 4, 0, "").flag("a", 0, pw...).flag("user", 2, raw("alice")...),
		seedFor("run", 0, 0, "").flag("u", 0, 1, 0, 0, 2, 0, 0xab, 0xcd, 0xef, 0x12),
		seedFor("run", 0, 0, "").flag("r", 0, raw("100")...).flag("key-dist", 0, raw("gaussian:99.6,0.001")...),
		seedFor("run", 0, 2, "").flag("rate", 0, raw("1000M")...).flag("arrival", 2, raw("poisson")...),
		seedFor("run", 6, 1, "").flag("max-inflight", 0, raw("16777217")...),
		seedFor("run", 0, 0, "").flag("max-buffer", 0, raw("16")...).flag("d", 0, raw("100")...),
		seedFor("run", 0, 0, "").flag("commands", 0, 0, 1, 2),
		seedFor("run", 0, 0, "").special(1, 10).flag("duration", 0, raw("50ms")...),
		seedFor("run", 0, 0, "").dashes().word("INCR").word("c:__rand_int__"),
		seedFor("bench", 0, 4, "").flag("t", 0, raw("get,set")...).flag("P", 0, raw("4")...),
		seedFor("bench", 0, 0, "").flag("l", 0).flag("json", 0, 0),
		seedFor("bench", 4, 1, "value").flag("x", 0).dashes().word("SET").word("k"),
		seedFor("bench", 4, 0, "").flag("csv", 0).flag("e", 0).flag("precision", 0, raw("9")...),
		seedFor("bench", 6, 0, "").flag("q", 0),
		seedFor("bench", 4, 0, "").flag("threads", 0, raw("900")...).flag("k", 0, raw("0")...).flag("stall", 0, raw("1ms")...),
		seedFor("bench", 0, 0, "").flag("rate", 0, raw("50k")...).flag("latency", 0, raw("per-reply")...),
		seedFor("bench", 4, 0, "").flag("I", 0),
		seedFor("bench", 0, 0, "").special(0, 0),
		seedFor("compare", 0, 4, "").flag("stall", 0, raw("2ms")...).flag("every", 0, raw("10ms")...),
		seedFor("compare", 4, 0, "").flag("rate", 0, raw("1k")...).flag("P", 0, raw("0")...),
		seedFor("fill", 4, 0, "").flag("d", 0, raw("16:1,32:2")...),
		seedFor("fill", 4, 2, "").flag("r", 0, raw("20")...).flag("command", 0, raw("SET x:__key__ __data__")...).flag("json", 0, 1),
		// --tls at the closed port (mode 6): at the harness's plain port the
		// handshake waits out its 5 s timeout, which TestTLSFailures checks.
		seedFor("fill", 6, 0, "").flag("tls", 0),
		seedFor("ab", 0, 0, "").flag("rounds", 0, raw("2")...).flag("max-regression", 0, raw("p99:10%")...),
		seedFor("ab", 0, 2, "").flag("closed", 0).flag("P", 0, raw("4")...).flag("json", 0, 0),
		seedFor("ab", 6, 0, "").flag("fill", 0).flag("r", 0, raw("20")...),
		seedFor("diff", 0, 0, "").file(0).file(0),
		seedFor("diff", 0, 0, "").file(0).dashes().file(0).flag("plot", 0, 0).flag("json", 0, 1),
		seedFor("serve", 0, 0, "").flag("delay", 0, raw("exp:50us")...),
		seedFor("serve", 0, 0, "").flag("port", 0, 2).flag("maxmemory", 0, raw("1MB")...),
		seedFor("report", 0, 0, "").file(0),
		seedFor("report", 0, 0, "").file(0).file(1).flag("plot", 0, 0).flag("html", 2, 0),
		seedFor("report", 0, 0, "{}").file(2),
		seedFor("report", 0, 0, "").file(4),
		seedFor("report", 0, 0, "").file(0).flag("html", 0, 2),
		seedFor("run", 0, 0, "").flag("interval", 0, raw("10ms")...).flag("hdr-log", 0, 0).flag("percentiles", 0, raw("50,99.999")...),
		seedFor("bench", 0, 0, "").flag("metrics-addr", 0, 0).flag("hdr-spectrum", 0, 1),
		seedFor("help", 0, 0, ""),
		seedFor("--help", 0, 0, ""),
		seedFor("-h", 0, 0, ""),
		seedFor("--version", 0, 0, ""),
		seedFor("", 0, 0, ""),
		seedFor("walk", 0, 0, ""),
	}
	out := make([][]byte, len(seeds))
	for i, s := range seeds {
		out[i] = s.b
	}
	return out
}
