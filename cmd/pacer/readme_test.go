package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
)

// readmeExampleLimit is what the README promises of its examples: each
// finishes in under a minute. It is a contract of the docs, not a speed
// assertion: an example that needs longer must be rewritten.
const readmeExampleLimit = 60 * time.Second

// readmeShortLimit is the estimated length above which -short skips an
// example.
const readmeShortLimit = 5 * time.Second

// readmeExamples returns every line of a ```sh block of the README that
// invokes pacer (`pacer ...` or `go run ./cmd/pacer ...`), split into
// arguments, without the program name. Leading VAR=value assignments
// (REDISCLI_AUTH=... pacer run ...) are kept in front of the arguments:
// envOf splits them off.
func readmeExamples(t *testing.T, text string) [][]string {
	t.Helper()
	var out [][]string
	inSh := false
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(trim, "```"):
			inSh = false
			continue
		case !inSh:
			continue
		}
		args, err := shellWords(trim)
		if err != nil {
			t.Fatalf("README line %q: %v", line, err)
		}
		env, args := envOf(args)
		switch {
		case len(args) >= 1 && args[0] == "pacer":
			out = append(out, append(env, args[1:]...))
		case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/pacer":
			out = append(out, append(env, args[3:]...))
		}
	}
	return out
}

// envOf splits leading VAR=value words off a command line.
func envOf(args []string) (env, rest []string) {
	for len(args) > 0 {
		name, _, ok := strings.Cut(args[0], "=")
		if !ok || name == "" || strings.HasPrefix(name, "-") || strings.ToUpper(name) != name {
			break
		}
		env, args = append(env, args[0]), args[1:]
	}
	return env, args
}

// shellWords splits a command line as sh would for these examples: quotes
// group, an unquoted # starts a comment.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(s[i+1:], ch)
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '#' && !inWord:
			i = len(s)
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// loopbackExample rewrites an example to touch loopback only: any target
// it names (-h, -p, -s, -u) is dropped and the test's redis-server is
// used instead, unless it runs on the embedded target. Output files go to
// dir. It returns the arguments and the exit codes the docs allow.
func loopbackExample(args []string, redisPort, dir string) ([]string, []int) {
	if len(args) > 0 && (args[0] == "report" || args[0] == "merge") { // files only
		return reportExample(args, dir), []int{exitOK}
	}
	var out []string
	embedded := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		switch a {
		case "-h", "-p", "-s", "-u":
			i++ // and its value
			continue
		case "--json", "--hdr-log", "--hdr-spectrum":
			if i+1 < len(args) && args[i+1] != "-" {
				out = append(out, a, filepath.Join(dir, filepath.Base(args[i+1])))
				i++
				continue
			}
		case "--embedded":
			embedded = true
		}
		out = append(out, a)
	}
	if !embedded && len(out) > 0 && out[0] != "serve" {
		out = append([]string{out[0], "-h", "127.0.0.1", "-p", redisPort}, out[1:]...)
	}
	codes := []int{exitOK}
	switch {
	case len(out) > 0 && (out[0] == "run" || out[0] == "compare"):
		// Whether the generator kept its send-lag limit depends on the
		// machine's load, and an SLO on its latency too: documented outcomes.
		codes = append(codes, exitUntrusted, exitSLO)
	case len(out) > 0 && out[0] == "bench" && hasArg(out, "--rate"):
		// So does whether a throttled closed loop keeps its rate.
		codes = append(codes, exitUntrusted, exitSLO)
	case hasArg(out, "--slo"):
		codes = append(codes, exitSLO)
	}
	return out, codes
}

// reportExample rewrites a pacer report example: its files (the
// documents it reads, --plot and --html) are in dir.
func reportExample(args []string, dir string) []string {
	out := []string{args[0]}
	for _, a := range args[1:] {
		switch name, value, ok := strings.Cut(a, "="); {
		case ok && (name == "--plot" || name == "--html"):
			a = name + "=" + filepath.Join(dir, filepath.Base(value))
		case a != "-" && !strings.HasPrefix(a, "-"):
			a = filepath.Join(dir, filepath.Base(a))
		}
		out = append(out, a)
	}
	return out
}

