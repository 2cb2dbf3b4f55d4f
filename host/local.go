package host

import (
	"net"
	"net/netip"
	"os"
	"strings"
)

// IsLocal reports whether a target at addr (as net.Dial takes it, with or
// without a port) shares this host, so that the client's load and hiccups
// are the server's too: a Unix socket; TCP or UDP to a loopback address
// (127.0.0.0/8, ::1, "localhost"), to an unspecified one ("", 0.0.0.0, ::,
// which the kernel connects to this host), to one of this machine's
// interface addresses, or to this machine's host name. It looks up no
// names: any other name counts as not local.
func IsLocal(network, addr string) bool {
	return isLocal(network, addr, hostname, interfaceAddrs)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func interfaceAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// isLocal is IsLocal with the host name and the interface addresses
// injected, for tests.
func isLocal(network, addr string, self func() string, own func() []netip.Addr) bool {
	switch network {
	case "unix", "unixgram", "unixpacket":
		return true
	case "", "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
	default:
		return false
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	} else if strings.HasPrefix(addr, "[") && strings.HasSuffix(addr, "]") {
		host = addr[1 : len(addr)-1] // a bracketed IPv6 address without a port
	}
	if host == "" {
		return true // ":6379" dials this host
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return localIP(ip, own)
	}
	name := strings.TrimSuffix(host, ".")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	me := strings.TrimSuffix(self(), ".")
	return me != "" && strings.EqualFold(name, me)
}

func localIP(ip netip.Addr, own func() []netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	for _, o := range own() {
		if o.WithZone("") == ip {
			return true
		}
	}
	return false
}
