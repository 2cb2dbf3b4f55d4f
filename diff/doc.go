// Package diff answers "did it get worse?" about saved results: it
// matches the tests of a baseline and a candidate (each one or several
// result files, or the two sides of an interleaved pacer ab), and for
// every matched test and figure (percentiles of the response time,
// throughput, error rate) finds the change with its 95% confidence
// interval and gives it one word: worse, better, same or cannot tell,
// with why. A regression gate (--max-regression) decides pass, fail or
// inconclusive from the same intervals.
//
// The interval's method follows where the variance comes from (package
// stats): the spread between repeated runs when a side has them, the
// rounds' paired differences for an interleaved A/B, and a block
// bootstrap over one run's intervals when each side has a single run,
// which says that the spread between runs is not in it. Each side is
// held to the trust rule's attribution: a side whose own verdict is
// generator_behind or inconclusive keeps a percentile's word only where
// its service time (the server's side) says it too, a lost target none;
// and a change that a noisy client host could account for is not the
// server's.
//
// The result is a pacer.diff/v1 document (Document), which package
// report draws as text, plots and an HTML page. The package never
// prints.
package diff
