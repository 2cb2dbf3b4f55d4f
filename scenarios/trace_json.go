package scenarios

// pacer's JSON lines trace format: one object per line,
//
//	{"t": 0.000125, "db": 0, "client": "c1", "argv": ["SET", "k", "v"]}
//
// t is in seconds (relative or absolute: only differences matter), read
// exactly to the nanosecond from its decimal text (a float64 would lose
// microseconds on an epoch timestamp). An argument is a JSON string
// (UTF-8) or, for arbitrary bytes, {"b64": "..."} in standard base64. db
// (default 0) and client (default "") are optional, null is as absent;
// other keys are ignored, and a key given twice counts the last time.
// Keys are matched exactly (encoding/json would also match "T").
//
// The parser is hand-written so that reading a line allocates nothing:
// strings are decoded into the reader's reused buffer.

import (
	"encoding/base64"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of an ignored value.
const maxJSONDepth = 64

// jsonCursor walks one line.
type jsonCursor struct {
	b []byte
	i int
}

func (j *jsonCursor) ws() {
	for j.i < len(j.b) && isBlank(j.b[j.i]) {
		j.i++
	}
}

func (j *jsonCursor) at(c byte) bool { return j.i < len(j.b) && j.b[j.i] == c }

// key reads an object member's key, appended to dst, and the ':' after it,
// leaving the cursor at the value.
func (j *jsonCursor) key(dst []byte) ([]byte, string) {
	if !j.at('"') {
		return dst, j.want("a key in quotes")
	}
	dst, msg := j.str(dst)
	if msg != "" {
		return dst, msg
	}
	j.ws()
	if !j.at(':') {
		return dst, j.want(`":" after the key`)
	}
	j.i++
	j.ws()
	return dst, ""
}

// next passes what follows a member or an element: a ',' (more is true,
// the cursor at the next one) or the closing byte of the object or array.
func (j *jsonCursor) next(closing byte) (more bool, msg string) {
	j.ws()
	if j.at(',') {
		j.i++
		j.ws()
		return true, ""
	}
	if j.at(closing) {
		j.i++
		return false, ""
	}
	return false, j.want(`"," or "` + string(closing) + `"`)
}

// want is the error for a missing token at the cursor.
func (j *jsonCursor) want(what string) string {
	if j.i >= len(j.b) {
		return "bad JSON: want " + what + " at byte " + itoa(j.i+1) + ", got the end of the line"
	}
	return "bad JSON: want " + what + " at byte " + itoa(j.i+1) + ", got " + excerpt(j.b[j.i:])
}

// parseJSON parses one line into r.rec and r.argv, returning what is
// wrong ("" when nothing).
func (r *TraceReader) parseJSON(line []byte) string {
	j := jsonCursor{b: trimBOM(line)}
	j.ws()
	if !j.at('{') {
		return j.want("an object {...}")
	}
	j.i++
	j.ws()
	haveT, haveArgv := false, false
	if j.at('}') {
		j.i++
	} else {
		for more := true; more; {
			var msg string
			if r.key, msg = j.key(r.key[:0]); msg != "" {
				return msg
			}
			switch string(r.key) {
			case "t":
				if msg = r.jsonTime(&j); msg != "" {
					return msg
				}
				haveT = true
			case "db":
				if msg = r.jsonDB(&j); msg != "" {
					return msg
				}
			case "client":
				if msg = r.jsonClient(&j); msg != "" {
					return msg
				}
			case "argv":
				if msg = r.jsonArgv(&j); msg != "" {
					return msg
				}
				haveArgv = true
			default:
				if msg = r.skipValue(&j, 0); msg != "" {
					return msg
				}
			}
			if more, msg = j.next('}'); msg != "" {
				return msg
			}
		}
	}
	j.ws()
	if j.i != len(j.b) {
		return "bad JSON: text after the object at byte " + itoa(j.i+1) + ": " + excerpt(j.b[j.i:])
	}
	switch {
	case !haveT:
		return `no "t" (the time in seconds)`
	case !haveArgv:
		return `no "argv" (the command)`
	case len(r.argv) == 0:
		return `"argv" is empty`
	}
	return ""
}

func (j *jsonCursor) null() bool {
	if len(j.b)-j.i >= 4 && string(j.b[j.i:j.i+4]) == "null" {
		j.i += 4
		return true
	}
	return false
}

func (r *TraceReader) jsonTime(j *jsonCursor) string {
	start := j.i
	end, ok := j.number()
	if !ok {
		return `"t": want a number of seconds, got ` + excerpt(j.b[start:])
	}
	ns, ok := decimalNanos(j.b[start:end])
	if !ok {
		return `"t": ` + excerpt(j.b[start:end]) + " is out of range (at most 292 years)"
	}
	r.rec.T = ns
	return ""
}

func (r *TraceReader) jsonDB(j *jsonCursor) string {
	if j.null() {
		r.rec.DB = 0
		return ""
	}
	start := j.i
	end, ok := j.number()
	num := j.b[start:end]
	bad := !ok || len(num) > 10
	db := 0
	for _, c := range num {
		if c < '0' || c > '9' { // a sign, a fraction or an exponent
			bad = true
			break
		}
		db = db*10 + int(c-'0')
	}
	if bad || db > 1<<31-1 {
		return `"db": want a database number (an integer from 0), got ` + excerpt(j.b[start:])
	}
	r.rec.DB = db
	return ""
}

func (r *TraceReader) jsonClient(j *jsonCursor) string {
	if j.null() {
		r.rec.Client = ""
		return ""
	}
	if !j.at('"') {
		return `"client": want a string, got ` + excerpt(j.b[j.i:])
	}
	var msg string
	r.key, msg = j.str(r.key[:0])
	if msg != "" {
		return `"client": ` + msg
	}
	r.rec.Client = r.intern(r.key)
	return ""
}

func (r *TraceReader) jsonArgv(j *jsonCursor) string {
	if !j.at('[') {
		return `"argv": want an array of arguments, got ` + excerpt(j.b[j.i:])
	}
	j.i++
	r.argv = r.argv[:0]
	j.ws()
	if j.at(']') {
		j.i++
		return ""
	}
	for k := 0; ; k++ {
		a := len(r.args)
		switch {
		case j.at('"'):
			var msg string
			r.args, msg = j.str(r.args)
			if msg != "" {
				return `"argv"[` + itoa(k) + "]: " + msg
			}
		case j.at('{'):
			if msg := r.jsonBytes(j); msg != "" {
				return `"argv"[` + itoa(k) + "]: " + msg
			}
		default:
			return `"argv"[` + itoa(k) + `]: want a string or {"b64": "..."}, got ` + excerpt(j.b[j.i:])
		}
		r.argv = append(r.argv, r.args[a:len(r.args):len(r.args)])
		if more, msg := j.next(']'); msg != "" {
			return `"argv": ` + msg
		} else if !more {
			return ""
		}
	}
}

// jsonBytes decodes {"b64": "..."} into r.args.
func (r *TraceReader) jsonBytes(j *jsonCursor) string {
	j.i++ // '{'
	j.ws()
	start := len(r.args)
	have := false
	for more := true; more; {
		if j.at('}') { // {} or a ',' before the '}'
			j.i++
			break
		}
		var msg string
		if r.key, msg = j.key(r.key[:0]); msg != "" {
			return msg
		}
		if string(r.key) == "b64" {
			if !j.at('"') {
				return `"b64": want a string of standard base64, got ` + excerpt(j.b[j.i:])
			}
			r.key, msg = j.str(r.key[:0])
			if msg != "" {
				return `"b64": ` + msg
			}
			// Given twice, the last counts, as for any key: decode over.
			n := base64.StdEncoding.DecodedLen(len(r.key))
			r.args = grow(r.args[:start], n)
			m, err := base64.StdEncoding.Decode(r.args[start:start+n], r.key)
			if err != nil {
				return `"b64": not standard base64 (` + err.Error() + ")"
			}
			r.args = r.args[:start+m]
			have = true
		} else if msg := r.skipValue(j, 1); msg != "" {
			return msg
		}
		if more, msg = j.next('}'); msg != "" {
			return msg
		}
	}
	if !have {
		return `want a string or {"b64": "..."}, got an object without "b64"`
	}
	return ""
}

// grow makes room for n more bytes after len(b), keeping len(b).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*cap(b)+n)
	copy(nb, b)
	return nb
}

