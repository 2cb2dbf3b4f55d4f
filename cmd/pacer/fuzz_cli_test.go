package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/timeline"
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

// gen makes the values of one command line.
type gen struct {
	env     *fuzzEnv
	s       *fuzzSrc
	cmd     string
	tmp     string
	fc      *fuzzCase
	looping bool // bench -l or -I: runs until interrupted
}

// pins are the arguments every command line of cmd starts with: the
// target (the embedded target, the harness's, a closed port or a missing
// socket) and small bounds for the flags whose defaults run long. Later
// flags may override them, with clamped values. One byte chooses the
// target, one which bounds are left out (the whole suite, a missing
// required flag).
func (g *gen) pins(cmd *cli.Command) []string {
	has := func(name string) bool {
		for _, f := range cmd.Flags {
			if f.Names()[0] == name {
				return true
			}
		}
		return false
	}
	mode, shape := g.s.byte(), g.s.byte()
	var out []string
	if g.cmd == "serve" {
		return []string{"--port", "0", "--bind", "127.0.0.1"}
	}
	switch m := mode % 8; {
	case !has("h"): // no target (report)
	case m < 4 && has("embedded"):
		out = append(out, "--embedded")
	case m == 6:
		out = append(out, "-h", "127.0.0.1", "-p", g.env.deadPort)
	case m == 7:
		out = append(out, "-s", filepath.Join(g.tmp, "nosock"))
	default:
		out = append(out, "-h", "127.0.0.1", "-p", g.env.port)
	}
	tests := []string{"ping", "get", "set", "incr", "lpush", "lrange_100", "mset", "xadd"}
	if shape&1 == 0 && has("t") && g.cmd != "compare" {
		out = append(out, "-t", tests[int(shape>>4)%len(tests)])
	}
	switch g.cmd {
	case "run":
		out = append(out, "--duration", "20ms", "--drain", "20ms")
		if shape&2 == 0 {
			out = append(out, "--rate", "2k")
		}
	case "compare":
		out = append(out, "--duration", "20ms", "--drain", "20ms")
	case "bench":
		out = append(out, "-n", "50")
	case "fill":
		if shape&2 == 0 {
			out = append(out, "-r", "50")
		}
	case "ab": // both sides the harness's target, or one a closed port
		b := g.env.port
		if mode%8 == 6 {
			b = g.env.deadPort
		}
		out = append(out, "--a", "redis://127.0.0.1:"+g.env.port, "--b", "redis://127.0.0.1:"+b,
			"--rounds", "1", "--round-duration", "20ms", "--warmup", "0s", "--drain", "20ms")
		if shape&2 == 0 {
			out = append(out, "--rate", "2k")
		}
	}
	if shape&4 != 0 && has("q") {
		out = append(out, "-q")
	}
	return out
}

// flag renders one flag of the command in the given form.
func (g *gen) flag(fl cli.Flag, form int) item {
	name := fl.Names()[0]
	dash := "-"
	if form%2 == 1 {
		dash = "--"
	}
	if _, isBool := clihelp.Unwrap(fl).(*cli.BoolFlag); isBool {
		switch name {
		case "l", "I":
			g.looping = true
		case "embedded":
			return item{tokens: []string{"--embedded"}} // never switched off: the target would be -h/-p's defaults
		}
		if form%3 == 2 {
			return item{tokens: []string{"--" + name + "=" + g.s.pick([]string{"true", "false", "1", "0", "T", "f", "TRUE", "yes", "", "2"})}}
		}
		return item{tokens: []string{dash + name}}
	}
	if form == 4 {
		return item{tokens: []string{dash + name}, nameOnly: true}
	}
	v := g.value(fl, name)
	if form >= 2 {
		return item{tokens: []string{dash + name + "=" + v}}
	}
	return item{tokens: []string{dash + name, v}}
}

