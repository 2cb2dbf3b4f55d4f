// Package sentinel finds a Redis primary and its replicas through Redis
// Sentinel, and follows its failovers: Discover asks the sentinels in
// order, skipping those that do not answer within a bounded time; a
// Follower keeps the primary's address current from the sentinels'
// +switch-master messages, subscribing again on another sentinel when the
// one it listens to goes away, and notes what the sentinels announce as
// events (package events) of the run in progress.
//
// It dials and asks through package conn, and never prints: the user's
// connection settings for the sentinels (their own user and password,
// TLS) come in Config.
package sentinel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/usage"
)

// DefaultPort is a sentinel's port when its address names none.
const DefaultPort = 26379

// DefaultTimeout bounds each sentinel's dial and answer: a sentinel that
// is down, or frozen, costs at most this before the next is asked.
const DefaultTimeout = time.Second

// Config says where the sentinels are and which primary they watch.
type Config struct {
	// Addrs are the sentinels, host:port, asked in this order.
	Addrs []string
	// Master is the name the sentinels monitor the primary under.
	Master string
	// Options reach a sentinel: its user and password, TLS, the clock.
	// Network and Addr are set per sentinel; the database, RESP3 and
	// tracking are not used.
	Options conn.Options
	// Timeout bounds each sentinel's dial and answer. Default
	// DefaultTimeout.
	Timeout time.Duration
}

// ParseAddrs reads a comma-separated list of sentinels, host[:port]
// each (DefaultPort when absent), as --sentinel takes it.
func ParseAddrs(s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		addr, err := hostPort(a)
		if err != nil {
			return nil, err
		}
		out = append(out, addr)
	}
	if len(out) == 0 {
		return nil, errors.New("no sentinel address (want HOST:PORT[,HOST:PORT...])")
	}
	return out, nil
}

// hostPort reads host[:port] (an IPv6 host in brackets), giving it
// DefaultPort when it has none.
func hostPort(a string) (string, error) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		// No port: a bare host, or an IPv6 address in brackets.
		host, port = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"), strconv.Itoa(DefaultPort)
		if strings.ContainsAny(host, "[]") || strings.Count(a, ":") == 1 {
			return "", fmt.Errorf("sentinel %q: want HOST:PORT", a)
		}
	}
	if host == "" {
		return "", fmt.Errorf("sentinel %q: no host", a)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("sentinel %q: want a port between 1 and 65535", a)
	}
	return net.JoinHostPort(host, port), nil
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if len(c.Addrs) == 0 {
		return errors.New("no sentinel to ask")
	}
	if c.Master == "" {
		return usage.Option("master", "no master name ({master})")
	}
	return nil
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// options reaches sentinel addr.
func (c Config) options(addr string) conn.Options {
	o := c.Options.ForAddr(addr)
	o.Network, o.Addr = "tcp", addr
	o.DB, o.RESP3, o.ClientTracking = 0, false, false
	o.DialTimeout = c.timeout()
	o.OnTLSHandshake = nil
	return o
}

// Replica is a replica as a sentinel lists it.
type Replica struct {
	Addr string
	// Flags are the sentinel's ("slave", "slave,s_down", ...); Up says
	// the replica is usable: not down, not disconnected, its link to the
	// primary up.
	Flags string
	Up    bool
}

// Topology is what a sentinel says of the primary it watches.
type Topology struct {
	Primary  string
	Replicas []Replica
	// ConfigEpoch is the sentinel's configuration epoch of the primary
	// (SENTINEL MASTER's config-epoch): a failover makes it greater, so a
	// sentinel that answers with a lower one has not heard of the latest
	// failover yet. -1 when it was not read.
	ConfigEpoch int64
	// From is the sentinel that answered; Skipped the ones asked before
	// it that did not, each with why.
	From    string
	Skipped []string
}

// Discover asks the sentinels, in order, for the primary watched under
// Master and its replicas. A sentinel that cannot be reached, does not
// answer within the timeout, refuses (a wrong password) or does not know
// the name is skipped; when none answers, the error names each with why.
func Discover(ctx context.Context, c Config) (Topology, error) {
	if err := c.Validate(); err != nil {
		return Topology{}, err
	}
	var skipped []string
	for _, addr := range c.Addrs {
		if ctx.Err() != nil {
			return Topology{}, ctx.Err()
		}
		t, err := ask(ctx, c, addr)
		if err == nil {
			t.From, t.Skipped = addr, skipped
			return t, nil
		}
		skipped = append(skipped, addr+": "+err.Error())
	}
	return Topology{}, fmt.Errorf("no sentinel answered for master %q (%s)", c.Master, strings.Join(skipped, "; "))
}

// ask asks sentinel addr for the primary and its replicas.
func ask(ctx context.Context, c Config, addr string) (Topology, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*c.timeout())
	defer cancel()
	ans, err := conn.DoAll(ctx, c.options(addr),
		[]string{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", c.Master},
		[]string{"SENTINEL", "REPLICAS", c.Master},
		[]string{"SENTINEL", "MASTER", c.Master})
	if err != nil {
		return Topology{}, err
	}
	if ans[0].Err != nil {
		return Topology{}, ans[0].Err
	}
	primary, err := primaryOf(ans[0].Value)
	if err != nil {
		return Topology{}, fmt.Errorf("master %q: %w", c.Master, err)
	}
	t := Topology{Primary: primary, ConfigEpoch: -1}
	if ans[1].Err == nil {
		t.Replicas = replicasOf(ans[1].Value)
	}
	if len(ans) > 2 && ans[2].Err == nil {
		if e, err := strconv.ParseInt(fieldsOf(ans[2].Value)["config-epoch"], 10, 64); err == nil && e >= 0 {
			t.ConfigEpoch = e
		}
	}
	return t, nil
}

// primaryOf reads GET-MASTER-ADDR-BY-NAME's [ip, port].
func primaryOf(v conn.Value) (string, error) {
	if v.Nil || len(v.Elems) == 0 {
		return "", errors.New("the sentinel does not know it")
	}
	if len(v.Elems) != 2 {
		return "", fmt.Errorf("want an address and a port, got %d values", len(v.Elems))
	}
	port := v.Elems[1].Str
	if v.Elems[1].Kind == ':' {
		port = strconv.FormatInt(v.Elems[1].Int, 10)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || v.Elems[0].Str == "" {
		return "", fmt.Errorf("bad address %q port %q", v.Elems[0].Str, port)
	}
	return net.JoinHostPort(v.Elems[0].Str, port), nil
}

// fieldsOf reads a sentinel's description of one server: a flat list
// (RESP2) or a map (RESP3) of name, value pairs.
func fieldsOf(v conn.Value) map[string]string {
	f := map[string]string{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		val := v.Elems[i+1]
		s := val.Str
		if val.Kind == ':' {
			s = strconv.FormatInt(val.Int, 10)
		}
		f[v.Elems[i].Str] = s
	}
	return f
}

// replicasOf reads SENTINEL REPLICAS: per replica a flat list (RESP2)
// or a map (RESP3) of name, value pairs.
func replicasOf(v conn.Value) []Replica {
	var out []Replica
	for _, r := range v.Elems {
		f := fieldsOf(r)
		if f["ip"] == "" || f["port"] == "" {
			continue
		}
		flags := f["flags"]
		up := !strings.Contains(flags, "s_down") && !strings.Contains(flags, "o_down") &&
			!strings.Contains(flags, "disconnected") && (f["master-link-status"] == "" || f["master-link-status"] == "ok")
		out = append(out, Replica{Addr: net.JoinHostPort(f["ip"], f["port"]), Flags: flags, Up: up})
	}
	return out
}
