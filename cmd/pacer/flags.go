package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/verdict"
)

// Limits every load command checks before anything runs.
const (
	// maxConnections bounds -c: each connection costs a socket, a reader
	// goroutine and its FIFO.
	maxConnections = 10000
)

// Flag categories, in the order help lists them: where to send, how much,
// across machines, what, what to hold it to and how pacer measures itself,
// what to write, the knobs few need, the embedded target; TLS last.
const (
	catTarget   = "target"
	catServer   = "server"
	catLoad     = "load"
	catShard    = "shard"
	catWorkload = "workload"
	catTrust    = "slo and trust"
	catOutput   = "output"
	catTuning   = "tuning"
	catEmbedded = "embedded target"
)

var helpCategories = []string{catTarget, catServer, catLoad, catShard, catWorkload, catTrust, catOutput, catTuning, catEmbedded, catTLS}

// targetFlags are redis-benchmark's connection flags, with its names and
// defaults, its TLS flags (tlsFlags) and --askpass, shared by every load
// command.
func targetFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "h", Value: "127.0.0.1", Usage: "server `HOST`", Category: catTarget},
		&cli.IntFlag{Name: "p", Value: 6379, Usage: "server `PORT`", Category: catTarget},
		&cli.StringFlag{Name: "s", Usage: "server unix `SOCKET` (overrides -h and -p)", Category: catTarget},
		&cli.StringFlag{Name: "u", Usage: "server `URI`: redis[s]://[user:password@]host[:port][/db], rediss: TLS (overrides -h, -p, -a, --user, --dbnum)", Category: catTarget},
		&cli.StringFlag{Name: "a", Usage: "`PASSWORD` for AUTH (or REDISCLI_AUTH)", Category: catTarget, EnvVars: []string{"REDISCLI_AUTH"}},
		&cli.StringFlag{Name: "user", Usage: "`NAME` for ACL AUTH (needs a password)", Category: catTarget},
		&cli.BoolFlag{Name: "askpass", Usage: "read the password from the terminal, unechoed (from stdin's first line when it is not a terminal); -a and REDISCLI_AUTH are then ignored", Category: catTarget},
		&cli.IntFlag{Name: "dbnum", Value: 0, DefaultText: "0", Usage: "SELECT database `N` on every connection", Category: catTarget},
		&cli.BoolFlag{Name: "3", Usage: "RESP3: start every connection with HELLO 3", Category: catTarget},
		&cli.BoolFlag{Name: "enable-tracking", Usage: "send CLIENT TRACKING on before starting", Category: catTarget},
	}, append(sentinelFlags(), tlsFlags()...)...)
}

// workloadSpec says how a command words and defaults its workload flags.
type workloadSpec struct {
	tests    string // default -t ("" lists nothing: run's "whole suite")
	testsUse string
	keysUse  string
	dataUse  string
	pipeline int // default -P; 0: the command has no -P
	pipeUse  string
}

// workloadFlags are the flags that shape what is sent: -t, -d, -r, the
// mixes and templates, and -P where a closed loop batches.
func workloadFlags(s workloadSpec) []cli.Flag {
	fl := []cli.Flag{
		&cli.StringFlag{Name: "t", Value: s.tests, Usage: s.testsUse, Category: catWorkload},
		&cli.StringFlag{Name: "d", Value: "3", Usage: s.dataUse, Category: catWorkload},
		&cli.StringFlag{Name: "r", Usage: s.keysUse, DefaultText: "off", Category: catWorkload},
		&cli.StringFlag{Name: "mix", Usage: "send a weighted mix as one test: `NAME:WEIGHT,...` of catalogue tests (get, set, incr, ...) or named --command templates", Category: catWorkload},
		&cli.StringFlag{Name: "ratio", Usage: "memtier's `SET:GET` ratio, the same as --mix set:SET,get:GET", Category: catWorkload},
		&cli.StringSliceFlag{Name: "command", Usage: "a custom command `[NAME=]TEMPLATE` (repeatable); placeholders __rand_int__, __key__, __data__, {tag}", Category: catWorkload},
		&cli.StringSliceFlag{Name: "command-weight", Usage: "`WEIGHT` of each --command, in order (repeatable; default 1)", Category: catWorkload},
		&cli.StringFlag{Name: "commands", Usage: "read templates from `FILE`: one per line, optional leading weight, # comments", Category: catWorkload},
		&cli.StringFlag{Name: "key-dist", Value: "uniform", Usage: "`DIST` of __key__ and __rand_int__ over -r keys: uniform, sequential, zipf:S, gaussian:MEAN,SD", Category: catWorkload},
	}
	if s.pipeline > 0 {
		fl = append(fl, &cli.IntFlag{Name: "P", Value: s.pipeline, Usage: s.pipeUse, Category: catLoad})
	}
	return fl
}

