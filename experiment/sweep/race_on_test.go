//go:build race

package sweep

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = true
