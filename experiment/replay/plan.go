// Package replay sends a recorded trace (Redis MONITOR output, or pacer's
// JSON lines) on its own timeline: request i at t0 + (tᵢ − t₀)/speed,
// whatever the server does, latency counted from that instant. It reads the
// trace twice: once to check it and say what the replay will do (Scan), and
// once while sending (Run), streaming, so a trace of any length replays in
// bounded memory.
//
// It reads traces with package scenarios and sends them with the open
// driver (scheduler.RunOpen on a scheduler.Trace timeline) over an
// experiment.Env's target; only the command (cmd/pacer) is above it.
package replay

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
)

// Limits of a replay.
const (
	// MaxLoops bounds --loop.
	MaxLoops = 1_000_000
	// MaxGroups bounds the connection groups: the trace's databases, or
	// with PerClient its clients (a connection each).
	MaxGroups = 10_000
	// MaxKinds is how many command names get results of their own; the
	// rest are counted as one, "other".
	MaxKinds = 64
)

// Config is a replay: the trace, how it is scaled and filtered, and how
// it reaches the target.
type Config struct {
	// Path is the trace file (gzip or not, detected by content); Format
	// forces its format (TraceAuto: detected).
	Path    string
	Format  scenarios.TraceFormat
	KeepLua bool
	// Policy decides what is sent, skipped or refused (nil: the default).
	Policy *scenarios.Policy
	// Speed scales the trace's time (2: twice as fast); Rate, when set,
	// chooses the speed that makes the replay's mean rate Rate instead.
	Speed, Rate float64
	// Loops sends the trace this many times, each shifted by its length
	// (its span and one mean gap). At least 1.
	Loops int
	// KeyPrefix is put in front of every key argument (found by the
	// command's key positions, cluster.KeyPositions).
	KeyPrefix string
	// DB, when DBSet, sends every command to database DB instead of the
	// trace's.
	DB    int
	DBSet bool
	// PerClient keeps each trace client's commands on a connection of its
	// own, in order; otherwise commands spread over Conns connections per
	// database.
	PerClient bool
	Conns     int
	// Cluster routes each command by its key's slot (no PerClient, one
	// database).
	Cluster bool
}

// Plan is what a replay will do, from a first read of the trace.
type Plan struct {
	Summary scenarios.TraceSummary
	// Speed is the scale of the trace's time (Config.Speed, or what
	// Config.Rate makes it); Loops the passes.
	Speed float64
	Loops int
	// Requests is the commands the replay sends (all loops), Span how
	// long its timeline lasts, Length one pass's length in the trace's
	// time (its span and one mean gap).
	Requests uint64
	Span     time.Duration
	Length   time.Duration
	// Names are the command names by kind: the most frequent first, up
	// to MaxKinds, then "other" for the rest.
	Names []string
	kinds map[string]uint32
	// Groups name the connection groups (databases "db 3", or clients);
	// dbs holds each group's database.
	Groups []string
	dbs    []int
	groups map[string]int
	// specs are the key positions of the commands, by kind, for
	// KeyPrefix and cluster routing.
	specs []cluster.KeySpec
}

// Scan reads the trace once: it checks every line (a malformed one is an
// error "file:line: what is wrong"), refuses what cannot be replayed
// (the policy's refusals; transactions, Pub/Sub and blocking commands
// without PerClient; keys it cannot find with KeyPrefix or Cluster), and
// sums up what the replay will send.
func Scan(cfg Config) (*Plan, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r, err := scenarios.OpenTrace(cfg.Path, scenarios.TraceOptions{Format: cfg.Format, KeepLua: cfg.KeepLua})
	if err != nil {
		return nil, usage.Errorf("%v", err)
	}
	sum, err := scenarios.ScanTrace(r, cfg.Policy)
	r.Close()
	if err != nil {
		return nil, usage.Errorf("%v", err)
	}
	p := &Plan{Summary: sum, Loops: cfg.Loops, kinds: map[string]uint32{}, groups: map[string]int{}}
	if err := p.survey(cfg); err != nil {
		return nil, err
	}
	p.Speed = cfg.Speed
	if cfg.Rate > 0 {
		if sum.MeanRate <= 0 {
			return nil, usage.Errorf("--rate: the trace has no span (its %d commands share one instant): give --speed", sum.Commands)
		}
		p.Speed = cfg.Rate / sum.MeanRate
	}
	p.Requests = uint64(sum.Commands) * uint64(p.Loops)
	gap := time.Duration(0)
	if sum.Commands > 1 {
		gap = sum.Span / time.Duration(sum.Commands-1)
	}
	p.Length = sum.Span + gap
	p.Span = p.scaled(time.Duration(p.Loops-1)*p.Length + sum.Span)
	return p, nil
}

func (cfg *Config) validate() error {
	switch {
	case cfg.Rate > 0 && cfg.Speed > 0:
		return usage.Errorf("--rate and --speed both scale the trace: give one")
	case cfg.Rate == 0 && !(cfg.Speed > 0) || math.IsInf(cfg.Speed, 0):
		return usage.Errorf("--speed %v: want a positive factor such as 1, 2x or 0.5", cfg.Speed)
	case cfg.Rate < 0 || math.IsInf(cfg.Rate, 0) || math.IsNaN(cfg.Rate):
		return usage.Errorf("--rate: want a positive rate")
	case cfg.Loops < 1 || cfg.Loops > MaxLoops:
		return usage.Errorf("--loop %d: want 1 to %d passes", cfg.Loops, MaxLoops)
	case cfg.Conns < 1:
		return usage.Errorf("-c %d: want at least one connection", cfg.Conns)
	case cfg.Cluster && cfg.PerClient:
		return usage.Errorf("--cluster with --per-client is not supported: a client's commands would go to several primaries")
	case cfg.Cluster && cfg.DBSet && cfg.DB != 0:
		return usage.Errorf("--cluster has database 0 only: drop --db %d", cfg.DB)
	}
	return nil
}

