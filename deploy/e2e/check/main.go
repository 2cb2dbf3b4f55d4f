// Command check holds the e2e's shards and their merge to what the Job
// must reach, from the documents alone:
//
//   - the merged counts: scheduled = completed = -requests, and each the
//     sum of the shards';
//   - each shard's start: its first send (first_send_ms; in documents
//     without it, a bound from its send lag: see firstSend) within
//     -first-send of start_at. With -monitor, the server's own view too:
//     the instant redis-server received each pod's first request (MONITOR);
//   - exactness: the merged response p99 (and p99.9, max and count) are
//     those of the shards' response histograms added here, independently
//     of pacer merge, with hdrhistogram-go.
//
// Usage:
//
//	check -merged MERGED.json [-requests N] [-first-send 50ms] [-monitor FILE] SHARD.json...
//
// The MONITOR file has one line per pod, "INDEX UNIX_SECONDS.MICROS": the
// completion index (K−1) and when the server received that pod's first
// request. It prints a table and exits 1 when a bound is missed, 2 on bad
// input.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "check: %v\n", err)
	}
	os.Exit(code)
}

func run(args []string, w io.Writer) (int, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	merged := fs.String("merged", "", "the merged result (pacer merge -o)")
	requests := fs.Uint64("requests", 0, "the timeline's requests: merged scheduled and completed must equal it (0: not checked)")
	firstSend := fs.Duration("first-send", 0, "each shard's first send within this of start_at (0: not checked)")
	monitor := fs.String("monitor", "", "the server's first arrival per completion index (INDEX UNIX_SECONDS lines)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *merged == "" || fs.NArg() == 0 {
		return 2, errors.New("want -merged MERGED.json and the shards' results")
	}
	m, err := readDoc(*merged)
	if err != nil {
		return 2, err
	}
	shards := make([]doc, fs.NArg())
	for i, path := range fs.Args() {
		if shards[i], err = readDoc(path); err != nil {
			return 2, err
		}
	}
	var arrivals map[int]float64
	if *monitor != "" {
		if arrivals, err = readMonitor(*monitor); err != nil {
			return 2, err
		}
	}
	v, err := verify(m, shards, limits{requests: *requests, firstSend: *firstSend, arrivals: arrivals})
	if err != nil {
		return 2, err
	}
	fmt.Fprint(w, v.table)
	if len(v.failures) > 0 {
		for _, f := range v.failures {
			fmt.Fprintf(w, "FAIL %s\n", f)
		}
		return 1, nil
	}
	fmt.Fprintln(w, "PASS")
	return 0, nil
}
