package conn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/pacer-load/pacer/internal/rxstamp"
)

// Limits on what a server may send. They bound memory and recursion, not
// reply sizes: bulk bodies are discarded as they stream in, never buffered.
const (
	// A reader's buffer starts at readBufMin and doubles, up to
	// readBufSize, while reads fill it (the kernel had more to give); a
	// line longer than the buffer doubles it up to maxLineLen. Every
	// shrinkReads reads, a buffer past readBufMin whose fullest read in
	// that span used at most an eighth of it halves (so a load whose reads
	// vary less than fourfold keeps its buffer). Nine thousand idle
	// connections then cost 4 KiB each, not 64.
	readBufMin   = 4 << 10
	readBufSize  = 64 << 10
	shrinkReads  = 1024
	maxLineLen   = 1 << 20 // longest simple string, error or length line
	maxDepth     = 64      // nesting of aggregates
	maxBulkLen   = 1 << 40 // claimed bulk length
	maxAggregate = 1 << 40 // claimed element count
)

// ErrProtocol wraps every malformed-reply error.
var ErrProtocol = errors.New("protocol error")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// Reply describes one reply without its content: whether it is an error, and
// if so the error's first word (ERR, WRONGTYPE, MOVED, ...).
type Reply struct {
	// Err is set for simple and blob errors at the top level.
	Err bool
	// Push is set for RESP3 out-of-band pushes, which answer no command.
	Push    bool
	code    [15]byte
	codeLen uint8
	// Text is an error reply's message (up to 256 bytes) as the
	// connection's reader passes it to a Handler: valid during the call.
	Text []byte
	// Int is an integer reply's value (:N: PUBLISH's receivers, XACK's
	// count), IsInt says it is one.
	Int   int64
	IsInt bool
}

// Code returns the error's first word, at most 15 bytes; empty when !Err.
// The slice aliases r.
func (r *Reply) Code() []byte { return r.code[:r.codeLen] }

func (r *Reply) setCode(line []byte) {
	n := 0
	for n < len(line) && n < len(r.code) && line[n] != ' ' {
		n++
	}
	r.codeLen = uint8(copy(r.code[:], line[:n]))
}

// Reader parses RESP2 and RESP3 replies from a stream and skips them. It
// timestamps every read from the stream with the injected clock, so a reply's
// read instant is the time of the read that brought its last byte; over a
// socket with receive timestamps, its arrival is when the kernel received
// those bytes.
type Reader struct {
	rd   io.Reader
	now  func() int64
	buf  []byte
	r, w int
	at   int64 // clock reading after the last successful read
	// stamps, when set, is the socket under rd (rd itself, or under TLS
	// the transport the tls.Conn reads): its last read's kernel arrival
	// becomes arr, else arr is at.
	stamps *rxstamp.Reader
	arr    int64
	// kernel is set once a read carried a usable kernel timestamp (for
	// observers: atomic, stored once); stamped is the reader's own copy.
	kernel  atomic.Bool
	stamped bool
	// read counts the bytes read from rd (for observers: atomic).
	read atomic.Uint64
	// beforeFill, when set, is called before each read from rd (the
	// connection's ReadEnder).
	beforeFill func()
	// ErrorText holds the text of the most recent top-level error reply (up
	// to 256 bytes); it is reused, so copy it to keep it.
	ErrorText []byte
	// full: the last read filled the buffer; peak: the most bytes held
	// after a read since the last shrink check, reads: reads since then.
	full  bool
	peak  int
	reads int
	// try: fill never waits (a Hub's member): it reads stamps with
	// TryRead, whose rxstamp.ErrWouldBlock it returns.
	try bool
}

// BytesRead returns the bytes read from the stream so far. Safe from any
// goroutine.
func (p *Reader) BytesRead() uint64 { return p.read.Load() }

// NewReader returns a Reader over rd. now may be nil when no timestamps are
// needed.
func NewReader(rd io.Reader, now func() int64) *Reader {
	if now == nil {
		now = func() int64 { return 0 }
	}
	return &Reader{rd: rd, now: now, buf: make([]byte, readBufMin), ErrorText: make([]byte, 0, 256)}
}

// Times returns the most recent reply's instants: the read's, and the
// kernel's receive timestamp of the last segment that read consumed where
// the socket gave one (else the read instant again).
func (p *Reader) Times() Times { return Times{Arrival: p.arr, Read: p.at} }

// Buffered returns how many bytes the reader holds beyond the replies it
// returned.
func (p *Reader) Buffered() int { return p.w - p.r }

