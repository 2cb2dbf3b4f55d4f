package embedded

import (
	"errors"
	"fmt"
)

// Protocol bounds, as Redis's.
const (
	// maxInline bounds an inline command's line (PROTO_INLINE_MAX_SIZE).
	maxInline = 64 << 10
	// maxCountLine bounds a "*N" or "$N" line: 20 digits and a sign fit.
	maxCountLine = 32
	// maxArgs bounds one command's arguments.
	maxArgs = 1 << 20
)

// Protocol errors (the text after "-ERR Protocol error: ").
var (
	errInlineTooBig   = errors.New("too big inline request")
	errMbulkCountLine = errors.New("too big mbulk count string")
	errBulkCountLine  = errors.New("too big bulk count string")
	errMbulkLen       = errors.New("invalid multibulk length")
	errBulkLen        = errors.New("invalid bulk length")
)

// parseCommand reads one command from b, a RESP array of bulk strings or
// an inline command, and appends its arguments to argv (aliasing b). used
// is 0 when b holds no complete command yet; then need is how many bytes
// (from b[0]) the command needs at least, when a bulk length says so, or 0.
// An empty inline line or array is consumed with no arguments.
func parseCommand(b []byte, argv [][]byte) (out [][]byte, used, need int, err error) {
	if len(b) == 0 {
		return argv, 0, 0, nil
	}
	if b[0] != '*' {
		// Inline: one line of space-separated words.
		end := indexCRLF(b, maxInline)
		if end < 0 {
			if len(b) > maxInline {
				return argv, 0, 0, errInlineTooBig
			}
			return argv, 0, 0, nil
		}
		line := b[:end]
		for len(line) > 0 {
			i := 0
			for i < len(line) && line[i] == ' ' {
				i++
			}
			j := i
			for j < len(line) && line[j] != ' ' {
				j++
			}
			if j > i {
				argv = append(argv, line[i:j])
			}
			line = line[j:]
		}
		return argv, end + 2, 0, nil
	}
	end := indexCRLF(b, maxCountLine)
	if end < 0 {
		if len(b) > maxCountLine {
			return argv, 0, 0, errMbulkCountLine
		}
		return argv, 0, 0, nil
	}
	n, ok := atoi(b[1:end])
	if !ok || n > maxArgs {
		return argv, 0, 0, errMbulkLen
	}
	pos := end + 2
	for range n { // n <= 0: an empty command, as Redis skips it
		if pos >= len(b) {
			return argv, 0, 0, nil
		}
		if b[pos] != '$' {
			return argv, 0, 0, fmt.Errorf("expected '$', got '%c'", b[pos])
		}
		e := indexCRLF(b[pos:], maxCountLine)
		if e < 0 {
			if len(b)-pos > maxCountLine {
				return argv, 0, 0, errBulkCountLine
			}
			return argv, 0, 0, nil
		}
		l, ok := atoi(b[pos+1 : pos+e])
		if !ok || l < 0 || l > maxBulkLen {
			return argv, 0, 0, errBulkLen
		}
		start := pos + e + 2
		if start+l+2 > len(b) {
			return argv, 0, start + l + 2, nil
		}
		argv = append(argv, b[start:start+l])
		pos = start + l + 2
	}
	return argv, pos, 0, nil
}

// indexCRLF is the index of the first CRLF in b that starts within limit
// bytes, or -1.
func indexCRLF(b []byte, limit int) int {
	for i := 0; i+1 < len(b) && i <= limit; i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
