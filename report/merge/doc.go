// Package merge makes one document of the shards of a run (pacer merge):
// each test's counts, histograms, intervals, nodes, events, messages and
// servers added up exactly, its verdict judged again on the whole, and
// documents that are not shards of one run refused (report.ErrMerge).
package merge
