// Package merge makes one document of the shards of a run (pacer merge):
// each test's counts, histograms, intervals, nodes, events, messages and
// servers added up exactly (verdict.Merged judges the sums: the caller's step), and
// documents that are not shards of one run refused (report.ErrMerge).
package merge
