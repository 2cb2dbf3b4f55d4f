//go:build !race

package testrun

// RaceEnabled is set when the tests run under the race detector.
const RaceEnabled = false
