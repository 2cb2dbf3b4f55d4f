// Package messages measures a message bus on the open model: Redis's
// Pub/Sub (PUBLISH and SPUBLISH to SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE)
// and Streams (XADD to consumer groups' XREADGROUP). It owns what both
// have in common and nothing of how either is driven: the payload every
// message carries, the accounting of sequence numbers per receiver and
// channel (delivered, lost, duplicated, out of order), the recorders of
// deliveries with their interval series, and the facts a run returns
// (Result), which package report turns into a test.
//
// # The payload
//
// A publisher sends each message on the timeline whatever its receivers
// do, and writes into the message its run, its sequence number and its
// intended instant (Header, a fixed binary layout at the payload's start,
// padded to the payload size), so a receiver needs nothing else to
// measure it:
//
//	delivery latency = kernel receive time of the delivery − intended publish instant
//	delivery service = kernel receive time of the delivery − instant the publisher queued it
//	receive lag      = instant the receiver read it − kernel receive time
//
// A delivery is stamped with the kernel's receive timestamp of the read
// that brought its last byte (conn.Times), as a reply is.
//
// # Sequence numbers
//
// Message i goes to channel i mod K with ordinal i / K there, so each
// channel's ordinals run 0, 1, 2… A receiver keeps, per channel it
// listens to, the next ordinal it expects and a bounded window of those
// after it (Track): memory does not grow with the run, and a message
// arriving after a later one is out of order, one arriving twice a
// duplicate. What was expected and never arrived is lost: the messages
// the publishers queued on the channel (Sent) less the distinct ones
// delivered.
//
// It sits beside the transport (conn) and the histograms (histo), below
// the report and the metrics; the drivers that publish and subscribe use
// it.
package messages
