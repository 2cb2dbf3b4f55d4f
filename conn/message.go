package conn

// Reading messages rather than replies: the deliveries of a subscribed
// connection (pub/sub's message, pmessage and smessage) and the entries
// of a stream read (XREADGROUP, XREAD). Like the rest of the reader they
// are parsed in place and not built: a message's channel and the first
// bytes of its payload are copied into buffers the caller owns and
// reuses, the rest of the payload is skipped, and nothing is allocated
// per message.

// PushKind is what a subscribed connection read.
type PushKind uint8

// Kinds of push.
const (
	// PushReply is anything else: a command's reply (PONG), an unknown
	// push, a RESP3 out-of-band push that is no delivery.
	PushReply PushKind = iota
	// PushMessage is a delivery: message (SUBSCRIBE), pmessage
	// (PSUBSCRIBE, with its pattern) or smessage (SSUBSCRIBE).
	PushMessage
	// PushSubscribed confirms a subscription (subscribe, psubscribe,
	// ssubscribe) and PushUnsubscribed its end (unsubscribe, punsubscribe,
	// sunsubscribe, also when the server drops a sharded channel whose
	// slot moved); Count is how many the connection then holds.
	PushSubscribed
	PushUnsubscribed
	// PushError is an error reply; Text holds its start.
	PushError
)

// Limits of what a Push keeps.
const (
	// MaxPushName is the most bytes of a channel or pattern a Push keeps.
	MaxPushName = 256
	// MaxPushHead is the most bytes of a payload's head a Push or a
	// StreamEntry keeps.
	MaxPushHead = 64
)

// Push is what ReadPush read. Its slices are views into buffers the Push
// owns and reuses: valid until the next read into it.
type Push struct {
	Kind PushKind
	// Channel is the delivery's or subscription's channel (its first
	// MaxPushName bytes), Pattern a pmessage's pattern.
	Channel, Pattern []byte
	// Head is the payload's first bytes (at most MaxPushHead), PayloadLen
	// its whole length.
	Head       []byte
	PayloadLen int64
	// Count is a subscription push's count of subscriptions.
	Count int64
	// Text is an error reply's start.
	Text []byte
	// Times are the instants of the read that brought the push's last
	// byte (see Times).
	Times Times

	kind [16]byte
	name [MaxPushName]byte
	pat  [MaxPushName]byte
	head [MaxPushHead]byte
}

