//go:build !race

package histo

// raceEnabled: the race detector is on (sync.Pool then drops objects).
const raceEnabled = false
