package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/experiment/ab"
	"github.com/pacer-load/pacer/internal/redistest"
)

// readmeExampleLimit is what the docs (README.md, CONTRIBUTING.md,
// docs/*.md) promise of their examples: each finishes in under a minute. It is a contract of the docs, not a speed
// assertion: an example that needs longer must be rewritten.
const readmeExampleLimit = 60 * time.Second

// readmeShortLimit is the estimated length above which -short skips an
// example.
const readmeShortLimit = 3 * time.Second

// readmeExamples returns every line of a ```sh block of a document that
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
			t.Fatalf("docs line %q: %v", line, err)
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
	if len(args) > 0 && filesOnly(args[0]) {
		// They exit with the verdicts they read: those of runs whose
		// send lag depends on the machine's load (diff: a gate on them).
		return reportExample(args, dir), []int{exitOK, exitUntrusted, exitSLO}
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
		case "--a", "--b": // pacer ab's targets: both the test's server
			if len(out) > 0 && out[0] == "ab" && i+1 < len(args) {
				out = append(out, a, "redis://127.0.0.1:"+redisPort)
				i++
				continue
			}
		}
		if name, _, ok := strings.Cut(a, "="); ok && len(out) > 0 && out[0] == "ab" && (name == "--a" || name == "--b") {
			out = append(out, name+"=redis://127.0.0.1:"+redisPort)
			continue
		}
		switch a {
		case "--json", "--hdr-log", "--hdr-spectrum", "--diff-json", "--plot", "--html":
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
	if !embedded && len(out) > 0 && out[0] != "serve" && out[0] != "ab" {
		out = append([]string{out[0], "-h", "127.0.0.1", "-p", redisPort}, out[1:]...)
	}
	if len(out) > 1 && out[0] == "replay" {
		// The trace the docs record with redis-cli monitor: a capture
		// kept in testdata/docs.
		out[len(out)-1] = filepath.Join("testdata", "docs", filepath.Base(out[len(out)-1]))
	}
	codes := []int{exitOK}
	switch {
	case len(out) > 0 && openModel[out[0]]:
		// Whether the generator kept its send-lag limit depends on the
		// machine's load, and an SLO on its latency too: documented outcomes
		// (a sweep exits 4 when its bounding failure could be the client's;
		// tracking exited 4 in CI on send lag p99 76 ms, host hiccups p99
		// 11 ms).
		codes = append(codes, exitUntrusted, exitSLO)
	case len(out) > 0 && out[0] == "bench" && hasArg(out, "--rate"):
		// So does whether a throttled closed loop keeps its rate.
		codes = append(codes, exitUntrusted, exitSLO)
	case hasArg(out, "--slo"):
		codes = append(codes, exitSLO)
	}
	return out, codes
}

// openModel are the commands that drive a timeline and judge the client
// host's part in what they measured: their exit codes include 4 on a
// loaded machine.
var openModel = map[string]bool{"run": true, "compare": true, "sweep": true, "replay": true, "pubsub": true, "stream": true, "tracking": true, "ab": true}

// filesOnly reports whether a command reads and writes files only
// (report, merge, diff).
func filesOnly(cmd string) bool { return cmd == "report" || cmd == "merge" || cmd == "diff" }

// textValues are the flags of the files-only commands whose value is not
// a file.
var textValues = map[string]bool{"--title": true, "--label": true, "--max-regression": true, "--equivalence": true,
	"--equivalence-errors": true, "--percentiles": true}

