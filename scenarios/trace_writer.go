package scenarios

// TraceWriter writes pacer's JSON lines (the format trace_json.go reads):
// tests build traces with it, and a recording can be exported with it.

import (
	"bufio"
	"encoding/base64"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// TraceWriter writes records as pacer's JSON lines, which TraceReader
// reads back to the same records (T to the nanosecond, every byte of
// every argument: valid UTF-8 as a string, anything else as b64).
type TraceWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewTraceWriter writes JSON lines to w; call Flush at the end.
func NewTraceWriter(w io.Writer) *TraceWriter {
	return &TraceWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// errClientUTF8 refuses a client name JSON cannot carry.
var errClientUTF8 = errors.New("trace writer: the client name is not valid UTF-8")

// Write writes one record (Line is not written). An empty Argv or a
// client name that is not valid UTF-8 is an error.
func (w *TraceWriter) Write(rec *TraceRecord) error {
	if len(rec.Argv) == 0 {
		return errors.New("trace writer: empty argv")
	}
	if !utf8.ValidString(rec.Client) {
		return errClientUTF8
	}
	b := append(w.buf[:0], `{"t": `...)
	b = appendSeconds(b, rec.T)
	b = append(b, `, "db": `...)
	b = strconv.AppendInt(b, int64(rec.DB), 10)
	if rec.Client != "" {
		b = append(b, `, "client": `...)
		b = appendJSONString(b, rec.Client)
	}
	b = append(b, `, "argv": [`...)
	for i, a := range rec.Argv {
		if i > 0 {
			b = append(b, ", "...)
		}
		if utf8.Valid(a) {
			b = appendJSONString(b, a)
			continue
		}
		b = append(b, `{"b64": "`...)
		b = base64.StdEncoding.AppendEncode(b, a)
		b = append(b, `"}`...)
	}
	b = append(b, "]}\n"...)
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Flush writes what is buffered.
func (w *TraceWriter) Flush() error { return w.w.Flush() }

// appendSeconds writes ns as decimal seconds, exactly: 1.000125, 0.5, 3.
func appendSeconds(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/1e9, 10)
	frac := u % 1e9
	if frac == 0 {
		return b
	}
	var d [10]byte
	d[0] = '.'
	for i := 9; i >= 1; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 10
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// appendJSONString quotes valid UTF-8 s as a JSON string.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	const hexdigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexdigits[c>>4], hexdigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
