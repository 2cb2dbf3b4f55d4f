package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/secret"
)

// aclPass is alice's password in these tests: distinctive, so that any
// trace of it in an output is found.
const aclPass = "Zq7-alice-pw-Xv"

// startACL starts a redis-server with the ACL user alice.
func startACL(t *testing.T) *redistest.Server {
	t.Helper()
	srv := redistest.Start(t)
	if _, err := srv.Do("ACL", "SETUSER", "alice", "on", ">"+aclPass, "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// filesText returns the text of every file in dir.
func filesText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b.Write(readFile(t, filepath.Join(dir, e.Name())))
	}
	return b.String()
}

// TestACLUserAndThePasswordNeverShows: --user with -a, REDISCLI_AUTH and
// -u user:pass@ authenticate as alice; the password shows nowhere: not in
// the text, the progress, the JSON (config.password is ***), the .hlog,
// the spectrum or the HTML page, even typed into a command template.
func TestACLUserAndThePasswordNeverShows(t *testing.T) {
	srv := startACL(t)
	dir := t.TempDir()
	hp := hostPort(t, srv.Addr)
	for i, tc := range []struct {
		args []string
		env  bool
	}{
		{append([]string{"run", "--rate", "1k", "--duration", "300ms", "-c", "2", "-t", "get,set", "--user", "alice", "-a", aclPass}, hp...), false},
		{append([]string{"run", "--rate", "1k", "-n", "100", "-c", "2", "--user", "alice", "--command", "SET k " + aclPass}, hp...), true},
		{[]string{"run", "--rate", "1k", "-n", "100", "-c", "2", "-t", "get", "-u", "redis://alice:" + aclPass + "@" + srv.Addr + "/2"}, false},
		{append([]string{"bench", "-n", "500", "-c", "2", "-t", "get", "--user", "alice"}, hp...), true},
		{append([]string{"compare", "--rate", "1k", "--duration", "300ms", "-c", "2", "--user", "alice"}, hp...), true},
		{append([]string{"fill", "-r", "100", "-c", "2", "--user", "alice"}, hp...), true},
	} {
		out := filepath.Join(dir, "out")
		os.RemoveAll(out)
		os.Mkdir(out, 0o755)
		args := append(tc.args, "--json", filepath.Join(out, "r.json"))
		if tc.args[0] != "fill" {
			args = append(args, "--hdr-log", filepath.Join(out, "r.hlog"), "--hdr-spectrum", filepath.Join(out, "r.hgrm"), "--lag-limit", "1s")
		}
		if tc.args[0] == "compare" || tc.args[0] == "bench" {
			args = slicesWithout(args, "--lag-limit", "1s")
		}
		if tc.env {
			t.Setenv(passwordEnv, aclPass)
		} else {
			t.Setenv(passwordEnv, "")
		}
		code, stdout, stderr := pacer(t, args...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("case %d %v: exit %d\n%s\n%s", i, args, code, stdout, stderr)
		}
		if c, _, _ := pacer(t, "report", filepath.Join(out, "r.json"), "--html", filepath.Join(out, "r.html")); !runOK(c) {
			t.Fatalf("case %d: report --html exit %d", i, c)
		}
		d := readTLSDoc(t, filepath.Join(out, "r.json"))
		if d.Config.User == nil || *d.Config.User != "alice" || d.Config.Password == nil || *d.Config.Password != "***" {
			t.Errorf("case %d: config user %v password %v", i, d.Config.User, d.Config.Password)
		}
		for what, text := range map[string]string{"stdout": stdout, "stderr": stderr, "files": filesText(t, out)} {
			if strings.Contains(text, aclPass) {
				t.Errorf("case %d %v: the password shows in %s", i, tc.args, what)
			}
		}
		if warned := strings.Contains(stderr, passwordWarning); warned == tc.env {
			t.Errorf("case %d: warning %v with the password from the environment %v", i, warned, tc.env)
		}
	}
}