// reportExample rewrites a pacer report example: its files (the
// documents it reads, --plot and --html) are in dir.
func reportExample(args []string, dir string) []string {
	out := []string{args[0]}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch name, value, ok := strings.Cut(a, "="); {
		case textValues[a] && i+1 < len(args):
			out = append(out, a)
			i++
			a = args[i]
		case ok && textValues[name]:
		case ok && (name == "--plot" || name == "--html" || name == "--json"):
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
		case a == "--plot" || a == "--html" || a == "--json" || textValues[a]:
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

// docFiles are the documents whose examples and links the tests check:
// the README, CONTRIBUTING.md and every page under docs/, relative to
// this package's directory.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	sort.Strings(pages)
	return append([]string{"../../README.md", "../../CONTRIBUTING.md"}, pages...)
}

// docExample is one pacer command line of a document's ```sh block.
type docExample struct {
	doc  string   // the document's path, as docFiles gives it
	env  []string // leading VAR=value assignments
	args []string // the arguments, without the program name
}

func (e docExample) name() string {
	return filepath.Base(e.doc) + ": " + strings.Join(append(append([]string{}, e.env...), e.args...), " ")
}

// docExamples returns the examples of every document, in document order.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	var out []docExample
	for _, doc := range docFiles(t) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range readmeExamples(t, string(text)) {
			env, args := envOf(ex)
			out = append(out, docExample{doc: doc, env: env, args: args})
		}
	}
	return out
}

// readmeParallel is how many examples run at once: the machine the tests
// were written on has two cores, and each example is a load generator.
const readmeParallel = 2

// fileArgs are the flags whose value is a file an example writes.
var fileArgs = map[string]bool{"--json": true, "--hdr-log": true, "--hdr-spectrum": true, "--plot": true, "--html": true, "-o": true, "--diff-json": true}

// exampleResources names what an example shares with other examples, so
// that those run one after another, in document order: the files it
// writes or reads (per document: each document's examples write into a
// directory of their own) and any fixed port it listens on.
func exampleResources(ex docExample) []string {
	var res []string
	file := func(name string) {
		if name != "" && name != "-" {
			res = append(res, "file "+ex.doc+" "+filepath.Base(name))
		}
	}
	args := ex.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case args[0] == "ab" && name == "--json" && (hasValue || i+1 < len(args)):
			// ab writes FILE.a and FILE.b (ab.SidePath).
			if !hasValue {
				value = args[i+1]
				i++
			}
			file(ab.SidePath(value, 0))
			file(ab.SidePath(value, 1))
		case fileArgs[name] && hasValue:
			file(value)
		case fileArgs[a] && i+1 < len(args):
			file(args[i+1])
			i++
		case a == "--metrics-addr" && i+1 < len(args):
			if _, port, err := net.SplitHostPort(args[i+1]); err == nil && port != "0" {
				res = append(res, "port "+port)
			}
			i++
		case i > 0 && filesOnly(args[0]) && strings.HasSuffix(a, ".json"):
			file(a)
		}
	}
	return res
}

// exampleChains groups the examples into chains that may run concurrently:
// examples that share a resource (exampleResources) are in one chain, in
// document order. An example identical to an earlier one that shares
// nothing is left out: it would show nothing new.
func exampleChains(examples []docExample) [][]docExample {
	parent := make([]int, len(examples))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	owner := map[string]int{}
	seen := map[string]bool{}
	keep := make([]bool, len(examples))
	for i, ex := range examples {
		res := exampleResources(ex)
		key := strings.Join(append(append([]string{}, ex.env...), ex.args...), "\x00")
		if len(res) == 0 && seen[key] {
			continue
		}
		seen[key], keep[i] = true, true
		for _, r := range res {
			if j, ok := owner[r]; ok {
				parent[find(i)] = find(j)
			} else {
				owner[r] = i
			}
		}
	}
	index := map[int]int{}
	var chains [][]docExample
	for i, ex := range examples {
		if !keep[i] {
			continue
		}
		root := find(i)
		k, ok := index[root]
		if !ok {
			k = len(chains)
			index[root] = k
			chains = append(chains, nil)
		}
		chains[k] = append(chains[k], ex)
	}
	return chains
}

