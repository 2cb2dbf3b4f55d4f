// Command pacer is a load generator for Redis and every RESP server. See
// the README for the commands, flags and output formats.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"

	"github.com/pacer-load/pacer/experiment/bench"
	"github.com/pacer-load/pacer/internal/memlimit"
)

// maxBenchThreads caps bench --threads, as redis-benchmark does.
const maxBenchThreads = bench.MaxThreads

func main() {
	// Process-wide runtime settings are made here, once, before any command
	// runs; Main, which tests call in-process, leaves them alone.
	if n := procsFor(os.Args); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	memlimit.SetRuntime() // fitMemory bounds what a run holds
	// PACER_CPUPROFILE=file writes a CPU profile of the whole run,
	// PACER_MEMPROFILE=file a heap profile at its end (what was allocated,
	// and what is still in use), and PACER_TRACE=file an execution trace,
	// for performance work (go tool pprof, go tool trace).
	stopProfile := startProfile("PACER_CPUPROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile)
	var heapTo io.Writer
	stopHeap := startProfile("PACER_MEMPROFILE", func(w io.Writer) error { heapTo = w; return nil },
		func() { _ = pprof.Lookup("allocs").WriteTo(heapTo, 0) })
	stopTrace := startProfile("PACER_TRACE", trace.Start, trace.Stop)
	code := Main(os.Args, os.Stdout, os.Stderr)
	stopTrace()
	stopHeap()
	stopProfile()
	os.Exit(code)
}

// startProfile starts a profile into the file named by the environment
// variable env, if set, and returns what stops it and closes the file.
func startProfile(env string, start func(io.Writer) error, stop func()) func() {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pacer: %s: %v\n", env, err)
		os.Exit(exitFailed)
	}
	return func() {
		stop()
		f.Close()
	}
}

// procsFor returns the GOMAXPROCS the command line wants, or 0 to keep the
// runtime's default. A GOMAXPROCS variable in the environment always wins.
func procsFor(args []string) int {
	return procsForEnv(args, os.Getenv("GOMAXPROCS"), runtime.NumCPU())
}

// procsForEnv is procsFor with the GOMAXPROCS variable (env) and the number
// of CPUs given:
//
//   - run, compare, replay, pubsub, stream, tracking and ab: one more than the CPUs, because the open loop's
//     pacer holds a scheduler slot while it sleeps in the kernel;
//   - bench: --threads N, else 1, redis-benchmark's single thread (but not
//     with --embedded: the target in the same process needs the cores;
//     and with --cluster, where redis-benchmark runs a thread per primary,
//     one more than the CPUs, as for run);
//   - everything else: the default.
func procsForEnv(args []string, env string, numCPU int) int {
	if env != "" || len(args) < 2 {
		return 0
	}
	switch args[1] {
	case "run", "compare", "replay", "pubsub", "stream", "tracking", "ab":
		return numCPU + 1
	case "bench":
		// bench's own flag definitions, so every spelling urfave/cli
		// accepts (-threads 3, --threads=3) reads the same here. A parse
		// error keeps what was read before it; the command then reports it.
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		for _, f := range benchCommand().Flags {
			_ = f.Apply(fs)
		}
		_ = fs.Parse(args[2:])
		if f := fs.Lookup("embedded"); f != nil && f.Value.String() == "true" {
			return 0
		}
		threads := 0
		if f := fs.Lookup("threads"); f != nil {
			threads, _ = strconv.Atoi(f.Value.String())
		}
		if threads > 0 {
			return min(threads, maxBenchThreads)
		}
		if f := fs.Lookup("cluster"); f != nil && f.Value.String() == "true" {
			return numCPU + 1
		}
		return 1
	}
	return 0
}
