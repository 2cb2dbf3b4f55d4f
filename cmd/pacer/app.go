package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes, the same for every command.
const (
	exitOK          = 0
	exitFailed      = 1   // the run failed: no server, lost connections, server errors (bench)
	exitUsage       = 2   // bad flags or arguments
	exitSLO         = 3   // an SLO was violated
	exitUntrusted   = 4   // the result cannot be trusted (the generator fell behind)
	exitInterrupted = 130 // stopped by Ctrl-C
)

// exitError carries an exit code up to Main.
type exitError struct {
	code int
	err  error
	// raw prints the message as is, without the "pacer: " prefix, where
	// redis-benchmark's exact words are part of the contract.
	raw bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// worst returns the code that matters more when several apply:
// interrupted, then failed, then untrusted, then SLO violated, then ok.
func worst(a, b int) int {
	rank := map[int]int{exitOK: 0, exitSLO: 1, exitUntrusted: 2, exitFailed: 3, exitUsage: 4, exitInterrupted: 5}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// exitCode carries an exit code with nothing more to print.
func exitCode(code int) error { return &exitError{code: code} }

func init() {
	// redis-benchmark uses -h for the host, so help is --help only.
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Usage: "show help"}
}

// Main runs the CLI with args (args[0] is the program name) and returns the
// exit code. It never calls os.Exit, so tests run it in-process.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := interruptContext(stderr)
	defer stop()
	app := newApp(stdout, stderr)
	if len(args) < 2 {
		_ = app.Run([]string{"pacer", "--help"})
		return exitUsage
	}
	if name := args[1]; !strings.HasPrefix(name, "-") && app.Command(name) == nil {
		fmt.Fprintf(stderr, "pacer: unknown command %q (see pacer --help)\n", name)
		return exitUsage
	}
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		switch {
		case ee.err == nil:
		case ee.raw:
			fmt.Fprintf(stderr, "%s\n", oneLine(ee.err.Error()))
		default:
			fmt.Fprintf(stderr, "pacer: %s\n", oneLine(ee.err.Error()))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "pacer: %s\n", oneLine(err.Error()))
	return exitFailed
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// interruptContext is cancelled by the first SIGINT or SIGTERM, so the run
// drains and reports; a second signal exits at once.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			fmt.Fprintln(stderr, "pacer: interrupted (Ctrl-C again to exit now)")
			cancel()
		case <-done:
			return
		}
		select {
		case <-ch:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "pacer",
		Usage:     "measure Redis latency at a target request rate, without coordinated omission",
		Version:   version,
		Writer:    stdout,
		ErrWriter: stderr,
		// Keep urfave/cli from calling os.Exit: Main maps errors to codes.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err)
		},
		Commands: []*cli.Command{
			runCommand(),
			benchCommand(),
			compareCommand(),
			fillCommand(),
			serveCommand(),
		},
		HideHelpCommand: true,
		// --command templates contain commas (MSET a 1,b 2): no splitting.
		DisableSliceFlagSeparator: true,
	}
	return app
}