// outputSpec words a command's output flags.
type outputSpec struct {
	quietUse, errorsUse, sloUse, jsonUse string
	// latency adds --hdr-log, --hdr-spectrum and --percentiles (the
	// commands that measure latency: run, bench, compare).
	latency bool
}

// outputFlags are -q, --json, -e, --slo, --slo-window, --interval and
// the metrics flags, and with spec.latency --hdr-log, --hdr-spectrum and
// --percentiles.
func outputFlags(s outputSpec) []cli.Flag {
	fl := []cli.Flag{
		&cli.BoolFlag{Name: "q", Usage: s.quietUse, Category: catOutput},
		&cli.StringFlag{Name: "json", Usage: s.jsonUse, Category: catOutput},
		&cli.BoolFlag{Name: "e", Usage: s.errorsUse, Category: catOutput},
		&cli.StringFlag{Name: "slo", Usage: s.sloUse, Category: catTrust},
		&cli.DurationFlag{Name: "slo-window", Usage: "require every window of `DURATION` (a multiple of --interval) to meet --slo, not just the whole test; each clause reports its worst window", Category: catTrust},
		&cli.DurationFlag{Name: "interval", Value: scheduler.DefaultInterval, Usage: fmt.Sprintf("cut each test into intervals of `DURATION` (at least %s) with their own counts and histograms (JSON intervals)", minInterval), Category: catOutput},
	}
	fl = append(fl, metricsFlags()...)
	if s.latency {
		fl = append(fl,
			&cli.StringFlag{Name: "hdr-log", Usage: "write the HdrHistogram interval log (.hlog, a histogram per interval and tag) to `FILE` (- for stdout)", Category: catOutput},
			&cli.StringFlag{Name: "hdr-spectrum", Usage: "write the latency's percentile distribution (.hgrm, ms) to `FILE`, further tests to FILE.<test>.hgrm (- for stdout)", Category: catOutput},
			&cli.StringFlag{Name: "percentiles", Usage: "`LIST` of percentiles the text prints, e.g. 50,90,99,99.9,99.99", DefaultText: "each format's own", Category: catOutput},
		)
	}
	return fl
}

// minInterval is the shortest --interval: each interval costs about a
// kilobyte per series, so 10 ms over an hour would hold 360,000 of them.
const minInterval = 10 * time.Millisecond

// outputConfig is what the output flags asked for.
type outputConfig struct {
	quiet    bool
	jsonPath string
	showErrs bool
	slo      verdict.SLO
	interval time.Duration
	// files are the result files (--json, --hdr-log, --hdr-spectrum).
	files resultFiles
	// text holds --percentiles.
	text report.TextOptions
}

func parseOutput(c *cli.Context) (outputConfig, error) {
	o := outputConfig{quiet: c.Bool("q"), jsonPath: c.String("json"), showErrs: c.Bool("e"), interval: c.Duration("interval")}
	if o.interval < minInterval {
		return o, usageErrorf("--interval %s: want at least %s", o.interval, minInterval)
	}
	if c.IsSet("slo") {
		var err error
		if o.slo, err = verdict.ParseSLO(c.String("slo")); err != nil {
			return o, usageErrorf("%v", err)
		}
		if c.Command != nil {
			if err := o.slo.For(c.Command.Name); err != nil {
				return o, err
			}
		}
	}
	if c.IsSet("slo-window") {
		w := c.Duration("slo-window")
		switch {
		case !c.IsSet("slo"):
			return o, usageErrorf("--slo-window %s needs --slo", w)
		case w <= 0 || w%o.interval != 0:
			return o, usageErrorf("--slo-window %s: want a positive multiple of --interval %s", w, o.interval)
		}
		o.slo.Window = w
	}
	o.files = resultFiles{JSON: o.jsonPath, HdrLog: c.String("hdr-log"), HdrSpectrum: c.String("hdr-spectrum")}
	if err := o.files.Check(); err != nil {
		return o, err
	}
	if c.IsSet("percentiles") {
		ps, err := report.ParsePercentiles(c.String("percentiles"))
		if err != nil {
			return o, usageErrorf("%v", err)
		}
		o.text.Percentiles = ps
	}
	return o, nil
}

// Load flags shared by several commands.