// Edge values by type: each is refused by the CLI or cheap to run.
var (
	intEdges = []string{"0", "-1", "1", "2", "-0", "0x10", "0b11", "0o7", "1_0", "99999999999999999999",
		"-9223372036854775808", "9223372036854775807", "18446744073709551615", "18446744073709551616",
		"1e3", "1.5", " 1", "1 ", "", "abc", "NaN", "١", "+1", "--1"}
	floatEdges = []string{"0", "0.5", "1", "1.0000001", "-0.1", "NaN", "Inf", "-Inf", "1e-300", "1e309", "0x1p-2", "", "nan", "1,5"}
	durEdges   = []string{"1ms", "10ms", "100us", "1ns", "0", "0s", "-1ms", "1", "1.5s", "NaN", "inf", "1e3ms",
		"9223372036854775807ns", "-9223372036854775808ns", "2562048h", "", " 1ms", "1µs", "1h"}
	stringEdges = []string{"", " ", ",", ":", "-", "=", "NaN", "inf", "\x00", "é", "\u202e", "\x1b[2J", "1e400",
		"99999999999999999999", strings.Repeat("9", 400), strings.Repeat("x,", 300), "a\nb", "%s%n"}
)

// good are typical values of the string flags, valid and not.
var good = map[string][]string{
	"t": {"get", "set", "ping", "get,set", "lrange", "mset", "xadd", "ping_inline", "nosuch", ",", "GET", "get,,set",
		"incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin", " "},
	"d": {"1", "3", "100", "32-256", "16:8,256:2", "0", "-1", "", "536870912", "536870913", "99999999999999999999",
		"1-0", "5:0", ":", "a-b", "64:", "1e3", "1,2", " 3", "1000000000", "1:4294967296", "10-10"},
	"r": {"0", "1", "10", "100000", "-3", "", "99999999999999999999", "1e3", "abc", "18446744073709551615", " 5"},
	"mix": {"get:1,set:1", "set:0", "get:99999999999999999999", "nosuch:1", "get", "get:1,get:1", ":", ",",
		"get:4294967295,set:4294967295", "GET:1", "x:1"},
	"ratio": {"1:10", "0:0", "1:0", "10:1", "1:", "a:b", "-1:1", "99999999999999999999:1", "4294967295:4294967295"},
	"command": {"PING", "GET key:__rand_int__", "SET key:__key__ __data__", "MSET a 1,b 2", "h=HSET h __rand_int__ __data__",
		"", "   ", "{tag}", "__data__", "x=", "=PING", "DEL", "INCR c", "\"unterminated", "a\x00b", "x=PING", "x=GET y",
		"SET __key__ __data__ __data__ __data__", "ECHO " + strings.Repeat("é", 100)},
	"command-weight": {"1", "0", "-1", "2.5", "99999999999999999999", "4294967295", "4294967296", ""},
	"key-dist": {"uniform", "sequential", "zipf:0.99", "zipf:1.5", "zipf:0", "zipf:-1", "zipf:NaN", "zipf:11", "zipf:1e300",
		"zipf:1e-300", "gaussian:50,10", "gaussian:99.6,0.001", "gaussian:50,1e300", "gaussian:50%,inf", "gaussian:NaN,1",
		"gaussian:50", "gaussian:,", "gauss", "", "gaussian:0,0", "gaussian:-5,1", "gaussian:50%,10%", "zipf:"},
	"slo": {"p99<5ms", "p99<2ms,errors<0.1%", "errors<NaN%", "p99<NaN", "p99.9<1s", "p100<1ms", "p0<1ms", "errors<101%",
		"p99<-1ms", "p99<", "<", ",", "p99<5ms,p99<5ms", "throughput>1k", "errors<0%", "p99<1e400ms", "p99<9223372036854775807ns"},
	"latency": {"first-reply", "per-reply", "x", ""},
	"arrival": {"uniform", "poisson", "bursty", ""},
	"pacing":  {"precise", "coarse", "exact", ""},
	"user":    {"default", "alice", "", "é", "a b"},
	"rate": {"1k", "500", "2.5k", "10k", "0.5", "1000M", "1001M", "0", "-5", "inf", "NaN", "1e3", "99999999999999999999",
		"1.", "0.0001", ".5", "1.5M", "", "fast", "10K", "10 k", "0.001", "1.0001"},
	"max-buffer":        {"1", "512", "64KiB", "2MiB", "0", "-1", "", "1GiB", "2GiB", "99999999999999999999", "1e3", "4MB", "1TiB", "16"},
	"maxmemory":         {"0", "2GiB", "1", "1MB", "-1", "", "lots", "99999999999999999999", "100"},
	"maxmemory-clients": {"64MiB", "1", "0", "-1", "4GiB", "2GiB", "lots", "", "1KiB"},
	"delay": {"100us", "exp:50us", "uniform:10us-100us", "0", "", "exp:", "exp:0", "exp:-1ms", "uniform:1ms-10us",
		"uniform:", "uniform:10us", "-1ms", "NaN", "exp:1h", "zipf:1ms"},
}

