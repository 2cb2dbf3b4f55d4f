// Package scenarios decides what pacer sends: redis-benchmark's test
// catalogue, custom command templates compiled once into pre-encoded RESP
// with placeholder slots, weighted mixes of them, and the distributions
// of keys and value sizes that fill the slots.
//
// The hot path is Stream.Next: it picks a template of the mix, overwrites
// its 12-byte number slots in place (or, when value sizes vary, assembles
// the command into a reused buffer) and returns the bytes, with no
// allocation and no formatting library.
package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Placeholders in commands.
const (
	// RandPlaceholder is redis-benchmark's: each occurrence becomes a fresh
	// 12-digit zero-padded number from the key distribution. It is exactly
	// 12 bytes, so encoded lengths never change.
	RandPlaceholder = "__rand_int__"
	// KeyPlaceholder becomes the command's key number, 12 digits like
	// __rand_int__: one draw per command, shared by its occurrences.
	KeyPlaceholder = "__key__"
	// DataPlaceholder becomes a value of the configured size.
	DataPlaceholder = "__data__"
	// TagPlaceholder is redis-benchmark's cluster hash tag, "{tag}": sent
	// literally until cluster mode fills it per node.
	TagPlaceholder = "{tag}"
)

// Options shape how templates are compiled and filled.
type Options struct {
	// Sizes is the distribution of __data__ sizes. Zero: 3 bytes.
	Sizes Sizes
	// Keyspace is redis-benchmark's -r: slots become numbers in
	// [0, Keyspace).
	Keyspace uint64
	// Random is set when -r was given. Without it __rand_int__ is sent
	// literally, as redis-benchmark does; with it and a zero Keyspace every
	// slot is 000000000000 (redis-benchmark's -r 0). A Keyspace above zero
	// implies Random.
	Random bool
}

func (o Options) random() bool { return o.Random || o.Keyspace > 0 }

func (o Options) sizes() Sizes {
	if o.Sizes.max == 0 {
		return FixedSize(3)
	}
	return o.Sizes
}

type slotKind uint8

const (
	slotRand slotKind = iota // a fresh number per slot
	slotKey                  // the command's key number
)

type slot struct {
	off  int
	kind slotKind
}

// piece is part of an argument: literal bytes with number slots at
// offsets within them, or a value of drawn size.
type piece struct {
	lit   []byte
	slots []slot
	data  bool
}

// arg is one argument of a template with variable-size values.
type arg struct {
	pieces   []piece
	fixedLen int  // bytes of its literal pieces
	variable bool // has a data piece
	encoded  []byte
	slots    []slot // for a fixed arg: slots within encoded
}

// Template is one command, encoded once.
type Template struct {
	name string
	// Fixed layout (every size known): buf holds the whole command and the
	// number slots are overwritten in place.
	buf   []byte
	slots []slot
	// Variable layout (value sizes vary): args assembled into out.
	args   []arg
	header []byte
	out    []byte
	data   []byte // the value pattern, of the largest size
	drawn  []int  // scratch: an argument's drawn value sizes
	sizes  Sizes
	hasKey bool
	keys   uint64 // keyspace
}

// Compile encodes args as a RESP command, with slots for the placeholders.
func Compile(name string, args []string, o Options) (*Template, error) {
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	t := &Template{name: name, sizes: o.sizes(), keys: o.Keyspace}
	t.data = Data(t.sizes.Max())
	random := o.random()
	size, fixed := t.sizes.Fixed()
	for _, a := range args {
		ar := compileArg([]byte(a), random, fixed, t.data[:size])
		for _, p := range ar.pieces {
			for _, s := range p.slots {
				if s.kind == slotKey {
					t.hasKey = true
				}
			}
		}
		t.args = append(t.args, ar)
		nd := 0
		for _, p := range ar.pieces {
			if p.data {
				nd++
			}
		}
		t.drawn = make([]int, 0, max(cap(t.drawn), nd))
	}
	t.header = append([]byte{'*'}, strconv.Itoa(len(args))...)
	t.header = append(t.header, '\r', '\n')
	if fixed || !t.variable() {
		t.flatten()
	}
	return t, nil
}

