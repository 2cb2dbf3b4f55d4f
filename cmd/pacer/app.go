package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/clihelp"
	"github.com/pacer-load/pacer/internal/guarded"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/internal/secret"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/verdict"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit codes, the same for every command: the verdict package's, whose
// outcomes (pass, fail, inconclusive, error) are the words every output
// uses for them.
const (
	exitOK          = verdict.ExitPass         // pass
	exitFailed      = verdict.ExitError        // error: no server, lost connections, server errors (bench)
	exitUsage       = verdict.ExitUsage        // bad flags or arguments
	exitSLO         = verdict.ExitFail         // fail: an SLO the server missed
	exitUntrusted   = verdict.ExitInconclusive // inconclusive: the client's lateness or host could explain it
	exitInterrupted = verdict.ExitInterrupted  // stopped by Ctrl-C, SIGTERM or SIGHUP
	// exitQuit (131, after SIGQUIT's goroutine dump) is in signals.go.
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
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = cliError{s: message(err), err: err}
		}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// message is err's message as the command line says it: the settings its
// packages name by their Go names (usage.OptionError) spelt as flags.
func message(err error) string { return usage.Render(err, flagName) }

// flagName spells a setting's command-line name as a flag: -c, --rate.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// cliError is an error whose message is already the command line's.
type cliError struct {
	s   string
	err error
}

func (e cliError) Error() string { return e.s }
func (e cliError) Unwrap() error { return e.err }

func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// exitCode carries an exit code with nothing more to print.
func exitCode(code int) error { return &exitError{code: code} }

func init() {
	// redis-benchmark uses -h for the host, so help is --help only. urfave/cli
	// keeps this in a package variable: it is set here, once, before any app
	// is built, and never by a command.
	cli.HelpFlag = sharedFlag{&cli.BoolFlag{Name: "help", Usage: "show help"}}
	cli.VersionFlag = sharedFlag{cli.VersionFlag.(*cli.BoolFlag)}
}

// sharedFlag is a package-wide flag of urfave/cli (HelpFlag, VersionFlag)
// that every app and command adds: its Apply works on a copy, because
// BoolFlag.Apply records its default in the flag itself, and commands run
// side by side in one process (the tests) would write it at once.
type sharedFlag struct{ *cli.BoolFlag }

// Apply defines the flag in set from a copy of it.
func (f sharedFlag) Apply(set *flag.FlagSet) error {
	c := *f.BoolFlag
	return c.Apply(set)
}

// Main runs the CLI with args (args[0] is the program name) and returns the
// exit code. It never calls os.Exit (except for a second interrupt signal
// and SIGQUIT, see signals.go), so tests run it in-process.
//
// Everything it prints goes through the output layer (output.go): writes to
// a closed stdout or stderr never stop a command or change its exit code,
// and nothing on stderr shows a password (secrets.go).
func Main(args []string, stdout, stderr io.Writer) int {
	return mainWith(context.Background(), os.Stdin, args, stdout, stderr)
}

// mainWith is Main with the standard input (bench -x reads it) and a parent
// context given: cancelling parent is a first Ctrl-C, without the message.
// The CLI fuzz target drives serve, bench -l and the interrupt paths
// through it without signalling its own process.
func mainWith(parent context.Context, stdin io.Reader, args []string, stdout, stderr io.Writer) int {
	sec := secret.Find(args, os.Getenv)
	out := guarded.New(stdout, "stdout", nil)
	// Whatever reaches stderr, from any source, is escaped for the
	// terminal: only line breaks, tabs and the progress line's own \r and
	// ESC [ K pass as they are.
	errw := guarded.New(stderr, "stderr", func(s string) string { return safetext.Terminal(sec.Redact(s)) })
	defer noteLostOutput(out, errw)
	ctx, stop := watchSignals(parent, errw)
	defer stop()
	code := run(withSecrets(ctx, sec), args, stdin, out, errw)
	// After the run, and not for a usage error, whose contract is one line.
	if sec.OnCommandLine && code != exitUsage {
		fmt.Fprintln(errw, passwordWarning)
	}
	if ctx.Err() != nil && code != exitOK {
		// A run cut short by a signal fails in whatever way it noticed
		// (a cancelled dial, say): interrupted is what it was.
		code = verdict.WorseCode(code, exitInterrupted)
	}
	return code
}

