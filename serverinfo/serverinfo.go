// Package serverinfo asks the server under test about itself: before a
// run, what it is and the settings that change results (INFO server and
// keyspace, CONFIG GET save, appendonly, io-threads, maxmemory-policy);
// around each test, what it counted (INFO commandstats, LATENCY
// HISTOGRAM), so that a report can say how much of the latency was the
// server's own time. Never MONITOR.
//
// Each round of queries (a Prober's Identify, Before or Since) goes over
// its own short-lived connection, outside the measurement, and is bounded
// in time. Managed services often rename or refuse commands: a refused
// INFO is said once (Prober.Notice) and, like a refused LATENCY
// HISTOGRAM, not asked again; a refused CONFIG GET is noted in the
// Identity; after rounds that fail in a row the server is not asked at
// all. Nothing here fails a run.
//
// It sits beside the drivers, over package conn: package target asks it
// around each test, and report prints what it returns (Identity is the
// result document's "server", Stats each test's).
package serverinfo

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
)

// DefaultTimeout bounds each round of queries (connecting included): a
// stalled server delays a test's start or end by at most this much.
const DefaultTimeout = 1500 * time.Millisecond

// Prober asks one server. It is not safe for concurrent use.
type Prober struct {
	o conn.Options
	// Timeout bounds each round of queries; DefaultTimeout when zero.
	Timeout time.Duration
	// infoRefused and histRefused hold the server's refusal of INFO and
	// of LATENCY HISTOGRAM: neither is asked again.
	infoRefused, histRefused string
	// failures counts rounds in a row that got no answer (timeouts, a
	// lost connection); at maxFailures the prober stops asking, so a
	// server that never answers costs a run a few timeouts, not two per
	// test.
	failures int
	gaveUp   string
	notices  []string
	// latencyMonitor is set when the server's latency monitor records
	// events (latency-monitor-threshold above 0, read by Identify);
	// latencyRefused once LATENCY LATEST was refused.
	latencyMonitor, latencyRefused bool
	// cpuSilent is set once INFO cpu said nothing of its CPU time: it
	// is not asked again.
	cpuSilent bool
}

// maxFailures is how many rounds in a row may fail before the prober
// gives up.
const maxFailures = 2

// New returns a Prober for the server o connects to. Its connections
// authenticate as o does but select no database, stay in RESP2 and send
// nothing else (no PING).
func New(o conn.Options) *Prober {
	o.DB, o.RESP3, o.ClientTracking, o.SkipProbe = 0, false, false, true
	o.MaxInflight = 1
	return &Prober{o: o}
}

// Notice returns, once, each refusal met since the last call: "the server
// refuses INFO (ERR unknown command …): no server-side times". Say it
// once and go on.
func (p *Prober) Notice() []string {
	n := p.notices
	p.notices = nil
	return n
}

func (p *Prober) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

// do runs one round of queries.
func (p *Prober) do(ctx context.Context, cmds ...[]string) ([]conn.Answer, error) {
	if p.gaveUp != "" {
		return nil, errors.New(p.gaveUp)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	o := p.o
	o.DialTimeout = p.timeout()
	a, err := conn.DoAll(ctx, o, cmds...)
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("no reply within %v", p.timeout())
	case err == nil && len(a) < len(cmds):
		err = errors.New("missing replies")
	}
	switch {
	case err == nil:
		p.failures = 0
	case parent.Err() == nil: // not the caller's cancellation
		if p.failures++; p.failures >= maxFailures {
			p.gaveUp = fmt.Sprintf("not asked: %d rounds of queries in a row failed, the last with: %v", p.failures, err)
			p.notices = append(p.notices, fmt.Sprintf("the server did not answer INFO %d times in a row (%v): no more server-side times", p.failures, err))
		}
	}
	return a, err
}

