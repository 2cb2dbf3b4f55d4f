package scenarios

// PrefixKeys puts prefix in front of the arguments of argv at the key
// positions first..last every step, as cluster.KeySpec gives them (argv[0]
// is the command; last -1 is the last argument, -2 the one before, ...;
// first 0: no keys). It changes argv in place, pointing the keys into buf,
// and returns both; it allocates nothing when buf has room for the
// prefixed keys. Positions outside argv are left alone.
func PrefixKeys(argv [][]byte, first, last, step int, prefix []byte, buf []byte) ([][]byte, []byte) {
	buf = buf[:0]
	if first <= 0 || len(prefix) == 0 {
		return argv, buf
	}
	if last < 0 {
		last += len(argv)
	}
	last = min(last, len(argv)-1)
	step = max(step, 1)
	for i := first; i <= last; i += step {
		// A buf that grows leaves the keys before in the old array,
		// where they stay valid.
		start := len(buf)
		buf = append(buf, prefix...)
		buf = append(buf, argv[i]...)
		argv[i] = buf[start:len(buf):len(buf)]
	}
	return argv, buf
}