// TestReadmeExamplesFinishInAMinute runs every pacer example of the
// README, CONTRIBUTING.md and docs/*.md against loopback (a redis-server
// the test starts, or the embedded target) and checks that each exits as
// documented within a minute. Examples run readmeParallel at a time, each
// worker with a redis-server of its own; examples that share a file or a
// port run one after another in one chain.
//
// It is the package's longest test: its file's name sorts it among the
// first parallel tests go test releases, so it does not start last.
func TestReadmeExamplesFinishInAMinute(t *testing.T) {
	t.Parallel()
	examples := docExamples(t)
	if len(examples) < 30 {
		t.Fatalf("found %d examples in the docs: the extraction is broken", len(examples))
	}
	chains := exampleChains(examples)
	// The longest chains first, so that the last to start are short.
	sort.SliceStable(chains, func(i, j int) bool { return chainEstimate(chains[i]) > chainEstimate(chains[j]) })
	bin := pacerBinary(t)
	dir := t.TempDir()
	servers := make(chan *redistest.Server, readmeParallel)
	for range readmeParallel {
		servers <- redistest.Start(t)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, chain := range chains {
		srv := <-servers
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { servers <- srv }()
			runChain(t, bin, srv, dir, chain)
		}()
	}
	wg.Wait()
	t.Logf("%d examples in %d chains, %d at a time: %v", len(examples), len(chains), readmeParallel, time.Since(start).Round(100*time.Millisecond))
}

// chainEstimate is how long a chain's examples take, roughly.
func chainEstimate(chain []docExample) time.Duration {
	var d time.Duration
	for _, ex := range chain {
		d += estimate(ex.args)
	}
	return d
}

