package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Output files (--json and every file pacer writes) follow one set of
// rules, so a result never replaces something that is not a result file:
//
//	path                          how it is written
//	-                             standard output
//	a regular file or a new path  atomically: a temporary file in the same
//	                              directory, fsync, rename; an existing file
//	                              keeps its permission bits (and, when the
//	                              writer may, its owner)
//	a symbolic link               followed, through a chain of links, and
//	                              its final target written by these rules;
//	                              a dangling link creates its target
//	a character or block device,  written directly, never renamed over
//	a FIFO, or a path under /proc (/dev/null, /dev/tty, /dev/stdout,
//	                              /dev/fd/N)
//	a FIFO nobody reads           an error ("no reader"): it is opened
//	                              non-blocking, so pacer never hangs on it
//	a directory, a socket         an error
//
// checkOutput applies the same rules before a run without creating,
// opening or truncating anything.

// newFileMode is the permission of a result file pacer creates (an
// existing one keeps its own).
const newFileMode fs.FileMode = 0o644

// maxSymlinks bounds a chain of symbolic links, as Linux's MAXSYMLINKS
// does (ELOOP).
const maxSymlinks = 40

// outputKind says how an output path is written.
type outputKind int

const (
	toStdout  outputKind = iota // "-"
	toNew                       // a path that does not exist yet
	toRegular                   // an existing regular file
	toFIFO                      // a named pipe: written directly, non-blocking open
	toDirect                    // a device or a /proc path: written directly
)

// output is where a path leads once its symbolic links are followed.
type output struct {
	kind outputKind
	// path is the file to write: the final target of the links, in its
	// real directory.
	path string
	// info describes an existing target (nil for toNew and toStdout).
	info fs.FileInfo
}

// resolveOutput follows path's symbolic links and classifies what it
// names.
func resolveOutput(path string) (output, error) {
	switch {
	case path == "-":
		return output{kind: toStdout}, nil
	case path == "":
		return output{}, errors.New("cannot write an empty path")
	case strings.HasSuffix(path, "/"):
		return output{}, fmt.Errorf("cannot write %s: it names a directory", path)
	}
	// Absolute from the start, so messages name a link's target in full.
	cur, err := filepath.Abs(path)
	if err != nil {
		return output{}, fmt.Errorf("cannot write %s: %w", path, err)
	}
	for hops := 0; ; hops++ {
		// Resolve the directory first, so a relative link is read from
		// where the kernel would read it (a lexical ".." after a
		// symlinked directory would go elsewhere).
		dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
		if errors.Is(err, fs.ErrNotExist) {
			return output{}, fmt.Errorf("cannot write %s: directory %s does not exist", path, filepath.Dir(cur))
		}
		if err != nil {
			return output{}, fmt.Errorf("cannot write %s: %w", path, err)
		}
		cur = filepath.Join(dir, filepath.Base(cur))
		if dir == "/proc" || strings.HasPrefix(dir, "/proc/") {
			// /dev/stdout, /dev/fd/N and /proc/self/fd/N are the kernel's
			// links to open files ("pipe:[123]" is no path): only open(2)
			// follows them.
			info, err := os.Stat(cur)
			if err != nil {
				return output{}, fmt.Errorf("cannot write %s: %w", path, err)
			}
			if info.IsDir() {
				return output{}, fmt.Errorf("cannot write %s: it is a directory", path)
			}
			return output{kind: toDirect, path: cur, info: info}, nil
		}
		info, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return output{kind: toNew, path: cur}, nil
		}
		if err != nil {
			return output{}, fmt.Errorf("cannot write %s: %w", path, err)
		}
		m := info.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			if hops >= maxSymlinks {
				return output{}, fmt.Errorf("cannot write %s: more than %d symbolic links", path, maxSymlinks)
			}
			dst, err := os.Readlink(cur)
			if err != nil {
				return output{}, fmt.Errorf("cannot write %s: %w", path, err)
			}
			if !filepath.IsAbs(dst) {
				dst = filepath.Join(dir, dst)
			}
			cur = dst
			continue
		case m.IsDir():
			return output{}, fmt.Errorf("cannot write %s: it is a directory", describe(path, cur))
		case m.IsRegular():
			return output{kind: toRegular, path: cur, info: info}, nil
		case m&fs.ModeNamedPipe != 0:
			return output{kind: toFIFO, path: cur, info: info}, nil
		case m&fs.ModeDevice != 0: // character devices carry ModeDevice too
			return output{kind: toDirect, path: cur, info: info}, nil
		case m&fs.ModeSocket != 0:
			return output{}, fmt.Errorf("cannot write %s: it is a socket (write to a file, a FIFO or a device)", describe(path, cur))
		default:
			return output{}, fmt.Errorf("cannot write %s: not a regular file, device or FIFO (%s)", describe(path, cur), m.Type())
		}
	}
}

// describe names the target of a link next to the path the user gave.
func describe(path, target string) string {
	a, aerr := filepath.Abs(path)
	b, berr := filepath.Abs(target)
	if aerr == nil && berr == nil && a == b {
		return path
	}
	return path + " (" + target + ")"
}

