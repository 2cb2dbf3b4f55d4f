// Package stats holds the statistics pacer's confidence intervals and
// comparisons rest on, in one place so that every command says "how sure"
// the same way: the interval of a percentile over repeated runs, the block
// bootstrap over one run's intervals, the change between a baseline and a
// candidate with its interval and its word (worse, better, same, cannot
// tell), the error budget of a rule that looks at its data more than
// once, and Mann–Kendall's test for a rising trend in a series (a
// sweep's queue, a stream's consumer lag).
//
// Where the variance comes from decides the method. On a real machine the
// spread between runs dominates: two identical runs differ by several per
// cent at p90, far more than the requests of one run vary among
// themselves, so an interval that treats every request as independent is
// many times too narrow. With repeated runs the intervals come from the
// runs' own spread (Student's t on the logarithms of the per-run figures:
// latencies are positive and their changes multiplicative). With one run
// they come from a block bootstrap over its intervals, since stalls cluster
// in time; such an interval says nothing of the next run's spread, and its
// Method says so.
//
// Every method is checked by simulation against known distributions in
// this package's tests (coverage of the 95% interval, false alarms of the
// comparison); the figures are in the tests and in docs/diff.md.
//
// The package is pure: no clock, no I/O, no randomness but a seeded
// generator, so the same data give the same interval.
package stats
