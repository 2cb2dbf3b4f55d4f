package conn

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

func TestApplyURI(t *testing.T) {
	for _, tc := range []struct {
		uri, host, addr, user, pw string
		db                        int
		rediss                    bool
	}{
		{"redis://h", "h", "h:6379", "", "", 0, false},
		{"rediss://alice:p%40ss@h:7000/3", "h", "h:7000", "alice", "p@ss", 3, true},
		{"redis://secret@[::1]:1/", "::1", "[::1]:1", "", "secret", 0, false},
	} {
		o := Options{Network: "unix", Addr: "/sock"}
		host, rediss, err := o.ApplyURI(tc.uri)
		if err != nil || host != tc.host || rediss != tc.rediss || o.Network != "tcp" || o.Addr != tc.addr ||
			o.User != tc.user || o.Password != tc.pw || o.DB != tc.db {
			t.Errorf("%s: host %q rediss %v err %v, options %+v", tc.uri, host, rediss, err, o)
		}
	}
	for _, tc := range []struct{ uri, want string }{
		{"redis://alice:SECRET@h:notaport/0", "-u: want redis[s]://"},
		{"http://alice:SECRET@h", `-u "http://alice:xxxxx@h": want the redis:// or rediss://`},
		{"redis://alice:SECRET@h:70000", "want a port between 1 and 65535"},
		{"redis://alice:SECRET@h/x", `bad database number "x"`},
		{"redis://h/-1", `bad database number "-1"`},
	} {
		var o Options
		_, _, err := o.ApplyURI(tc.uri)
		if err == nil || !strings.Contains(usagetest.CLI(err), tc.want) || strings.Contains(usagetest.CLI(err), "SECRET") || !usage.Is(err) {
			t.Errorf("%s: %v, want a usage error with %q and no password", tc.uri, err, tc.want)
		}
	}
}
