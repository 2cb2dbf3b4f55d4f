//go:build unix

package report

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/testrun"
)

// These tests hold the output-file rules (see output.go): what each kind
// of path becomes after writeOutput, and that checkOutput leaves it as it
// was.

// entries lists a directory's names, to catch temporary files left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(des))
	for i, d := range des {
		names[i] = d.Name()
	}
	return names
}

func wantFile(t *testing.T, path, content string, perm fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm() != perm {
		t.Errorf("%s: mode %v, want a regular file %v", path, st.Mode(), perm)
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("%s holds %q, want %q", path, b, content)
	}
}

func wantLink(t *testing.T, path, target string) {
	t.Helper()
	got, err := os.Readlink(path)
	if err != nil || got != target {
		t.Errorf("%s: link to %q (%v), want it still a link to %q", path, got, err, target)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := checkOutput(path); err != nil {
		t.Fatalf("checkOutput(%s): %v", path, err)
	}
	if err := writeOutput(path, []byte(content)); err != nil {
		t.Fatalf("writeOutput(%s): %v", path, err)
	}
}

func TestOutputNewAndRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	write(t, path, "one")
	wantFile(t, path, "one", 0o644)
	// An existing file keeps its permission bits (a private result stays
	// private).
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, path, "two")
	wantFile(t, path, "two", 0o600)
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("directory holds %v: a temporary file remained", got)
	}
	// A relative path is as good as an absolute one.
	t.Chdir(dir)
	write(t, "rel.json", "three")
	wantFile(t, filepath.Join(dir, "rel.json"), "three", 0o644)
}

func TestOutputMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "x.json")
	if err := checkOutput(path); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("checkOutput: %v", err)
	}
	if err := writeOutput(path, nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestOutputSymlinkWritesTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	write(t, link, "new")
	wantLink(t, link, "real.json")
	wantFile(t, target, "new", 0o640)
	if got := entries(t, dir); len(got) != 2 {
		t.Fatalf("directory holds %v", got)
	}
}

func TestOutputDanglingSymlinkCreatesTarget(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink("results/run1.json", link); err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "results", "run1.json")); err == nil {
		t.Fatal("checkOutput created the link's target")
	}
	write(t, link, "data")
	wantLink(t, link, "results/run1.json")
	wantFile(t, filepath.Join(dir, "results", "run1.json"), "data", 0o644)
	// A dangling link into a missing directory is an error, before the run.
	bad := filepath.Join(dir, "bad.json")
	if err := os.Symlink("nowhere/x.json", bad); err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(bad); err == nil {
		t.Error("checkOutput accepted a link into a missing directory")
	}
}

func TestOutputSymlinkChain(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	sub := filepath.Join(dir, "sub")
	for _, d := range []string{other, sub} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// a -> sub/b (relative) -> ../other/c (relative to sub) -> absolute d
	final := filepath.Join(other, "d.json")
	if err := os.WriteFile(final, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	links := [][2]string{
		{filepath.Join(dir, "a.json"), "sub/b.json"},
		{filepath.Join(sub, "b.json"), "../other/c.json"},
		{filepath.Join(other, "c.json"), final},
	}
	for _, l := range links {
		if err := os.Symlink(l[1], l[0]); err != nil {
			t.Fatal(err)
		}
	}
	write(t, links[0][0], "chained")
	for _, l := range links {
		wantLink(t, l[0], l[1])
	}
	wantFile(t, final, "chained", 0o600)
	// A loop is an error, not a hang.
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(loop); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("checkOutput(loop): %v", err)
	}
	if err := writeOutput(loop, nil); err == nil {
		t.Error("writeOutput(loop) succeeded")
	}
}

func TestOutputDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("sub", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sub, link, sub + "/", dir + "/new/"} {
		if err := checkOutput(p); err == nil || !strings.Contains(err.Error(), "directory") {
			t.Errorf("checkOutput(%s): %v, want a directory error", p, err)
		}
		if err := writeOutput(p, []byte("x")); err == nil || !strings.Contains(err.Error(), "directory") {
			t.Errorf("writeOutput(%s): %v, want a directory error", p, err)
		}
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("directory holds %v", got)
	}
	if got := entries(t, sub); len(got) != 0 {
		t.Errorf("the refused directory holds %v", got)
	}
	// The message names the path as given, and a link's target.
	t.Chdir(dir)
	if err := checkOutput("sub"); err == nil || err.Error() != "cannot write sub: it is a directory" {
		t.Errorf("checkOutput(sub): %v", err)
	}
	if err := checkOutput("link"); err == nil || err.Error() != "cannot write link ("+sub+"): it is a directory" {
		t.Errorf("checkOutput(link): %v", err)
	}
}

func wantType(t *testing.T, path string, typ fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != typ {
		t.Errorf("%s is now %v, want %v (it was replaced)", path, st.Mode().Type(), typ)
	}
}

func TestOutputFIFOWithoutReader(t *testing.T) {
	path := testrun.Fifo(t, "fifo")
	// Checking opens nothing: a reader would see end of file.
	if err := checkOutput(path); err != nil {
		t.Fatal(err)
	}
	err := writeOutput(path, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "no reader") {
		t.Errorf("writeOutput to a FIFO nobody reads: %v, want a no-reader error", err)
	}
	wantType(t, path, fs.ModeNamedPipe)
	if got := entries(t, filepath.Dir(path)); len(got) != 1 {
		t.Errorf("directory holds %v", got)
	}
}

