package conn

import (
	"context"
	"fmt"
	"strconv"
	"unsafe"
)

// Value is a materialised reply, for the control plane only (CONFIG GET,
// INFO, CLUSTER NODES): the load path skips replies instead.
type Value struct {
	// Kind is the RESP type byte: '+', ':', '$', '*', '_', ',', '#', '%', '~', '=', '(' .
	Kind  byte
	Str   string
	Int   int64
	Elems []Value // arrays, sets, pushes; maps as key, value, key, value...
	Nil   bool
}

// ServerError is an error reply.
type ServerError struct{ Msg string }

func (e *ServerError) Error() string { return e.Msg }

// maxValueBytes bounds what ReadValue will materialise: the bytes of its
// strings and valueCost for each element, so a reply of millions of nulls
// or empty arrays is refused as early as one long string is.
const maxValueBytes = 64 << 20

// valueCost is what an element of an aggregate costs against
// maxValueBytes: the Value it is built into.
const valueCost = int64(unsafe.Sizeof(Value{}))

// ReadValue reads one reply and builds it. Error replies are returned as a
// *ServerError.
func (p *Reader) ReadValue() (Value, error) {
	budget := int64(maxValueBytes)
	for {
		line, err := p.line()
		if err != nil {
			return Value{}, err
		}
		if len(line) > 0 && line[0] == '|' { // attributes: skip
			if err := p.aggregate(line, 2, 1); err != nil {
				return Value{}, err
			}
			continue
		}
		return p.value2(line, 0, &budget)
	}
}

func (p *Reader) value2(line []byte, depth int, budget *int64) (Value, error) {
	if len(line) == 0 {
		return Value{}, protoErr("empty line")
	}
	if depth > maxDepth {
		return Value{}, protoErr("nesting deeper than %d", maxDepth)
	}
	v := Value{Kind: line[0]}
	switch line[0] {
	case '-':
		return v, &ServerError{Msg: string(line[1:])}
	case '+', ',', '(', '#':
		v.Str = string(line[1:])
		return v, nil
	case '_':
		v.Nil = true
		return v, nil
	case ':':
		n, err := strconv.ParseInt(string(line[1:]), 10, 64)
		if err != nil {
			return v, protoErr("bad integer %q", line)
		}
		v.Int = n
		return v, nil
	case '$', '=', '!':
		n, err := parseLen(line[1:], maxBulkLen)
		if err != nil {
			return v, err
		}
		if n == -1 {
			v.Nil = true
			return v, nil
		}
		if n < 0 || n > *budget {
			return v, protoErr("bulk of %d bytes is too large to keep", n)
		}
		*budget -= n
		b := make([]byte, 0, n)
		for int64(len(b)) < n {
			if p.r == p.w {
				if err := p.fill(); err != nil {
					return v, err
				}
			}
			k := min(int64(p.w-p.r), n-int64(len(b)))
			b = append(b, p.buf[p.r:p.r+int(k)]...)
			p.r += int(k)
		}
		if err := p.crlf(); err != nil {
			return v, err
		}
		v.Str = string(b)
		if line[0] == '!' {
			return v, &ServerError{Msg: v.Str}
		}
		return v, nil
	case '*', '~', '>', '%':
		n, err := parseLen(line[1:], maxAggregate)
		if err != nil {
			return v, err
		}
		if n == -1 {
			v.Nil = true
			return v, nil
		}
		if n < 0 {
			return v, protoErr("streamed aggregates are not supported here")
		}
		if line[0] == '%' {
			n *= 2
		}
		// The elements are paid for when announced, and their slice
		// allocated once at that size: growing it would allocate several
		// times what it holds.
		if n > *budget/valueCost {
			return v, protoErr("aggregate of %d elements is too large to keep", n)
		}
		*budget -= n * valueCost
		v.Elems = make([]Value, 0, n)
		for i := int64(0); i < n; i++ {
			l, err := p.line()
			if err != nil {
				return v, err
			}
			e, err := p.value2(l, depth+1, budget)
			if err != nil {
				if _, ok := err.(*ServerError); !ok {
					return v, err
				}
			}
			v.Elems = append(v.Elems, e)
		}
		return v, nil
	}
	return v, protoErr("unknown reply type %q", line[0])
}

// ReadValue reads the next reply and builds it (an error reply is a
// *ServerError), for a connection driven synchronously (Start not
// called): a subscription's messages, a control command's reply.
func (c *Conn) ReadValue() (Value, error) {
	v, err := c.rd.ReadValue()
	if _, ok := err.(*ServerError); err != nil && !ok {
		c.fail(err)
	}
	return v, err
}

// LastTimes returns the instants of the read that brought the last reply
// ReadValue returned (see Times).
func (c *Conn) LastTimes() Times { return c.rd.Times() }

// Do opens a connection with o, sends one command, returns its reply and
// closes the connection. For occasional control commands, not for load.
// Like Dial's, its error texts are sanitized.
func Do(ctx context.Context, o Options, args ...string) (Value, error) {
	c, err := Dial(ctx, o)
	if err != nil {
		return Value{}, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, c.Close) // a cancelled ctx ends the wait for the reply
	defer stop()
	if err := c.Write(AppendCommand(nil, args...)); err != nil {
		return Value{}, o.sanitize(err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.nc.SetReadDeadline(dl)
	}
	v, err := c.rd.ReadValue()
	if err != nil {
		return v, o.sanitize(fmt.Errorf("%s: %w", args[0], err))
	}
	return v, nil
}
