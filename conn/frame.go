package conn

import "bytes"

// Held is what a buffer holds of its next RESP value.
type Held uint8

// What a buffer holds.
const (
	// HeldPart: the value's start at most (nothing, too).
	HeldPart Held = iota
	// HeldWhole: the whole value (an attribute and the value it annotates
	// count as one), which the parser reads without reading more.
	HeldWhole
	// HeldUnframed: a value whose end cannot be told before it is read: a
	// streamed one (RESP3's ? lengths), or a malformed one, which the
	// parser then rejects.
	HeldUnframed
)

// frame says what b holds of its first value.
func frame(b []byte) Held {
	pending := int64(1) // values still to frame
	i := 0
	for pending > 0 {
		nl := bytes.IndexByte(b[i:], '\n')
		if nl < 0 {
			return HeldPart
		}
		line := b[i : i+nl]
		i += nl + 1
		if len(line) < 2 || line[len(line)-1] != '\r' {
			return HeldUnframed
		}
		line = line[:len(line)-1]
		pending--
		var n int64
		var err error
		switch line[0] {
		case '$', '!', '=':
			if n, err = parseLen(line[1:], maxBulkLen); err != nil || n == -2 {
				return HeldUnframed
			}
			if n < 0 {
				continue
			}
			if int64(len(b)-i) < n+2 {
				return HeldPart
			}
			i += int(n) + 2
			continue
		case '*', '>', '~', '%', '|':
			if n, err = parseLen(line[1:], maxAggregate); err != nil || n == -2 {
				return HeldUnframed
			}
		default:
			continue
		}
		switch {
		case line[0] == '|': // then the value it annotates
			pending += 2*max(n, 0) + 1
		case n <= 0:
		case line[0] == '%':
			pending += 2 * n
		default:
			pending += n
		}
	}
	return HeldWhole
}