func slicesWithout(args []string, name, value string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == name && i+1 < len(args) && args[i+1] == value {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// TestWrongPasswordNamesTheUser: a wrong password is a failed run (exit 1)
// with one line that names the user and never the password, in every
// command; from the command line the warning follows on its own line.
func TestWrongPasswordNamesTheUser(t *testing.T) {
	srv := startACL(t)
	hp := hostPort(t, srv.Addr)
	const wrong = "Wr0ng-pass-Qx"
	for _, cmd := range [][]string{
		{"run", "--rate", "1k", "-n", "10", "-c", "2", "-t", "get"},
		{"bench", "-n", "10", "-c", "2", "-t", "get"},
		{"compare", "--rate", "1k", "--duration", "200ms", "-c", "2"},
		{"fill", "-r", "10", "-c", "1"},
	} {
		t.Setenv(passwordEnv, wrong)
		args := append(append(cmd, hp...), "--user", "alice", "-q")
		code, stdout, stderr := pacer(t, args...)
		if code != exitFailed {
			t.Errorf("%s: exit %d, want 1 (%q)", cmd[0], code, stderr)
		}
		if strings.Contains(stdout+stderr, wrong) || strings.Contains(stdout+stderr, aclPass) {
			t.Errorf("%s: a password shows: %q %q", cmd[0], stdout, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		last := lines[len(lines)-1]
		if !strings.Contains(last, `AUTH as user "alice" failed: WRONGPASS`) {
			t.Errorf("%s: stderr %q: want a last line naming alice", cmd[0], stderr)
		}
		// run and compare say nothing else; bench and fill say first that
		// they could not read the server's CONFIG, as redis-benchmark does.
		if (cmd[0] == "run" || cmd[0] == "compare") && len(lines) != 1 {
			t.Errorf("%s: want one line, stderr %q", cmd[0], stderr)
		}
		// From the command line: the same line, then the warning.
		t.Setenv(passwordEnv, "")
		code, _, stderr = pacer(t, append(args, "-a", wrong)...)
		if code != exitFailed || strings.Contains(stderr, wrong) || !strings.HasSuffix(stderr, last+"\n"+passwordWarning+"\n") {
			t.Errorf("%s -a: exit %d stderr %q", cmd[0], code, stderr)
		}
	}
	// Redis's default user: named too.
	t.Setenv(passwordEnv, wrong)
	_, _, stderr := pacer(t, append([]string{"run", "--rate", "1k", "-n", "10", "-q"}, hp...)...)
	if !strings.Contains(stderr, `AUTH as user "default" failed`) {
		t.Errorf("default user: %q", stderr)
	}
}

// TestAskpass: --askpass reads the password from stdin's first line when
// it is not a terminal, and from the terminal, unechoed, when it is; -a
// and REDISCLI_AUTH are then ignored, and the password shows nowhere.
func TestAskpass(t *testing.T) {
	t.Parallel()
	srv := startACL(t)
	bin := pacerBinary(t)
	hp := hostPort(t, srv.Addr)
	args := append([]string{"run", "--rate", "1k", "-n", "50", "-c", "1", "-t", "get", "-q", "--lag-limit", "1s", "--user", "alice", "--askpass"}, hp...)
	for _, in := range []string{aclPass + "\n", aclPass + "\r\n", aclPass} {
		cmd := exec.Command(bin, append(args, "-a", "ignored")...)
		cmd.Env = append(os.Environ(), passwordEnv+"=ignored-too")
		cmd.Stdin = strings.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != exitOK && code != exitUntrusted {
			t.Errorf("stdin %q: exit %d %q", in, code, errb.String())
		}
		if strings.Contains(out.String()+errb.String(), aclPass) {
			t.Errorf("stdin %q: the password shows", in)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader("")
	outb, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(outb), "--askpass: no password given") {
		t.Errorf("empty stdin: exit %d %q", code, outb)
	}

	// A terminal: the prompt, no echo.
	cmd = exec.Command(bin, args...)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		prompted := false
		for {
			n, err := f.Read(buf)
			all = append(all, buf[:n]...)
			if !prompted && bytes.Contains(all, []byte(secret.AskPrompt)) {
				prompted = true
				time.Sleep(100 * time.Millisecond) // the terminal's echo is off by now
				f.Write([]byte(aclPass + "\r"))
			}
			if err != nil {
				got <- all
				return
			}
		}
	}()
	var all []byte
	select {
	case all = <-got:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no end under a terminal")
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitOK && code != exitUntrusted {
		t.Fatalf("terminal: exit %d %q", code, all)
	}
	if !bytes.Contains(all, []byte(secret.AskPrompt)) || bytes.Contains(all, []byte(aclPass)) {
		t.Errorf("terminal: want the prompt and no echo of the password: %q", all)
	}
}

// TestEmbeddedWithPassword: --embedded with -a (or REDISCLI_AUTH) and
// --user makes the embedded target require that password of that user.
func TestEmbeddedWithPassword(t *testing.T) {
	t.Setenv(passwordEnv, aclPass)
	code, stdout, stderr := pacer(t, "run", "--embedded", "--tls", "--user", "alice", "--rate", "1k", "-n", "100", "-c", "2", "-t", "get", "--lag-limit", "1s")
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "; TLS; password required of user alice)") || strings.Contains(stdout+stderr, aclPass) {
		t.Errorf("banner: %q", stderr)
	}
}
