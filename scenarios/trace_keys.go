package scenarios

import "slices"

// PrefixKeys puts prefix in front of the arguments of argv at the indexes
// keys (argv[0] is the command; as cluster.KeyIndexes finds them, in any
// order, an index given twice prefixed once; sorted in place). It
// changes argv in place, pointing the keys into buf, and returns both; it
// allocates nothing when buf has room for the prefixed keys. Indexes
// outside argv are left alone.
func PrefixKeys(argv [][]byte, keys []int, prefix []byte, buf []byte) ([][]byte, []byte) {
	buf = buf[:0]
	if len(prefix) == 0 {
		return argv, buf
	}
	slices.Sort(keys)
	for n, i := range keys {
		if i <= 0 || i >= len(argv) || n > 0 && keys[n-1] == i {
			continue
		}
		// A buf that grows leaves the keys before in the old array,
		// where they stay valid.
		start := len(buf)
		buf = append(buf, prefix...)
		buf = append(buf, argv[i]...)
		argv[i] = buf[start:len(buf):len(buf)]
	}
	return argv, buf
}
