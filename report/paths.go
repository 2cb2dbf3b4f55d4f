package report

import (
	"fmt"
	"os"
	"path/filepath"
)

// NamedPath is a file a command reads or writes and the flag that named
// it ("" for a file given as an argument).
type NamedPath struct {
	Flag, Path string
}

// CheckOutputsApart refuses outputs that would overwrite an input (pacer
// merge … -o shard-1.json, pacer report run.json --html run.json) and two
// outputs that name one file (--plot a.svg --html a.svg, or two links to
// one file): "-" (standard input and output) and the null device excepted.
// Inputs and outputs match by path or, where they exist, as one file
// through links.
func CheckOutputsApart(inputs []string, outputs []NamedPath) error {
	for i, o := range outputs {
		if o.Path == "" || o.Path == "-" {
			continue
		}
		for _, in := range inputs {
			if in != "-" && sameFile(in, o.Path) {
				return fmt.Errorf("%s %s is an input: give the output a file of its own", o.Flag, o.Path)
			}
		}
		for _, p := range outputs[:i] {
			if p.Path != "" && p.Path != "-" && sameFile(p.Path, o.Path) {
				return fmt.Errorf("%s and %s both name %s: give each its own file", p.Flag, o.Flag, o.Path)
			}
		}
	}
	return nil
}

// sameFile reports whether two paths name one file: the same path once
// links are followed (to a file that may not exist yet), or one existing
// regular file. The null device takes any number.
func sameFile(a, b string) bool {
	if a == os.DevNull || b == os.DevNull {
		return false
	}
	if resolve(a) == resolve(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && sa.Mode().IsRegular() && os.SameFile(sa, sb)
}

// resolve follows the links of a path's last element (a bounded number of
// them) to the absolute path they end at, which need not exist.
func resolve(p string) string {
	for range 40 {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