// checkOutput verifies, before a run starts, that writeOutput(path) can
// succeed: the path resolves to something pacer writes (not a directory
// or a socket), and the directory or the file is writable. It creates,
// opens and truncates nothing: a FIFO's reader sees no end of file, a
// dangling link's target is not created.
func checkOutput(path string) error {
	out, err := resolveOutput(path)
	if err != nil {
		return err
	}
	switch out.kind {
	case toStdout:
		return nil
	case toNew:
		return checkAccess(path, filepath.Dir(out.path), true)
	case toRegular:
		// The rename needs the directory; the file's own mode says
		// whether its owner meant it to be overwritten.
		if err := checkAccess(path, filepath.Dir(out.path), true); err != nil {
			return err
		}
	}
	return checkAccess(path, out.path, false)
}

func checkAccess(path, name string, dir bool) error {
	if err := accessWrite(name, dir); err != nil {
		return fmt.Errorf("cannot write %s: %s: %w", path, name, err)
	}
	return nil
}

// writeOutput writes data to path by the rules above: a regular file (or
// a new path, or the target of a symbolic link) atomically, so readers
// never see half a file and a crash leaves the old file; a device, FIFO or
// /proc path directly; "-" to standard output. A directory or a socket is
// an error. No temporary file remains on any error path; RemoveTemps
// clears those of writes in progress when the process must exit at once.
func writeOutput(path string, data []byte) error {
	out, err := resolveOutput(path)
	if err != nil {
		return err
	}
	switch out.kind {
	case toStdout:
		return writeAll(path, os.Stdout, data)
	case toNew, toRegular:
		return writeAtomic(path, out, data)
	}
	return writeDirect(path, out, data)
}

func writeAll(path string, w io.Writer, data []byte) error {
	if _, err := w.Write(data); err != nil {
		return writeError(path, err)
	}
	return nil
}

// writeError is the error of a failed step of writing path. A step's
// *os.PathError names a path again (the same one, or the temporary file
// beside it): only its operation, when that is not the write itself, and
// its cause are kept, so the message says "write" and the path once.
func writeError(path string, err error) error {
	var pe *os.PathError
	switch {
	case !errors.As(err, &pe):
		return fmt.Errorf("write %s: %w", path, err)
	case pe.Op == "write":
		return fmt.Errorf("write %s: %w", path, pe.Err)
	}
	return fmt.Errorf("write %s: %s: %w", path, pe.Op, pe.Err)
}

// writeDirect writes a FIFO, a device or a /proc path in place.
func writeDirect(path string, out output, data []byte) (err error) {
	// The process's own standard output or error, reached through
	// /dev/stdout or /dev/fd/1, is written through its descriptor: when it
	// is a file, a second open would start at offset 0 and overwrite what
	// was already printed.
	for _, std := range []*os.File{os.Stdout, os.Stderr} {
		if std == nil {
			continue
		}
		if st, serr := std.Stat(); serr == nil && out.kind == toDirect && os.SameFile(st, out.info) {
			return writeAll(path, std, data)
		}
	}
	flag := os.O_WRONLY
	switch {
	case out.kind == toFIFO:
		flag |= nonBlockFlag // ENXIO at once when nobody reads
	case out.info.Mode().IsRegular(): // a file behind /dev/fd/N
		flag |= os.O_TRUNC
	}
	f, err := os.OpenFile(out.path, flag, 0)
	if err != nil {
		if out.kind == toFIFO && isNoReader(err) {
			return fmt.Errorf("write %s: the FIFO has no reader (start the reader first)", path)
		}
		return writeError(path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = writeError(path, cerr)
		}
	}()
	return writeAll(path, f, data)
}

// Hooks for tests: the steps of an atomic write that cannot be made to
// fail from outside.
var (
	renameFile = os.Rename
	syncFile   = (*os.File).Sync
)

// writeAtomic writes a regular file through a temporary file in its
// directory, fsync and rename.
func writeAtomic(path string, out output, data []byte) (err error) {
	dir := filepath.Dir(out.path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(out.path)+".tmp-*")
	if err != nil {
		return writeError(path, err)
	}
	tmp := f.Name()
	temps.add(tmp)
	defer temps.remove(tmp)
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
		}
	}()
	mode := newFileMode
	if out.info != nil {
		mode = out.info.Mode().Perm()
		// Keep the owner when replacing someone else's file as root; an
		// ordinary user cannot give files away, and the write stays
		// correct without it.
		keepOwner(f, out.info)
	}
	if err := f.Chmod(mode); err != nil {
		return writeError(path, err)
	}
	if _, err := f.Write(data); err != nil {
		return writeError(path, err)
	}
	if err := syncFile(f); err != nil {
		return writeError(path, err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return writeError(path, err)
	}
	if err := renameFile(tmp, out.path); err != nil {
		return writeError(path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable. It is best effort: the file is
// already complete and in place, and some file systems refuse to sync a
// directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// temps are the temporary files of atomic writes in progress.
var temps = tempSet{names: map[string]struct{}{}}

type tempSet struct {
	mu    sync.Mutex
	names map[string]struct{}
}

func (s *tempSet) add(name string) {
	s.mu.Lock()
	s.names[name] = struct{}{}
	s.mu.Unlock()
}

func (s *tempSet) remove(name string) {
	s.mu.Lock()
	delete(s.names, name)
	s.mu.Unlock()
}

// RemoveTemps removes the temporary files of the atomic writes in
// progress. Call it before exiting without unwinding (a second Ctrl-C),
// so no ".NAME.tmp-*" file outlives the process; a write it interrupts
// fails and leaves the old file.
func RemoveTemps() {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	for name := range temps.names {
		os.Remove(name)
		delete(temps.names, name)
	}
}
