package sentinel

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// URI is what a Sentinel URI says: the sentinels, the master name, the
// database, the data nodes' user and password, the sentinels' own, and
// whether both speak TLS.
type URI struct {
	Sentinels []string
	Master    string
	DB        int
	// User and Password authenticate to the primary and its replicas.
	User, Password string
	// SentinelUser and SentinelPassword authenticate to the sentinels.
	SentinelUser, SentinelPassword string
	// TLS: rediss+sentinel://, TLS to the data nodes and the sentinels.
	TLS bool
}

// Schemes a Sentinel URI may have: redis+sentinel (and rediss+sentinel
// for TLS), as Python's and Java's vector and job libraries read it, and
// Lettuce's redis-sentinel (and rediss-sentinel).
var schemes = map[string]bool{"redis+sentinel": false, "rediss+sentinel": true, "redis-sentinel": false, "rediss-sentinel": true}

// IsURI reports whether s has a Sentinel scheme.
func IsURI(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	_, known := schemes[strings.ToLower(scheme)]
	return ok && known
}

// ParseURI reads
//
//	redis+sentinel://[user:password@]host[:port][,host[:port]...]/master[/db][?options]
//
// (rediss+sentinel:// for TLS), the sentinels' port defaulting to 26379,
// and Lettuce's redis-sentinel://...[/db]?sentinelMasterId=master. The
// user and password are the data nodes'; the options sentinel_username
// and sentinel_password (Lettuce has none) are the sentinels'. A
// password-only userinfo (redis+sentinel://secret@host/m) is the
// password. Its errors never show a password.
func ParseURI(s string) (URI, error) {
	var u URI
	scheme, rest, ok := strings.Cut(s, "://")
	tls, known := schemes[strings.ToLower(scheme)]
	if !ok || !known {
		return u, errors.New("want redis+sentinel://[user:password@]host[:port][,host[:port]...]/master[/db]")
	}
	u.TLS = tls
	lettuce := strings.Contains(strings.ToLower(scheme), "-")
	rest, query, _ := strings.Cut(rest, "?")
	hostsEnd := strings.Index(rest, "/")
	if hostsEnd < 0 {
		hostsEnd = len(rest)
	}
	// The userinfo ends at the last '@' before the path: a password may
	// hold '@'.
	if at := strings.LastIndex(rest[:hostsEnd], "@"); at >= 0 {
		info := rest[:at]
		user, pw, hasColon := strings.Cut(info, ":")
		if !hasColon {
			user, pw = "", info // redis+sentinel://password@host
		}
		var err error
		if u.User, err = url.PathUnescape(user); err != nil {
			return URI{}, errors.New("the user name has a bad %-escape")
		}
		if u.Password, err = url.PathUnescape(pw); err != nil {
			return URI{}, errors.New("the password has a bad %-escape")
		}
		rest = rest[at+1:]
		hostsEnd -= at + 1
	}
	hosts, path := rest[:hostsEnd], strings.Trim(rest[hostsEnd:], "/")
	var err error
	if u.Sentinels, err = ParseAddrs(hosts); err != nil {
		return URI{}, err
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return URI{}, errors.New("bad options after '?'")
	}
	u.SentinelUser, u.SentinelPassword = q.Get("sentinel_username"), q.Get("sentinel_password")
	parts := strings.Split(path, "/")
	if path == "" {
		parts = nil
	}
	db := ""
	switch {
	case lettuce:
		u.Master = q.Get("sentinelMasterId")
		if len(parts) > 1 {
			return URI{}, fmt.Errorf("%s: want /database after the sentinels, and ?sentinelMasterId=NAME", scheme)
		}
		if len(parts) == 1 {
			db = parts[0]
		}
		if d := q.Get("database"); d != "" {
			db = d
		}
	default:
		if len(parts) > 2 {
			return URI{}, errors.New("want /master[/db] after the sentinels")
		}
		if len(parts) > 0 {
			if u.Master, err = url.PathUnescape(parts[0]); err != nil {
				return URI{}, errors.New("the master name has a bad %-escape")
			}
		}
		if len(parts) == 2 {
			db = parts[1]
		}
	}
	if u.Master == "" {
		return URI{}, errors.New("no master name (redis+sentinel://host:port/NAME)")
	}
	if db != "" {
		if u.DB, err = strconv.Atoi(db); err != nil || u.DB < 0 {
			return URI{}, fmt.Errorf("bad database number %q", db)
		}
	}
	return u, nil
}
