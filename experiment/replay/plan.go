// Package replay sends a recorded trace (Redis MONITOR output, or pacer's
// JSON lines) on its own timeline: request i at t0 + (tᵢ − t₀)/speed,
// whatever the server does, latency counted from that instant. It reads the
// trace more than once: to check it and say what the replay will do (Scan),
// and while sending (Run), streaming, so a trace of any length replays in
// bounded memory. Every read is of the file Scan opened and checked, and
// each pass's digest must be the check's.
//
// It reads traces with package scenarios and sends them with the open
// driver (openloop.Run on a timeline.Trace) over an
// experiment.Env's target; only the command (cmd/pacer) is above it.
package replay

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/safetext"
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
	// MaxSpeed bounds the speed, given (--speed) or made (--rate).
	MaxSpeed = 1e6
	// MaxSpan bounds the replay's timeline (all its passes, after the
	// speed): 100 years, well inside the nanoseconds an int64 counts (292
	// years), with room for a warmup and the start's clock.
	MaxSpan = 100 * 365 * 24 * time.Hour
)

// Config is a replay: the trace, how it is scaled and filtered, and how
// it reaches the target.
type Config struct {
	// Path is the trace file (gzip or not, detected by content); Format
	// forces its format (TraceAuto: detected).
	Path   string
	Format scenarios.TraceFormat
	// ScriptCommands sends the commands MONITOR shows scripts running
	// (its lua lines) as commands of their own, besides their scripts.
	ScriptCommands bool
	// Policy decides what is sent, skipped or refused (nil: the default);
	// with KeyPrefix it also refuses what a prefix cannot keep apart
	// (scenarios.Policy.WithKeyPrefix).
	Policy *scenarios.Policy
	// MaxBuffer is the connections' --max-buffer: a command larger than
	// it is refused (0: conn.DefaultMaxBuffer).
	MaxBuffer int
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
	// policy is Config.Policy with the key prefix's and the script
	// commands' settings; file the trace Scan checked, sha256 its digest
	// (every pass must read the same); changed is set when one did not.
	policy  *scenarios.Policy
	file    *scenarios.TraceFile
	sha256  string
	changed atomic.Bool
	format  scenarios.TraceFormat
}

// Close closes the trace file. A plan is done with once its Run returns.
func (p *Plan) Close() error {
	if p == nil || p.file == nil {
		return nil
	}
	return p.file.Close()
}

// Changed reports whether a pass of the replay read other bytes than the
// check did: the file was changed in place (Run then stops with an error).
func (p *Plan) Changed() bool { return p.changed.Load() }

// reader opens a reader of the checked file.
func (p *Plan) reader(done <-chan struct{}) (*scenarios.TraceReader, error) {
	return p.file.Reader(scenarios.TraceOptions{Format: p.format, Done: done})
}

// sameDigest checks a pass's digest against the check's.
func (p *Plan) sameDigest(r *scenarios.TraceReader) error {
	st := r.Stats()
	if got := hexDigest(st.SHA256); got != p.sha256 {
		p.changed.Store(true)
		return fmt.Errorf("%s changed while it was replayed: this pass read sha256 %s…, the check %s…: the replay stops",
			r.Name(), got[:16], p.sha256[:16])
	}
	return nil
}

// policyOf is cfg's policy as a replay applies it.
func policyOf(cfg Config) *scenarios.Policy {
	p := cfg.Policy
	if cfg.ScriptCommands {
		p = p.WithScriptCommands()
	}
	if cfg.KeyPrefix != "" {
		p = p.WithKeyPrefix(keysFound)
	}
	return p
}

// keysFound says whether the command table finds argv's keys.
func keysFound(argv [][]byte) bool {
	var buf [64]int
	_, ok := cluster.KeyIndexes(buf[:0], argv)
	return ok
}

// Scan opens the trace and reads it twice: it checks every line (a
// malformed one is an error "file:line: what is wrong"), refuses what
// cannot be replayed (the policy's refusals; transactions, Pub/Sub and
// blocking commands without PerClient; keys it cannot find with
// Cluster; a command larger than MaxBuffer; a timeline past MaxSpan),
// and sums up what the replay will send. The plan keeps the file open
// for Run, which reads it and nothing else: Close it. A cancelled ctx
// ends the reading with an error that says so.
func Scan(ctx context.Context, cfg Config) (*Plan, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tf, err := scenarios.OpenTraceFile(cfg.Path)
	if err != nil {
		return nil, usage.Errorf("%w", err)
	}
	p := &Plan{Loops: cfg.Loops, kinds: map[string]uint32{}, groups: map[string]int{}, policy: policyOf(cfg), file: tf, format: cfg.Format}
	if err := p.scan(ctx, cfg); err != nil {
		tf.Close()
		return nil, err
	}
	return p, nil
}

func (p *Plan) scan(ctx context.Context, cfg Config) error {
	r, err := p.reader(ctx.Done())
	if err != nil {
		return usage.Errorf("%w", err)
	}
	sum, err := scenarios.ScanTrace(r, p.policy)
	r.Close()
	if err != nil {
		return readError(err)
	}
	p.Summary, p.sha256, p.format = sum, sum.SHA256, sum.Format
	if err := p.survey(ctx, cfg); err != nil {
		return err
	}
	return p.timeline(cfg)
}

