package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/watch"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/verdict"
)

// runEnv is what every load command sets up around its runs, in one
// place: the metrics endpoint, the embedded target, the target and its
// TLS handshakes, the server's identity, the shard and the planned start,
// the result document and its files, and where text goes. The command's
// own code parses its flags, runs its experiment through exp and picks
// its output.
type runEnv struct {
	c              *cli.Context
	ctx            context.Context
	stdout, stderr io.Writer
	// out is where the human text goes: stderr when stdout carries a
	// result file.
	out      io.Writer
	target   *endpoint.Target
	server   *endpoint.Server
	metrics  *liveMetrics
	embedded *embedded.Server
	place    *scheduler.Placement
	files    resultFiles
	quiet    bool
	// hiccups is the hiccup meter's interval as the scheduler takes it
	// (0: its default, negative: off).
	hiccups time.Duration
	doc     *report.Document
	stop    []func()
}

// envConfig is what a command's flags said that the environment needs.
type envConfig struct {
	target  *endpoint.Target
	place   *scheduler.Placement
	files   resultFiles
	quiet   bool
	mode    string // the document's: open, closed or mixed
	banner  bool   // say where the embedded target listens
	showErr bool   // --errors: print error replies
}

// openEnv starts what a load command needs before it sends: the metrics
// endpoint (a bad address is a usage error), then the embedded target
// (which the target then points at). close stops them.
func openEnv(c *cli.Context, ec envConfig) (*runEnv, error) {
	e := &runEnv{c: c, ctx: c.Context, stdout: c.App.Writer, stderr: c.App.ErrWriter, target: ec.target,
		place: ec.place, files: ec.files, quiet: ec.quiet}
	e.out = e.stdout
	var err error
	if e.target.Options.ReceiveClock, e.hiccups, err = measureOptions(c); err != nil {
		return nil, err
	}
	if e.files.Stdout() {
		e.out = e.stderr // stdout carries the JSON (or the log, or the spectrum)
	}
	if e.metrics, err = startMetrics(c); err != nil {
		return nil, err
	}
	e.stop = append(e.stop, func() { closeMetrics(e.ctx, e.stderr, e.metrics) })
	var banner io.Writer
	if ec.banner {
		banner = e.stderr
	}
	emb, stopEmbedded, err := startEmbedded(c, &e.target.Options, banner)
	if err != nil {
		e.close()
		return nil, err
	}
	e.embedded = emb
	e.stop = append(e.stop, stopEmbedded)
	announceMetrics(e.stderr, e.metrics)
	scopeMetrics(e.metrics, e.target.Options, e.place)
	e.target.Say = e.say
	if e.target.Sentinels != nil {
		if err := e.target.FollowSentinels(e.ctx); err != nil {
			e.close()
			return nil, failed(err)
		}
		e.stop = append(e.stop, e.target.Close)
	}
	e.target.WatchTLS()
	e.doc = report.NewDocument(ec.mode, version, e.place)
	return e, nil
}

// close stops the embedded target and the metrics endpoint.
func (e *runEnv) close() {
	for i := len(e.stop) - 1; i >= 0; i-- {
		e.stop[i]()
	}
}

// say prints a note on stderr, passwords masked.
func (e *runEnv) say(s string) {
	fmt.Fprintln(e.stderr, oneLine(secretsFrom(e.ctx).Redact(s)))
}

// askServer asks the server who it is (outside any measured window) and
// records it in the document.
func (e *runEnv) askServer() {
	e.server = endpoint.AskServer(e.ctx, e.target.Options, e.say, secretsFrom(e.ctx).Redact)
	e.doc.Server = e.server.ID
}

// noteConfig says on stderr that the server refused CONFIG GET (bench
// says it in redis-benchmark's words instead).
func (e *runEnv) noteConfig() {
	if r := e.server.ConfigRefused(); r != "" {
		fmt.Fprintf(e.stderr, "pacer: the server refuses CONFIG GET (%s): its settings are unknown\n", oneLine(r))
	}
}

// faults describes the embedded target's faults ("" when the target is
// not embedded).
func (e *runEnv) faults() string {
	if e.embedded == nil {
		return ""
	}
	return e.embedded.Faults().String()
}

// experiment is the environment the experiments run in: this command's
// target, server, placement, live views and redaction.
func (e *runEnv) experiment(showErrs bool) *experiment.Env {
	x := &experiment.Env{
		Target: e.target, Server: e.server, Place: e.place,
		Watch: experiment.Watchers(e.stderr, e.quiet, func(w experiment.Watched, also func(*scheduler.Live)) (func(*scheduler.Live), func()) {
			return e.metrics.Hook(w.Test, map[string]string{"open": metrics.ModeOpen, "closed": metrics.ModeClosed}[w.Mode], also)
		}),
		Redact:         func(r *scheduler.Result) { redactResult(e.ctx, r) },
		Say:            e.say,
		Quiet:          e.quiet,
		HiccupInterval: e.hiccups,
		InProcess:      e.embedded != nil,
		WatchMessages:  e.metrics.WatchMessages,
	}
	if showErrs {
		x.OnErrorReply = watch.Errors(e.stderr)
	}
	return x
}

// writeFiles writes the result files from the document, with its
// outcome (the worst of its tests', unless the command set its own, as a
// sweep does; none for a document cut short).
func (e *runEnv) writeFiles() error {
	if !e.files.Any() {
		return nil
	}
	if e.doc.Outcome == "" && !e.doc.Interrupted && len(e.doc.Tests) > 0 {
		o, _ := verdict.OfDocument(e.doc)
		e.doc.Outcome = o.String()
	}
	echoSentinels(e.doc.Config, e.target)
	return e.files.Write(e.stdout, e.doc)
}

// judged takes a test's judgement into end and says on stderr, in the
// outcome's word, why the test did not pass (verdict.Ending.Judged):
// "pacer: GET: error: target lost: …", "pacer: GET: inconclusive: …",
// "pacer: GET: fail: …".
func judged(stderr io.Writer, end *verdict.Ending, t *report.Test, j verdict.Judgement) {
	if l := end.Judged(t.Name, j); l != "" {
		fmt.Fprintf(stderr, "pacer: %s\n", oneLine(l))
	}
}

// exit returns the exit end decides (verdict.Ending.Code), the document
// interrupted or the context done counting as an interruption: 130 with
// the error that came with it on stderr, the error that stopped the work
// itself (its own exit: a usage error's 2), or the outcomes' code.
func (e *runEnv) exit(end *verdict.Ending) error {
	end.Interrupted = end.Interrupted || e.doc.Interrupted || e.ctx.Err() != nil
	switch code := end.Code(); {
	case end.Interrupted:
		if end.Err != nil {
			fmt.Fprintf(e.stderr, "pacer: %s\n", oneLine(message(end.Err)))
		}
		return exitCode(exitInterrupted)
	case end.Err != nil:
		return end.Err
	case code != exitOK:
		return exitCode(code)
	}
	return nil
}
