package embedded

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/clock"
)

// BenchmarkBatch is the server's CPU per pipelined batch of 16 commands
// (SET and GET alternating), parsed and executed without the network.
func BenchmarkBatch(b *testing.B) {
	s := newServer(Config{}.withDefaults())
	cl := &client{srv: s, proto: 2}
	batch := []byte(strings.Repeat(encode("SET", "key:000000000001", "xxx")+encode("GET", "key:000000000001"), 8))
	var all [][]byte
	for b.Loop() {
		cl.out = cl.out[:0]
		cl.mark = clock.Now() // as the connection loop times a chunk
		buf := batch
		for len(buf) > 0 {
			var used int
			all, used, _, _ = parseCommand(buf, all[:0])
			cl.exec(all)
			buf = buf[used:]
		}
		cl.mark = 0
	}
}
