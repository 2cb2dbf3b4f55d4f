//go:build !race

package report

// raceEnabled is set when the tests run under the race detector, whose
// instrumentation allocates beside the code measured.
const raceEnabled = false