// reportInputs are the documents a report example reads.
func reportInputs(args []string) []string {
	var in []string
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--plot" || a == "--html":
			i++
		case strings.HasSuffix(a, ".json") && !strings.HasPrefix(a, "-"):
			in = append(in, a)
		}
	}
	return in
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name {
			return true
		}
	}
	return false
}

// estimate is roughly how long an example runs, to skip the slow ones
// under -short.
func estimate(args []string) time.Duration {
	if len(args) == 0 {
		return 0
	}
	d := 10 * time.Second
	if args[0] == "compare" {
		d = 5 * time.Second
	}
	for i, a := range args {
		if a == "--duration" && i+1 < len(args) {
			if v, err := time.ParseDuration(args[i+1]); err == nil {
				d = v
			}
		}
	}
	switch args[0] {
	case "sweep":
		return estimateSweep(args)
	case "report", "merge":
		return time.Second
	case "run":
		if hasArg(args, "-n") && !hasArg(args, "--duration") {
			return readmeShortLimit + time.Second // depends on the rate: call it slow
		}
		return d
	case "compare":
		return 4 * d
	case "bench":
		// About 100k requests a second on a small machine.
		n, tests := 100000, 21
		for i, a := range args {
			switch {
			case a == "-n" && i+1 < len(args):
				n, _ = strconv.Atoi(args[i+1])
			case a == "-t" && i+1 < len(args):
				tests = strings.Count(args[i+1], ",") + 1
			case !strings.HasPrefix(a, "-") && i > 0 && !strings.HasPrefix(args[i-1], "-"):
				tests = 1 // a command
			}
		}
		return time.Duration(n*tests) * 10 * time.Microsecond
	}
	return readmeShortLimit + time.Second // fill moves real data
}