// value returns a value for a flag that takes one.
func (g *gen) value(fl cli.Flag, name string) string {
	if v, pinned := g.pinned(name, placeholder(fl)); pinned {
		return v
	}
	s := g.s
	kind := s.n(4)
	var v string
	switch clihelp.Unwrap(fl).(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.Uint64Flag:
		switch kind {
		case kindGood:
			v = strconv.Itoa(s.n(40))
		case kindEdge:
			v = s.pick(intEdges)
		case kindRaw:
			v = s.raw(24)
		default:
			v = s.number()
		}
	case *cli.Float64Flag:
		switch kind {
		case kindGood:
			v = strconv.FormatFloat(float64(s.n(101))/100, 'g', -1, 64)
		case kindEdge, kindNum:
			v = s.pick(floatEdges)
		default:
			v = s.raw(24)
		}
	case *cli.DurationFlag:
		switch kind {
		case kindGood:
			v = (time.Duration(s.n(200)) * 250 * time.Microsecond).String()
		case kindEdge:
			v = s.pick(durEdges)
		case kindRaw:
			v = s.raw(24)
		default:
			v = s.number() + s.pick([]string{"ns", "us", "ms", "s", "m", "h", ""})
		}
	default: // strings and string slices
		switch {
		case name == "a":
			v = g.password(kind)
		case kind == kindGood && good[name] != nil:
			v = s.pick(good[name])
		case kind == kindEdge || kind == kindGood:
			v = s.pick(stringEdges)
		case kind == kindRaw:
			v = s.raw(48)
		default:
			v = s.number()
		}
	}
	return g.clamp(name, v)
}

// password returns -a's value: mostly a marked password that must never be
// printed.
func (g *gen) password(kind int) string {
	if kind == kindEdge {
		return g.s.pick([]string{"", "p@ss:word/x", "secret with spaces", "\x1b[31m"})
	}
	pw := fuzzPasswordPrefix + hex.EncodeToString([]byte{g.s.byte(), g.s.byte(), g.s.byte(), g.s.byte()})
	g.fc.secrets = append(g.fc.secrets, pw)
	return pw
}

// pinned returns the value of a flag whose text the input never chooses
// freely: targets, listen addresses and paths. Flags are known by name
// (the target flags) or by their help's placeholder: every FILE, OUT.x,
// PATH or DIR is a path of the input's temporary directory (or -,
// /dev/null), every HOST:PORT or ADDRESS a loopback address. A network
// placeholder the harness does not know stops the fuzzing (checkPolicies).
func (g *gen) pinned(name, ph string) (string, bool) {
	s := g.s
	switch {
	case name == "commands":
		return g.commandsPath(), true
	case isPathPlaceholder(ph):
		return g.outputPath(ph), true
	case name != "bind" && (ph == "HOST:PORT" || ph == "ADDRESS"):
		return s.pick([]string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.1:99999", "127.0.0.1", "nonsense:x", ""}), true
	}
	switch name {
	case "a", "b": // pacer ab's targets (elsewhere -a is a password)
		if g.cmd == "ab" {
			return g.uri(), true
		}
	case "h":
		return s.pick([]string{"127.0.0.1", "localhost", "::1"}), true
	case "p":
		return s.pick([]string{g.env.port, g.env.port, g.env.deadPort, "0", "-1", "65536", "99999999999999999999", "abc", "", "0x10"}), true
	case "s":
		return s.pick([]string{filepath.Join(g.tmp, "nosock"), "", g.tmp}), true
	case "u":
		return g.uri(), true
	case "port": // serve
		return s.pick([]string{"0", "0", "-1", "65536", "99999999999999999999", "x", ""}), true
	case "bind": // serve: loopback only, and no name that needs DNS
		return s.pick([]string{"127.0.0.1", "localhost", "::1"}), true
	case "start-at": // a start in the past, malformed, or within a second
		return s.pick([]string{time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), time.Now().Add(500 * time.Millisecond).UTC().Format(time.RFC3339Nano),
			"tomorrow", "", "2030-13-40T99:00:00Z"}), true
	case "start-in": // bounded: the harness allows each command a few seconds
		return s.pick([]string{"0s", "200ms", "-1s", "1s", "x", ""}), true
	}
	return "", false
}