func connsFlag(def int) cli.Flag {
	return &cli.IntFlag{Name: "c", Value: def, Usage: fmt.Sprintf("`N` connections (at most %d)", maxConnections), Category: catLoad}
}

func seedFlag(use string) cli.Flag {
	return &cli.Uint64Flag{Name: "seed", Usage: "`N`: " + use, DefaultText: "from the clock", Category: catLoad}
}

func arrivalFlag() cli.Flag {
	return &cli.StringFlag{Name: "arrival", Value: "uniform", Usage: "`PROCESS` of the open loop's arrivals: uniform or poisson", Category: catLoad}
}

// openTailFlags are the flags an open-load command ends with: --lag-limit
// (its effect in lagUse; none without), --pacing, the measurement flags,
// --ci (with ci), the embedded target's and --cluster.
func openTailFlags(lagUse string, ci bool) []cli.Flag {
	var f []cli.Flag
	if lagUse != "" {
		f = append(f, lagLimitFlag(lagUse))
	}
	f = append(append(f, pacingFlag()), measureFlags()...)
	if ci {
		f = append(f, ciFlag())
	}
	return append(append(f, embeddedFlags()...), clusterFlags()...)
}

func pacingFlag() cli.Flag {
	return &cli.StringFlag{Name: "pacing", Value: "auto", Usage: "`MODE`: auto (a wake quantum of --lag-limit less 400 µs: the least CPU that keeps the send lag within it), precise (a wake at every intended instant, the most CPU) or coarse (0.8 ms wake quantum)", Category: catTrust}
}

func lagLimitFlag(use string) cli.Flag {
	return &cli.DurationFlag{Name: "lag-limit", Usage: "send-lag p99 `DURATION` above which " + use, DefaultText: "1ms auto and precise, 2ms coarse; at most a tenth of the tightest --slo latency bound", Category: catTrust}
}

func drainFlag() cli.Flag {
	return &cli.DurationFlag{Name: "drain", Value: scheduler.DefaultDrain, Usage: "wait `DURATION` for replies after the timeline ends; the rest are timeouts", Category: catLoad}
}

func timeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "timeout", Usage: "per request: a connection whose oldest request waited longer than `DURATION` is closed, its requests count as timeouts, and it is replaced", DefaultText: "off", Category: catLoad}
}

func maxBufferFlag() cli.Flag {
	return &cli.StringFlag{Name: "max-buffer", Value: bytesize.Format(conn.DefaultMaxBuffer), Usage: "per connection, at most `BYTES` written and not yet sent (2MiB, 512KiB, 4MB, 123); a command larger than it is refused", Category: catTuning}
}

func maxInflightFlag() cli.Flag {
	return &cli.IntFlag{Name: "max-inflight", Value: conn.DefaultMaxInflight, Usage: "cap of `N` commands in flight per connection; a send it delays still counts from its intended time", Category: catTuning}
}

// openLoadFlags are the limits of run's, sweep's and replay's open loop,
// which parseOpenLoad reads: --max-inflight, --max-buffer, --drain,
// --timeout and --max-backlog (backlogUse words it).
func openLoadFlags(backlogUse string) []cli.Flag {
	return []cli.Flag{maxInflightFlag(), maxBufferFlag(), drainFlag(), timeoutFlag(),
		&cli.DurationFlag{Name: "max-backlog", Value: openloop.DefaultMaxBacklog, Usage: backlogUse, Category: catTuning}}
}

// parseConns reads -c.
func parseConns(c *cli.Context) (int, error) {
	n := c.Int("c")
	if n < 1 || n > maxConnections {
		return 0, usageErrorf("-c %d: want 1 to %d connections", n, maxConnections)
	}
	return n, nil
}

// parsePipeline reads -P: at least 1 (bench clamps instead, as
// redis-benchmark does).
func parsePipeline(c *cli.Context) (int, error) {
	p := c.Int("P")
	if p < 1 {
		return 0, usageErrorf("-P %d: want at least 1 request per batch", p)
	}
	return p, nil
}

// parseSeed reads --seed, or draws one from the clock. A drawn seed is
// set as if it had been given, so that every later reader of --seed (the
// embedded target's faults) uses the same one and --seed repeats the run.
func parseSeed(c *cli.Context) uint64 {
	if c.IsSet("seed") {
		return c.Uint64("seed")
	}
	seed := uint64(time.Now().UnixNano())
	_ = c.Set("seed", strconv.FormatUint(seed, 10))
	return seed
}

