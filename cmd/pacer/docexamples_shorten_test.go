package main

// How the docs' examples are shortened for the walk, and how long each one
// promises its reader to take (estimate).

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/experiment/sweep"
)

// Caps of shortened: each example runs every flag as written, for
// half a second instead of the seconds its reader would wait.
const (
	shortDuration = 500 * time.Millisecond // --duration
	shortStep     = 300 * time.Millisecond // --step-duration, each --stages stage
	shortSettle   = 200 * time.Millisecond // --settle, --warmup
	shortRequests = 2000                   // -n of run and bench
	shortKeys     = 10000                  // -r of fill, which writes every key
	shortDecide   = 2 * time.Second        // --decide-within
	shortRounds   = 2                      // --rounds of ab
)

// shortened returns an example's arguments with its lengths capped (see
// the short* constants): the walk checks that each example works as
// written, and estimate checks what its reader waits for, without
// waiting for it.
func shortened(args []string) []string {
	out := slices.Clone(args)
	// Left to its default length, a run or compare lasts seconds and a
	// throttled bench 100,000 requests: the caps are given.
	switch {
	case (out[0] == "run" || out[0] == "compare" || out[0] == "pubsub" || out[0] == "stream") && !hasArg(out, "--duration") && !hasArg(out, "-n") && !hasArg(out, "--stages"):
		out = slices.Insert(out, 1, "--duration", shortDuration.String())
	case out[0] == "bench" && hasArg(out, "--rate") && !hasArg(out, "-n"):
		out = slices.Insert(out, 1, "-n", strconv.Itoa(shortRequests))
	case out[0] == "ab":
		if !hasArg(out, "--rounds") {
			out = slices.Insert(out, 1, "--rounds", strconv.Itoa(shortRounds))
		}
		if !hasArg(out, "--round-duration") {
			out = slices.Insert(out, 1, "--round-duration", shortDuration.String())
		}
	}
	capDuration := func(v string, limit time.Duration) string {
		if d, err := time.ParseDuration(v); err == nil && d > limit {
			return limit.String()
		}
		return v
	}
	capInt := func(v string, limit int) string {
		if n, err := strconv.Atoi(v); err == nil && n > limit {
			return strconv.Itoa(limit)
		}
		return v
	}
	for i := 1; i < len(out); i++ {
		name, value, inline := strings.Cut(out[i], "=")
		if !inline {
			if i+1 >= len(out) || out[i] == "--" {
				break
			}
			value = out[i+1]
		}
		switch {
		case name == "--duration":
			value = capDuration(value, shortDuration)
		case name == "--step-duration":
			value = capDuration(value, shortStep)
		case name == "--decide-within":
			value = capDuration(value, shortDecide)
		case name == "--settle" || name == "--warmup":
			value = capDuration(value, shortSettle)
		case name == "--round-duration":
			value = capDuration(value, shortDuration)
		case name == "--rounds" && out[0] == "ab":
			value = capInt(value, shortRounds)
		case name == "--stages":
			stages := strings.Split(value, ",")
			for k, st := range stages {
				if d, rate, ok := strings.Cut(st, ":"); ok {
					stages[k] = capDuration(d, shortStep) + ":" + rate
				}
			}
			value = strings.Join(stages, ",")
		case name == "-n" && (out[0] == "run" || out[0] == "bench" || out[0] == "pubsub" || out[0] == "stream"):
			value = capInt(value, shortRequests)
		case name == "-r" && out[0] == "fill":
			value = capInt(value, shortKeys)
		default:
			continue
		}
		if inline {
			out[i] = name + "=" + value
		} else {
			out[i+1] = value
			i++
		}
	}
	return out
}

// estimate is roughly how long an example runs: as written, to keep the
// docs' promise; shortened, to skip the slow ones under -short.
func estimate(args []string) time.Duration {
	if len(args) == 0 {
		return 0
	}
	d := 10 * time.Second
	if args[0] == "compare" {
		d = 5 * time.Second
	}
	decide := time.Duration(0)
	for i, a := range args {
		if a == "--duration" && i+1 < len(args) {
			if v, err := time.ParseDuration(args[i+1]); err == nil {
				d = v
			}
		}
		if a == "--decide-within" && i+1 < len(args) {
			decide, _ = time.ParseDuration(args[i+1])
		}
	}
	d = max(d, decide) // a test may go on to its budget
	switch args[0] {
	case "sweep":
		return estimateSweep(args)
	case "ab":
		return estimateAB(args)
	case "report", "merge", "diff":
		return time.Second
	case "replay":
		// The docs' trace spans 3 s; --dry-run only reads it.
		if hasArg(args, "--dry-run") {
			return time.Second
		}
		return 4 * time.Second
	case "run":
		if hasArg(args, "-n") && !hasArg(args, "--duration") {
			return readmeShortLimit + time.Second // depends on the rate: call it slow
		}
		return d
	case "compare":
		return 4 * d
	case "pubsub":
		if hasArg(args, "--closed") {
			return 2 * d
		}
		return d
	case "bench":
		// About 100k requests a second on a small machine.
		n, tests := 100000, 21
		for i, a := range args {
			switch {
			case a == "-n" && i+1 < len(args):
				n, _ = strconv.Atoi(args[i+1])
			case a == "-t" && i+1 < len(args):
				tests = strings.Count(args[i+1], ",") + 1
			case !strings.HasPrefix(a, "-") && i > 0 && !strings.HasPrefix(args[i-1], "-"):
				tests = 1 // a command
			}
		}
		return time.Duration(n*tests) * 10 * time.Microsecond
	}
	return readmeShortLimit + time.Second // fill moves real data
}

// estimateAB is ab's rounds × two runs × their length (round and warm-up).
func estimateAB(args []string) time.Duration {
	rounds, round, warmup := 6, 5*time.Second, time.Second
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--rounds":
			rounds, _ = strconv.Atoi(args[i+1])
		case "--round-duration":
			round, _ = time.ParseDuration(args[i+1])
		case "--warmup":
			warmup, _ = time.ParseDuration(args[i+1])
		}
	}
	return time.Duration(2*rounds) * (round + warmup)
}

// estimateSweep is a sweep's steps × their length (step and settle), × --repeat.
func estimateSweep(args []string) time.Duration {
	val := func(name, def string) string {
		for i, a := range args {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
		return def
	}
	step, _ := time.ParseDuration(val("--step-duration", "5s"))
	settle, _ := time.ParseDuration(val("--settle", "1s"))
	repeat, _ := strconv.Atoi(val("--repeat", "1"))
	points := sweep.DefaultMaxSteps // --search's --max-steps
	switch {
	case hasArg(args, "--closed"):
		settle = 0
		points = (strings.Count(val("-c", "50"), ",") + 1) * (strings.Count(val("-P", "1"), ",") + 1)
	case hasArg(args, "--rates"):
		points = strings.Count(val("--rates", ""), ",") + 1
	}
	return time.Duration(points*max(repeat, 1)) * (step + settle)
}