// compileArg splits an argument into pieces. With fixed sizes, data is
// inlined as a literal.
func compileArg(a []byte, random, fixedSize bool, fixedData []byte) arg {
	var ar arg
	var cur piece
	flush := func() {
		if len(cur.lit) > 0 || len(cur.slots) > 0 {
			ar.pieces = append(ar.pieces, cur)
			ar.fixedLen += len(cur.lit)
		}
		cur = piece{}
	}
	for len(a) > 0 {
		switch {
		case bytes.HasPrefix(a, []byte(RandPlaceholder)) && random:
			cur.slots = append(cur.slots, slot{off: len(cur.lit), kind: slotRand})
			cur.lit = append(cur.lit, RandPlaceholder...)
			a = a[len(RandPlaceholder):]
		case bytes.HasPrefix(a, []byte(KeyPlaceholder)):
			cur.slots = append(cur.slots, slot{off: len(cur.lit), kind: slotKey})
			cur.lit = append(cur.lit, "000000000000"...)
			a = a[len(KeyPlaceholder):]
		case bytes.HasPrefix(a, []byte(DataPlaceholder)):
			a = a[len(DataPlaceholder):]
			if fixedSize {
				cur.lit = append(cur.lit, fixedData...)
				continue
			}
			flush()
			ar.pieces = append(ar.pieces, piece{data: true})
			ar.variable = true
		default:
			cur.lit = append(cur.lit, a[0])
			a = a[1:]
		}
	}
	flush()
	if !ar.variable {
		// Pre-encode: "$len\r\n" literal "\r\n", slots shifted.
		ar.encoded = append([]byte{'$'}, strconv.Itoa(ar.fixedLen)...)
		ar.encoded = append(ar.encoded, '\r', '\n')
		for _, p := range ar.pieces {
			base := len(ar.encoded)
			ar.encoded = append(ar.encoded, p.lit...)
			for _, s := range p.slots {
				ar.slots = append(ar.slots, slot{off: base + s.off, kind: s.kind})
			}
		}
		ar.encoded = append(ar.encoded, '\r', '\n')
	}
	return ar
}

func (t *Template) variable() bool {
	for _, a := range t.args {
		if a.variable {
			return true
		}
	}
	return false
}

// flatten builds the fixed layout.
func (t *Template) flatten() {
	t.buf = append(t.buf[:0], t.header...)
	for _, a := range t.args {
		base := len(t.buf)
		t.buf = append(t.buf, a.encoded...)
		for _, s := range a.slots {
			t.slots = append(t.slots, slot{off: base + s.off, kind: s.kind})
		}
	}
	t.args = nil
}

// Inline returns a template for a command in the inline protocol (a plain
// line, as PING_INLINE sends).
func Inline(name, line string, o Options) *Template {
	t := &Template{name: name, sizes: o.sizes(), keys: o.Keyspace, buf: []byte(line + "\r\n")}
	if o.random() {
		for i := 0; ; {
			j := bytes.Index(t.buf[i:], []byte(RandPlaceholder))
			if j < 0 {
				break
			}
			t.slots = append(t.slots, slot{off: i + j, kind: slotRand})
			i += j + len(RandPlaceholder)
		}
	}
	return t
}

// Name is the test title (redis-benchmark's, or the command line).
func (t *Template) Name() string { return t.name }

// Bytes returns the encoded command as last filled (fixed layout) or as
// last assembled.
func (t *Template) Bytes() []byte {
	if t.args != nil {
		return t.out
	}
	return t.buf
}

// Len is the encoded size in bytes (of the largest values, when sizes vary).
func (t *Template) Len() int {
	if t.args == nil {
		return len(t.buf)
	}
	n := len(t.header)
	for _, a := range t.args {
		if !a.variable {
			n += len(a.encoded)
			continue
		}
		n += a.fixedLen + 6 + len(strconv.Itoa(t.sizes.Max()))
		for _, p := range a.pieces {
			if p.data {
				n += t.sizes.Max()
			}
		}
	}
	return n
}

