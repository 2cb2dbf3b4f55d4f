package embedded

// The reply writer: RESP2 and RESP3 encoders that append to the client's
// output, and Redis's error replies.

import (
	"strconv"
	"strings"
)

// Error replies, worded as Redis words them.
const (
	errWrongType   = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	errNotInt      = "-ERR value is not an integer or out of range\r\n"
	errSyntax      = "-ERR syntax error\r\n"
	errNotFloat    = "-ERR value is not a valid float\r\n"
	errOverflow    = "-ERR increment or decrement would overflow\r\n"
	errNotPositive = "-ERR value is out of range, must be positive\r\n"
	errNoPassword  = "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"
	errNoAuth      = "-NOAUTH Authentication required.\r\n"
	errNoAuthHello = "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"
	errWrongPass   = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	errTooLong     = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	// errOOM is Redis's reply (its prefix is what clients match) and a
	// hint for whoever meets it with the embedded target.
	errOOM = "-OOM command not allowed when used memory > 'maxmemory' (the embedded target's dataset limit: CONFIG GET maxmemory)\r\n"
)

func (c *client) simple(s string)   { c.out = append(append(append(c.out, '+'), s...), '\r', '\n') }
func (c *client) errorRaw(s string) { c.out = append(c.out, s...) }

// errorf appends msg as an error reply. CR and LF become spaces, as Redis
// does: msg may quote the client's words, which must not end the reply.
func (c *client) errorf(msg string) {
	c.out = append(c.out, '-')
	for i := 0; i < len(msg); i++ {
		ch := msg[i]
		if ch == '\r' || ch == '\n' {
			ch = ' '
		}
		c.out = append(c.out, ch)
	}
	c.out = append(c.out, '\r', '\n')
}

// line appends a type byte, the decimal n and CRLF: an integer reply, or
// the header of a bulk string or an aggregate.
func (c *client) line(kind byte, n int64) {
	c.out = append(c.out, kind)
	c.out = strconv.AppendInt(c.out, n, 10)
	c.out = append(c.out, '\r', '\n')
}

func (c *client) integer(n int64) { c.line(':', n) }

func (c *client) bulk(b []byte) {
	c.line('$', int64(len(b)))
	c.out = append(append(c.out, b...), '\r', '\n')
}

func (c *client) bulkString(s string) {
	c.line('$', int64(len(s)))
	c.out = append(append(c.out, s...), '\r', '\n')
}

// null is a missing value: RESP2's null bulk string.
func (c *client) null() { c.nullOr("$-1\r\n") }

// nullArray is a missing aggregate: RESP2's null array.
func (c *client) nullArray() { c.nullOr("*-1\r\n") }

// nullOr appends RESP3's null, or resp2 to a RESP2 client.
func (c *client) nullOr(resp2 string) {
	if c.proto == 3 {
		resp2 = "_\r\n"
	}
	c.out = append(c.out, resp2...)
}

func (c *client) array(n int) { c.line('*', int64(n)) }

// mapHeader starts a map of n pairs: RESP2 sends it as an array of 2n.
func (c *client) mapHeader(n int) {
	if c.proto == 3 {
		c.line('%', int64(n))
		return
	}
	c.array(2 * n)
}

// setHeader starts a set of n members: RESP2 sends it as an array.
func (c *client) setHeader(n int) {
	if c.proto == 3 {
		c.line('~', int64(n))
		return
	}
	c.array(n)
}

// float is a double: RESP2 sends it as a bulk string.
func (c *client) float(f float64) {
	if c.proto != 3 {
		c.bulkFloat(f)
		return
	}
	c.out = append(c.out, ',')
	c.out = strconv.AppendFloat(c.out, f, 'g', 17, 64)
	c.out = append(c.out, '\r', '\n')
}

// bulkFloat is f as a bulk string, in Redis's %.17g.
func (c *client) bulkFloat(f float64) {
	var digits [32]byte // the longest, -1.2345678901234567e-308, takes 24
	c.bulk(strconv.AppendFloat(digits[:0], f, 'g', 17, 64))
}

func (c *client) boolean(b bool) {
	if b {
		c.integer(1)
	} else {
		c.integer(0)
	}
}

// wrongArgs is Redis's arity error; name is the command's lower-case name
// ("config|get" for a subcommand).
func (c *client) wrongArgs(name string) {
	c.errorf("ERR wrong number of arguments for '" + name + "' command")
}

// quoteLimit is how much of the client's words an error reply quotes, as
// Redis's.
const quoteLimit = 128

// unknownCommand is Redis's reply to a command it does not have: the name
// and the first arguments, quoted up to quoteLimit bytes.
func (c *client) unknownCommand(args [][]byte) {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(args[0][:min(len(args[0]), quoteLimit)])
	b.WriteString("', with args beginning with: ")
	quoted := 0
	for _, a := range args[1:] {
		if quoted >= quoteLimit {
			break
		}
		a = a[:min(len(a), quoteLimit-quoted)]
		b.WriteString("'")
		b.Write(a)
		b.WriteString("' ")
		quoted += len(a) + 3
	}
	c.errorf(b.String())
}

// unknownSubcommand is Redis's reply to a subcommand it does not have.
func (c *client) unknownSubcommand(sub []byte, cmd string) {
	c.errorf("ERR unknown subcommand '" + string(sub[:min(len(sub), quoteLimit)]) + "'. Try " + cmd + " HELP.")
}
