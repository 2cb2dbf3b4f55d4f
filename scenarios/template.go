// Package scenarios decides what pacer sends: redis-benchmark's test
// catalogue, custom command templates compiled once into pre-encoded RESP
// with placeholder slots, and the random numbers that fill them.
//
// The hot path is Template.Fill: it overwrites the 12 bytes of every
// __rand_int__ slot in place and returns the same buffer, with no
// allocation and no formatting library.
package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// RandPlaceholder is redis-benchmark's placeholder. It is exactly 12 bytes,
// the width of the zero-padded number that replaces it, so encoded lengths
// never change.
const RandPlaceholder = "__rand_int__"

// DataPlaceholder in a custom command is replaced, once at compile time, by
// a value of the configured data size.
const DataPlaceholder = "__data__"

// Options shape how templates are compiled and filled.
type Options struct {
	// DataSize is the size in bytes of __data__ and of the catalogue's values.
	DataSize int
	// Keyspace is redis-benchmark's -r: __rand_int__ becomes a random number
	// in [0, Keyspace).
	Keyspace uint64
	// Random is set when -r was given. Without it __rand_int__ is sent
	// literally, as redis-benchmark does; with it and a zero Keyspace every
	// slot is 000000000000 (redis-benchmark's -r 0). A Keyspace above zero
	// implies Random.
	Random bool
}

func (o Options) random() bool { return o.Random || o.Keyspace > 0 }

// Template is one command, encoded once.
type Template struct {
	name  string
	buf   []byte
	slots []int // offsets of the 12-byte __rand_int__ slots in buf
	keys  uint64
}

// Compile encodes args as a RESP command. __data__ arguments are expanded;
// __rand_int__ occurrences become slots when o.Keyspace > 0.
func Compile(name string, args []string, o Options) (*Template, error) {
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	data := Data(o.DataSize)
	var buf []byte
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(args)), 10)
	buf = append(buf, '\r', '\n')
	for _, a := range args {
		arg := []byte(a)
		if bytes.Contains(arg, []byte(DataPlaceholder)) {
			arg = bytes.ReplaceAll(arg, []byte(DataPlaceholder), data)
		}
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(arg)), 10)
		buf = append(buf, '\r', '\n')
		buf = append(buf, arg...)
		buf = append(buf, '\r', '\n')
	}
	return fromBytes(name, buf, o), nil
}

// Inline returns a template for a command in the inline protocol (a plain
// line, as PING_INLINE sends).
func Inline(name, line string, o Options) *Template {
	return fromBytes(name, []byte(line+"\r\n"), o)
}

func fromBytes(name string, buf []byte, o Options) *Template {
	t := &Template{name: name, buf: buf, keys: o.Keyspace}
	if o.random() {
		for i := 0; ; {
			j := bytes.Index(buf[i:], []byte(RandPlaceholder))
			if j < 0 {
				break
			}
			t.slots = append(t.slots, i+j)
			i += j + len(RandPlaceholder)
		}
	}
	return t
}

// Name is the test title (redis-benchmark's, or the command line).
func (t *Template) Name() string { return t.name }

// Bytes returns the encoded command as last filled.
func (t *Template) Bytes() []byte { return t.buf }

// Len is the encoded size in bytes.
func (t *Template) Len() int { return len(t.buf) }

// Slots returns the number of __rand_int__ slots filled per command.
func (t *Template) Slots() int { return len(t.slots) }

// Fill draws a fresh number for every slot, writes it in place as 12
// zero-padded digits and returns the command bytes (the template's own
// buffer: valid until the next Fill).
func (t *Template) Fill(rng *Rand) []byte {
	for _, off := range t.slots {
		putDigits12(t.buf[off:off+12], rng.Below(t.keys))
	}
	return t.buf
}

// digitPairs holds "00" to "99", so digits are written two at a time.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// putDigits12 writes v mod 10^12 as 12 zero-padded decimal digits.
func putDigits12(dst []byte, v uint64) {
	_ = dst[11]
	for i := 10; i >= 0; i -= 2 {
		d := v % 100 * 2
		dst[i], dst[i+1] = digitPairs[d], digitPairs[d+1]
		v /= 100
	}
}

// Data returns a value of n bytes with the same content redis-benchmark
// sends: a fixed pseudo-random sequence of printable characters.
func Data(n int) []byte {
	b := make([]byte, n)
	state := uint32(1234)
	for i := range b {
		state = state*1103515245 + 12345
		b[i] = byte('0' + (state>>16)&63)
	}
	return b
}

// Title joins a custom command's arguments the way redis-benchmark titles it.
func Title(args []string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a)
	}
	return b.String()
}

// CheckKeyspace validates a keyspace size.
func CheckKeyspace(n int64) error {
	if n < 0 {
		return fmt.Errorf("keyspace -r %d: must not be negative", n)
	}
	return nil
}

// Stream yields one template's commands, each with fresh random slots. It
// is what a sender pulls from; not safe for concurrent use.
type Stream struct {
	t   *Template
	rng *Rand
}

// NewStream returns a stream over t seeded with seed.
func NewStream(t *Template, seed uint64) *Stream { return &Stream{t: t, rng: NewRand(seed)} }

// Next returns the next command and its kind (always 0 for one template).
// The bytes are valid until the next call.
func (s *Stream) Next() ([]byte, uint32) { return s.t.Fill(s.rng), 0 }
