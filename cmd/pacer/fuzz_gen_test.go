package main

// The generator of FuzzCLI: the values of one command line, flag by flag,
// kept cheap and bounded (pins, edge values, paths, clamps).

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/timeline"
)

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
