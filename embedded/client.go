package embedded

// A connection's state as commands see it, and the commands that set it up:
// AUTH, HELLO, SELECT, CLIENT, PING.

import "crypto/subtle"

// client is one connection's state as commands see it.
type client struct {
	srv   *Server
	db    int
	proto int // 2 or 3 (HELLO 3)
	out   []byte
	name  string
	quit  bool // QUIT: answer, then close
	// noauth: the server has a password and the client has not given it
	// yet; every command but AUTH and QUIT is refused.
	noauth bool
	// ran and took are the table index of the last command executed (-1
	// for none: unknown, refused) and how long it took.
	ran  int
	took int64
	// mark, when set, is when the previous command of the chunk ended:
	// the next one starts there, which saves a clock reading per command.
	mark int64
	// cn is the client's connection; box its outbox once it subscribed,
	// touched the outboxes its batch delivered to (pubsub.go).
	cn      *connection
	box     *outbox
	touched []*outbox
	// A read blocked on streams (stream_groups.go): the keys it waits on
	// (nil: not blocked), until when (-1 forever, 0 not yet blocked),
	// XREAD's starting IDs, and what wakes it.
	block      [][]byte
	blockUntil int64
	blockFrom  []streamID
	wake       chan struct{}
	// track is its CLIENT TRACKING state, once it turned tracking on
	// (tracking.go).
	track *tracker
}

func cmdPing(c *client, a [][]byte) {
	if c.proto == 2 && c.box != nil && c.box.count() > 0 {
		// Subscribed, RESP2: PING answers as a push would.
		c.array(2)
		c.bulkString("pong")
		if len(a) > 1 {
			c.bulk(a[1])
		} else {
			c.bulkString("")
		}
		return
	}
	switch len(a) {
	case 1:
		c.simple("PONG")
	case 2:
		c.bulk(a[1])
	default:
		c.wrongArgs("ping")
	}
}

func cmdSelect(c *client, a [][]byte) {
	n, ok := parseInt(a[1])
	switch {
	case !ok:
		c.errorRaw(errNotInt)
	case n < 0 || n >= int64(len(c.srv.dbs)):
		c.errorf("ERR DB index is out of range")
	default:
		c.db = int(n)
		c.simple("OK")
	}
}

// cmdAuth checks AUTH [user] password against Config.User and
// Config.Password, as Redis does for one ACL user.
func cmdAuth(c *client, a [][]byte) {
	ok := false
	switch len(a) {
	case 2:
		ok = c.auth([]byte("default"), a[1])
	case 3:
		ok = c.auth(a[1], a[2])
	default:
		c.errorRaw(errSyntax)
		return
	}
	if ok {
		c.simple("OK")
	}
}

// auth authenticates the client as user with pass, or answers why not
// and reports false.
func (c *client) auth(user, pass []byte) bool {
	cfg := &c.srv.cfg
	if cfg.Password == "" {
		c.errorRaw(errNoPassword)
		return false
	}
	want := cfg.User
	if want == "" {
		want = "default"
	}
	userOK := subtle.ConstantTimeCompare(user, []byte(want)) == 1
	passOK := subtle.ConstantTimeCompare(pass, []byte(cfg.Password)) == 1
	if !userOK || !passOK {
		c.errorRaw(errWrongPass)
		return false
	}
	c.noauth = false
	return true
}

func cmdHello(c *client, a [][]byte) {
	if len(a) > 1 {
		v, ok := parseInt(a[1])
		if !ok || (v != 2 && v != 3) {
			c.errorf("NOPROTO unsupported protocol version")
			return
		}
		for i := 2; i < len(a); i++ {
			switch {
			case is(a[i], "AUTH") && i+2 < len(a):
				if !c.auth(a[i+1], a[i+2]) {
					return
				}
				i += 2
			case is(a[i], "AUTH"):
				c.errorRaw(errSyntax)
				return
			case is(a[i], "SETNAME") && i+1 < len(a):
				c.name = string(a[i+1])
				i++
			}
		}
		if c.noauth { // before the protocol changes
			c.errorRaw(errNoAuthHello)
			return
		}
		c.proto = int(v)
	}
	if c.noauth {
		c.errorRaw(errNoAuthHello)
		return
	}
	c.mapHeader(7)
	c.bulkString("server")
	c.bulkString("redis")
	c.bulkString("version")
	c.bulkString("7.2.0")
	c.bulkString("proto")
	c.integer(int64(c.proto))
	c.bulkString("id")
	c.integer(1)
	c.bulkString("mode")
	c.bulkString("standalone")
	c.bulkString("role")
	c.bulkString("master")
	c.bulkString("modules")
	c.array(0)
}

func cmdClient(c *client, a [][]byte) {
	switch sub := a[1]; {
	case is(sub, "SETNAME"):
		if len(a) == 3 {
			c.name = string(a[2])
		}
		c.simple("OK")
	case is(sub, "GETNAME"):
		if c.name == "" {
			c.null()
		} else {
			c.bulkString(c.name)
		}
	case is(sub, "ID"):
		c.integer(1)
	case is(sub, "TRACKING"), is(sub, "TRACKINGINFO"), is(sub, "CACHING"), is(sub, "GETREDIR"):
		clientTracking(c, a)
	case is(sub, "SETINFO"), is(sub, "REPLY"), is(sub, "NO-EVICT"), is(sub, "NO-TOUCH"):
		c.simple("OK")
	default:
		c.unknownSubcommand(sub, "CLIENT")
	}
}