// runChain runs a chain's examples in order against srv (or the embedded
// target), writing their files into a directory per document under dir.
// It reports through t.Errorf and t.Logf only: it runs on its own goroutine.
func runChain(t *testing.T, bin string, srv *redistest.Server, dir string, chain []docExample) {
	skipped := map[string]bool{} // result files of examples skipped by -short
	for _, ex := range chain {
		docDir := filepath.Join(dir, strings.TrimSuffix(filepath.Base(ex.doc), ".md"))
		if err := os.MkdirAll(docDir, 0o755); err != nil {
			t.Error(err)
			return
		}
		args, codes := loopbackExample(ex.args, srv.PortString(), docDir)
		name := ex.name()
		if args[0] == "serve" {
			continue // runs until Ctrl-C: TestServeUntilInterrupted
		}
		if d := estimate(args); d > readmeExampleLimit {
			t.Errorf("example %q runs for about %v as written: the docs promise under %v, make it shorter", name, d, readmeExampleLimit)
		}
		args = shortened(args)
		if testing.Short() && estimate(args) > readmeShortLimit {
			t.Logf("-short: skipping %q", name)
			for i, a := range args {
				if a == "--json" && i+1 < len(args) {
					skipped[args[i+1]] = true
					if args[0] == "ab" { // and each side's result beside it
						stem := strings.TrimSuffix(args[i+1], ".json")
						skipped[stem+".a.json"], skipped[stem+".b.json"] = true, true
					}
				}
			}
			continue
		}
		if filesOnly(args[0]) {
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
			t.Errorf("%q: FLUSHALL: %v", name, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), readmeExampleLimit)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), ex.env...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		began := time.Now()
		err := cmd.Run()
		took := time.Since(began)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("example %q did not finish within %v: make it shorter", name, readmeExampleLimit)
			continue
		}
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Errorf("%q: %v", name, err)
			return
		}
		if !slices.Contains(codes, code) {
			t.Errorf("example %q (run as %q): exit %d, want one of %v\n%s", name, args, code, codes, tail(stderr.String(), 800))
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
	t.Parallel()
	for in, want := range map[string]string{
		"run --rate 10k --duration 5s --warmup 1s -n 100000 -t get -r 100000": "run --rate 10k --duration 500ms --warmup 200ms -n 2000 -t get -r 100000",
		"sweep --step-duration=2s --settle 500ms --stages 2s:10k,300ms:0":     "sweep --step-duration=300ms --settle 200ms --stages 300ms:10k,300ms:0",
		"fill -r 100000 -d 64:8 -n 7":                                         "fill -r 10000 -d 64:8 -n 7",
		"bench -n 1000000 -P 16 -q":                                           "bench -n 2000 -P 16 -q",
		"run --duration 500ms -- SET k --duration 9s":                         "run --duration 500ms -- SET k --duration 9s",
		"compare --embedded --stall 100ms":                                    "compare --duration 500ms --embedded --stall 100ms",
		"bench -t get --rate 20k":                                             "bench -n 2000 -t get --rate 20k",
		"ab --rounds 6 --round-duration 5s --warmup 1s":                       "ab --rounds 2 --round-duration 500ms --warmup 200ms",
		"ab --rate 5k": "ab --round-duration 500ms --rounds 2 --rate 5k",
	} {
		if got := strings.Join(shortened(strings.Fields(in)), " "); got != want {
			t.Errorf("shortened(%q) = %q, want %q", in, got, want)
		}
	}
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
	if got := strings.Join(args, " "); got != "report /tmp/x/a.json /tmp/x/b.json --plot /tmp/x/p.png --html=/tmp/x/p.html" || len(codes) != 3 {
		t.Fatalf("rewritten to %q %v", got, codes)
	}
	if in := reportInputs(args); strings.Join(in, " ") != "/tmp/x/a.json /tmp/x/b.json" {
		t.Fatalf("report inputs %q", in)
	}
	args, _ = loopbackExample([]string{"diff", "a.json", "--", "b.json", "--max-regression", "p99:10%", "--json", "d.json"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "diff /tmp/x/a.json -- /tmp/x/b.json --max-regression p99:10% --json /tmp/x/d.json" {
		t.Fatalf("rewritten to %q", got)
	}
	args, _ = loopbackExample([]string{"ab", "--a", "redis://10.0.0.5:6379", "--b=x", "--b", "rediss://h:1", "--json", "ab.json"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "ab --a redis://127.0.0.1:4242 --b=redis://127.0.0.1:4242 --b redis://127.0.0.1:4242 --json /tmp/x/ab.json" {
		t.Fatalf("rewritten to %q", got)
	}
	args, codes = loopbackExample([]string{"merge", "s-1.json", "s-2.json", "-o", "out/m.json"}, "4242", "/tmp/x")
	if got := strings.Join(args, " "); got != "merge /tmp/x/s-1.json /tmp/x/s-2.json -o /tmp/x/m.json" || len(codes) != 3 {
		t.Fatalf("rewritten to %q %v", got, codes)
	}
	args, _ = loopbackExample([]string{"compare", "--embedded", "--stall", "100ms"}, "4242", "/tmp/x")
	if strings.Contains(strings.Join(args, " "), "4242") {
		t.Fatalf("an embedded example got a redis target: %q", args)
	}
}

// TestExampleChains: examples that share a file run in one chain, in
// document order; files are per document; a fixed port is shared across
// documents; a repeated example that shares nothing runs once.
func TestExampleChains(t *testing.T) {
	t.Parallel()
	ex := func(doc, line string) docExample {
		args, err := shellWords(line)
		if err != nil {
			t.Fatal(err)
		}
		return docExample{doc: doc, args: args}
	}
	examples := []docExample{
		ex("a.md", "run --embedded --json run.json"),
		ex("a.md", "compare --embedded --stall 100ms --every 1s"),
		ex("a.md", "report run.json --plot=out/run.png"),
		ex("b.md", "run --embedded --json run.json"),
		ex("b.md", "compare --embedded --stall 100ms --every 1s"),
		ex("b.md", "run --embedded --metrics-addr 127.0.0.1:9464"),
		ex("a.md", "bench --embedded --metrics-addr 127.0.0.1:9464 --hdr-log -"),
		ex("a.md", "merge s-1.json s-2.json -o run.png"),
		ex("b.md", "run --embedded --metrics-addr 127.0.0.1:0"),
	}
	var got []string
	for _, chain := range exampleChains(examples) {
		var names []string
		for _, e := range chain {
			names = append(names, e.doc+" "+e.args[0])
		}
		got = append(got, strings.Join(names, ", "))
	}
	want := []string{
		"a.md run, a.md report, a.md merge", // run.json, then run.png
		"a.md compare",                      // b.md's is the same: left out
		"b.md run",                          // its own run.json
		"b.md run, a.md bench",              // port 9464
		"b.md run",                          // port 0 is no fixed port
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("chains:\n got %q\nwant %q", got, want)
	}
}
