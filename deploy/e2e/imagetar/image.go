package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// The media types of an OCI image (image-spec v1).
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar"
)

// Image is what an image archive holds: files in one layer, and how the
// image runs.
type Image struct {
	Name       string // the reference ctr import gives it
	User       string // UID:GID, or empty for root
	Entrypoint string // absolute path in the image, or empty
	Arch       string // GOARCH
	Files      []File
}

// File is a file of the host put into the image.
type File struct {
	Src  string // on the host
	Dest string // absolute, in the image
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// blob is content with its digest.
type blob struct {
	data   []byte
	digest string // sha256:hex
}

func newBlob(data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{data: data, digest: "sha256:" + hex.EncodeToString(sum[:])}
}

func (b blob) descriptor(mediaType string) descriptor {
	return descriptor{MediaType: mediaType, Digest: b.digest, Size: int64(len(b.data))}
}

// Write writes img to w as an OCI image layout archive: oci-layout,
// index.json naming the image (io.containerd.image.name, which ctr import
// takes as the image's name, and org.opencontainers.image.ref.name, the
// tag) and blobs/sha256/ with the layer (an uncompressed tar), the config
// and the manifest.
func (img Image) Write(w io.Writer) error {
	layer, err := img.layer()
	if err != nil {
		return err
	}
	cfg := map[string]any{
		"architecture": img.Arch,
		"os":           "linux",
		"config":       img.runConfig(),
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layer.digest}},
		"history":      []map[string]any{{"created_by": "deploy/e2e/imagetar", "created": time.Unix(0, 0).UTC()}},
		"created":      time.Unix(0, 0).UTC(),
	}
	config, err := jsonBlob(cfg)
	if err != nil {
		return err
	}
	manifest, err := jsonBlob(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        config.descriptor(mediaConfig),
		"layers":        []descriptor{layer.descriptor(mediaLayer)},
	})
	if err != nil {
		return err
	}
	md := manifest.descriptor(mediaManifest)
	md.Platform = &platform{Architecture: img.Arch, OS: "linux"}
	md.Annotations = map[string]string{
		"io.containerd.image.name":          img.Name,
		"org.opencontainers.image.ref.name": tagOf(img.Name),
	}
	index, err := jsonBlob(map[string]any{"schemaVersion": 2, "mediaType": mediaIndex, "manifests": []descriptor{md}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	entries := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index.data},
	}
	for _, b := range []blob{layer, config, manifest} {
		entries = append(entries, struct {
			name string
			data []byte
		}{"blobs/sha256/" + strings.TrimPrefix(b.digest, "sha256:"), b.data})
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if err := writeFile(tw, e.name, 0o644, e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// runConfig is the config's "config": what a container of the image runs.
func (img Image) runConfig() map[string]any {
	c := map[string]any{"Env": []string{"PATH=/"}, "WorkingDir": "/"}
	if img.User != "" {
		c["User"] = img.User
	}
	if img.Entrypoint != "" {
		c["Entrypoint"] = []string{img.Entrypoint}
	}
	return c
}

// layer is the image's one layer: img's files and the directories above
// them, in path order.
func (img Image) layer() (blob, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := slices.Clone(img.Files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Dest, b.Dest) })
	dirs := map[string]bool{}
	for _, f := range files {
		name := strings.TrimPrefix(path.Clean(f.Dest), "/")
		if name == "" || name == "." {
			return blob{}, fmt.Errorf("%s: not a file's path", f.Dest)
		}
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
			return blob{}, err
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f.Src)
		if err != nil {
			return blob{}, err
		}
		st, err := os.Stat(f.Src)
		if err != nil {
			return blob{}, err
		}
		if err := writeFile(tw, strings.TrimPrefix(path.Clean(f.Dest), "/"), int64(st.Mode().Perm()), data); err != nil {
			return blob{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return blob{}, err
	}
	return newBlob(buf.Bytes()), nil
}

// writeFile writes a regular file owned by root, dated at the epoch.
func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func jsonBlob(v any) (blob, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return blob{}, err
	}
	return newBlob(data), nil
}

// tagOf is the tag of an image reference: what follows the last colon
// after the last slash, or "latest".
func tagOf(ref string) string {
	name := ref[strings.LastIndexByte(ref, '/')+1:]
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return "latest"
}
