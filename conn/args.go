package conn

// Reading the arguments of an encoded command (a RESP array of bulk
// strings, as AppendCommand and the scenarios' templates write it), in
// place and without allocating: the cluster's router finds a command's keys
// this way on the hot path.

// ArgCount returns the number of arguments of an encoded command; ok is
// false when cmd is not a RESP array (an inline command) or its header is
// cut.
func ArgCount(cmd []byte) (n int, ok bool) {
	if len(cmd) < 4 || cmd[0] != '*' {
		return 0, false
	}
	n, _, ok = respInt(cmd, 1)
	return n, ok
}

// ArgBounds finds argument pos (0: the command's name) of an encoded
// command: it is cmd[from:to]. ok is false when cmd is not a RESP array,
// has no argument pos, or is cut before its end.
func ArgBounds(cmd []byte, pos int) (from, to int, ok bool) {
	if len(cmd) < 4 || cmd[0] != '*' {
		return 0, 0, false
	}
	n, i, ok := respInt(cmd, 1)
	if !ok || pos < 0 || pos >= n {
		return 0, 0, false
	}
	for a := 0; a <= pos; a++ {
		if i >= len(cmd) || cmd[i] != '$' {
			return 0, 0, false
		}
		var l int
		if l, i, ok = respInt(cmd, i+1); !ok || i+l+2 > len(cmd) {
			return 0, 0, false
		}
		if a == pos {
			return i, i + l, true
		}
		i += l + 2
	}
	return 0, 0, false
}

// Arg returns argument pos (0: the command's name) of an encoded command,
// without copying; ok is false as for ArgBounds.
func Arg(cmd []byte, pos int) ([]byte, bool) {
	from, to, ok := ArgBounds(cmd, pos)
	if !ok {
		return nil, false
	}
	return cmd[from:to], true
}

// respInt reads a decimal number of at most ten digits ending in CRLF at
// cmd[i:], returning it and the index past the CRLF.
func respInt(cmd []byte, i int) (int, int, bool) {
	n, digits := 0, 0
	for ; i < len(cmd) && cmd[i] >= '0' && cmd[i] <= '9'; i++ {
		n = n*10 + int(cmd[i]-'0')
		if digits++; digits > 10 {
			return 0, 0, false
		}
	}
	if digits == 0 || i+1 >= len(cmd) || cmd[i] != '\r' || cmd[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}