// Identify asks what the server is and how it is configured. It never
// fails: what could not be learnt is said in Identity.Error.
func (p *Prober) Identify(ctx context.Context) *Identity {
	id := &Identity{Config: map[string]string{}}
	cmds := [][]string{{"INFO", "server"}, {"INFO", "keyspace"}}
	for _, name := range ConfigNames {
		cmds = append(cmds, []string{"CONFIG", "GET", name})
	}
	cmds = append(cmds, []string{"CONFIG", "GET", "latency-monitor-threshold"})
	answers, err := p.do(ctx, cmds...)
	if err != nil && len(answers) == 0 {
		id.Error = "could not ask the server: " + err.Error()
		return id
	}
	var problems []string
	if len(answers) > 0 {
		if a := answers[0]; a.Err != nil {
			p.refuseInfo(a.Err)
			problems = append(problems, "INFO refused: "+a.Err.Error())
		} else {
			id.Available = true
			identify(id, parseInfo(a.Value.Str))
		}
	}
	if len(answers) > 1 && answers[1].Err == nil {
		if k, ok := parseKeyspace(answers[1].Value.Str); ok {
			id.Keys = &k
		}
	}
	var configErr error
	for i, name := range ConfigNames {
		if 2+i >= len(answers) {
			break
		}
		a := answers[2+i]
		if a.Err != nil {
			if configErr == nil {
				configErr = a.Err
			}
			continue
		}
		if v, ok := configValue(a.Value); ok {
			id.Config[name] = v
		}
	}
	if i := 2 + len(ConfigNames); i < len(answers) && answers[i].Err == nil {
		if v, ok := configValue(answers[i].Value); ok {
			if ms, ok := monitorThreshold(v); ok {
				id.LatencyMonitorMs = &ms
				p.latencyMonitor = ms > 0
			}
		}
	}
	if configErr != nil {
		id.ConfigRefused = configErr.Error()
		problems = append(problems, "CONFIG GET refused: "+id.ConfigRefused)
	}
	if err != nil {
		problems = append(problems, err.Error())
	}
	id.Error = strings.Join(problems, "; ")
	return id
}

// identify fills the server's name, version and mode from INFO server.
func identify(id *Identity, info map[string]string) {
	id.RedisVersion = info["redis_version"]
	if pid, err := strconv.Atoi(info["process_id"]); err == nil && pid > 0 {
		id.ProcessID = pid
	}
	id.Version = id.RedisVersion
	id.Name = "redis"
	id.Mode = info["redis_mode"]
	if m := info["server_mode"]; m != "" {
		id.Mode = m
	}
	exe := strings.ToLower(path.Base(info["executable"]))
	switch {
	case info["pacer_embedded"] != "":
		id.Name = "pacer-embedded"
	case info["dragonfly_version"] != "":
		id.Name, id.Version = "dragonfly", info["dragonfly_version"]
		id.ThreadCount = info["thread_count"]
	case info["server_name"] != "":
		id.Name = info["server_name"]
		if v := info[id.Name+"_version"]; v != "" {
			id.Version = v
		}
	case info["valkey_version"] != "":
		id.Name, id.Version = "valkey", info["valkey_version"]
	case strings.Contains(exe, "keydb"):
		id.Name = "keydb"
	}
}

// refuseInfo remembers that INFO is refused and queues the notice.
func (p *Prober) refuseInfo(err error) {
	if p.infoRefused != "" {
		return
	}
	p.infoRefused = err.Error()
	p.notices = append(p.notices, fmt.Sprintf("the server refuses INFO (%s): no server-side times or identity", p.infoRefused))
}

// Snapshot is what the server had counted at one instant.
type Snapshot struct {
	snap *snapshot
	err  string
}

type snapshot struct {
	commands map[string]counter
	hist     map[string]cumulative
	// cpu is INFO cpu's CPU time (cpuAsked: INFO cpu was sent, and
	// counts in the next snapshot); wall the Unix second it was taken.
	cpu      cpuTimes
	cpuAsked bool
	wall     int64
	// histAsked is set when LATENCY HISTOGRAM was sent (it then counts
	// in the next snapshot).
	histAsked bool
}

