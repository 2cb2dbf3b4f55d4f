package report

import (
	"path/filepath"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
)

// Relabel names inputs as --label FILE=NAME asks: the input read from
// FILE (as given, or by its base name) goes by NAME in every table,
// legend and title, instead of its file's name. paths are the files the
// inputs were read from, in order. A FILE that is none of them, or an
// empty NAME, is an error.
func Relabel(in []Input, paths, labels []string) error {
	for _, l := range labels {
		k, name := -1, ""
		// FILE may hold "=" itself: the first split that names a file.
		for i := 0; i < len(l) && k < 0; i++ {
			if l[i] != '=' {
				continue
			}
			file := l[:i]
			for j, p := range paths {
				if p == file || filepath.Clean(p) == filepath.Clean(file) || filepath.Base(p) == file && k < 0 {
					k, name = j, l[i+1:]
					break
				}
			}
		}
		switch {
		case !strings.Contains(l, "="):
			return usage.Option("label", "{label} %q: want FILE=NAME", l)
		case k < 0:
			return usage.Option("label", "{label} %q: the file is none of those given", l)
		case strings.TrimSpace(name) == "":
			return usage.Option("label", "{label} %q: give a name after =", l)
		}
		in[k].Label = cutText(name)
	}
	return nil
}
