package conn

// Reading a client-side cache's connection: a RESP3 connection with
// CLIENT TRACKING on receives, between the replies to its own reads,
// invalidation pushes (>2 "invalidate" [keys…], or a null list when the
// server flushed its keys). Like the rest of the reader they are parsed in
// place: each key is handed to a callback as a view, a read's value is
// kept to its first bytes, and nothing is allocated per message.

// TrackedKind is what ReadTracked read.
type TrackedKind uint8

// Kinds of what a tracking connection reads.
const (
	// TrackedReply is any other reply (+OK, an integer, an array) or a
	// push that is no invalidation.
	TrackedReply TrackedKind = iota
	// TrackedValue is a bulk string or a null: the reply to a read (GET).
	// Head is its first bytes, Null set for a missing key.
	TrackedValue
	// TrackedInvalidate is an invalidation push: its keys went to the
	// callback, Keys counts them; Flush is set when it named none (the
	// server flushed its keys: every cached one is invalid).
	TrackedInvalidate
	// TrackedError is an error reply; Text holds its start.
	TrackedError
)

// Tracked is what ReadTracked read. Its slices are views into buffers it
// owns and reuses: valid until the next read into it.
type Tracked struct {
	Kind TrackedKind
	// Head is a value's first bytes (at most MaxPushHead), Len its whole
	// length; Null is set for a null reply.
	Head []byte
	Len  int64
	Null bool
	// Keys counts an invalidation's keys; Flush is set for a null list.
	Keys  int
	Flush bool
	// Text is an error reply's start.
	Text []byte
	// Times are the instants of the read that brought its last byte.
	Times Times

	kind [16]byte
	key  [MaxPushName]byte
	head [MaxPushHead]byte
}

// ReadTracked reads the next reply or push of a connection with CLIENT
// TRACKING on (RESP3) into t, calling onKey with each key an invalidation
// names (a view valid during the call, its first MaxPushName bytes). Only
// for connections without a reader goroutine. A malformed message ends
// the connection with the error.
func (c *Conn) ReadTracked(t *Tracked, onKey func(key []byte)) error {
	if err := c.rd.readTracked(t, onKey); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

func (p *Reader) readTracked(t *Tracked, onKey func([]byte)) error {
	t.Kind, t.Head, t.Len, t.Null, t.Keys, t.Flush, t.Text = TrackedReply, nil, 0, false, 0, false, nil
	line, err := p.line()
	if err != nil {
		return err
	}
	if len(line) == 0 {
		return protoErr("empty line")
	}
	switch line[0] {
	case '$':
		n, err := parseLen(line[1:], maxBulkLen)
		if err != nil {
			return err
		}
		t.Kind = TrackedValue
		switch {
		case n == -1:
			t.Null = true
		case n == -2:
			if err := p.streamedString(); err != nil {
				return err
			}
		default:
			keep := int(min(n, MaxPushHead))
			for p.w-p.r < keep {
				if err := p.fill(); err != nil {
					return err
				}
			}
			t.Head = append(t.head[:0], p.buf[p.r:p.r+keep]...)
			p.r += keep
			if err := p.discard(n - int64(keep)); err != nil {
				return err
			}
			if err := p.crlf(); err != nil {
				return err
			}
			t.Len = n
		}
	case '_':
		t.Kind, t.Null = TrackedValue, true
	case '-':
		p.ErrorText = append(p.ErrorText[:0], line[1:min(len(line), 257)]...)
		t.Kind, t.Text = TrackedError, p.ErrorText
	case '!':
		n, err := parseLen(line[1:], maxBulkLen)
		if err != nil || n < 0 {
			return protoErr("bad blob error %q", line)
		}
		var r Reply
		if err := p.blobErrorText(n, &r); err != nil {
			return err
		}
		t.Kind, t.Text = TrackedError, p.ErrorText
	case '>':
		if err := p.trackedPush(line, t, onKey); err != nil {
			return err
		}
	default:
		if err := p.value(line, 0); err != nil {
			return err
		}
	}
	t.Times = p.Times()
	return nil
}

// trackedPush reads a push whose first line is line: an invalidation's
// keys go to onKey, any other push is skipped.
func (p *Reader) trackedPush(line []byte, t *Tracked, onKey func([]byte)) error {
	n, err := parseLen(line[1:], maxAggregate)
	if err != nil {
		return err
	}
	if n == -2 {
		return protoErr("streamed push")
	}
	if n <= 0 {
		return nil
	}
	kind, _, err := p.bulkInto(t.kind[:0])
	if err != nil {
		return err
	}
	if n == 2 && string(kind) == "invalidate" {
		l, err := p.line()
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return protoErr("empty line")
		}
		switch l[0] {
		case '_':
			t.Kind, t.Flush = TrackedInvalidate, true
			return nil
		case '*':
		default:
			return protoErr("invalidation of %q", l)
		}
		keys, err := parseLen(l[1:], maxAggregate)
		if err != nil || keys == -2 {
			return protoErr("bad invalidation key count %q", l)
		}
		t.Kind = TrackedInvalidate
		if keys == -1 {
			t.Flush = true
			return nil
		}
		for range keys {
			key, _, err := p.bulkInto(t.key[:0])
			if err != nil {
				return err
			}
			t.Keys++
			if onKey != nil {
				onKey(key)
			}
		}
		return nil
	}
	return p.skipElements(n - 1)
}

// Buffered is how many bytes already read from the socket wait in the
// reader's buffer: a connection that answers what it reads (a cache
// refetching invalidated keys) writes its answers once it is 0, before
// the next read blocks. Only for connections without a reader goroutine.
func (c *Conn) Buffered() int { return c.rd.Buffered() }