// str decodes the JSON string at the cursor, appending its bytes to dst.
// Raw bytes must be valid UTF-8 (arbitrary bytes go in {"b64": ...});
// an escaped lone surrogate becomes U+FFFD, as encoding/json makes it.
func (j *jsonCursor) str(dst []byte) ([]byte, string) {
	start := j.i
	j.i++ // '"'
	b := j.b
	for {
		q := j.i
		ascii := true
		for q < len(b) {
			c := b[q]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			if c >= 0x80 {
				ascii = false
			}
			q++
		}
		if !ascii && !utf8.Valid(b[j.i:q]) {
			return dst, "a string that is not valid UTF-8 (use {\"b64\": ...} for bytes): " + excerpt(b[start:])
		}
		dst = append(dst, b[j.i:q]...)
		j.i = q
		if q == len(b) {
			return dst, "unterminated string: " + excerpt(b[start:])
		}
		switch c := b[q]; {
		case c == '"':
			j.i++
			return dst, ""
		case c < 0x20:
			return dst, "a control byte in a string (escape it): " + excerpt(b[start:])
		}
		// A backslash escape.
		if q+1 >= len(b) {
			return dst, "unterminated string: " + excerpt(b[start:])
		}
		switch c := b[q+1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r1, ok := hex4(b, q+2)
			if !ok {
				return dst, `bad \u escape (want 4 hex digits): ` + excerpt(b[q:])
			}
			j.i = q + 6
			if r1 >= 0xd800 && r1 < 0xdc00 {
				// A high surrogate: a pair makes one rune.
				if r2, ok := hex4(b, q+8); ok && q+7 < len(b) && b[q+6] == '\\' && b[q+7] == 'u' && r2 >= 0xdc00 && r2 < 0xe000 {
					dst = utf8.AppendRune(dst, (r1-0xd800)<<10+(r2-0xdc00)+0x10000)
					j.i = q + 12
					continue
				}
				r1 = utf8.RuneError
			} else if r1 >= 0xdc00 && r1 < 0xe000 {
				r1 = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r1)
			continue
		default:
			return dst, "bad escape in a string: " + excerpt(b[q:])
		}
		j.i = q + 2
	}
}