// Slots returns the number of number slots (rand and key) per command.
func (t *Template) Slots() int {
	if t.args == nil {
		return len(t.slots)
	}
	n := 0
	for _, a := range t.args {
		n += len(a.slots)
		for _, p := range a.pieces {
			n += len(p.slots)
		}
	}
	return n
}

// Fill draws fresh numbers (and value sizes) with g and returns the
// command's bytes, valid until the next Fill.
func (t *Template) Fill(g *Gen) []byte {
	var key uint64
	if t.hasKey {
		key = g.key()
	}
	if t.args == nil {
		for _, s := range t.slots {
			putDigits12(t.buf[s.off:s.off+12], g.number(s.kind, key))
		}
		return t.buf
	}
	out := append(t.out[:0], t.header...)
	for i := range t.args {
		a := &t.args[i]
		if !a.variable {
			base := len(out)
			out = append(out, a.encoded...)
			for _, s := range a.slots {
				putDigits12(out[base+s.off:base+s.off+12], g.number(s.kind, key))
			}
			continue
		}
		// Draw the sizes first: the length prefix comes before the bytes.
		total, drawn := a.fixedLen, t.drawn[:0]
		for _, p := range a.pieces {
			if p.data {
				n := t.sizes.Draw(g.rng)
				drawn = append(drawn, n)
				total += n
			}
		}
		out = append(out, '$')
		out = strconv.AppendInt(out, int64(total), 10)
		out = append(out, '\r', '\n')
		for _, p := range a.pieces {
			if p.data {
				out, drawn = append(out, t.data[:drawn[0]]...), drawn[1:]
				continue
			}
			base := len(out)
			out = append(out, p.lit...)
			for _, s := range p.slots {
				putDigits12(out[base+s.off:base+s.off+12], g.number(s.kind, key))
			}
		}
		out = append(out, '\r', '\n')
	}
	t.out = out
	return out
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

// Gen is the per-stream state that fills slots: the random generator, the
// key distribution and the keyspace. Not safe for concurrent use.
type Gen struct {
	rng  *Rand
	keys KeyDist
}

// NewGen returns a generator seeded with seed, drawing keys from keys (nil:
// uniform over the templates' keyspace).
func NewGen(seed uint64, keys KeyDist) *Gen { return &Gen{rng: NewRand(seed), keys: keys} }

func (g *Gen) key() uint64 { return g.keys.Draw(g.rng) }

func (g *Gen) number(kind slotKind, key uint64) uint64 {
	if kind == slotKey {
		return key
	}
	return g.keys.Draw(g.rng)
}

// Stream yields commands from a mix of templates, each with fresh slots.
// It is what a sender pulls from; not safe for concurrent use.
type Stream struct {
	mix *Mix
	gen *Gen
}

// NewStream returns a stream of one template seeded with seed; keys are
// uniform over the template's keyspace (redis-benchmark's -r).
func NewStream(t *Template, seed uint64) *Stream {
	return &Stream{mix: Single(t), gen: NewGen(seed, Uniform{N: t.keys})}
}

// NewMixStream returns a stream over a mix, with keys from keys.
func NewMixStream(m *Mix, seed uint64, keys KeyDist) *Stream {
	return &Stream{mix: m, gen: NewGen(seed, keys)}
}

// Next returns the next command and its kind (its index in the mix). The
// bytes are valid until the next call.
func (s *Stream) Next() ([]byte, uint32) {
	i := s.mix.pick(s.gen.rng)
	return s.mix.entries[i].t.Fill(s.gen), uint32(i)
}

// errNoKeyspace reports __key__ without -r.
var errNoKeyspace = fmt.Errorf("%s needs a keyspace: give -r N", KeyPlaceholder)
