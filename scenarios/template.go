// Package scenarios decides what pacer sends: redis-benchmark's test
// catalogue, custom command templates compiled once into pre-encoded RESP
// with placeholder slots, weighted mixes of them, and the distributions
// of keys and value sizes that fill the slots. It also reads recorded
// traces (Redis MONITOR output, pacer's JSON lines) for `pacer replay`,
// checks them against a safety Policy and sums them up (trace*.go).
//
// The hot path is Stream.Next: it picks a template of the mix, overwrites
// its 12-byte number slots in place (or, when value sizes vary, assembles
// the command into a reused buffer) and returns the bytes, with no
// allocation and no formatting library.
//
// It is at the bottom of pacer's layering and imports none of pacer's other
// packages: a Stream is what the drivers of package scheduler pull from
// (it satisfies scheduler.Commands), and the trace readers feed package
// replay.
package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	// Cluster inserts redis-benchmark's ":{tag}" into the catalogue tests'
	// keys (bench --cluster), for the sender to fill per node.
	Cluster bool
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
// offsets within them, or (data set, lit empty) a value of drawn size.
type piece struct {
	lit   []byte
	slots []slot
	data  bool
}

// arg is one argument of a template with variable-size values.
type arg struct {
	pieces   []piece
	fixedLen int // bytes of its literal pieces
	ndata    int // number of data pieces
	encoded  []byte
	slots    []slot // for an arg without data: slots within encoded
}

// Template is one command, encoded once. It holds the command's bytes (the
// largest one's pieces when value sizes vary) and nothing more: the value
// pattern of variable sizes is shared by every template, and the buffer a
// variable command is assembled in belongs to the Gen that fills it.
type Template struct {
	name string
	// Fixed layout (every size known): buf holds the whole command and the
	// number slots are overwritten in place.
	buf   []byte
	slots []slot
	// Variable layout (value sizes vary): args assembled into out.
	args   []arg
	header []byte
	out    []byte // the last assembled command (in a Gen's buffer)
	data   []byte // the shared value pattern, of the largest size
	maxLen int    // the largest command's encoded size
	sizes  Sizes
	hasKey bool
	keys   uint64 // keyspace
}

// Compile encodes args as a RESP command, with slots for the placeholders.
// An argument that would exceed MaxValueSize bytes is an error: no RESP
// server accepts it (Redis's proto-max-bulk-len).
func Compile(name string, args []string, o Options) (*Template, error) {
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	t := &Template{name: name, sizes: o.sizes(), keys: o.Keyspace}
	random := o.random()
	size, fixed := t.sizes.Fixed()
	t.args = make([]arg, len(args))
	variable := false
	for i, a := range args {
		ar := parseArg(a, random)
		if n := ar.fixedLen + ar.ndata*t.sizes.Max(); n > MaxValueSize {
			return nil, fmt.Errorf("argument %d is %d bytes with values of %d, above the %d a RESP server accepts", i+1, n, t.sizes.Max(), MaxValueSize)
		}
		for _, p := range ar.pieces {
			for _, s := range p.slots {
				t.hasKey = t.hasKey || s.kind == slotKey
			}
		}
		variable = variable || ar.ndata > 0
		t.args[i] = ar
	}
	t.maxLen = commandLen(t.args, t.sizes.Max())
	if fixed || !variable {
		t.flatten(size)
		return t, nil
	}
	t.header = appendHeader(make([]byte, 0, headerLen(len(args))), len(args))
	t.data = valuePattern(t.sizes.Max())
	for i := range t.args {
		if a := &t.args[i]; a.ndata == 0 {
			a.encoded, a.slots = encodeArg(a.pieces, a.fixedLen, 0, nil)
			a.pieces = nil
		}
	}
	return t, nil
}

// parseArg splits an argument into literal pieces with slots and data
// pieces. Literal bytes are copied in runs, not byte by byte.
func parseArg(a string, random bool) arg {
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
		case strings.HasPrefix(a, RandPlaceholder) && random:
			cur.slots = append(cur.slots, slot{off: len(cur.lit), kind: slotRand})
			cur.lit = append(cur.lit, RandPlaceholder...)
			a = a[len(RandPlaceholder):]
		case strings.HasPrefix(a, KeyPlaceholder):
			cur.slots = append(cur.slots, slot{off: len(cur.lit), kind: slotKey})
			cur.lit = append(cur.lit, "000000000000"...)
			a = a[len(KeyPlaceholder):]
		case strings.HasPrefix(a, DataPlaceholder):
			a = a[len(DataPlaceholder):]
			flush()
			ar.pieces = append(ar.pieces, piece{data: true})
			ar.ndata++
		default:
			// Every placeholder starts with "__": copy up to the next one.
			n := strings.Index(a[1:], "__") + 1
			if n == 0 {
				n = len(a)
			}
			cur.lit = append(cur.lit, a[:n]...)
			a = a[n:]
		}
	}
	flush()
	return ar
}

// bulkLen is the encoded size of a bulk string of n bytes: "$n\r\n" n "\r\n".
func bulkLen(n int) int { return 1 + digits(n) + 2 + n + 2 }

// headerLen is the size of an array header "*n\r\n".
func headerLen(n int) int { return 1 + digits(n) + 2 }

// digits is the number of decimal digits of n >= 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

func appendHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// commandLen is the encoded size of args with every value of size.
func commandLen(args []arg, size int) int {
	n := headerLen(len(args))
	for _, a := range args {
		n += bulkLen(a.fixedLen + a.ndata*size)
	}
	return n
}

