package scenarios

// Redis MONITOR output, as `redis-cli monitor` writes it. Redis (7.x,
// replicationFeedMonitors) sends each command as a status reply
//
//	+1339518083.107412 [0 127.0.0.1:60866] "SET" "k" "v"
//
// and redis-cli prints it without the "+". The timestamp is seconds and
// six digits of microseconds; then, in brackets, the database and the
// source: ip:port, [ipv6]:port, unix:<the server's socket path>, or "lua"
// for a command a script ran. Every argument is in double quotes, escaped
// as sds.c's sdscatrepr does: \\ \" \n \r \t \a \b, \xhh for any other
// byte that is not printable ASCII (so UTF-8 comes as \xhh too), printable
// bytes as they are; one space between arguments. Integer-encoded
// arguments are printed the same way ("%ld" in quotes). Very old servers
// (before 2.6) printed no bracket: such lines are read with db 0 and no
// client.
//
// What MONITOR leaves out or changes: Redis 7 never shows commands flagged
// admin (CONFIG, DEBUG, SHUTDOWN, ACL, CLIENT KILL, ...), and it shows
// credentials as "(redacted)" (AUTH, HELLO's AUTH, MIGRATE's AUTH and
// AUTH2). Those lines are read as they are; the replay policy skips AUTH
// and HELLO by default (trace_policy.go).

import "strconv"

// parseMonitor parses one MONITOR line (trimmed, not "OK") into r.rec and
// r.argv. It returns what is wrong ("" when nothing) and whether a script
// ran the command.
func (r *TraceReader) parseMonitor(line []byte) (msg string, lua bool) {
	p := 0
	if line[0] == '+' { // a raw capture of the status reply
		p = 1
	}
	t, n, ok := parseStamp(line[p:])
	if !ok {
		return "bad timestamp (want seconds.microseconds): " + excerpt(line[p:]), false
	}
	r.rec.T = t
	p += n
	if p >= len(line) || line[p] != ' ' {
		return "bad timestamp (want seconds.microseconds and a space): " + excerpt(line), false
	}
	p++
	if p < len(line) && line[p] == '[' {
		m, lua := r.parseSource(line, p)
		if m < 0 {
			if line[len(line)-1] == ']' {
				return "no command after the source: " + excerpt(line[p:]), false
			}
			return "bad source or arguments (want [DB ADDRESS] \"ARG\" ...): " + excerpt(line[p:]), false
		}
		p = m
		if lua {
			r.rec.Client = "lua"
		}
		return r.parseMonitorArgs(line, p), lua
	}
	return r.parseMonitorArgs(line, p), false
}

// parseStamp reads "seconds.fraction" (1 to 9 digits of fraction) into
// nanoseconds, returning the bytes it took.
func parseStamp(b []byte) (ns int64, n int, ok bool) {
	var sec int64
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n >= 11 { // no clock has 11 digits of seconds
			return 0, 0, false
		}
		sec = sec*10 + int64(b[n]-'0')
		n++
	}
	// Beyond 9223372035 s (year 2262) nanoseconds overflow an int64.
	if n == 0 || n >= len(b) || b[n] != '.' || sec > 9223372035 {
		return 0, 0, false
	}
	n++
	var frac int64
	digits := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if digits == 9 {
			return 0, 0, false
		}
		frac = frac*10 + int64(b[n]-'0')
		digits++
		n++
	}
	if digits == 0 {
		return 0, 0, false
	}
	for ; digits < 9; digits++ {
		frac *= 10
	}
	return sec*1e9 + frac, n, true
}

// sourceEnd ends the bracket: the source may itself hold brackets
// ([::1]:6379) but an argument always starts with a quote.
var sourceEnd = []byte(`] "`)