// outputPath is a path for a FILE flag: a new file, stdout, a directory, a
// missing directory, /dev/null, nothing, or a symbolic link.
func (g *gen) outputPath(ph string) string {
	ext := filepath.Ext(ph)
	if ext == "" {
		ext = ".out"
	}
	link := filepath.Join(g.tmp, "link"+ext)
	os.Symlink(filepath.Join(g.tmp, "target"+ext), link)
	return g.s.pick([]string{filepath.Join(g.tmp, "out"+ext), "-", g.tmp, filepath.Join(g.tmp, "no", "such", "out"+ext),
		os.DevNull, "", link, filepath.Join(g.tmp, "out2"+ext)})
}

// inputPath is a path a command reads: a saved result, stdin, nothing,
// an endless file, a directory or a missing file.
func (g *gen) inputPath() string {
	return g.s.pick([]string{g.env.result, g.env.result, "-", os.DevNull, "/dev/zero", g.tmp, filepath.Join(g.tmp, "missing.json"),
		filepath.Join(g.env.dir, "many.txt")})
}

// commandsPath is --commands' file: one written from the input, or a
// fixed one (300 templates, over 1 MiB, a line over 64 KiB), or a special
// file.
func (g *gen) commandsPath() string {
	s := g.s
	{
		own := filepath.Join(g.tmp, "commands.txt")
		text := s.raw(200)
		if s.byte()%2 == 0 { // templates the parser accepts, mostly
			var b strings.Builder
			for range s.n(6) {
				fmt.Fprintf(&b, "%s%s\n", s.pick([]string{"", "1 ", "3 ", "0 ", "# ", "x=", "99999999999999999999 "}), s.pick(good["command"]))
			}
			text = b.String()
		}
		os.WriteFile(own, []byte(text), 0o644)
		return s.pick([]string{own, own, filepath.Join(g.env.dir, "many.txt"), filepath.Join(g.env.dir, "big.txt"),
			filepath.Join(g.env.dir, "longline.txt"), os.DevNull, "/dev/zero", filepath.Join(g.tmp, "missing"), g.tmp, ""})
	}
}

// placeholder is the `PLACEHOLDER` of a flag's help ("" for none).
func placeholder(fl cli.Flag) string {
	df, ok := fl.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	ph, _ := clihelp.Placeholder(df.GetUsage())
	return ph
}

func isPathPlaceholder(ph string) bool {
	return ph == "FILE" || ph == "PATH" || ph == "DIR" || strings.HasPrefix(ph, "OUT.") || strings.HasSuffix(ph, ".json")
}

// takesFiles reports whether a command's arguments are paths.
func takesFiles(cmd *cli.Command) bool { return strings.Contains(cmd.ArgsUsage, "FILE") }

// knownTargets are the flags pinned by name.
var knownTargets = map[string]bool{"h": true, "p": true, "s": true, "u": true, "port": true, "bind": true}

// checkPolicies refuses to fuzz a command line that could name a host, a
// port, a socket or a URL the harness does not know how to pin: a new
// flag of that kind needs a loopback-only policy in pinned first.
func checkPolicies(cmds []*cli.Command) error {
	network := []string{"HOST", "PORT", "ADDR", "SOCKET", "URI", "URL"}
	for _, cmd := range cmds {
		for _, w := range network {
			if strings.Contains(strings.ToUpper(cmd.ArgsUsage), w) {
				return fmt.Errorf("%s's arguments (%s) may name a network address: FuzzCLI has no loopback policy for them", cmd.Name, cmd.ArgsUsage)
			}
		}
		for _, fl := range cmd.Flags {
			name, ph := fl.Names()[0], placeholder(fl)
			if knownTargets[name] || name == "commands" || isPathPlaceholder(ph) || ph == "HOST:PORT" || ph == "ADDRESS" ||
				cmd.Name == "ab" && (name == "a" || name == "b") { // pinned to g.uri's loopback URIs
				continue
			}
			for _, w := range network {
				if strings.Contains(strings.ToUpper(ph), w) || strings.Contains(strings.ToUpper(name), w) {
					return fmt.Errorf("%s --%s (%s) may name a network address: give it a loopback-only policy in FuzzCLI's pinned", cmd.Name, name, ph)
				}
			}
		}
	}
	return nil
}