// encodeArg appends one argument as a bulk string with values of size
// (from data) to dst, allocated to fit when nil, and returns it with the
// slots' offsets within it.
func encodeArg(pieces []piece, fixedLen, size int, data []byte) ([]byte, []slot) {
	n, ns := fixedLen, 0
	for _, p := range pieces {
		if p.data {
			n += size
		}
		ns += len(p.slots)
	}
	out := make([]byte, 0, bulkLen(n))
	var slots []slot
	if ns > 0 {
		slots = make([]slot, 0, ns)
	}
	out = append(out, '$')
	out = strconv.AppendInt(out, int64(n), 10)
	out = append(out, '\r', '\n')
	for _, p := range pieces {
		if p.data {
			out = append(out, data[:size]...)
			continue
		}
		for _, s := range p.slots {
			slots = append(slots, slot{off: len(out) + s.off, kind: s.kind})
		}
		out = append(out, p.lit...)
	}
	return append(out, '\r', '\n'), slots
}

// flatten builds the fixed layout, values of size inlined: one allocation
// of exactly the command's size.
func (t *Template) flatten(size int) {
	ns := 0
	for _, a := range t.args {
		for _, p := range a.pieces {
			ns += len(p.slots)
		}
	}
	var data []byte
	if size > 0 {
		data = valuePattern(size)
	}
	t.buf = appendHeader(make([]byte, 0, commandLen(t.args, size)), len(t.args))
	if ns > 0 {
		t.slots = make([]slot, 0, ns)
	}
	for _, a := range t.args {
		n := a.fixedLen + a.ndata*size
		t.buf = append(t.buf, '$')
		t.buf = strconv.AppendInt(t.buf, int64(n), 10)
		t.buf = append(t.buf, '\r', '\n')
		for _, p := range a.pieces {
			if p.data {
				t.buf = append(t.buf, data[:size]...)
				continue
			}
			for _, s := range p.slots {
				t.slots = append(t.slots, slot{off: len(t.buf) + s.off, kind: s.kind})
			}
			t.buf = append(t.buf, p.lit...)
		}
		t.buf = append(t.buf, '\r', '\n')
	}
	t.args = nil
}

// valuePattern returns Data(n), shared: every template and stream reads
// the same bytes, so -d 100MB costs 100 MB once, not once per template.
// Callers must not write to it (its capacity is n, so append copies).
func valuePattern(n int) []byte {
	pattern.Lock()
	defer pattern.Unlock()
	if len(pattern.b) < n {
		pattern.b = Data(n) // holders of the shorter one keep theirs
	}
	return pattern.b[:n:n]
}

// pattern holds the longest value pattern made so far. The bytes never
// change once made (Data(n) is a prefix of Data(m) for n < m).
var pattern struct {
	sync.Mutex
	b []byte
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
// last assembled (valid until the next Fill with the same Gen).
func (t *Template) Bytes() []byte {
	if t.args != nil {
		return t.out
	}
	return t.buf
}

// Len is the encoded size in bytes: exact, of the largest values when
// sizes vary.
func (t *Template) Len() int {
	if t.args == nil {
		return len(t.buf)
	}
	return t.maxLen
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
// command's bytes, valid until the next Fill (with the same Gen, when value
// sizes vary: the command is assembled in g's buffer).
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
	out := append(g.out[:0], t.header...)
	for i := range t.args {
		a := &t.args[i]
		if a.ndata == 0 {
			base := len(out)
			out = append(out, a.encoded...)
			for _, s := range a.slots {
				putDigits12(out[base+s.off:base+s.off+12], g.number(s.kind, key))
			}
			continue
		}
		// Draw the sizes first: the length prefix comes before the bytes.
		total, drawn := a.fixedLen, g.drawn[:0]
		for _, p := range a.pieces {
			if p.data {
				n := t.sizes.Draw(g.rng)
				drawn = append(drawn, n)
				total += n
			}
		}
		g.drawn = drawn
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
	g.out, t.out = out, out
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
	// Scratch of variable-size commands, shared by the templates it
	// fills: out grows to the largest command, drawn to the most values
	// in one argument.
	out   []byte
	drawn []int
}

// newGen returns a generator seeded with seed, drawing keys from keys
// (not nil: NewMixStream chooses for a mix).
func newGen(seed uint64, keys KeyDist) *Gen { return &Gen{rng: NewRand(seed), keys: keys} }

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
	return &Stream{mix: Single(t), gen: newGen(seed, Uniform{N: t.keys})}
}

// NewMixStream returns a stream over a mix, with keys from keys (nil:
// uniform over the largest keyspace of the mix's templates).
func NewMixStream(m *Mix, seed uint64, keys KeyDist) *Stream {
	if keys == nil {
		var n uint64
		for _, e := range m.entries {
			n = max(n, e.t.keys)
		}
		keys = Uniform{N: n}
	}
	return &Stream{mix: m, gen: newGen(seed, keys)}
}

// Next returns the next command and its kind (its index in the mix). The
// bytes are valid until the next call.
func (s *Stream) Next() ([]byte, uint32) {
	i := s.mix.pick(s.gen.rng)
	return s.mix.entries[i].t.Fill(s.gen), uint32(i)
}

// errNoKeyspace reports __key__ without -r.
var errNoKeyspace = fmt.Errorf("%s needs a keyspace: give -r N", KeyPlaceholder)