// readError is err as Scan returns it: a usage error (the trace's, or the
// flags'), but for an interrupted read.
func readError(err error) error {
	if errors.Is(err, scenarios.ErrTraceInterrupted) {
		return err
	}
	return usage.Errorf("%w", err)
}

func hexDigest(b [32]byte) string { return hex.EncodeToString(b[:]) }

func (cfg *Config) validate() error {
	switch {
	case cfg.Rate > 0 && cfg.Speed > 0:
		return usage.Flagf("rate", "{rate} and {speed} both scale the trace: give one")
	case cfg.Rate == 0 && !(cfg.Speed > 0) || math.IsInf(cfg.Speed, 0):
		return usage.Flagf("speed", "{speed} %v: want a positive factor such as 1, 2x or 0.5", cfg.Speed)
	case cfg.Speed > MaxSpeed:
		return usage.Flagf("speed", "{speed} %v: at most %g× (a faster replay sends the trace all at once)", cfg.Speed, float64(MaxSpeed))
	case cfg.Rate < 0 || math.IsInf(cfg.Rate, 0) || math.IsNaN(cfg.Rate):
		return usage.Flagf("rate", "{rate}: want a positive rate")
	case cfg.Loops < 1 || cfg.Loops > MaxLoops:
		return usage.Flagf("loop", "{loop} %d: want 1 to %d passes", cfg.Loops, MaxLoops)
	case cfg.Conns < 1:
		return usage.Flagf("c", "{c} %d: want at least one connection", cfg.Conns)
	case cfg.Cluster && cfg.PerClient:
		return usage.Flagf("cluster", "{cluster} with {per-client} is not supported: a client's commands would go to several primaries")
	case cfg.Cluster && cfg.DBSet && cfg.DB != 0:
		return usage.Flagf("cluster", "{cluster} has database 0 only: drop {db} %d", cfg.DB)
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
// of each command is known, and that each fits --max-buffer.
func (p *Plan) survey(ctx context.Context, cfg Config) error {
	r, err := p.reader(ctx.Done())
	if err != nil {
		return usage.Errorf("%w", err)
	}
	defer r.Close()
	maxBuffer := cfg.MaxBuffer
	if maxBuffer <= 0 {
		maxBuffer = conn.DefaultMaxBuffer
	}
	prefix := len(cfg.KeyPrefix)
	counts := map[string]int64{}
	var name []byte
	var keys []int
	var bad []string
	badSeen := map[string]bool{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readError(err)
		}
		if a, _ := p.policy.Decide(rec); a != scenarios.Replay || scenarios.IsSelect(rec.Argv) {
			continue
		}
		if size := encodedSize(rec.Argv, prefix, &keys); size > maxBuffer {
			return usage.Flagf("", "%s:%d: %s is %s (%d bytes as sent), more than {max-buffer} %s holds: raise {max-buffer}, or leave it out with {skip}",
				r.Name(), rec.Line, safetext.Escape(string(scenarios.AppendCommandName(nil, rec.Argv))), bytesText(int64(size)), size, bytesize.Format(int64(maxBuffer)))
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
				return usage.Flagf("", "%s:%d: %s: %s: replay it with {per-client}, or leave it out with {skip}", r.Name(), rec.Line,
					string(scenarios.AppendCommandName(nil, rec.Argv)), why)
			}
		}
		name = scenarios.AppendCommandName(name[:0], rec.Argv)
		if len(name) > 64 {
			name = name[:64]
		}
		counts[string(name)]++
		if cfg.Cluster && len(rec.Argv) > 0 {
			// Routing takes one place per command name.
			_, ok := cluster.KeyPositions(string(rec.Argv[0]))
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
	if err := p.sameDigest(r); err != nil {
		return err
	}
	if len(bad) > 0 {
		return usage.Flagf("cluster", "{cluster} needs each command's key positions; pacer does not know them for %s: leave those out with {skip}", joinList(bad))
	}
	if cfg.Cluster && len(p.dbs) > 0 {
		for _, db := range p.dbs {
			if db != 0 {
				return usage.Flagf("cluster", "{cluster} has database 0 only, and the trace uses database %d: add {db} 0", db)
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
			return usage.Flagf("cluster", "{cluster} routes by command name, and the trace has %d of them, more than %d", len(names), MaxKinds)
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

// encodedSize is the size of argv as the replay sends it (RESP, with
// prefix bytes before each key when prefix > 0; keys is a buffer).
func encodedSize(argv [][]byte, prefix int, keys *[]int) int {
	n := 1 + digits(len(argv)) + 2
	for _, a := range argv {
		n += 1 + digits(len(a)) + 2 + len(a) + 2
	}
	if prefix > 0 {
		var ok bool
		if *keys, ok = cluster.KeyIndexes(*keys, argv); ok {
			for _, i := range *keys {
				// A prefixed key's length may take one more digit.
				n += prefix + digits(len(argv[i])+prefix) - digits(len(argv[i]))
			}
		}
	}
	return n
}

func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
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