// fill reads more bytes, keeping buf[p.r:p.w].
func (p *Reader) fill() error {
	if p.beforeFill != nil {
		p.beforeFill()
	}
	if p.r > 0 {
		p.w = copy(p.buf, p.buf[p.r:p.w])
		p.r = 0
	}
	switch {
	case p.w == len(p.buf): // a line longer than the buffer
		if len(p.buf) >= maxLineLen {
			return protoErr("line longer than %d bytes", maxLineLen)
		}
		p.resize(2 * len(p.buf))
	case p.full && len(p.buf) < readBufSize:
		p.resize(2 * len(p.buf))
	case p.reads >= shrinkReads:
		if len(p.buf) > readBufMin && p.peak <= len(p.buf)/8 && p.w <= len(p.buf)/8 {
			p.resize(len(p.buf) / 2)
		}
		p.reads, p.peak = 0, 0
	}
	for {
		var n int
		var err error
		if p.try {
			n, err = p.stamps.TryRead(p.buf[p.w:])
		} else {
			n, err = p.rd.Read(p.buf[p.w:])
		}
		if n > 0 {
			p.full = p.w+n == len(p.buf)
			p.w += n
			p.reads++
			p.peak = max(p.peak, p.w)
			p.read.Add(uint64(n))
			p.at = p.now()
			p.arr = p.at
			if p.stamps != nil {
				p.arrival()
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// resize moves the buffered bytes into a buffer of size bytes (which holds
// them: the caller compacted them to the front).
func (p *Reader) resize(size int) {
	nb := make([]byte, size)
	copy(nb, p.buf[:p.w])
	p.buf = nb
}

// arrival takes the kernel's receive timestamp of the read that just
// returned as the bytes' arrival when it is plausible: a timestamp later
// than the read, or absurdly earlier, means the wall clock was stepped
// between the two, and the read instant stands.
//
// A read that brings several replies gives them all the stamp of its last
// segment: an upper bound for the earlier ones. bench/rxspread measured it
// against the sink (50 connections, 100k/s, a shared 2-core machine): the
// replies of one read were mostly written by the server at once (spread
// p50 0), and the first reply of a read arrived at p50 within a few µs of
// the server's write, like the others. Where the spread is large the
// reader was behind by as much, and then reading less per call would not
// help: Linux merges in-order segments queued on a TCP socket into one
// (tcp_try_coalesce), keeping the latest stamp, so replies written
// milliseconds apart and queued unread all carry the last one's stamp,
// however few bytes a read takes. So reads are not capped.
func (p *Reader) arrival() {
	a := p.stamps.Arrival()
	if !rxstamp.Plausible(a, p.at) {
		return
	}
	p.arr = a
	if !p.stamped {
		p.stamped = true
		p.kernel.Store(true)
	}
}

// line returns the next line without its CRLF. The slice is valid until
// the next call.
func (p *Reader) line() ([]byte, error) {
	scanned := 0
	for {
		buf := p.buf[p.r:p.w]
		if i := bytes.IndexByte(buf[scanned:], '\n'); i >= 0 {
			end := scanned + i
			if end == 0 || buf[end-1] != '\r' {
				return nil, protoErr("line not terminated by CRLF")
			}
			p.r += end + 1
			return buf[:end-1], nil
		}
		scanned = len(buf)
		if err := p.fill(); err != nil {
			return nil, err
		}
	}
}

// discard skips n bytes of payload.
func (p *Reader) discard(n int64) error {
	for n > 0 {
		if p.r == p.w {
			if err := p.fill(); err != nil {
				return err
			}
		}
		k := min(int64(p.w-p.r), n)
		p.r += int(k)
		n -= k
	}
	return nil
}

// crlf consumes the CRLF that ends a bulk body.
func (p *Reader) crlf() error {
	for p.w-p.r < 2 {
		if err := p.fill(); err != nil {
			return err
		}
	}
	if p.buf[p.r] != '\r' || p.buf[p.r+1] != '\n' {
		return protoErr("bulk string not terminated by CRLF")
	}
	p.r += 2
	return nil
}

// parseLen reads a length or count; "?" (RESP3 streamed) returns -2.
func parseLen(b []byte, limit int64) (int64, error) {
	if len(b) == 1 && b[0] == '?' {
		return -2, nil
	}
	if len(b) == 2 && b[0] == '-' && b[1] == '1' {
		return -1, nil
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, protoErr("bad length %q", b)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, protoErr("bad length %q", b)
		}
		n = n*10 + int64(c-'0')
	}
	if n > limit {
		return 0, protoErr("length %d above limit %d", n, limit)
	}
	return n, nil
}

// Next skips one complete reply and describes it.
func (p *Reader) Next() (Reply, error) {
	var r Reply
	for {
		line, err := p.line()
		if err != nil {
			return r, err
		}
		if len(line) == 0 {
			return r, protoErr("empty line")
		}
		switch line[0] {
		case '-':
			r.Err = true
			r.setCode(line[1:])
			p.ErrorText = append(p.ErrorText[:0], line[1:min(len(line), 257)]...)
			return r, nil
		case '!':
			n, err := parseLen(line[1:], maxBulkLen)
			if err != nil {
				return r, err
			}
			if n < 0 {
				return r, protoErr("blob error of length %d", n)
			}
			r.Err = true
			if err := p.blobErrorText(n, &r); err != nil {
				return r, err
			}
			return r, nil
		case '>':
			r.Push = true
			return r, p.aggregate(line, 1, 1)
		case '|':
			// An attribute describes the reply that follows it.
			if err := p.aggregate(line, 2, 1); err != nil {
				return r, err
			}
			continue
		case ':':
			r.Int, r.IsInt = integer(line[1:])
			return r, nil
		default:
			return r, p.value(line, 0)
		}
	}
}

// integer reads an integer reply's digits without allocating; ok is
// false for one that does not fit or is no number (the reply is still
// skipped: a reply's value is the caller's concern, not the protocol's).
func integer(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg || len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// blobErrorText keeps the start of a blob error as the error code and text.
func (p *Reader) blobErrorText(n int64, r *Reply) error {
	for int64(p.w-p.r) < min(n, 256) {
		if err := p.fill(); err != nil {
			return err
		}
	}
	head := p.buf[p.r : p.r+int(min(n, 256))]
	r.setCode(head)
	p.ErrorText = append(p.ErrorText[:0], head...)
	if err := p.discard(n); err != nil {
		return err
	}
	return p.crlf()
}

// value skips the value whose first line is line.
func (p *Reader) value(line []byte, depth int) error {
	if depth > maxDepth {
		return protoErr("nesting deeper than %d", maxDepth)
	}
	switch line[0] {
	case '+', '-', ':', ',', '#', '(', '_':
		return nil
	case '$', '!', '=':
		n, err := parseLen(line[1:], maxBulkLen)
		if err != nil {
			return err
		}
		switch {
		case n == -1:
			return nil
		case n == -2:
			return p.streamedString()
		}
		if err := p.discard(n); err != nil {
			return err
		}
		return p.crlf()
	case '*', '~', '>':
		return p.aggregate(line, 1, depth+1)
	case '%', '|':
		return p.aggregate(line, 2, depth+1)
	}
	return protoErr("unknown reply type %q", line[0])
}

// aggregate skips the elements of an array, set, push (per=1), map or
// attribute (per=2).
func (p *Reader) aggregate(line []byte, per int64, depth int) error {
	if depth > maxDepth {
		return protoErr("nesting deeper than %d", maxDepth)
	}
	n, err := parseLen(line[1:], maxAggregate)
	if err != nil {
		return err
	}
	if n == -1 {
		return nil
	}
	if n == -2 { // streamed: elements until "."
		for {
			l, err := p.line()
			if err != nil {
				return err
			}
			if len(l) == 1 && l[0] == '.' {
				return nil
			}
			if len(l) == 0 {
				return protoErr("empty line")
			}
			if err := p.element(l, depth); err != nil {
				return err
			}
		}
	}
	for i := int64(0); i < n*per; i++ {
		l, err := p.line()
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return protoErr("empty line")
		}
		if err := p.element(l, depth); err != nil {
			return err
		}
	}
	return nil
}

// element skips one element of an aggregate, including an attribute that
// may precede it.
func (p *Reader) element(l []byte, depth int) error {
	for l[0] == '|' {
		if err := p.aggregate(l, 2, depth+1); err != nil {
			return err
		}
		var err error
		if l, err = p.line(); err != nil {
			return err
		}
		if len(l) == 0 {
			return protoErr("empty line")
		}
	}
	return p.value(l, depth)
}

// streamedString skips the chunks of a RESP3 streamed string ($?).
func (p *Reader) streamedString() error {
	for {
		l, err := p.line()
		if err != nil {
			return err
		}
		if len(l) == 0 || l[0] != ';' {
			return protoErr("bad streamed string chunk %q", l)
		}
		n, err := parseLen(l[1:], maxBulkLen)
		if err != nil || n < 0 {
			return protoErr("bad streamed string chunk %q", l)
		}
		if n == 0 {
			return nil
		}
		if err := p.discard(n); err != nil {
			return err
		}
		if err := p.crlf(); err != nil {
			return err
		}
	}
}
