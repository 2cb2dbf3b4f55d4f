// Package report is the result store: the pacer.result/v1 document and
// its tests (Document, Test and their parts: latencies, intervals, nodes,
// events, messages, the server's side), made from a run's result
// (NewTest) or read back (ReadDocument, ReadInput), checked and bounded,
// their histograms added (MergeLatencies), and written as output files
// (JSON, HdrHistogram logs, spectra). Its tests carry the verdict the
// trust rule gave them; words for a human are report/text's, pictures
// report/plots', the other tools' formats report/peers' and the merging
// of a run's shards report/merge's. It reads scheduler results and histo
// histograms; it never touches sockets.
package report
