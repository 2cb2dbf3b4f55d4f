// Command pacer is a load generator for Redis and every RESP server. See
// the README for the commands, flags and output formats.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

func main() {
	// PACER_CPUPROFILE=file writes a CPU profile of the whole run, for
	// performance work (go tool pprof).
	if path := os.Getenv("PACER_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pacer: %v\n", err)
			os.Exit(exitFailed)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "pacer: %v\n", err)
			os.Exit(exitFailed)
		}
		code := Main(os.Args, os.Stdout, os.Stderr)
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(Main(os.Args, os.Stdout, os.Stderr))
}