// uri builds a -u value whose host is loopback (or missing) and whose port
// is the harness's or a closed one; the rest comes from the input.
func (g *gen) uri() string {
	s := g.s
	if s.n(8) == 0 {
		return s.pick([]string{"", "redis://", "redis://:@", "::::", "%zz", "redis:///0", "rediss://127.0.0.1:" + g.env.port, "http://127.0.0.1"})
	}
	u := url.URL{Scheme: "redis", Host: net.JoinHostPort(s.pick([]string{"127.0.0.1", "localhost", "::1"}),
		s.pick([]string{g.env.port, g.env.port, g.env.deadPort, "0", "65536", "x"}))}
	switch s.n(4) {
	case 1:
		u.User = url.User(g.password(kindGood))
	case 2:
		u.User = url.UserPassword(s.pick(good["user"]), g.password(kindGood))
	case 3:
		u.User = url.UserPassword(s.raw(8), s.raw(8))
	}
	if s.n(2) == 1 {
		u.Path = "/" + s.pick([]string{"0", "1", "15", "-1", "x", "99999999999999999999", ""})
	}
	return u.String()
}

// Clamps of the flags that cost time or memory.
const (
	maxFuzzDuration = 50 * time.Millisecond
	maxFuzzStall    = 5 * time.Millisecond
	minFuzzEvery    = 10 * time.Millisecond
	maxFuzzDelay    = 100 * time.Microsecond
	maxFuzzSize     = 256
	maxFuzzConns    = 16
	maxFuzzPipeline = 32
	maxFuzzInflight = 1024
	maxFuzzBuffer   = 64 << 20
	maxFuzzFillKeys = 500
	minFuzzBenchHz  = 20000
)

// clamp replaces a value the CLI would accept but that would run long or
// use much memory with the largest cheap one; values the CLI refuses stay.
func (g *gen) clamp(name, v string) string {
	parseInt := func() (int64, bool) {
		n, err := strconv.ParseInt(v, 0, 64) // the flag package's syntax
		return n, err == nil
	}
	switch name {
	case "duration", "drain", "round-duration", "warmup":
		if d, err := time.ParseDuration(v); err == nil && d > maxFuzzDuration {
			return maxFuzzDuration.String()
		}
	case "rounds":
		if n, ok := parseInt(); ok && n > 2 {
			return "2"
		}
	case "stall":
		if d, err := time.ParseDuration(v); err == nil && d > maxFuzzStall {
			return maxFuzzStall.String()
		}
	case "every":
		if d, err := time.ParseDuration(v); err == nil && d > 0 && d < minFuzzEvery {
			return minFuzzEvery.String()
		}
	case "delay":
		if d, err := embedded.ParseDelay(v); err == nil && (d.A > maxFuzzDelay || d.B > maxFuzzDelay) {
			return "exp:" + maxFuzzDelay.String()
		}
	case "n":
		limit := int64(2000)
		if g.cmd == "bench" {
			limit = 300
		}
		if n, ok := parseInt(); ok && n > limit {
			return strconv.FormatInt(limit, 10)
		}
	case "c":
		if n, ok := parseInt(); ok && n > maxFuzzConns && n <= maxConnections {
			return strconv.Itoa(maxFuzzConns)
		}
	case "P":
		if n, ok := parseInt(); ok && n > maxFuzzPipeline {
			return strconv.Itoa(maxFuzzPipeline)
		}
	case "max-inflight":
		if n, ok := parseInt(); ok && n > maxFuzzInflight && n <= experiment.MaxInflightPerConn {
			return strconv.Itoa(maxFuzzInflight)
		}
	case "max-buffer":
		if n, err := bytesize.Parse(v); err == nil && n > maxFuzzBuffer && n <= scenarios.MaxValueSize*2 {
			return bytesize.Format(maxFuzzBuffer)
		}
	case "d":
		if z, err := scenarios.ParseSizes(v); err == nil && z.Max() > maxFuzzSize {
			return strconv.Itoa(maxFuzzSize)
		}
	case "r":
		if g.cmd == "fill" {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil && n > maxFuzzFillKeys {
				return strconv.Itoa(maxFuzzFillKeys)
			}
		}
	case "rate":
		// run and compare are bounded by --duration; bench's closed loop
		// only by -n, so a slow throttle would take long.
		if r, err := timeline.ParseRate(v); err == nil && g.cmd == "bench" && r.PerSecond() < minFuzzBenchHz {
			return strconv.Itoa(minFuzzBenchHz)
		}
	}
	return v
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