func TestOutputFIFOWithReader(t *testing.T) {
	path := testrun.Fifo(t, "fifo")
	// Opened read-write, the test's end never sees end of file, so the
	// reader can start before the writer opens; 1 MiB is more than the
	// pipe holds, so the write must wait for the reader.
	r, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	got := make(chan []byte)
	go func() {
		b := make([]byte, len(data))
		n, _ := io.ReadFull(r, b)
		got <- b[:n]
	}()
	err = writeOutput(path, data)
	if st, _ := os.Lstat(path); err != nil || st.Mode().Type() != fs.ModeNamedPipe {
		r.Close() // ends the reader: nothing will come
		<-got
		t.Fatalf("writeOutput: %v; the FIFO is now %v", err, st.Mode().Type())
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Errorf("reader got %d bytes, want %d", len(b), len(data))
	}
}

func TestOutputDevNull(t *testing.T) {
	if err := checkOutput("/dev/null"); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput("/dev/null", []byte("x")); err != nil {
		t.Fatal(err)
	}
	wantType(t, "/dev/null", fs.ModeDevice|fs.ModeCharDevice)
	// A device that fails the write reports it.
	if _, err := os.Stat("/dev/full"); err == nil {
		if err := writeOutput("/dev/full", []byte("x")); err == nil {
			t.Error("writing /dev/full succeeded")
		}
		wantType(t, "/dev/full", fs.ModeDevice|fs.ModeCharDevice)
	}
}

// TestOutputMknodCharDevice is the adversarial test's reproduction: as
// root, the rename replaced a device node made with mknod x c 1 3.
func TestOutputMknodCharDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of a character device needs root")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	const memMajor, nullMinor = 1, 3 // /dev/null's numbers
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, memMajor<<8|nullMinor); err != nil {
		t.Skipf("mknod needs CAP_MKNOD here: %v", err)
	}
	if err := checkOutput(path); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(path, []byte("x")); err != nil {
		// Some containers allow mknod but not opening the node.
		if os.IsPermission(err) {
			t.Skipf("the device cgroup refuses the node: %v", err)
		}
		t.Fatal(err)
	}
	wantType(t, path, fs.ModeDevice|fs.ModeCharDevice)
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v", got)
	}
}

// TestOutputProcFD writes through /dev/fd/N, a kernel link to an open
// pipe ("pipe:[123]" is no path): it is opened, not resolved and renamed
// over.
func TestOutputProcFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	path := fmt.Sprintf("/dev/fd/%d", w.Fd())
	if err := checkOutput(path); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(path, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := io.ReadAll(r); string(b) != "through the pipe" {
		t.Errorf("pipe got %q", b)
	}
}

// TestOutputStdoutFile: when standard output is a file, /dev/stdout is
// written at its current offset through the descriptor; a new open would
// overwrite what was already printed.
func TestOutputStdoutFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = saved }()
	if _, err := f.WriteString("text summary\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(fmt.Sprintf("/dev/fd/%d", f.Fd()), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput("-", []byte("[]\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "text summary\n{}\n[]\n" {
		t.Errorf("standard output holds %q", b)
	}
}

func TestOutputSocketRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Skip(err)
	}
	if err := checkOutput(path); err == nil || !strings.Contains(err.Error(), "socket") {
		t.Errorf("checkOutput: %v", err)
	}
	if err := writeOutput(path, []byte("x")); err == nil {
		t.Error("writeOutput to a socket succeeded")
	}
	wantType(t, path, fs.ModeSocket)
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v", got)
	}
}

// TestCheckOutputTouchesNothing: the check before a run neither creates
// nor changes a file.
func TestCheckOutputTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.json")
	if err := os.WriteFile(path, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A probe file, even one removed at once, changes the directory's
	// modification time.
	old := time.Unix(1e9, 0)
	for _, p := range []string{path, dir} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, filepath.Join(dir, "new.json")} {
		if err := checkOutput(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, dir} {
		if st, _ := os.Stat(p); !st.ModTime().Equal(old) {
			t.Errorf("%s was modified by checkOutput", p)
		}
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v", got)
	}
	wantFile(t, path, "keep", 0o600)
}

func TestCheckOutputReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write anything; permissions are not checked for it")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.json")
	if err := os.WriteFile(path, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(path); err == nil {
		t.Error("checkOutput accepted a read-only file")
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if err := checkOutput(filepath.Join(dir, "new.json")); err == nil {
		t.Error("checkOutput accepted a read-only directory")
	}
}

// TestOutputNoTempOnFailure: a write that fails at any step after the
// temporary file exists leaves the old file and no temporary file.
func TestOutputNoTempOnFailure(t *testing.T) {
	fail := fmt.Errorf("injected")
	cases := map[string]func(){
		"sync fails":   func() { syncFile = func(*os.File) error { return fail } },
		"rename fails": func() { renameFile = func(string, string) error { return fail } },
		// A second Ctrl-C while the file is written: cmd/pacer calls
		// RemoveTemps before it exits.
		"exit during the write": func() {
			syncFile = func(f *os.File) error { RemoveTemps(); return f.Sync() }
		},
	}
	for name, inject := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			inject()
			defer func() { syncFile, renameFile = (*os.File).Sync, os.Rename }()
			if err := writeOutput(path, []byte("new")); err == nil {
				t.Fatal("the write succeeded")
			}
			if got := entries(t, dir); len(got) != 1 {
				t.Errorf("directory holds %v: a temporary file remained", got)
			}
			wantFile(t, path, "old", 0o644)
		})
	}
}
