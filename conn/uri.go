package conn

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
)

// ApplyURI reads redis-benchmark's -u redis://[user:password@]host[:port][/db],
// or rediss:// for TLS, into o (network, address, user, password,
// database), and returns the host and whether the scheme was rediss. A
// URI without ':' in its userinfo holds only a password, as -u reads it.
// Its errors are usage errors that never show the password.
func (o *Options) ApplyURI(s string) (host string, rediss bool, err error) {
	u, perr := url.Parse(s)
	if perr != nil || u.Host == "" {
		// Not echoed: it may hold a password.
		return "", false, usage.Flagf("u", "{u}: want redis[s]://[user:password@]host[:port][/db]")
	}
	shown := u.Redacted() // never echo the password
	switch u.Scheme {
	case "redis":
	case "rediss":
		rediss = true
	default:
		return "", false, usage.Flagf("u", "{u} %q: want the redis:// or rediss:// (TLS) scheme", shown)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6379"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", false, usage.Flagf("u", "{u} %q: want a port between 1 and 65535", shown)
	}
	o.Network, o.Addr = "tcp", net.JoinHostPort(host, port)
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			o.User, o.Password = u.User.Username(), pw
		} else {
			o.Password = u.User.Username() // redis://password@host
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return "", false, usage.Flagf("u", "{u} %q: bad database number %q", shown, db)
		}
		o.DB = n
	}
	return host, rediss, nil
}