// scaled turns a duration of the trace's time into the replay's.
func (p *Plan) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) / p.Speed)
}

// survey reads the trace a second time for what the summary's bounded
// tallies do not keep: every command name (kinds), database and, with
// PerClient, client (groups), and checks that what the replay must know
// of each command is known.
func (p *Plan) survey(cfg Config) error {
	r, err := scenarios.OpenTrace(cfg.Path, scenarios.TraceOptions{Format: cfg.Format, KeepLua: cfg.KeepLua})
	if err != nil {
		return usage.Errorf("%v", err)
	}
	defer r.Close()
	counts := map[string]int64{}
	var name []byte
	var bad []string
	badSeen := map[string]bool{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return usage.Errorf("%v", err)
		}
		if a, _ := cfg.Policy.Classify(rec.Argv); a != scenarios.Replay || scenarios.IsSelect(rec.Argv) {
			continue
		}
		if !cfg.PerClient {
			why := ""
			switch {
			case scenarios.IsTransaction(rec.Argv):
				why = "a transaction needs its commands on one connection, in order"
			case scenarios.IsPubSub(rec.Argv):
				why = "a subscription takes its connection over"
			case scenarios.IsBlocking(rec.Argv):
				why = "a blocking command holds its connection"
			}
			if why != "" {
				return usage.Errorf("%s:%d: %s: %s: replay it with --per-client, or leave it out with --skip", r.Name(), rec.Line,
					string(scenarios.AppendCommandName(nil, rec.Argv)), why)
			}
		}
		name = scenarios.AppendCommandName(name[:0], rec.Argv)
		if len(name) > 64 {
			name = name[:64]
		}
		counts[string(name)]++
		if (cfg.KeyPrefix != "" || cfg.Cluster) && len(rec.Argv) > 0 {
			_, ok := keySpec(rec.Argv)
			if cfg.Cluster { // routing takes one place per command name
				_, ok = cluster.KeyPositions(string(rec.Argv[0]))
			}
			if !ok && !badSeen[string(rec.Argv[0])] && len(bad) < 10 {
				badSeen[string(rec.Argv[0])] = true
				bad = append(bad, fmt.Sprintf("%s (line %d)", scenarios.AppendCommandName(nil, rec.Argv[:1]), rec.Line))
			}
		}
		g := p.groupOf(cfg, rec)
		if _, ok := p.groups[g]; !ok {
			if len(p.groups) == MaxGroups {
				return usage.Errorf("%s: more than %d %s: too many connections", r.Name(), MaxGroups, map[bool]string{true: "clients", false: "databases"}[cfg.PerClient])
			}
			p.groups[g] = len(p.Groups)
			p.Groups = append(p.Groups, g)
			db := rec.DB
			if cfg.DBSet {
				db = cfg.DB
			}
			p.dbs = append(p.dbs, db)
		}
	}
	if len(bad) > 0 {
		return usage.Errorf("--key-prefix and --cluster need each command's key positions; pacer does not know them for %s: leave those out with --skip", joinList(bad))
	}
	if cfg.Cluster && len(p.dbs) > 0 {
		for _, db := range p.dbs {
			if db != 0 {
				return usage.Errorf("--cluster has database 0 only, and the trace uses database %d: add --db 0", db)
			}
		}
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) > MaxKinds {
		if cfg.Cluster {
			return usage.Errorf("--cluster routes by command name, and the trace has %d of them, more than %d", len(names), MaxKinds)
		}
		names = append(names[:MaxKinds-1], "other")
	}
	p.Names = names
	for i, n := range names {
		p.kinds[n] = uint32(i)
	}
	return nil
}

// groupOf names the connection group of rec: its database, and with
// PerClient its client too. A client that switched databases gets a
// connection per database (the trace's SELECTs are not replayed: a
// connection selects its group's database as it opens).
func (p *Plan) groupOf(cfg Config, rec *scenarios.TraceRecord) string {
	db := rec.DB
	if cfg.DBSet {
		db = cfg.DB
	}
	g := "db " + strconv.Itoa(db)
	if cfg.PerClient {
		g = rec.Client + " " + g
	}
	return g
}

// kindOf is the kind of a command by its name ("other" past MaxKinds).
func (p *Plan) kindOf(name []byte) uint32 {
	if k, ok := p.kinds[string(name)]; ok {
		return k
	}
	return uint32(len(p.Names) - 1)
}

// keySpec finds where argv's keys are: cluster's table, or, for the
// script and function calls, the key count they carry.
func keySpec(argv [][]byte) (cluster.KeySpec, bool) {
	var up [32]byte
	name := argv[0]
	if len(name) > len(up) {
		return cluster.KeySpec{}, false
	}
	n := copy(up[:], name)
	for i := range n {
		if 'a' <= up[i] && up[i] <= 'z' {
			up[i] -= 'a' - 'A'
		}
	}
	switch string(up[:n]) {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
		if len(argv) < 3 {
			return cluster.KeySpec{}, true
		}
		k, err := strconv.Atoi(string(argv[2]))
		if err != nil || k < 0 || 3+k > len(argv) {
			return cluster.KeySpec{}, false
		}
		if k == 0 {
			return cluster.KeySpec{}, true
		}
		return cluster.KeySpec{First: 3, Last: 2 + k, Step: 1}, true
	}
	return cluster.KeyPositions(string(up[:n]))
}

func joinList(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}
