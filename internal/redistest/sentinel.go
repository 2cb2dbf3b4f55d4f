package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SentinelOptions configure StartSentinels.
type SentinelOptions struct {
	// Master is the name the sentinels monitor the primary under; "m"
	// when empty.
	Master string
	// User and Password, when Password is set, make the sentinels require
	// them (an ACL user with every permission; the default user is off);
	// the sentinels authenticate to each other with them too.
	User, Password string
	// DataPassword is the data nodes' password (sentinel auth-pass).
	DataPassword string
	// DownAfter is how long the primary must not answer before a sentinel
	// thinks it down; 1 s when zero.
	DownAfter time.Duration
}

// Sentinels are redis-sentinel processes monitoring a Replicated set,
// started by StartSentinels.
type Sentinels struct {
	Nodes  []*Server
	Master string
	Set    *Replicated
}

// Addrs returns the sentinels' addresses, comma-separated, as --sentinel
// takes them.
func (s *Sentinels) Addrs() string {
	a := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		a[i] = n.Addr
	}
	return strings.Join(a, ",")
}

// sentinelBinary is redis-sentinel's path and the arguments that make it
// one: Debian's redis-sentinel, or redis-server --sentinel where only
// that is installed.
func sentinelBinary(t testing.TB) (string, []string) {
	t.Helper()
	if p := find("redis-sentinel"); p != "" {
		return p, nil
	}
	return Binary(t, "redis-server"), []string{"--sentinel"}
}

