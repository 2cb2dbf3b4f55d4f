//go:build race

package main

// raceEnabled: the race detector slows every goroutine several times, so
// latencies measured under it say nothing about the server.
const raceEnabled = true
