package sink

import (
	"bytes"
	"errors"
	"strconv"
)

// Limits of the command parser: a test server must not be made to hold
// unbounded memory either.
const (
	maxArgs    = 1 << 16
	maxBulkLen = 64 << 20
	maxLine    = 64 << 10
)

var errProtocol = errors.New("sink: protocol error")

// parseCommand parses the command at the start of b, a RESP array of bulk
// strings or an inline command, appending its arguments (slices of b) to
// argv. It returns the bytes it took, 0 when b does not hold a whole
// command yet (argv then is as it was).
func parseCommand(b []byte, argv [][]byte) ([][]byte, int, error) {
	if len(b) == 0 {
		return argv, 0, nil
	}
	if b[0] != '*' {
		return parseInline(b, argv)
	}
	start := len(argv)
	n, pos, ok, err := number(b, 1)
	if !ok || err != nil {
		return argv, 0, err
	}
	if n < 0 || n > maxArgs {
		return argv, 0, errProtocol
	}
	for range n {
		if pos >= len(b) {
			return argv[:start], 0, nil
		}
		if b[pos] != '$' {
			return argv[:start], 0, errProtocol
		}
		l, next, ok, err := number(b, pos+1)
		if !ok || err != nil {
			return argv[:start], 0, err
		}
		if l < 0 || l > maxBulkLen {
			return argv[:start], 0, errProtocol
		}
		end := next + int(l)
		if end+2 > len(b) {
			return argv[:start], 0, nil
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return argv[:start], 0, errProtocol
		}
		argv = append(argv, b[next:end])
		pos = end + 2
	}
	return argv, pos, nil
}

// number parses the decimal that starts at b[i] and ends with CRLF: its
// value and the index past the CRLF; ok is false when the line is not
// complete yet.
func number(b []byte, i int) (n int64, next int, ok bool, err error) {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		if len(b)-i > 32 {
			return 0, 0, false, errProtocol
		}
		return 0, 0, false, nil
	}
	line := b[i : i+j]
	if len(line) < 2 || line[len(line)-1] != '\r' {
		return 0, 0, false, errProtocol
	}
	line = line[:len(line)-1]
	neg := line[0] == '-'
	if neg {
		line = line[1:]
	}
	if len(line) == 0 || len(line) > 18 {
		return 0, 0, false, errProtocol
	}
	for _, c := range line {
		if c < '0' || c > '9' {
			return 0, 0, false, errProtocol
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, i + j + 1, true, nil
}

// parseInline parses an inline command (words separated by spaces, ended
// by LF or CRLF), as redis-cli and telnet send them.
func parseInline(b []byte, argv [][]byte) ([][]byte, int, error) {
	j := bytes.IndexByte(b, '\n')
	if j < 0 {
		if len(b) > maxLine {
			return argv, 0, errProtocol
		}
		return argv, 0, nil
	}
	line := b[:j]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	for len(line) > 0 {
		k := bytes.IndexByte(line, ' ')
		if k < 0 {
			argv = append(argv, line)
			break
		}
		if k > 0 {
			argv = append(argv, line[:k])
		}
		line = line[k+1:]
	}
	return argv, j + 1, nil
}

// appendReply appends the sink's answer to argv: at once and always the
// same, from a small table of what Redis would answer an empty database.
func appendReply(out []byte, argv [][]byte) []byte {
	if len(argv) == 0 { // an empty inline line: Redis answers nothing
		return out
	}
	name := argv[0]
	switch {
	case bytes.EqualFold(name, []byte("PING")):
		if len(argv) > 1 {
			out = append(out, '$')
			out = strconv.AppendInt(out, int64(len(argv[1])), 10)
			out = append(out, "\r\n"...)
			out = append(out, argv[1]...)
			return append(out, "\r\n"...)
		}
		return append(out, "+PONG\r\n"...)
	case oneOf(name, nilBulk):
		return append(out, "$-1\r\n"...)
	case oneOf(name, integerOne):
		return append(out, ":1\r\n"...)
	case oneOf(name, emptyArray):
		return append(out, "*0\r\n"...)
	}
	return append(out, "+OK\r\n"...)
}

// The table: commands answered with a nil bulk string, the integer 1 or an
// empty array; every other command gets +OK.
var (
	nilBulk    = [][]byte{[]byte("GET"), []byte("GETDEL"), []byte("HGET"), []byte("LPOP"), []byte("RPOP"), []byte("SPOP"), []byte("LINDEX")}
	integerOne = [][]byte{[]byte("INCR"), []byte("DECR"), []byte("INCRBY"), []byte("DECRBY"), []byte("LPUSH"), []byte("RPUSH"),
		[]byte("SADD"), []byte("HSET"), []byte("HINCRBY"), []byte("ZADD"), []byte("DEL"), []byte("EXISTS"), []byte("PUBLISH")}
	emptyArray = [][]byte{[]byte("LRANGE"), []byte("ZRANGE"), []byte("SMEMBERS"), []byte("KEYS"), []byte("ZPOPMIN")}
)

func oneOf(name []byte, names [][]byte) bool {
	for _, n := range names {
		if bytes.EqualFold(name, n) {
			return true
		}
	}
	return false
}