// filesCommands are the commands whose arguments are files: their flags may
// come before or after them (clihelp.FlagsFirst). diff reads its own, a
// "--" separating its sides.
var filesCommands = map[string]bool{"replay": true, "report": true, "merge": true}

// run runs the app and turns its error into an exit code, printing the
// error's one line on stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	app.Reader = stdin
	if len(args) < 2 {
		// A usage error, so one line (the overview is pacer --help).
		var names []string
		for _, c := range app.Commands {
			names = append(names, c.Name)
		}
		fmt.Fprintf(stderr, "pacer: no command: give one of %s (see pacer --help)\n", strings.Join(names, ", "))
		return exitUsage
	}
	args = clihelp.Args(args)
	if name := args[1]; !strings.HasPrefix(name, "-") && app.Command(name) == nil {
		fmt.Fprintf(stderr, "pacer: unknown command %q (see pacer --help)\n", name)
		return exitUsage
	}
	if cmd := app.Command(args[1]); cmd != nil && filesCommands[cmd.Name] {
		args = append(args[:2:2], clihelp.FlagsFirst(cmd.Flags, args[2:])...)
	}
	if cmd := app.Command(args[1]); cmd != nil && clihelp.HostTakesFlag(cmd.Flags, args[2:]) {
		fmt.Fprintln(stderr, "pacer: -h takes a host; help is --help")
		return exitUsage
	}
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	var be *endpoint.BenchError
	switch {
	case usage.Is(err):
		fmt.Fprintf(stderr, "pacer: %s\n", oneLine(message(err)))
		return exitUsage
	case errors.As(err, &be):
		// redis-benchmark's words, without pacer's prefix.
		fmt.Fprintf(stderr, "%s\n", oneLine(be.Error()))
		return exitFailed
	}
	if errors.As(err, &ee) {
		switch {
		case ee.err == nil:
		case ee.raw:
			fmt.Fprintf(stderr, "%s\n", oneLine(message(ee.err)))
		default:
			fmt.Fprintf(stderr, "pacer: %s\n", oneLine(message(ee.err)))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "pacer: %s\n", oneLine(message(err)))
	return exitFailed
}

// oneLine makes a message one line fit for a terminal: white space folded,
// control bytes and bidirectional overrides escaped (safetext.Line).
func oneLine(s string) string { return safetext.Line(s) }

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "pacer",
		Usage:     "measure Redis latency at a target request rate, without coordinated omission",
		Version:   version,
		Writer:    stdout,
		ErrWriter: stderr,
		// Keep urfave/cli from calling os.Exit: Main maps errors to codes.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Commands: []*cli.Command{
			runCommand(),
			benchCommand(),
			sweepCommand(),
			compareCommand(),
			pubsubCommand(),
			streamCommand(),
			trackingCommand(),
			abCommand(),
			replayCommand(),
			fillCommand(),
			serveCommand(),
			reportCommand(),
			diffCommand(),
			mergeCommand(),
			withHelp(&cli.Command{Name: "version", Usage: "print pacer's version (as pacer --version does)",
				Action: func(c *cli.Context) error {
					if c.Args().Len() > 0 {
						return usageErrorf("version takes no arguments, got %q", c.Args().First())
					}
					cli.ShowVersion(c)
					return nil
				}}, "pacer version"),
		},
		HideHelpCommand:       true,
		CustomAppHelpTemplate: appHelpTemplate,
		// --command templates contain commas (MSET a 1,b 2): no splitting.
		DisableSliceFlagSeparator: true,
	}
	return app
}