// parseSource reads "[DB SOURCE] " at line[p], setting r.rec.DB and
// r.rec.Client. It returns where the arguments start (-1: malformed) and
// whether the source is a script.
func (r *TraceReader) parseSource(line []byte, p int) (int, bool) {
	p++ // '['
	db, digits := 0, 0
	for p < len(line) && line[p] >= '0' && line[p] <= '9' {
		if digits == 9 {
			return -1, false
		}
		db = db*10 + int(line[p]-'0')
		digits++
		p++
	}
	if digits == 0 || p >= len(line) || line[p] != ' ' {
		return -1, false
	}
	p++
	end := indexFrom(line, p, sourceEnd)
	if end < 0 || end == p {
		return -1, false
	}
	r.rec.DB = db
	src := line[p:end]
	lua := string(src) == "lua"
	r.rec.Client = r.intern(src)
	return end + 2, lua
}

func indexFrom(b []byte, from int, sep []byte) int {
	for i := from; i+len(sep) <= len(b); i++ {
		if b[i] == sep[0] && b[i+1] == sep[1] && b[i+2] == sep[2] {
			return i
		}
	}
	return -1
}

// parseMonitorArgs reads the quoted arguments from line[p] on, decoding
// them into r.args.
func (r *TraceReader) parseMonitorArgs(line []byte, p int) string {
	if p >= len(line) {
		return "no command after the source"
	}
	for k := 1; ; k++ {
		if line[p] != '"' {
			return "argument " + itoa(k) + ": want a quoted string at byte " + itoa(p+1) + ", got " + excerpt(line[p:])
		}
		start := p
		p++
		a := len(r.args)
		closed := false
	scan:
		for p < len(line) {
			// Copy the run up to the next quote or backslash at once.
			q := p
			for q < len(line) && line[q] != '"' && line[q] != '\\' {
				q++
			}
			r.args = append(r.args, line[p:q]...)
			p = q
			if p == len(line) {
				break
			}
			if line[p] == '"' {
				p++
				closed = true
				break scan
			}
			// A backslash escape.
			if p+1 >= len(line) {
				break
			}
			c := line[p+1]
			switch c {
			case '\\', '"':
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'a':
				c = '\a'
			case 'b':
				c = '\b'
			case 'x':
				if p+3 >= len(line) {
					return "argument " + itoa(k) + ": bad escape at byte " + itoa(p+1) + " (\\x wants two hex digits): " + excerpt(line[p:])
				}
				hi, ok1 := unhex(line[p+2])
				lo, ok2 := unhex(line[p+3])
				if !ok1 || !ok2 {
					return "argument " + itoa(k) + ": bad escape at byte " + itoa(p+1) + " (\\x wants two hex digits): " + excerpt(line[p:])
				}
				r.args = append(r.args, hi<<4|lo)
				p += 4
				continue
			default:
				return "argument " + itoa(k) + ": bad escape at byte " + itoa(p+1) + " (MONITOR writes \\\\ \\\" \\n \\r \\t \\a \\b \\xhh): " + excerpt(line[p:])
			}
			r.args = append(r.args, c)
			p += 2
		}
		if !closed {
			return "argument " + itoa(k) + ": unterminated quote: " + excerpt(line[start:])
		}
		r.argv = append(r.argv, r.args[a:len(r.args):len(r.args)])
		if p == len(line) {
			return ""
		}
		if line[p] != ' ' || p+1 == len(line) {
			return "after argument " + itoa(k) + ": want a space and a quoted string at byte " + itoa(p+1) + ", got " + excerpt(line[p:])
		}
		p++
	}
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func itoa(n int) string { return strconv.Itoa(n) }

// appendMonitorArg appends arg quoted as MONITOR prints it (sds.c's
// sdscatrepr): for writing MONITOR-format fixtures and checking the
// parser against the server.
func appendMonitorArg(dst, arg []byte) []byte {
	const hexdigits = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range arg {
		switch c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c >= 0x20 && c < 0x7f {
				dst = append(dst, c)
			} else {
				dst = append(dst, '\\', 'x', hexdigits[c>>4], hexdigits[c&0xf])
			}
		}
	}
	return append(dst, '"')
}
