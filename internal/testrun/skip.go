package testrun

import "testing"

// SkipShort skips a test under -short (the inner loop); why says what
// makes it long: seconds of real runs, a server or a cluster it starts, a
// binary it builds. .ci/run runs it.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
}

// SkipRace skips a test that measures what the race detector distorts
// (timing, allocations, pooled memory); why says what it would measure.
// .ci/run runs every such test again in a pass without -race, and
// cmd/pacer's TestRaceSkippedTestsRunInCI fails when one is not named
// there.
func SkipRace(t testing.TB, why string) {
	t.Helper()
	if RaceEnabled {
		t.Skip("race detector: " + why)
	}
}
