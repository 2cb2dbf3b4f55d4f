// Package conn is pacer's transport: RESP encoding and reply skipping, the
// pipelined connection with its FIFO of in-flight commands, connection
// handshake (AUTH, SELECT, HELLO, CLIENT TRACKING), pools (DialAll,
// DialSome), and TLS: the session under a connection and its
// configuration from files and cipher names (TLSFiles, TLSServerFiles).
// For the control plane only (INFO, CONFIG GET, CLUSTER SHARDS), Do and
// DoAll send a command on a connection of their own and build its reply
// as a Value; the load path never builds one. A subscribed connection's
// deliveries (ReadPush) and a stream read's entries (ReadEntries) are
// read the same way, in place: a channel, an ID and the first bytes of a
// payload are copied, the rest skipped. A Hub reads many subscribed
// connections on one goroutine, none of them waiting.
//
// It is the bottom of pacer's layering, beside scenarios and histo: the
// drivers (package scheduler) queue commands on its connections, and it
// imports neither the scheduler nor histo.
//
// A Conn has exactly one reader goroutine, which parses replies without
// building them and hands each one, with the FIFO entry it answers, to a
// Handler supplied by the caller, with the reply's instants: when the
// kernel received it (its receive timestamp, where the socket gives one:
// Linux TCP, TLS included) and when the reader had it. Whoever writes (the
// open-mode pacer, or a closed-loop driver) queues commands and flushes
// them; the connection knows nothing of histograms: the clock is injected
// and the Handler records.
package conn

import "strconv"

// AppendCommand appends args encoded as a RESP array of bulk strings.
func AppendCommand(dst []byte, args ...string) []byte { return AppendArgs(dst, args) }

// AppendArgs is AppendCommand for arguments held as strings or as byte
// slices (a trace's argv, replayed).
func AppendArgs[S ~string | ~[]byte](dst []byte, args []S) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}