// StartSentinels starts n sentinels (n ≥ 1; three give a quorum of two)
// on free loopback ports, monitoring set's primary, each with its own
// configuration file (a sentinel rewrites it), over TLS when the set's
// servers speak TLS (same certificates, TLS to the data nodes and between
// sentinels). It waits until every sentinel knows every replica and every
// other sentinel, and stops them at the end of the test.
func StartSentinels(t testing.TB, set *Replicated, n int, o SentinelOptions) *Sentinels {
	t.Helper()
	if o.Master == "" {
		o.Master = "m"
	}
	if o.DownAfter <= 0 {
		o.DownAfter = time.Second
	}
	bin, pre := sentinelBinary(t)
	s := &Sentinels{Master: o.Master, Set: set}
	for range n {
		var last error
		for range 5 { // another process may take the port first
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			sn, err := startSentinel(bin, pre, port, t.TempDir(), set, o)
			if err == nil {
				t.Cleanup(sn.Stop)
				s.Nodes = append(s.Nodes, sn)
				last = nil
				break
			}
			last = err
		}
		if last != nil {
			t.Fatalf("start redis-sentinel: %v", last)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.WaitKnown(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// startSentinel writes a sentinel's configuration into dir and starts it
// on port.
func startSentinel(bin string, pre []string, port int, dir string, set *Replicated, o SentinelOptions) (*Server, error) {
	tf := set.Primary.TLS
	var conf strings.Builder
	p := strconv.Itoa(port)
	if tf != nil {
		fmt.Fprintf(&conf, "port 0\ntls-port %s\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients no\ntls-replication yes\n",
			p, tf.ServerCert, tf.ServerKey, tf.CA)
	} else {
		fmt.Fprintf(&conf, "port %s\n", p)
	}
	fmt.Fprintf(&conf, "bind 127.0.0.1\ndaemonize no\ndir %s\nlogfile %s\npidfile %s\n",
		dir, filepath.Join(dir, "sentinel.log"), filepath.Join(dir, "redis.pid"))
	if o.Password != "" {
		user := o.User
		if user == "" {
			user = "default"
		}
		fmt.Fprintf(&conf, "user default off\nuser %s on >%s ~* &* +@all\nsentinel sentinel-user %s\nsentinel sentinel-pass %s\n", user, o.Password, user, o.Password)
	}
	m := o.Master
	fmt.Fprintf(&conf, "sentinel monitor %s 127.0.0.1 %s 2\nsentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s 10000\nsentinel parallel-syncs %s 1\n",
		m, set.Primary.PortString(), m, o.DownAfter.Milliseconds(), m, m)
	if o.DataPassword != "" {
		fmt.Fprintf(&conf, "sentinel auth-pass %s %s\n", m, o.DataPassword)
	}
	path := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{path}, pre...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	errPath := filepath.Join(dir, "stderr.log")
	if f, err := os.Create(errPath); err == nil {
		cmd.Stderr = f
		defer f.Close()
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + p, Port: port, cmd: cmd, dir: dir, bin: bin, TLS: tf, user: o.User, password: o.Password}
	if o.Password != "" && o.User == "" {
		s.user = "default"
	}
	if err := s.awaitStart(errPath, "sentinel.log"); err != nil {
		return nil, err
	}
	return s, nil
}

// WaitKnown waits until every sentinel knows the primary's replicas, none
// of them down, and every other sentinel.
func (s *Sentinels) WaitKnown(ctx context.Context) error {
	why := ""
	for {
		if why = s.known(); why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sentinels not ready: %s", why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// known says why the sentinels are not ready yet, "" when they are.
func (s *Sentinels) known() string {
	for _, sn := range s.Nodes {
		v, err := sn.Query("SENTINEL", "REPLICAS", s.Master)
		if err != nil {
			return sn.Addr + ": " + err.Error()
		}
		up := 0
		for _, r := range list(v) {
			if f := fieldsOf(r)["flags"]; f == "slave" {
				up++
			}
		}
		if up < len(s.Set.Replicas) {
			return fmt.Sprintf("%s knows %d of %d replicas", sn.Addr, up, len(s.Set.Replicas))
		}
		v, err = sn.Query("SENTINEL", "SENTINELS", s.Master)
		if err != nil {
			return sn.Addr + ": " + err.Error()
		}
		if got := len(list(v)); got < len(s.Nodes)-1 {
			return fmt.Sprintf("%s knows %d of %d other sentinels", sn.Addr, got, len(s.Nodes)-1)
		}
	}
	return ""
}

// list reads an array reply.
func list(v any) []any {
	a, _ := v.([]any)
	return a
}

// fieldsOf reads a flat name, value, name, value… array reply.
func fieldsOf(v any) map[string]string {
	a := list(v)
	m := map[string]string{}
	for i := 0; i+1 < len(a); i += 2 {
		k, _ := a[i].(string)
		m[k] = fmt.Sprint(a[i+1])
	}
	return m
}

// PrimaryAddr is the primary's address as sentinel i says it.
func (s *Sentinels) PrimaryAddr(i int) (string, error) {
	v, err := s.Nodes[i].Query("SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.Master)
	if err != nil {
		return "", err
	}
	a := list(v)
	if len(a) != 2 {
		return "", fmt.Errorf("GET-MASTER-ADDR-BY-NAME %s: %v", s.Master, v)
	}
	return fmt.Sprintf("%v:%v", a[0], a[1]), nil
}

// Switch is a failover as the sentinels announced it (+switch-master):
// when the first of them reached the test, and the primary's address
// before and after.
type Switch struct {
	At       time.Time
	From, To string
}

// Failover forces a failover through sentinel i (SENTINEL FAILOVER, which
// asks no other sentinel) and waits for the sentinels' +switch-master,
// watched on a subscription to each of them opened before the command:
// At is when the first arrived. It returns within ctx (give it 30 s).
func (s *Sentinels) Failover(ctx context.Context, i int) (Switch, error) {
	got := make(chan Switch, len(s.Nodes))
	errs := make(chan error, len(s.Nodes))
	var subs []*session
	defer func() {
		for _, q := range subs {
			q.Close()
		}
	}()
	for _, sn := range s.Nodes {
		q, err := sn.open()
		if err != nil {
			continue // a sentinel a test killed
		}
		subs = append(subs, q)
		if dl, ok := ctx.Deadline(); ok {
			_ = q.c.SetDeadline(dl)
		}
		if _, err := q.query("SUBSCRIBE", "+switch-master"); err != nil {
			return Switch{}, err
		}
		go func() {
			sw, err := s.awaitSwitch(q)
			if err != nil {
				errs <- err
				return
			}
			got <- sw
		}()
	}
	if len(subs) == 0 {
		return Switch{}, fmt.Errorf("no sentinel to subscribe to")
	}
	stop := context.AfterFunc(ctx, func() {
		for _, q := range subs {
			q.Close()
		}
	})
	defer stop()
	if _, err := s.Nodes[i].Query("SENTINEL", "FAILOVER", s.Master); err != nil {
		return Switch{}, fmt.Errorf("SENTINEL FAILOVER %s: %w", s.Master, err)
	}
	for range subs {
		select {
		case sw := <-got:
			return sw, nil
		case <-errs:
		}
	}
	return Switch{}, fmt.Errorf("waiting for +switch-master: no sentinel announced it: %w", ctx.Err())
}

// awaitSwitch reads q's messages until a +switch-master of the master.
func (s *Sentinels) awaitSwitch(q *session) (Switch, error) {
	for {
		v, err := readAny(q.r)
		if err != nil {
			return Switch{}, err
		}
		at := time.Now()
		msg := list(v)
		if len(msg) != 3 || msg[0] != "message" {
			continue
		}
		// "<name> <old-ip> <old-port> <new-ip> <new-port>"
		f := strings.Fields(fmt.Sprint(msg[2]))
		if len(f) != 5 || f[0] != s.Master {
			continue
		}
		return Switch{At: at, From: f[1] + ":" + f[2], To: f[3] + ":" + f[4]}, nil
	}
}

// Server returns the node of the set at addr (nil if none is).
func (r *Replicated) Server(addr string) *Server {
	for _, n := range r.Nodes() {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}