// ReadPush reads the next message of a connection that subscribed
// (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE) into p: a delivery, a subscription's
// confirmation or end, or any other reply, in RESP2 (arrays) or RESP3
// (pushes). Only for connections without a reader goroutine (Start not
// called). A malformed message ends the connection with the error.
func (c *Conn) ReadPush(p *Push) error {
	if err := c.rd.readPush(p); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// readPush reads one push or reply into m.
func (p *Reader) readPush(m *Push) error {
	m.Kind, m.Channel, m.Pattern, m.Head, m.PayloadLen, m.Count, m.Text = PushReply, nil, nil, nil, 0, 0, nil
	line, err := p.line()
	if err != nil {
		return err
	}
	if len(line) == 0 {
		return protoErr("empty line")
	}
	switch line[0] {
	case '*', '>':
	case '-':
		p.ErrorText = append(p.ErrorText[:0], line[1:min(len(line), 257)]...)
		m.Kind, m.Text, m.Times = PushError, p.ErrorText, p.Times()
		return nil
	case '!':
		n, err := parseLen(line[1:], maxBulkLen)
		if err != nil || n < 0 {
			return protoErr("bad blob error %q", line)
		}
		var r Reply
		if err := p.blobErrorText(n, &r); err != nil {
			return err
		}
		m.Kind, m.Text, m.Times = PushError, p.ErrorText, p.Times()
		return nil
	default:
		if err := p.value(line, 0); err != nil {
			return err
		}
		m.Times = p.Times()
		return nil
	}
	n, err := parseLen(line[1:], maxAggregate)
	if err != nil {
		return err
	}
	if n == -2 {
		return protoErr("streamed push")
	}
	if n <= 0 {
		m.Times = p.Times()
		return nil
	}
	kind, _, err := p.bulkInto(m.kind[:0])
	if err != nil {
		return err
	}
	left := n - 1
	// bulk reads the next element into buf, when one is left.
	bulk := func(buf []byte) ([]byte, int64, error) {
		left--
		return p.bulkInto(buf)
	}
	switch {
	case n == 3 && (string(kind) == "message" || string(kind) == "smessage"):
		m.Kind = PushMessage
		if m.Channel, _, err = bulk(m.name[:0]); err == nil {
			m.Head, m.PayloadLen, err = bulk(m.head[:0])
		}
	case n == 4 && string(kind) == "pmessage":
		m.Kind = PushMessage
		if m.Pattern, _, err = bulk(m.pat[:0]); err == nil {
			if m.Channel, _, err = bulk(m.name[:0]); err == nil {
				m.Head, m.PayloadLen, err = bulk(m.head[:0])
			}
		}
	case n == 3 && (string(kind) == "subscribe" || string(kind) == "psubscribe" || string(kind) == "ssubscribe" ||
		string(kind) == "unsubscribe" || string(kind) == "punsubscribe" || string(kind) == "sunsubscribe"):
		m.Kind = PushSubscribed
		if kind[0] == 'u' || kind[1] == 'u' && kind[2] == 'n' { // unsubscribe, punsubscribe, sunsubscribe
			m.Kind = PushUnsubscribed
		}
		if m.Channel, _, err = bulk(m.name[:0]); err == nil {
			var l []byte
			if l, err = p.line(); err == nil {
				left--
				switch {
				case len(l) == 0:
					err = protoErr("empty line")
				case l[0] == ':':
					m.Count, _ = parseLen(l[1:], maxAggregate)
				default:
					err = p.value(l, 1)
				}
			}
		}
	}
	if err != nil {
		return err
	}
	if err := p.skipElements(left); err != nil {
		return err
	}
	m.Times = p.Times()
	return nil
}

// skipElements skips the n elements left of an aggregate.
func (p *Reader) skipElements(n int64) error {
	for ; n > 0; n-- {
		l, err := p.line()
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return protoErr("empty line")
		}
		if err := p.element(l, 1); err != nil {
			return err
		}
	}
	return nil
}

// bulkInto reads a bulk string and copies its first cap(dst) bytes into
// dst, skipping the rest: it returns the bytes kept and the string's
// length (-1 for a null). Any other element is skipped and kept empty.
func (p *Reader) bulkInto(dst []byte) ([]byte, int64, error) {
	line, err := p.line()
	if err != nil {
		return nil, 0, err
	}
	if len(line) == 0 {
		return nil, 0, protoErr("empty line")
	}
	if line[0] != '$' {
		return dst[:0], 0, p.element(line, 1)
	}
	n, err := parseLen(line[1:], maxBulkLen)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case n == -1:
		return dst[:0], -1, nil
	case n == -2:
		return dst[:0], 0, p.streamedString()
	}
	keep := int(min(n, int64(cap(dst))))
	for p.w-p.r < keep {
		if err := p.fill(); err != nil {
			return nil, 0, err
		}
	}
	dst = append(dst[:0], p.buf[p.r:p.r+keep]...)
	p.r += keep
	if err := p.discard(n - int64(keep)); err != nil {
		return nil, 0, err
	}
	return dst, n, p.crlf()
}

// StreamEntry is one stream entry ReadEntries read. Its slices are views into
// buffers reused for the next entry: valid during the callback only.
type StreamEntry struct {
	// Stream is the entry's stream key (its first MaxPushName bytes), ID
	// its ID.
	Stream, ID []byte
	// Head is the first bytes of the entry's first field's value (at most
	// MaxPushHead), ValueLen that value's length; Fields counts the
	// entry's fields and values. A deleted entry still pending has no
	// fields.
	Head     []byte
	ValueLen int64
	Fields   int64

	name [MaxPushName]byte
	id   [48]byte
	head [MaxPushHead]byte
}

