package embedded

// globMatch reports whether s matches the glob pattern p as Redis's
// stringmatchlen does for PSUBSCRIBE and PUBSUB CHANNELS: * any run of
// bytes (slashes included), ? one byte, [abc], [^abc] and [a-z] a class,
// \x the byte x.
func globMatch(p, s []byte) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
			p = p[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			q := p[1:]
			not := len(q) > 0 && q[0] == '^'
			if not {
				q = q[1:]
			}
			match := false
			for len(q) > 0 && q[0] != ']' {
				switch {
				case q[0] == '\\' && len(q) > 1:
					match = match || q[1] == s[0]
					q = q[2:]
				case len(q) > 2 && q[1] == '-':
					lo, hi := q[0], q[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					match = match || lo <= s[0] && s[0] <= hi
					q = q[3:]
				default:
					match = match || q[0] == s[0]
					q = q[1:]
				}
			}
			if len(q) > 0 {
				q = q[1:] // the closing ]
			}
			if match == not {
				return false
			}
			s, p = s[1:], q
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}
