package embedded

import (
	"testing"
)

// FuzzServerInput feeds arbitrary bytes to the embedded server's parser and
// executes whatever parses, against a fresh keyspace: nothing may panic,
// and the dataset's running memory estimate must equal a recount.
func FuzzServerInput(f *testing.F) {
	for _, s := range []string{
		"PING\r\n", "*1\r\n$4\r\nPING\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$2\r\n-5\r\n$3\r\n100\r\n", "*4\r\n$4\r\nZADD\r\n$1\r\nz\r\n$3\r\nnan\r\n$1\r\nm\r\n",
		"*3\r\n$4\r\nSPOP\r\n$1\r\ns\r\n$2\r\n-1\r\n", "*2\r\n$6\r\nSELECT\r\n$2\r\n99\r\n", "*-1\r\n", "*1\r\n$-1\r\n",
		"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n", "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$1\r\n[\r\n",
		"RPUSH l a b c\r\nLPOP l 2\r\nSADD s x y\r\nSPOP s 1\r\nHSET h f v f w\r\nZADD z 1 a 2 a 3 b\r\nZPOPMIN z 5\r\nDEL l s h z\r\n",
		"SET k 1\r\nINCRBY k 9223372036854775806\r\nAPPEND k x\r\nGETSET k v\r\nMSET a 1 b 2\r\nFLUSHDB\r\nCOMMAND INFO get nosuch\r\n",
		"XADD s MAXLEN ~ 2 * f v\r\nXGROUP CREATE s g 0\r\nXREADGROUP GROUP g c COUNT 1 STREAMS s >\r\nXACK s g 0-1\r\nXPENDING s g\r\nXPENDING s g - + 10\r\nXINFO STREAM s\r\nXINFO GROUPS s\r\nXRANGE s - +\r\nXREAD STREAMS s 0\r\n",
		"SUBSCRIBE a b\r\nPSUBSCRIBE a*\r\nPUBLISH a m\r\nPING\r\nGET k\r\nUNSUBSCRIBE\r\nPUNSUBSCRIBE x\r\nSPUBLISH s m\r\nPUBSUB NUMSUB a\r\n",
		"HELLO 3\r\nCLIENT TRACKING on\r\nMGET a b\r\nSET a 1\r\nXREAD STREAMS s 0\r\nXADD s * f v\r\nCLIENT TRACKINGINFO\r\nFLUSHALL\r\nGET a\r\nCLIENT TRACKING off\r\n",
		"HELLO 3\r\nCLIENT TRACKING on BCAST PREFIX a PREFIX b NOLOOP\r\nMSET a1 x b2 y c3 z\r\nCLIENT TRACKING on BCAST PREFIX ab\r\nCLIENT TRACKING off\r\nCLIENT TRACKING on OPTIN\r\nCLIENT CACHING yes\r\nGET k\r\nDEL k\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := newServer(Config{}.withDefaults())
		cl := &client{srv: s, proto: 2}
		var all [][]byte
		for len(b) > 0 && !cl.quit {
			lo := len(all)
			var used int
			var err error
			all, used, _, err = parseCommand(b, all)
			if err != nil || used == 0 {
				break
			}
			if len(all) > lo {
				cl.exec(all[lo:])
			}
			b = b[used:]
		}
		if got, want := s.used, s.recount(t); got != want {
			t.Fatalf("running memory estimate %d, recount %d", got, want)
		}
		s.checkTracking(t)
	})
}

// recount computes the dataset's estimate from scratch, checking every
// object's running numbers on the way.
func (s *Server) recount(t *testing.T) int64 {
	var n int64
	for i, db := range s.dbs {
		for k, o := range db {
			if got, want := o.bytes, o.recount(); got != want {
				t.Errorf("db %d key %q: running bytes %d, recount %d", i, k, got, want)
			}
			if got, want := o.size, o.footprint(); got != want {
				t.Errorf("db %d key %q: charged %d, footprint %d", i, k, got, want)
			}
			n += keyCost(len(k)) + o.footprint()
		}
	}
	return n
}