// hex4 reads 4 hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// number checks the JSON number at the cursor and returns its end.
func (j *jsonCursor) number() (int, bool) {
	b, i := j.b, j.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return j.i, false
	}
	if i < len(b) && b[i] == '.' {
		d := digitsEnd(b, i+1)
		if d == i+1 { // a fraction needs a digit
			return j.i, false
		}
		i = d
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := digitsEnd(b, i)
		if d == i { // so does an exponent
			return j.i, false
		}
		i = d
	}
	j.i = i
	return i, true
}

// digitsEnd is the end of the run of decimal digits at b[i:].
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// decimalNanos converts a valid JSON number of seconds to nanoseconds
// exactly, digits below the nanosecond dropped (toward zero).
func decimalNanos(b []byte) (int64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var mant uint64 // significant digits, at most 19
	exp := 9        // power of ten that mant is multiplied by, in ns
	nd := 0
	i := 0
	frac := false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' {
			frac = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		if nd == 0 && c == '0' {
			if frac {
				exp--
			}
			continue
		}
		if nd < 19 {
			mant = mant*10 + uint64(c-'0')
			nd++
			if frac {
				exp--
			}
		} else if !frac {
			exp++ // a dropped integer digit still counts
		}
	}
	if i < len(b) { // exponent
		i++
		eneg := false
		if b[i] == '+' || b[i] == '-' {
			eneg = b[i] == '-'
			i++
		}
		e := 0
		for ; i < len(b); i++ {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant == 0 {
		return 0, true
	}
	for ; exp < 0; exp++ {
		mant /= 10
		if mant == 0 {
			return 0, true
		}
	}
	for ; exp > 0; exp-- {
		if mant > (1<<63)/10 {
			return 0, false
		}
		mant *= 10
	}
	if neg {
		if mant > 1<<63 {
			return 0, false
		}
		return int64(-mant), true // -(1<<63) is math.MinInt64 too
	}
	if mant > 1<<63-1 {
		return 0, false
	}
	return int64(mant), true
}

// skipValue checks and passes over any JSON value (an ignored key's).
func (r *TraceReader) skipValue(j *jsonCursor, depth int) string {
	if depth > maxJSONDepth {
		return "bad JSON: nested deeper than " + itoa(maxJSONDepth)
	}
	if j.i >= len(j.b) {
		return j.want("a value")
	}
	switch c := j.b[j.i]; {
	case c == '"':
		var msg string
		r.key, msg = j.str(r.key[:0])
		return msg
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		j.i++
		j.ws()
		if j.at(closing) {
			j.i++
			return ""
		}
		for {
			if c == '{' {
				if _, msg := j.key(r.key[:0]); msg != "" {
					return msg
				}
			}
			if msg := r.skipValue(j, depth+1); msg != "" {
				return msg
			}
			if more, msg := j.next(closing); !more {
				return msg
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		if _, ok := j.number(); !ok {
			return j.want("a number")
		}
		return ""
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(j.b)-j.i >= len(lit) && string(j.b[j.i:j.i+len(lit)]) == lit {
			j.i += len(lit)
			return ""
		}
	}
	return j.want("a value")
}
