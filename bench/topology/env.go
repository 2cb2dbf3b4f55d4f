package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// env is what internal/redistest needs of a test, for a program: the
// servers it starts register their Stop with Cleanup, and a Fatal (a
// server that would not start) stops everything started so far and ends
// the program. The embedded testing.TB stays nil: redistest calls only
// the methods defined here (Helper, Fatal, Fatalf, Skip, Skipf, TempDir,
// Cleanup), and any other would be a bug to see at once.
type env struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	stopped  bool
}

// current is the env of the scenario under way, which a signal stops.
var (
	currentMu sync.Mutex
	current   *env
)

// newEnv returns the env of a scenario; stop it when the scenario ends.
func newEnv() *env {
	e := &env{}
	currentMu.Lock()
	current = e
	currentMu.Unlock()
	return e
}

func (e *env) Helper()                           {}
func (e *env) Fatal(args ...any)                 { e.fail(fmt.Sprint(args...)) }
func (e *env) Fatalf(format string, args ...any) { e.fail(fmt.Sprintf(format, args...)) }
func (e *env) Skip(args ...any)                  { e.fail("cannot run: " + fmt.Sprint(args...)) }
func (e *env) Skipf(format string, args ...any) {
	e.fail("cannot run: " + fmt.Sprintf(format, args...))
}
func (e *env) Name() string { return "topology" }

// TempDir makes a directory removed when the env stops.
func (e *env) TempDir() string {
	d, err := os.MkdirTemp("", "pacer-topology")
	if err != nil {
		e.fail(err.Error())
	}
	e.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Cleanup registers f, run (last registered first) when the env stops.
func (e *env) Cleanup(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		f()
		return
	}
	e.cleanups = append(e.cleanups, f)
}

// stop runs the cleanups: every server and process of the scenario is
// stopped, its directories removed. Idempotent.
func (e *env) stop() {
	e.mu.Lock()
	fs := e.cleanups
	e.cleanups, e.stopped = nil, true
	e.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (e *env) fail(msg string) {
	fmt.Fprintln(os.Stderr, "topology:", msg)
	e.stop()
	os.Exit(1)
}

// check ends the program as Fatal does when err is set.
func (e *env) check(err error) {
	if err != nil {
		e.fail(err.Error())
	}
}

// stopOnSignal stops the scenario under way on SIGINT or SIGTERM (its
// pacer is asked to end with SIGINT first, then its servers are killed)
// and ends the program with 130.
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "topology: %v: stopping the servers\n", sig)
		currentMu.Lock()
		e := current
		currentMu.Unlock()
		if e != nil {
			e.stop()
		}
		os.Exit(130)
	}()
}

// outcome is how a pacer command ended.
type outcome struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
	killed         bool // it outlasted its bound and was killed
}

// proc is a pacer command under way.
type proc struct {
	cmd     *exec.Cmd
	out     strings.Builder
	errs    strings.Builder
	started time.Time
	done    chan outcome
}

// startPacer starts the pacer binary with args, bounded by limit: past
// it, the command gets SIGINT (it writes its partial result) and 10 s
// later SIGKILL. The env stops it the same way.
func (e *env) startPacer(bin string, limit time.Duration, args ...string) *proc {
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan outcome, 1)}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errs
	// Its own process group: a Ctrl-C reaches it through stopOnSignal, in
	// order, not at once with the servers' teardown.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.started = time.Now()
	e.check(p.cmd.Start())
	ctx, cancel := context.WithCancel(context.Background())
	killed := make(chan bool, 1)
	go func() {
		select {
		case <-ctx.Done():
			killed <- false
			return
		case <-time.After(limit):
		}
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
		}
		killed <- true
	}()
	exited := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(exited)
		cancel()
		o := outcome{code: p.cmd.ProcessState.ExitCode(), stdout: p.out.String(), stderr: p.errs.String(),
			elapsed: time.Since(p.started), killed: <-killed}
		p.done <- o
	}()
	e.Cleanup(func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-exited
		}
	})
	return p
}

// wait returns how the command ended.
func (p *proc) wait() outcome { return <-p.done }

// sleepUntil sleeps until d after t.
func sleepUntil(t time.Time, d time.Duration) {
	if w := time.Until(t.Add(d)); w > 0 {
		time.Sleep(w)
	}
}