// parseOpenLoad reads the open loop's load flags (run, replay, sweep and
// compare): of --arrival, --max-inflight and --max-backlog, those the
// command defines.
func parseOpenLoad(c *cli.Context, conns int, slo verdict.SLO) (experiment.OpenLoad, error) {
	f := experiment.OpenLoadFlags{MaxBuffer: c.String("max-buffer"), Pacing: c.String("pacing"), Drain: c.Duration("drain"),
		Timeout: c.Duration("timeout"), TimeoutSet: c.IsSet("timeout"), Conns: conns, SLO: slo}
	if defines(c, "arrival") {
		f.Arrival = new(c.String("arrival"))
	}
	if defines(c, "max-inflight") {
		f.MaxInflight = new(c.Int("max-inflight"))
	}
	if c.IsSet("lag-limit") {
		f.LagLimit = new(c.Duration("lag-limit"))
	}
	if defines(c, "max-backlog") {
		f.Backlog = new(c.Duration("max-backlog"))
	}
	if defines(c, "read-from") {
		f.ReadFrom = new(c.String("read-from"))
		if c.Bool("embedded") && *f.ReadFrom != "primary" {
			return experiment.OpenLoad{}, usageErrorf("--read-from %s: the embedded target is a single server, without replicas", *f.ReadFrom)
		}
	}
	if err := topologyChecks(c); err != nil {
		return experiment.OpenLoad{}, err
	}
	if defines(c, "visibility") && c.IsSet("visibility") {
		f.Visibility = new(c.String("visibility"))
	}
	if defines(c, "wait") && c.IsSet("wait") {
		f.Wait = new(c.String("wait"))
	}
	return f.Parse()
}

// given is a string flag's value, nil when it was not given: a package's
// Flags take an optional flag so.
func given(c *cli.Context, name string) *string {
	if !c.IsSet(name) {
		return nil
	}
	return new(c.String(name))
}

// defines reports whether c's command has the flag name.
func defines(c *cli.Context, name string) bool {
	if c.Command == nil {
		return false
	}
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// exitCodeHelp is the exit-code table every help ends with.
const exitCodeHelp = `EXIT CODES (outcomes as the verdict line, stderr and the JSON's "outcome" name them;
the first that applies, in this order: 130, 1, 4, 3):
   0    pass: the result stands (with --slo: met on the delivered load)
   1    error: the run failed (no server, every connection lost or nothing completed: verdict target_lost)
   2    usage: a bad flag or argument, one line on stderr
   3    fail: a test missed its --slo, and it is the server's doing (the server's evidence is quoted;
        diff, ab: the candidate is surely worse beyond a --max-regression allowance)
   4    inconclusive: the client's own lateness or host could explain a miss, or the load was
        under-delivered; stderr names the figure (see --decide-within; diff, ab: the gate cannot tell)
   130  interrupted by Ctrl-C, SIGTERM or SIGHUP (partial results are printed and written)
   131  SIGQUIT: every goroutine's stack on stderr
`

// helpPage lays out every command's help: the flags by category in
// helpCategories' order (target, load, workload, output, ...) with their
// placeholders and defaults, the examples and the exit codes.
var helpPage = clihelp.Page{Program: "pacer", Categories: helpCategories, Footer: exitCodeHelp}

// withHelp sets a command's help (helpPage) with its examples, caches its
// flags' names, and makes a flag urfave/cli cannot parse a usage error
// (exit 2).
func withHelp(cmd *cli.Command, examples ...string) *cli.Command {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = onUsageError
	}
	// urfave/cli recomputes a flag's names with a regexp about F² times an
	// invocation (see clihelp.CacheNames); the help rendered next reads
	// them too.
	clihelp.CacheNames([]*cli.Command{cmd})
	return helpPage.Set(cmd, examples...)
}

// onUsageError makes urfave/cli's parse errors usage errors.
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return usageErrorf("%v", err)
}

// appHelpTemplate is `pacer --help` (and `pacer -h`, `pacer help`): the
// commands, two examples and the exit codes. For app.go to set as
// cli.App.CustomAppHelpTemplate.
const appHelpTemplate = `NAME:
   {{.Name}} - {{.Usage}}

USAGE:
   pacer COMMAND [flags] [args]    (pacer help COMMAND, or pacer COMMAND --help, lists its flags)

COMMANDS:{{range .VisibleCommands}}
   {{printf "%-9s" .Name}}{{.Usage}}{{end}}

EXAMPLES:
   pacer compare --embedded --stall 100ms --every 1s
   pacer run -h HOST --rate 20k --duration 30s -t get -r 100000 --slo 'p99<2ms'

VERSION:
   {{.Version}}

` + exitCodeHelp