// ReadEntries reads the reply of an XREADGROUP or XREAD and calls fn for
// each entry, in order. It returns how many entries the reply held (0
// for a null reply: BLOCK timed out) and the reply's instants; an error
// reply is a *ServerError, which leaves the connection usable. Only for
// connections without a reader goroutine.
func (c *Conn) ReadEntries(e *StreamEntry, fn func(*StreamEntry)) (int, Times, error) {
	n, err := c.rd.readEntries(e, fn)
	if err != nil {
		if _, ok := err.(*ServerError); !ok {
			c.fail(err)
		}
		return n, Times{}, err
	}
	return n, c.rd.Times(), nil
}

func (p *Reader) readEntries(e *StreamEntry, fn func(*StreamEntry)) (int, error) {
	line, err := p.line()
	if err != nil {
		return 0, err
	}
	if len(line) == 0 {
		return 0, protoErr("empty line")
	}
	switch line[0] {
	case '-':
		return 0, &ServerError{Msg: string(line[1:])}
	case '!':
		n, err := parseLen(line[1:], maxBulkLen)
		if err != nil || n < 0 {
			return 0, protoErr("bad blob error %q", line)
		}
		var r Reply
		if err := p.blobErrorText(n, &r); err != nil {
			return 0, err
		}
		return 0, &ServerError{Msg: string(p.ErrorText)}
	case '_':
		return 0, nil
	case '*', '%':
	default:
		return 0, protoErr("a stream read answered %q", line[0])
	}
	streams, err := parseLen(line[1:], maxAggregate)
	if err != nil || streams == -2 {
		return 0, protoErr("bad stream read reply %q", line)
	}
	// line is a view of the reader's buffer, which the next reads move:
	// what it said is kept now.
	resp2 := line[0] == '*'
	total := 0
	for range max(streams, 0) {
		// RESP2: [name, entries]; RESP3: name => entries.
		if resp2 {
			l, err := p.line()
			if err != nil {
				return total, err
			}
			if len(l) == 0 || l[0] != '*' {
				return total, protoErr("bad stream element %q", l)
			}
		}
		name, _, err := p.bulkInto(e.name[:0])
		if err != nil {
			return total, err
		}
		l, err := p.line()
		if err != nil {
			return total, err
		}
		if len(l) == 0 || l[0] != '*' {
			return total, protoErr("bad stream entries %q", l)
		}
		entries, err := parseLen(l[1:], maxAggregate)
		if err != nil || entries == -2 {
			return total, protoErr("bad stream entries %q", l)
		}
		for range max(entries, 0) {
			// Each entry: [id, [field, value, ...]].
			l, err := p.line()
			if err != nil {
				return total, err
			}
			if len(l) == 0 || l[0] != '*' {
				return total, protoErr("bad stream entry %q", l)
			}
			id, _, err := p.bulkInto(e.id[:0])
			if err != nil {
				return total, err
			}
			l, err = p.line()
			if err != nil {
				return total, err
			}
			if len(l) == 0 {
				return total, protoErr("empty line")
			}
			e.Stream, e.ID, e.Head, e.ValueLen, e.Fields = name, id, e.head[:0], 0, 0
			switch {
			case l[0] == '*' || l[0] == '%':
				fv, err := parseLen(l[1:], maxAggregate)
				if err != nil || fv == -2 {
					return total, protoErr("bad stream fields %q", l)
				}
				if l[0] == '%' {
					fv *= 2
				}
				e.Fields = max(fv, 0)
				for k := range max(fv, 0) {
					switch k {
					case 1:
						if e.Head, e.ValueLen, err = p.bulkInto(e.head[:0]); err != nil {
							return total, err
						}
					default:
						fl, err := p.line()
						if err != nil {
							return total, err
						}
						if len(fl) == 0 {
							return total, protoErr("empty line")
						}
						if err := p.element(fl, 2); err != nil {
							return total, err
						}
					}
				}
			default: // a deleted entry: a null
				if err := p.value(l, 2); err != nil {
					return total, err
				}
			}
			total++
			fn(e)
		}
	}
	return total, nil
}
