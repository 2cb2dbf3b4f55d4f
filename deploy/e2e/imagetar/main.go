// Command imagetar writes a container image of a few static files as an
// OCI image layout in one tar archive, which `ctr images import` reads:
// the e2e's images (pacer on scratch, the pod sandbox's pause) without a
// Docker engine or a registry. Usage:
//
//	imagetar -o OUT.tar -name REF [-user UID:GID] [-entrypoint PATH] SRC=DEST...
//
// Each SRC file goes into the image's single layer at DEST with its own
// permission bits, owned by root, dated at the Unix epoch, so the same
// files make the same image digest. REF names the image as a pod's image:
// field does (a name Kubernetes does not qualify further, such as
// localhost/pacer:e2e).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "imagetar: %v\n", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("imagetar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the archive to write")
	img := Image{Arch: runtime.GOARCH}
	fs.StringVar(&img.Name, "name", "", "the image's reference, e.g. localhost/pacer:e2e")
	fs.StringVar(&img.User, "user", "", "the user the image runs as (UID:GID)")
	fs.StringVar(&img.Entrypoint, "entrypoint", "", "the program the image runs")
	fs.StringVar(&img.Arch, "arch", img.Arch, "the GOARCH the files are built for")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || img.Name == "" || fs.NArg() == 0 {
		return errors.New("want -o OUT.tar -name REF and at least one SRC=DEST")
	}
	for _, a := range fs.Args() {
		src, dest, ok := strings.Cut(a, "=")
		if !ok || src == "" || !strings.HasPrefix(dest, "/") {
			return fmt.Errorf("%q: want SRC=/DEST", a)
		}
		img.Files = append(img.Files, File{Src: src, Dest: dest})
	}
	f, err := os.CreateTemp(dirOf(*out), ".imagetar-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := img.Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), *out)
}

// dirOf is the directory of path, for a temporary file beside it.
func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}
