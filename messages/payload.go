package messages

import "encoding/binary"

// HeaderLen is the size of the header at the start of every payload, and
// so the smallest payload: magic (4 bytes), run (4), sequence number (8),
// intended instant (8) and queued instant (8), big-endian.
const HeaderLen = 32

// magic opens every payload pacer sends: a message without it (another
// client's, on the same channel) is foreign, never measured.
var magic = [4]byte{'p', 'c', 'r', 1}

// Header is what a message carries about itself.
type Header struct {
	// Run tells this process's messages from another's on the same
	// channels (a shard's, an earlier run's): receivers measure their own
	// run's only.
	Run uint32
	// Seq is the message's index on its publisher's timeline (a closed
	// publisher's count): channel Seq mod K, ordinal Seq / K there.
	Seq uint64
	// Intended is when the timeline wanted it published, Sent when the
	// publisher queued it (a closed publisher's send: both the same), on
	// the clock of package internal/clock.
	Intended, Sent int64
}

// Put writes h into the first HeaderLen bytes of b.
func (h Header) Put(b []byte) {
	_ = b[HeaderLen-1]
	copy(b, magic[:])
	binary.BigEndian.PutUint32(b[4:], h.Run)
	binary.BigEndian.PutUint64(b[8:], h.Seq)
	binary.BigEndian.PutUint64(b[16:], uint64(h.Intended))
	binary.BigEndian.PutUint64(b[24:], uint64(h.Sent))
}

// ParseHeader reads the header at the start of a payload; ok is false for
// a payload pacer did not write (too short, or without the magic).
func ParseHeader(b []byte) (h Header, ok bool) {
	if len(b) < HeaderLen || [4]byte(b[:4]) != magic {
		return Header{}, false
	}
	return Header{
		Run:      binary.BigEndian.Uint32(b[4:]),
		Seq:      binary.BigEndian.Uint64(b[8:]),
		Intended: int64(binary.BigEndian.Uint64(b[16:])),
		Sent:     int64(binary.BigEndian.Uint64(b[24:])),
	}, true
}

// Payload returns a payload of size bytes (at least HeaderLen): a header
// to fill in with Put, then padding.
func Payload(size int) []byte {
	b := make([]byte, max(size, HeaderLen))
	for i := HeaderLen; i < len(b); i++ {
		b[i] = 'x'
	}
	return b
}
