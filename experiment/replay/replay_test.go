package replay

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
)

func TestMain(m *testing.M) {
	if sink.IsChild() { // the test binary as the timestamping sink
		os.Exit(sink.RunChild())
	}
	goleak.VerifyTestMain(m)
}

// traceCmd is one command of a generated trace.
type traceCmd struct {
	t      int64 // ns from the trace's first command
	db     int
	client string
	argv   [][]byte
}

// burstyTrace is n commands over span: a steady stream with bursts (every
// tenth of the span, 40 commands within 4 ms), each the sink's indexed
// command (ECHO and its index), which the sink records.
func burstyTrace(n int, span time.Duration, clients int) []traceCmd {
	rng := rand.New(rand.NewPCG(1, 2))
	var ts []int64
	for b := range 10 {
		at := int64(span) * int64(b) / 10
		for range 40 {
			ts = append(ts, at+rng.Int64N(int64(4*time.Millisecond)))
		}
	}
	for len(ts) < n {
		ts = append(ts, rng.Int64N(int64(span)))
	}
	slices.Sort(ts)
	ts[0] = 0
	out := make([]traceCmd, n)
	for i, t := range ts {
		out[i] = traceCmd{t: t, client: "c" + strconv.Itoa(i%clients), argv: [][]byte{[]byte("ECHO"), fmt.Appendf(nil, "%012d", i)}}
	}
	return out
}

