// Package reporttest holds the tests and documents that the tests of
// the packages above report (report/text, report/merge, report/peers,
// report/plots) build through report's exported API, and results judged
// through verdict as a run judges them. It imports report and verdict,
// so neither report's nor verdict's own tests can import it: their
// plain results come from resulttest.
package reporttest