// Before reads the counters just before a test. Call Since with its
// result just after the test.
func (p *Prober) Before(ctx context.Context) *Snapshot {
	s, _, err := p.snapshot(ctx, false)
	return &Snapshot{snap: s, err: err}
}

// Since reads the counters again and returns what the server counted
// since before. It never fails: Stats.Error says what went wrong.
func (p *Prober) Since(ctx context.Context, before *Snapshot) *Stats {
	switch {
	case before == nil:
		return unavailable("the server was not asked before the test")
	case before.err != "":
		return unavailable("%s", before.err)
	case ctx.Err() != nil:
		return unavailable("not asked after the test: %v", ctx.Err())
	}
	after, keys, err := p.snapshot(ctx, true)
	if err != "" && ctx.Err() != nil { // interrupted while asking
		return unavailable("not asked after the test: %v", ctx.Err())
	}
	if err != "" {
		return unavailable("%s", err)
	}
	// Counted in between: the INFO (and LATENCY HISTOGRAM) of the first
	// snapshot, and the AUTH of the second one's connection.
	mine := own{"info": 1}
	if before.snap.cpuAsked {
		mine["info"]++
	}
	if before.snap.histAsked {
		mine["latency|histogram"], mine["latency"] = 1, 1
	}
	if p.o.Password != "" {
		mine["auth"] = 1
	}
	s := diff(before.snap, after, mine)
	s.Keys = keys
	s.CPU = cpuSince(before.snap.cpu, after.cpu)
	s.LatencyEvents = p.latencyEvents(ctx, before.snap.wall)
	return s
}

// snapshot reads INFO commandstats and LATENCY HISTOGRAM (while the
// server has it) and, withKeys, INFO keyspace. errText says why there is
// no snapshot.
func (p *Prober) snapshot(ctx context.Context, withKeys bool) (s *snapshot, keys *uint64, errText string) {
	if p.infoRefused != "" {
		return nil, nil, "INFO refused: " + p.infoRefused
	}
	cmds := [][]string{{"INFO", "commandstats"}}
	cpu := !p.cpuSilent
	if cpu {
		cmds = append(cmds, []string{"INFO", "cpu"})
	}
	hist := p.histRefused == ""
	if hist {
		cmds = append(cmds, []string{"LATENCY", "HISTOGRAM"})
	}
	if withKeys {
		cmds = append(cmds, []string{"INFO", "keyspace"})
	}
	answers, err := p.do(ctx, cmds...)
	if len(answers) == 0 {
		return nil, nil, "could not ask the server: " + err.Error()
	}
	if a := answers[0]; a.Err != nil {
		p.refuseInfo(a.Err)
		return nil, nil, "INFO refused: " + a.Err.Error()
	}
	s = &snapshot{commands: parseCommandstats(answers[0].Value.Str), histAsked: hist, cpuAsked: cpu, wall: time.Now().Unix()}
	next := 1
	if cpu {
		if len(answers) <= next {
			return nil, nil, "could not ask the server: " + err.Error()
		}
		if a := answers[next]; a.Err == nil {
			s.cpu = parseCPU(a.Value.Str)
		}
		if !s.cpu.ok {
			p.cpuSilent = true // not asked again
		}
		next++
	}
	if hist {
		if len(answers) <= next {
			return nil, nil, "could not ask the server: " + err.Error()
		}
		if a := answers[next]; a.Err != nil {
			// Before Redis 7: "ERR unknown subcommand 'HISTOGRAM'". Not
			// asked again, and nothing to say: INFO is the main source.
			p.histRefused = a.Err.Error()
		} else {
			s.hist = parseLatencyHistogram(a.Value)
		}
		next++
	}
	if withKeys && len(answers) > next && answers[next].Err == nil {
		if k, ok := parseKeyspace(answers[next].Value.Str); ok {
			keys = &k
		}
	}
	return s, keys, ""
}
