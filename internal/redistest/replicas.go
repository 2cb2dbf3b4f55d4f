package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/certs"
)

// Replicated is a primary and its replicas, started by StartReplicated.
type Replicated struct {
	Primary  *Server
	Replicas []*Server
}

// Nodes returns the primary, then the replicas.
func (r *Replicated) Nodes() []*Server {
	return append([]*Server{r.Primary}, r.Replicas...)
}

// StartReplicated starts a primary and n replicas of it (--replicaof),
// each a redis-server on a free loopback port, waits until every
// replica's link is up and the primary counts them, and stops them at the
// end of the test. extra are further arguments of every server; a
// --requirepass among them makes the replicas authenticate to the primary
// with it (--masterauth). The primary syncs a replica at once
// (--repl-diskless-sync-delay 0) rather than waiting for others.
func StartReplicated(t testing.TB, n int, extra ...string) *Replicated {
	t.Helper()
	return startReplicated(t, n, nil, extra)
}

// StartReplicatedTLS is StartReplicated over TLS: every server listens on
// a TLS port only (see StartTLS), with certificates of one CA made for the
// test (each Server.TLS), and the replicas replicate over TLS
// (--tls-replication yes). A redis-server built without TLS skips the
// test (fails it with PACER_REQUIRE_REDIS=1).
func StartReplicatedTLS(t testing.TB, n int, extra ...string) *Replicated {
	t.Helper()
	Binary(t, "redis-server")
	files, err := certs.Write(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	f := &TLSFiles{Files: files}
	if f.Client, err = clientConfig(files); err != nil {
		t.Fatal(err)
	}
	return startReplicated(t, n, f, append([]string{"--tls-replication", "yes"}, extra...))
}

func startReplicated(t testing.TB, n int, tf *TLSFiles, extra []string) *Replicated {
	t.Helper()
	primary := startWith(t, tf, append([]string{"--repl-diskless-sync-delay", "0"}, extra...))
	r := &Replicated{Primary: primary}
	var auth []string
	for i := 0; i+1 < len(extra); i++ {
		if extra[i] == "--requirepass" {
			auth = []string{"--masterauth", extra[i+1]}
		}
	}
	for range n {
		args := append([]string{"--replicaof", "127.0.0.1", primary.PortString(), "--repl-diskless-sync-delay", "0"}, auth...)
		r.Replicas = append(r.Replicas, startWith(t, tf, append(args, extra...)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.WaitLinked(ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// WaitLinked waits until every replica's link to the primary is up and
// the primary counts every replica as online.
func (r *Replicated) WaitLinked(ctx context.Context) error {
	why := ""
	for {
		if why = r.linked(); why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replication not up: %s", why)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// linked says why replication is not up yet, "" when it is.
func (r *Replicated) linked() string {
	for _, s := range r.Replicas {
		info, err := s.Info("replication")
		if err != nil {
			return err.Error()
		}
		if info["master_link_status"] != "up" {
			return s.Addr + ": master_link_status " + info["master_link_status"]
		}
	}
	info, err := r.Primary.Info("replication")
	if err != nil {
		return err.Error()
	}
	online := 0
	for k, v := range info {
		if strings.HasPrefix(k, "slave") && strings.Contains(v, "state=online") {
			online++
		}
	}
	if online < len(r.Replicas) {
		return r.Primary.Addr + ": " + strconv.Itoa(online) + " of " + strconv.Itoa(len(r.Replicas)) + " replicas online"
	}
	return ""
}

// PauseFor freezes the server (SIGSTOP) for d, then lets it go on
// (SIGCONT): it neither reads nor answers meanwhile, as a server stalled
// by a fork, a slow disk or a noisy neighbour. It returns after d.
func (s *Server) PauseFor(d time.Duration) error {
	if err := s.Pause(); err != nil {
		return err
	}
	time.Sleep(d)
	return s.Resume()
}

// Role is the first word of ROLE's reply: "master", "slave" or
// "sentinel".
func (s *Server) Role() (string, error) {
	v, err := s.Query("ROLE")
	if err != nil {
		return "", err
	}
	arr, _ := v.([]any)
	if len(arr) == 0 {
		return "", fmt.Errorf("ROLE: empty reply")
	}
	role, _ := arr[0].(string)
	return role, nil
}

// Calls returns how many times the server ran the named command (lower
// case, "set"), from INFO commandstats; 0 when it never did.
func (s *Server) Calls(command string) (uint64, error) {
	info, err := s.Info("commandstats")
	if err != nil {
		return 0, err
	}
	return callsIn(info, command)
}

// CallsAsPrimary is Calls with whether the server was a primary when it
// counted them, from one INFO of both sections: a replica also runs the
// writes it replicates, so counts read apart from the role can be a
// former primary's replicated writes.
func (s *Server) CallsAsPrimary(command string) (n uint64, primary bool, err error) {
	text, err := s.Do("INFO", "replication", "commandstats")
	if err != nil {
		return 0, false, err
	}
	info := map[string]string{}
	for _, l := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			info[k] = v
		}
	}
	n, err = callsIn(info, command)
	return n, info["role"] == "master", err
}

// callsIn reads a command's calls from INFO commandstats' fields.
func callsIn(info map[string]string, command string) (uint64, error) {
	v, ok := info["cmdstat_"+strings.ToLower(command)]
	if !ok {
		return 0, nil
	}
	for _, f := range strings.Split(v, ",") {
		if n, ok := strings.CutPrefix(f, "calls="); ok {
			return strconv.ParseUint(n, 10, 64)
		}
	}
	return 0, fmt.Errorf("cmdstat_%s without calls: %q", command, v)
}
