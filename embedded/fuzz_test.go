package embedded

import (
	"testing"
)

// FuzzServerInput feeds arbitrary bytes to the embedded server's parser and
// executes whatever parses, against a fresh keyspace: nothing may panic.
func FuzzServerInput(f *testing.F) {
	for _, s := range []string{
		"PING\r\n", "*1\r\n$4\r\nPING\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$2\r\n-5\r\n$3\r\n100\r\n", "*4\r\n$4\r\nZADD\r\n$1\r\nz\r\n$3\r\nnan\r\n$1\r\nm\r\n",
		"*3\r\n$4\r\nSPOP\r\n$1\r\ns\r\n$2\r\n-1\r\n", "*2\r\n$6\r\nSELECT\r\n$2\r\n99\r\n", "*-1\r\n", "*1\r\n$-1\r\n",
		"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n", "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$1\r\n[\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &Server{stats: map[string]*cmdStat{}}
		for i := range s.dbs {
			s.dbs[i] = map[string]*object{}
		}
		cl := &client{srv: s, proto: 2}
		var all [][]byte
		for len(b) > 0 {
			lo := len(all)
			var used int
			var err error
			all, used, err = parseCommand(b, all)
			if err != nil || used == 0 {
				return
			}
			if len(all) > lo {
				if cl.exec(all[lo:]) {
					return
				}
			}
			b = b[used:]
		}
	})
}
