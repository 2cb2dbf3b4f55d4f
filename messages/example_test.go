package messages_test

import (
	"fmt"

	"github.com/pacer-load/pacer/messages"
)

// A Track counts one receiver's deliveries on one channel by their
// ordinals: what came twice, what came after a later one, and, given how
// many were sent, what never came.
func ExampleTrack() {
	var tr messages.Track
	for _, ord := range []uint64{0, 1, 3, 2, 3, 5} {
		tr.Add(ord)
	}
	fmt.Printf("distinct %d, duplicates %d, reordered %d, lost of 7: %d\n", tr.Distinct, tr.Duplicates, tr.Reordered, tr.Lost(7))
	// Output: distinct 5, duplicates 1, reordered 1, lost of 7: 2
}

// Every payload starts with a header that tells a receiver which run sent
// it, its place on the publisher's timeline and when it was meant to go.
func ExampleParseHeader() {
	p := messages.Payload(48)
	messages.Header{Run: 7, Seq: 41, Intended: 1_000_000, Sent: 1_000_250}.Put(p)
	h, ok := messages.ParseHeader(p)
	channel, ord := messages.Ordinal(h.Seq, 4)
	fmt.Println(ok, h.Seq, h.Sent-h.Intended, channel, ord)
	// Output: true 41 250 1 10
}
