package sink

import (
	"strconv"
)

// The latency truth. A load generator that sends command i with its index
// (indexedCommand) to a sink tells it which request each command is; the
// sink's own instants then say, for request i intended at intended(i),
// when it really arrived (Read) and when its reply was written (Replied):
// Replied − intended(i) is request i's true response time on loopback,
// independent of what the generator measured.

// indexDigits is the width of an indexedCommand's index.
const indexDigits = 12

// indexedCommand appends to dst the RESP command ECHO with request i's
// index as its argument (12 digits: every command has the same length),
// which the sink answers at once.
func indexedCommand(dst []byte, i uint64) []byte {
	dst = append(dst, "*2\r\n$4\r\nECHO\r\n$12\r\n"...)
	var digits [indexDigits]byte
	for k := indexDigits - 1; k >= 0; k-- {
		digits[k] = byte('0' + i%10)
		i /= 10
	}
	dst = append(dst, digits[:]...)
	return append(dst, "\r\n"...)
}

// Indexed is a stream of commands (scheduler.Commands) that sends request
// i as indexedCommand i, so that the sink knows which request each
// command is. It reuses one buffer: a command is valid until the next.
type Indexed struct {
	next uint64
	buf  []byte
}

// Next returns the next request's command, and 0 for its kind.
func (c *Indexed) Next() ([]byte, uint32) {
	c.buf = indexedCommand(c.buf[:0], c.next)
	c.next++
	return c.buf, 0
}

// Index reads the request index of a record of an indexedCommand; false
// for any other command.
func (r Record) Index() (uint64, bool) {
	if len(r.Argv) != 2 || string(r.Argv[0]) != "ECHO" || len(r.Argv[1]) != indexDigits {
		return 0, false
	}
	i, err := strconv.ParseUint(string(r.Argv[1]), 10, 64)
	return i, err == nil
}

// Truth is, per request index, what the sink saw of it: when its command
// reached the sink's kernel (Arrived: the read instant where the socket
// gave no timestamp), and when the sink wrote the reply (0: not seen).
type Truth struct {
	Arrived, Replied []int64
}

// TruthOf lines records of IndexedCommands up by index, for n requests.
func TruthOf(records []Record, n int) Truth {
	t := Truth{Arrived: make([]int64, n), Replied: make([]int64, n)}
	for _, r := range records {
		i, ok := r.Index()
		if !ok || i >= uint64(n) {
			continue
		}
		t.Arrived[i], t.Replied[i] = r.Read, r.Replied
		if r.Kernel != 0 {
			t.Arrived[i] = r.Kernel
		}
	}
	return t
}
