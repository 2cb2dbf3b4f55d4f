//go:build race

package scheduler

// raceEnabled: the race detector slows recording tenfold; tests that
// only measure memory with millions of values skip under it.
const raceEnabled = true
