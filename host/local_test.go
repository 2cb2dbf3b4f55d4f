package host

import (
	"net/netip"
	"testing"
)

func TestIsLocal(t *testing.T) {
	own := func() []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.1.2.3"),
			netip.MustParseAddr("fe80::1"), netip.MustParseAddr("2001:db8::5")}
	}
	self := func() string { return "build-7.example" }
	for _, c := range []struct {
		network, addr string
		want          bool
	}{
		{"unix", "/tmp/redis.sock", true},
		{"unixpacket", "/tmp/x", true},
		{"tcp", "127.0.0.1:6379", true},
		{"tcp", "127.200.3.4:6379", true}, // all of 127.0.0.0/8
		{"tcp4", "127.0.0.1:6379", true},
		{"tcp", "[::1]:6379", true},
		{"tcp6", "::1", true},  // no port
		{"tcp", "[::1]", true}, // bracketed, no port
		{"tcp", "[::ffff:127.0.0.1]:6379", true},
		{"tcp", "localhost:6379", true},
		{"tcp", "LocalHost.:6379", true},
		{"tcp", "localhost", true},
		{"tcp", ":6379", true},        // dials this host
		{"tcp", "0.0.0.0:6379", true}, // so does the unspecified address
		{"tcp", "[::]:6379", true},
		{"tcp", "10.1.2.3:6379", true}, // an interface address
		{"tcp", "[fe80::1%eth0]:6379", true},
		{"tcp", "[2001:db8::5]:6379", true},
		{"", "10.1.2.3:6379", true}, // Dial's default network is tcp's
		{"udp", "127.0.0.1:53", true},
		{"tcp", "10.1.2.4:6379", false},
		{"tcp", "[2001:db8::6]:6379", false},
		{"tcp", "192.0.2.1:6379", false},
		{"tcp", "build-7.example:6379", true}, // this machine's name
		{"tcp", "BUILD-7.example.:6379", true},
		{"tcp", "build-8.example:6379", false}, // no lookup: another name is not local
		{"tcp", "localhost.example:6379", false},
		{"ip", "127.0.0.1", false}, // not a network a target is dialled on
	} {
		if got := isLocal(c.network, c.addr, self, own); got != c.want {
			t.Errorf("isLocal(%q, %q) = %v, want %v", c.network, c.addr, got, c.want)
		}
	}
	if isLocal("tcp", "anything:1", func() string { return "" }, own) {
		t.Error("an unknown host name matched an empty one")
	}
}

// The real IsLocal on addresses that need no lookup.
func TestIsLocalSmoke(t *testing.T) {
	if !IsLocal("tcp", "127.0.0.1:6379") || !IsLocal("tcp", "localhost:6379") || !IsLocal("unix", "/tmp/s") {
		t.Error("loopback targets are not local")
	}
	if IsLocal("tcp", "192.0.2.1:6379") { // TEST-NET-1: no machine has it
		t.Error("192.0.2.1 is local")
	}
	if h := hostname(); h != "" && !IsLocal("tcp", h+":6379") {
		t.Errorf("this machine's name %q is not local", h)
	}
}