// estimateSweep is a sweep's steps × their length (step and settle), × --repeat.
func estimateSweep(args []string) time.Duration {
	val := func(name, def string) string {
		for i, a := range args {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
		return def
	}
	step, _ := time.ParseDuration(val("--step-duration", "5s"))
	settle, _ := time.ParseDuration(val("--settle", "1s"))
	repeat, _ := strconv.Atoi(val("--repeat", "1"))
	points := 12 // --search's --max-steps
	switch {
	case hasArg(args, "--closed"):
		settle = 0
		points = (strings.Count(val("-c", "50"), ",") + 1) * (strings.Count(val("-P", "1"), ",") + 1)
	case hasArg(args, "--rates"):
		points = strings.Count(val("--rates", ""), ",") + 1
	}
	return time.Duration(points*max(repeat, 1)) * (step + settle)
}

// TestReadmeExamplesFinishInAMinute runs every pacer example of the README
// against loopback (a redis-server the test starts, or the embedded
// target) and checks that each exits as documented within a minute.
func TestReadmeExamplesFinishInAMinute(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := readmeExamples(t, string(text))
	if len(examples) < 10 {
		t.Fatalf("found %d examples in the README: the extraction is broken", len(examples))
	}
	bin := pacerBinary(t)
	srv := redistest.Start(t)
	dir := t.TempDir()
	skipped := map[string]bool{} // result files of examples skipped by -short
	for _, ex := range examples {
		env, ex := envOf(ex)
		args, codes := loopbackExample(ex, srv.PortString(), dir)
		name := strings.Join(append(env, ex...), " ")
		if args[0] == "serve" {
			continue // runs until Ctrl-C: TestServeUntilInterrupted
		}
		if testing.Short() && estimate(args) > readmeShortLimit {
			t.Logf("-short: skipping %q", name)
			for i, a := range args {
				if a == "--json" && i+1 < len(args) {
					skipped[args[i+1]] = true
				}
			}
			continue
		}
		if args[0] == "report" || args[0] == "merge" {
			reads := false
			for _, in := range reportInputs(args) {
				reads = reads || skipped[in]
			}
			if reads {
				t.Logf("-short: skipping %q (it reads the result of a skipped example)", name)
				continue
			}
		}
		if _, err := srv.Do("FLUSHALL"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), readmeExampleLimit)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("README example %q did not finish within %v: make it shorter", name, readmeExampleLimit)
			continue
		}
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		ok := false
		for _, c := range codes {
			ok = ok || c == code
		}
		if !ok {
			t.Errorf("README example %q (run as %q): exit %d, want one of %v\n%s", name, args, code, codes, tail(stderr.String(), 800))
		}
		t.Logf("%q: exit %d in %v", name, code, took.Round(100*time.Millisecond))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func TestReadmeExampleRewriting(t *testing.T) {
	if w, _ := shellWords(`pacer run --slo 'p99<2ms,errors<0.1%' -h 10.0.0.5   # a comment`); strings.Join(w, "|") != "pacer|run|--slo|p99<2ms,errors<0.1%|-h|10.0.0.5" {
		t.Fatalf("shellWords: %q", w)
	}
	if ex := readmeExamples(t, "```sh\nREDISCLI_AUTH=pw pacer run --embedded -a=x\necho x | pacer run\n```\n"); len(ex) != 1 || strings.Join(ex[0], " ") != "REDISCLI_AUTH=pw run --embedded -a=x" {
		t.Fatalf("examples %q", ex)
	}
	if env, rest := envOf([]string{"REDISCLI_AUTH=pw", "A_B=1", "run", "-a=x"}); len(env) != 2 || strings.Join(rest, " ") != "run -a=x" {
		t.Fatalf("envOf: %q %q", env, rest)
	}
	args, codes := loopbackExample([]string{"compare", "-h", "10.0.0.5", "-p", "7000", "-t", "set", "--json", "compare.json"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "compare -h 127.0.0.1 -p 4242 -t set --json /tmp/x/compare.json" || len(codes) != 3 {
		t.Fatalf("rewritten to %q %v", got, codes)
	}
	args, _ = loopbackExample([]string{"run", "--embedded", "--hdr-log", "run.hlog", "--hdr-spectrum", "-"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "run --embedded --hdr-log /tmp/x/run.hlog --hdr-spectrum -" {
		t.Fatalf("rewritten to %q", got)
	}
	args, _ = loopbackExample([]string{"bench", "-u", "redis://10.0.0.5:6379", "--", "-h", "x"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "bench -h 127.0.0.1 -p 4242 -- -h x" {
		t.Fatalf("rewritten to %q", got)
	}
	args, codes = loopbackExample([]string{"report", "a.json", "out/b.json", "--plot", "p.png", "--html=h/p.html"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "report /tmp/x/a.json /tmp/x/b.json --plot /tmp/x/p.png --html=/tmp/x/p.html" || len(codes) != 1 {
		t.Fatalf("rewritten to %q %v", got, codes)
	}
	if in := reportInputs(args); strings.Join(in, " ") != "/tmp/x/a.json /tmp/x/b.json" {
		t.Fatalf("report inputs %q", in)
	}
	args, codes = loopbackExample([]string{"merge", "s-1.json", "s-2.json", "-o", "out/m.json"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "merge /tmp/x/s-1.json /tmp/x/s-2.json -o /tmp/x/m.json" || len(codes) != 1 {
		t.Fatalf("rewritten to %q %v", got, codes)
	}
	args, _ = loopbackExample([]string{"compare", "--embedded", "--stall", "100ms"}, "4242", "/tmp/x")
	if strings.Contains(strings.Join(args, " "), "4242") {
		t.Fatalf("an embedded example got a redis target: %q", args)
	}
}
