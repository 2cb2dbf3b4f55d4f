package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
)

// sentinelDown: sentinels that speak TLS only and want their own ACL user,
// over a primary and a replica that speak TLS and want a password. A run
// through them; one with a wrong sentinel password; one whose list starts
// with a dead address, a killed sentinel and a frozen one (SIGSTOP); one
// with every sentinel dead or frozen; one with every sentinel killed.
func sentinelDown(c config) {
	e := newEnv()
	defer e.stop()
	set := redistest.StartReplicatedTLS(e, 1, "--requirepass", "data-secret")
	s := redistest.StartSentinels(e, set, 3, redistest.SentinelOptions{User: "watcher", Password: "sentinel-secret", DataPassword: "data-secret"})
	dir := c.dir(e, "sentinel-down")
	const limit = time.Minute
	run := func(name, sentinels, pass string) (outcome, *doc) {
		js := filepath.Join(dir, name+".json")
		args := []string{"run", "--sentinel", sentinels, "--master", s.Master, "--sentinel-user", "watcher", "--sentinel-pass", pass,
			"--tls", "--cacert", set.Primary.TLS.CA, "-a", "data-secret", "--rate", "1k", "--duration", "5s", "-t", "set", "--json", js}
		o := e.startPacer(c.bin, limit, args...).wait()
		fmt.Printf("  %s (load %s): exit %d in %.2f s\n", name, loadAverage(), o.code, o.elapsed.Seconds())
		for l := range strings.Lines(o.stderr) {
			// pacer's own lines, not its progress or the warning that -a
			// shows in the process list.
			if strings.HasPrefix(l, "pacer: ") && !strings.Contains(l, "warning: a password") {
				fmt.Print("    stderr: " + l)
			}
		}
		d, _ := readDoc(js)
		return o, d
	}
	fmt.Printf("TLS primary %s, replica %s; sentinels (TLS, ACL user watcher) %s\n", set.Primary.Addr, set.Replicas[0].Addr, s.Addrs())
	fmt.Println("pacer run --sentinel … --master m --sentinel-user watcher --sentinel-pass … --tls --cacert CA -a … --rate 1k --duration 5s -t set")

	o, d := run("acl-tls", s.Addrs(), "sentinel-secret")
	sets := calls(set.Primary, "set")
	// Exit 4 is the machine's noise in the latencies (generator_behind),
	// not the sentinels'.
	ok := (o.code == 0 || o.code == 4) && d != nil && d.Tests[0].Counts.exact() && d.Tests[0].Counts.Completed == 5000 && sets >= 5000
	cs := "no result"
	if d != nil {
		cs = d.Tests[0].Counts.String()
	}
	judge(fmt.Sprintf("sentinels with ACLs and TLS: exit %d, %s, the primary ran %d SETs", o.code, cs, sets), ok)

	o, _ = run("wrong-password", s.Addrs(), "wrong")
	judge(fmt.Sprintf("a wrong sentinel password: exit %d in %.2f s, WRONGPASS said: %v, the password kept out: %v", o.code, o.elapsed.Seconds(),
		strings.Contains(o.stderr, "WRONGPASS"), !strings.Contains(o.stderr, "sentinel-secret")),
		o.code == 1 && strings.Contains(o.stderr, "WRONGPASS") && !strings.Contains(o.stderr, "sentinel-secret") && !o.killed)

	dead := closedAddr(e)
	s.Nodes[0].Stop()
	e.check(s.Nodes[1].Pause())
	list := strings.Join([]string{dead, s.Nodes[0].Addr, s.Nodes[1].Addr, s.Nodes[2].Addr}, ",")
	fmt.Printf("sentinels listed: %s (a dead address, %s killed, %s frozen, %s up)\n", dead, s.Nodes[0].Addr, s.Nodes[1].Addr, s.Nodes[2].Addr)
	o, d = run("three-down", list, "sentinel-secret")
	skipped := 0
	for _, a := range []string{dead, s.Nodes[0].Addr, s.Nodes[1].Addr} {
		if strings.Contains(o.stderr, "sentinel "+a+":") && strings.Contains(o.stderr, "(skipped)") {
			skipped++
		}
	}
	late := -1.0
	if d != nil {
		late = o.elapsed.Seconds() - d.Tests[0].DurationS
	}
	judge(fmt.Sprintf("a sentinel that is down is skipped: exit %d, %d of 3 down said skipped, %.2f s beyond the 5 s run (the frozen one's 1 s timeout, the drain)",
		o.code, skipped, late), (o.code == 0 || o.code == 4) && skipped == 3 && d != nil && d.Tests[0].Counts.Completed == 5000)

	e.check(s.Nodes[2].Pause())
	o, _ = run("all-down", list, "sentinel-secret")
	named := 0
	for _, a := range []string{dead, s.Nodes[0].Addr, s.Nodes[1].Addr, s.Nodes[2].Addr} {
		if strings.Contains(o.stderr, a) {
			named++
		}
	}
	judge(fmt.Sprintf("all sentinels down (two dead, two frozen): exit %d in %.2f s, \"no sentinel answered\" said: %v, %d of 4 named",
		o.code, o.elapsed.Seconds(), strings.Contains(o.stderr, "no sentinel answered"), named),
		o.code == 1 && strings.Contains(o.stderr, "no sentinel answered") && named == 4 && !o.killed && o.elapsed < 15*time.Second)

	s.Nodes[1].Stop()
	s.Nodes[2].Stop()
	o, _ = run("all-dead", list, "sentinel-secret")
	judge(fmt.Sprintf("all sentinels killed: exit %d in %.2f s, \"no sentinel answered\" said: %v", o.code, o.elapsed.Seconds(),
		strings.Contains(o.stderr, "no sentinel answered")),
		o.code == 1 && strings.Contains(o.stderr, "no sentinel answered") && !o.killed && o.elapsed < 15*time.Second)
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(e *env) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	e.check(err)
	a := l.Addr().String()
	l.Close()
	return a
}
