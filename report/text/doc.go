// Package text writes results for a human: the summary of a test (Text)
// and its quiet line (Quiet), the lines about a running test
// (ProgressLine, ConnectionsLine, JoinLine), the per-node, server, TLS,
// event and replication sections, the messages of a pubsub or stream
// test, a sweep's step table, pacer report's re-rendering and side by
// side tables, and a pacer.diff/v1 document's text. It reads report's
// tests and documents and writes words to an io.Writer; what a test is
// and how it was judged are report's.
package text
