package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/sink"
)

// echoTrace writes a MONITOR trace of n ECHO commands (the sink's indexed
// command), gap apart.
func echoTrace(t *testing.T, name string, n int, gap time.Duration) string {
	t.Helper()
	var b strings.Builder
	base := int64(1339518083) * int64(time.Second)
	for i := range n {
		ts := base + int64(i)*int64(gap)
		fmt.Fprintf(&b, "%d.%06d [0 127.0.0.1:5000] \"ECHO\" \"%012d\"\n", ts/1e9, ts%1e9/1e3, i)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReplayShardsMerge: `replay --shard K/N` needs no --seed (a trace
// draws nothing); two shards of a replay send every command once between
// them, and pacer merge adds them up to the whole trace, exactly.
func TestReplayShardsMerge(t *testing.T) {
	t.Parallel()
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 101
	path := echoTrace(t, "t.txt", n, time.Millisecond)
	dir := t.TempDir()
	var files []string
	for k := 1; k <= 2; k++ {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", k))
		code, stdout, stderr := pacer(t, append(append([]string{"replay"}, hostPort(t, s.Addr())...),
			"--shard", fmt.Sprintf("%d/2", k), "--speed", "4", "-c", "2", "-q", "--json", f, path)...)
		if !runOK(code) {
			t.Fatalf("shard %d/2: exit %d\n%s%s", k, code, stdout, stderr)
		}
		d := readResult(t, f)
		if want := uint64((n + 2 - k) / 2); d.Tests[0].Counts.Scheduled != want || d.Tests[0].Counts.Completed != want {
			t.Errorf("shard %d/2: counts %+v, want %d", k, d.Tests[0].Counts, want)
		}
		files = append(files, f)
	}
	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := pacer(t, append([]string{"merge"}, append(files, "-o", merged)...)...)
	if !runOK(code) {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	d := readResult(t, merged)
	if c := d.Tests[0].Counts; c.Scheduled != n || c.Completed != n || c.Errors != 0 || c.Unsent != 0 {
		t.Errorf("merged counts %+v, want %d completed", c, n)
	}
	seen := make([]int, n)
	for _, r := range s.Records() {
		if i, ok := r.Index(); ok && int(i) < n {
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("command %d arrived %d times", i, c)
		}
	}
}

// TestReplayOverflowsAreUsageErrors: a speed, rate or loop count that
// would take the timeline past what pacer can plan is a usage error that
// names the flag; --rate has --speed's cap; the dry run's durations are
// never negative and its peaks never above the requests.
func TestReplayOverflowsAreUsageErrors(t *testing.T) {
	t.Parallel()
	two := echoTrace(t, "two.txt", 2, 100*time.Millisecond)
	day := echoTrace(t, "day.txt", 3, 12*time.Hour)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--speed", "1e-300", day}, "--speed 1e-300"},
		{[]string{"--speed", "1e-10", day}, "--speed 1e-10"},
		{[]string{"--rate", "0.001", "--loop", "1000000", day}, "--loop 1000000"},
		{[]string{"--loop", "1000000", day}, "--loop 1000000"},
		{[]string{"--rate", "1000M", two}, "--rate 1000M"},
		{[]string{"--speed", "1e7", two}, "--speed"},
		{[]string{"--warmup", "2500000h", two}, "--warmup 2500000h0m0s: the replay lasts 100ms"},
		{[]string{"--warmup", "100ms", two}, "--warmup 100ms"},
	} {
		wantUsageError(t, tc.want, append([]string{"replay", "--embedded", "--dry-run"}, tc.args...)...)
	}
	// The largest speed is accepted by either flag; the dry run's peaks
	// are at most the two requests there are.
	for _, args := range [][]string{{"--speed", "1e6"}, {"--rate", "20M"}} {
		code, out, stderr := pacer(t, append(append([]string{"replay", "--embedded", "--dry-run"}, args...), two)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.Contains(out, "-") && strings.Contains(out, "h-") || strings.Contains(out, "over -") {
			t.Errorf("%v: a negative duration:\n%s", args, out)
		}
		_, last, _ := strings.Cut(out, "replay at ")
		if !strings.Contains(last, "peak 2.0/s in a second, 200.0/s in 10 ms") {
			t.Errorf("%v: the replay's peaks are above its 2 requests:\n%s", args, out)
		}
	}
}

// TestReplayMaxBufferRefusesALargerCommand: a command larger than
// --max-buffer is refused before anything is sent, at its line, as the
// flag's help says; a larger --max-buffer sends it.
func TestReplayMaxBufferRefusesALargerCommand(t *testing.T) {
	t.Parallel()
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := strings.Repeat("v", 3<<19)
	trace := fmt.Sprintf("1339518083.000001 [0 127.0.0.1:5000] \"SET\" \"a\" \"1\"\n1339518083.000002 [0 127.0.0.1:5000] \"SET\" \"k\" \"%s\"\n", big)
	path := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(path, []byte(trace), 0o600); err != nil {
		t.Fatal(err)
	}
	target := append([]string{"replay"}, hostPort(t, s.Addr())...)
	wantUsageError(t, "big.txt:2: SET is 1.5 MiB", append(target, "-q", path)...)
	wantUsageError(t, "--max-buffer 1MiB", append(target, "-q", "--max-buffer", "1MiB", path)...)
	if n := len(s.Records()); n != 0 {
		t.Fatalf("a refused replay sent %d commands", n)
	}
	if code, stdout, stderr := pacer(t, append(target, "-q", "--max-buffer", "2MiB", path)...); !runOK(code) {
		t.Fatalf("--max-buffer 2MiB: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestReplayBoundsBlankLines: a gzip trace of blank lines (a few KiB that
// expand to 70 MiB) is refused once its blank bytes pass the bound,
// naming it, instead of being read to its end on every pass and called
// empty.
func TestReplayBoundsBlankLines(t *testing.T) {
	t.Parallel()
	// Gzip members one after another are one stream: a MiB of newlines
	// compressed once, seventy times.
	member := func(b []byte) []byte {
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return gz.Bytes()
	}
	file := member([]byte("1339518083.000001 [0 127.0.0.1:5000] \"GET\" \"a\"\n"))
	blank := member(bytes.Repeat([]byte("\n"), 1<<20))
	for range 70 {
		file = append(file, blank...)
	}
	file = append(file, member([]byte("1339518083.000002 [0 127.0.0.1:5000] \"GET\" \"b\"\n"))...)
	path := filepath.Join(t.TempDir(), "blank.txt.gz")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	wantUsageError(t, "blank.txt.gz:"+strconv.Itoa(1+64<<20+1)+": more than 64MiB of blank lines", "replay", "--embedded", "--dry-run", path)
}

// TestReplayStartInSendsTheCheckedTrace: a trace replaced at its path
// while the replay waits for --start-in is not what it sends: it sends
// the file it checked, and the JSON's sha256 is that file's.
func TestReplayStartInSendsTheCheckedTrace(t *testing.T) {
	t.Parallel()
	s, err := sink.Start(sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := echoTrace(t, "t.txt", 20, time.Millisecond)
	checked := readFile(t, path)
	evil := filepath.Join(t.TempDir(), "evil.txt")
	os.WriteFile(evil, []byte("1339518083.000001 [0 127.0.0.1:5000] \"ECHO\" \"999999999999\"\n"), 0o600)
	js := filepath.Join(t.TempDir(), "r.json")
	done, stdout, stderr := startMain(t, func(out string) bool { return strings.Contains(out, "replay at") },
		"the plan before the start", append(append([]string{"replay"}, hostPort(t, s.Addr())...), "--start-in", "2s", "--json", js, path)...)
	if err := os.Rename(evil, path); err != nil {
		t.Fatal(err)
	}
	if code := <-done; !runOK(code) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	n := 0
	for _, r := range s.Records() {
		if i, ok := r.Index(); ok {
			if i >= 20 {
				t.Errorf("the replaced trace's command %d was sent", i)
			}
			n++
		}
	}
	d := readResult(t, js)
	sum := sha256.Sum256(checked)
	if n != 20 || d.Trace == nil || d.Trace.SHA256 != hex.EncodeToString(sum[:]) || d.Trace.Changed {
		t.Errorf("sent %d of the checked trace's 20; trace record %+v, want sha256 %x", n, d.Trace, sum)
	}
}