// writeTrace writes cmds as pacer's JSON lines.
func writeTrace(t *testing.T, cmds []traceCmd) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := scenarios.NewTraceWriter(f)
	for _, c := range cmds {
		if err := w.Write(&scenarios.TraceRecord{T: c.t, DB: c.db, Client: c.client, Argv: c.argv}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// replayTo replays path to the sink at addr with cfg.
func replayTo(t *testing.T, addr string, cfg Config) (*scheduler.Result, *Plan) {
	t.Helper()
	plan, err := Scan(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	env := &experiment.Env{Target: &endpoint.Target{Options: conn.Options{Network: "tcp", Addr: addr, Now: scheduler.Now}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, _, err := Run(ctx, env, cfg, plan, "replay", openloop.Config{Pacing: scheduler.Precise})
	if err != nil {
		t.Fatal(err)
	}
	return res, plan
}

// TestReplayKeepsTheTrace replays a bursty trace to the timestamping sink
// (a process of its own, so that its work does not delay the replay's)
// at speed 1 (one connection: the exact order) and 3 (four: each
// connection's order) and checks that every command arrives once, with
// the trace's bytes, in the trace's order, at the trace's instant scaled
// by the speed: arrival − intended p99 within the run's own send-lag p99
// + 0.2 ms (and the host's longest hiccup: bench/replay measures the
// bound on a quiet machine), and the counts per 10 ms at the sink correlated with the
// trace's at ≥ 0.98. TestReplayGroups checks the bytes of commands with
// every kind of argument.
func TestReplayKeepsTheTrace(t *testing.T) {
	const n = 3000
	span := 2 * time.Second
	if testing.Short() {
		span = time.Second
	}
	cmds := burstyTrace(n, span, 7)
	path := writeTrace(t, cmds)
	for _, tc := range []struct {
		speed float64
		conns int
	}{{1, 1}, {3, 4}} {
		t.Run(fmt.Sprintf("speed %g", tc.speed), func(t *testing.T) {
			s, err := sink.StartChild(os.Args[0], nil, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			res, plan := replayTo(t, s.Addr(), Config{Path: path, Speed: tc.speed, Loops: 1, Conns: tc.conns})
			records, err := s.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts.Completed != n || len(records) != n {
				t.Fatalf("completed %d, the sink read %d, of %d", res.Counts.Completed, len(records), n)
			}
			if plan.Speed != tc.speed || plan.Requests != n {
				t.Fatalf("plan: speed %g, %d requests", plan.Speed, plan.Requests)
			}
			// Bytes and order.
			arrived, recRead := make([]int64, n), make([]int64, n)
			seen := make([]bool, n)
			last := map[int]int{} // per sink connection, the last index read
			for k, r := range records {
				x, ok := r.Index()
				i := int(x)
				if !ok || i >= n || seen[i] {
					t.Fatalf("record %d: %q (a duplicate or not the trace's)", k, r.Argv)
				}
				seen[i] = true
				if !slices.EqualFunc(r.Argv, cmds[i].argv, bytes.Equal) {
					t.Fatalf("command %d arrived as %q, the trace has %q", i, r.Argv, cmds[i].argv)
				}
				if tc.conns == 1 && i != k {
					t.Fatalf("the sink read command %d in place %d", i, k)
				}
				if prev, ok := last[r.Conn]; ok && i < prev {
					t.Fatalf("connection %d: command %d after %d", r.Conn, i, prev)
				}
				last[r.Conn] = i
				arrived[i], recRead[i] = r.Kernel, r.Read
				if arrived[i] == 0 {
					arrived[i] = r.Read
				}
			}
			// Instants.
			late := make([]int64, n)
			binsTrace := make([]float64, int(span.Seconds()/tc.speed*100)+2)
			binsSink := make([]float64, len(binsTrace))
			for i, c := range cmds {
				off := int64(float64(c.t) / tc.speed)
				late[i] = arrived[i] - (res.T0 + off)
				binsTrace[min(int(off/int64(10*time.Millisecond)), len(binsTrace)-1)]++
				at := max(arrived[i]-res.T0, 0)
				binsSink[min(int(at/int64(10*time.Millisecond)), len(binsSink)-1)]++
			}
			if os.Getenv("REPLAY_DEBUG") != "" {
				for i := range late {
					if late[i] > int64(5*time.Millisecond) {
						t.Logf("late %d: %.3f ms (trace t %.3f ms) kernel→read %.3f ms", i, float64(late[i])/1e6, float64(cmds[i].t)/1e6, float64(recRead[i]-arrived[i])/1e6)
					}
				}
			}
			slices.Sort(late)
			p99 := late[n*99/100]
			lag := res.Lag.ValueAtQuantile(99)
			corr := pearson(binsTrace, binsSink)
			t.Logf("arrival − intended p50 %.3f ms, p99 %.3f ms; send lag p99 %.3f ms; host hiccups p99 %.3f ms, max %.3f ms; per-10 ms counts correlate at %.4f",
				float64(late[n/2])/1e6, float64(p99)/1e6, float64(lag)/1e6, float64(res.Hiccups.ValueAtQuantile(99))/1e6, float64(res.Hiccups.Max())/1e6, corr)
			if late[0] < -int64(50*time.Microsecond) {
				t.Errorf("a command arrived %.3f ms before its instant", float64(-late[0])/1e6)
			}
			// A write stamped on time can still be held in the kernel by
			// the host (a preempted syscall): the bound allows the run's
			// longest hiccup on top, which a quiet host keeps near a
			// millisecond. Not its p99: at speed 3 the run lasts a third
			// of a second, so one 5 ms stall holds back more than 1% of
			// the commands but is one sample in 330 of the meter's.
			// The meter sees the host's stalls, not one thread's: on a
			// busy machine (hiccups above 2 ms at p99, where this VM
			// idle gives about 1 ms; go test running two packages on two
			// cores gave 3.5 ms) the writer alone can be held back 13 ms
			// while the meter is not; that run says nothing about the
			// replay, and is not judged.
			hiccups, busy := int64(0), false
			if res.Hiccups != nil {
				hiccups, busy = res.Hiccups.Max(), res.Hiccups.ValueAtQuantile(99) > int64(2*time.Millisecond)
			}
			if over := p99 > lag+int64(200*time.Microsecond)+hiccups; over && busy {
				t.Logf("arrival − intended p99 %.3f ms is above the send-lag p99 %.3f ms + 0.2 ms + the host's longest hiccup %.3f ms, on a busy host: not judged",
					float64(p99)/1e6, float64(lag)/1e6, float64(hiccups)/1e6)
			} else if over {
				t.Errorf("arrival − intended p99 %.3f ms is above the send-lag p99 %.3f ms + 0.2 ms + the host's longest hiccup %.3f ms",
					float64(p99)/1e6, float64(lag)/1e6, float64(hiccups)/1e6)
			}
			// The counts can only match where the commands arrived on
			// time: a busy machine that holds pacer back by milliseconds,
			// before its write (send lag) or inside it (a preempted
			// syscall, bounded above by the hiccups), moves requests into
			// later 10 ms bins. Judged when both stayed within 1 ms at
			// p99 (bench/replay measures them on a quiet machine).
			switch {
			case lag > int64(time.Millisecond) || p99 > int64(time.Millisecond):
				t.Logf("send lag p99 %.3f ms, arrival − intended p99 %.3f ms: the host held the replay back, the counts' correlation (%.4f) is not judged",
					float64(lag)/1e6, float64(p99)/1e6, corr)
			case corr < 0.98:
				// A quiet host gives 0.998; one host stall of 2 ms, below
				// both p99s at speed 3 (a third of a second), gave 0.988.
				// A replay that lost the trace's shape falls far below.
				t.Errorf("per-10 ms counts correlate at %.4f with the trace's, want ≥ 0.98", corr)
			}
		})
	}
}

func pearson(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma /= float64(len(a))
	mb /= float64(len(b))
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

// TestReplayGroups checks where commands go and what they carry: with
// PerClient each trace client's commands (in one database) on one
// connection of their own, in order; without, each database's commands on
// connections that selected it; and every command with the trace's exact
// bytes (spaces, quotes, binary, unicode).
func TestReplayGroups(t *testing.T) {
	var cmds []traceCmd
	for i := range 60 {
		val := fmt.Sprintf("v %d \"q\" \\ \x00\xff\r\n é ✓", i)
		cmds = append(cmds, traceCmd{t: int64(i) * int64(time.Millisecond), db: i % 3, client: "c" + strconv.Itoa(i%4),
			argv: [][]byte{[]byte("SET"), fmt.Appendf(nil, "k:%06d", i), []byte(val)}})
	}
	path := writeTrace(t, cmds)
	for _, perClient := range []bool{true, false} {
		t.Run(fmt.Sprintf("per-client %v", perClient), func(t *testing.T) {
			s, err := sink.Start(sink.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, plan := replayTo(t, s.Addr(), Config{Path: path, Speed: 1, Loops: 1, Conns: 6, PerClient: perClient})
			if res.Counts.Completed != 60 {
				t.Fatalf("counts %+v", res.Counts)
			}
			wantGroups := 3
			if perClient {
				wantGroups = 12 // 4 clients × 3 databases
			}
			if len(plan.Groups) != wantGroups {
				t.Fatalf("groups %q", plan.Groups)
			}
			dbOf := map[int]string{} // sink connection → its SELECT
			connOf := map[string]int{}
			last := map[int]int{}
			seen := 0
			for _, r := range s.Records() {
				switch string(r.Argv[0]) {
				case "SELECT":
					dbOf[r.Conn] = string(r.Argv[1])
					continue
				case "SET":
				default:
					continue // the connections' set-up
				}
				seen++
				i, _ := strconv.Atoi(string(bytes.TrimPrefix(r.Argv[1], []byte("k:"))))
				c := cmds[i]
				if !slices.EqualFunc(r.Argv, c.argv, bytes.Equal) {
					t.Errorf("command %d arrived as %q, the trace has %q", i, r.Argv, c.argv)
				}
				if db := dbOf[r.Conn]; db != strconv.Itoa(c.db) && !(c.db == 0 && db == "") {
					t.Errorf("command %d of database %d on a connection of database %q", i, c.db, db)
				}
				if perClient {
					g := c.client + " " + strconv.Itoa(c.db)
					if k, ok := connOf[g]; ok && k != r.Conn {
						t.Errorf("client %s in database %d on connections %d and %d", c.client, c.db, k, r.Conn)
					}
					connOf[g] = r.Conn
				}
				if prev, ok := last[r.Conn]; ok && i < prev {
					t.Errorf("connection %d: command %d after %d", r.Conn, i, prev)
				}
				last[r.Conn] = i
			}
			if seen != 60 {
				t.Errorf("the sink read %d of 60 commands", seen)
			}
			if perClient && len(connOf) != 12 {
				t.Errorf("clients on connections %v", connOf)
			}
		})
	}
}
