package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageIsAnOCILayout: every blob is named by its digest, the index
// names the image and points at the manifest, the manifest at the config
// and the layer with their sizes, the config's diff_id is the (uncompressed)
// layer's digest, and the layer holds the files where they go with their
// permissions. The same files give the same bytes. ctr images import is
// the real reader: deploy/e2e/run.sh imports both images with it.
func TestImageIsAnOCILayout(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("#!fake binary\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "conf")
	if err := os.WriteFile(conf, []byte("k=v\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	img := Image{Name: "localhost/pacer-e2e/pacer:e2e", User: "65532:65532", Entrypoint: "/pacer", Arch: "amd64",
		Files: []File{{Src: bin, Dest: "/pacer"}, {Src: conf, Dest: "/etc/pacer/conf"}}}
	var a, b bytes.Buffer
	if err := img.Write(&a); err != nil {
		t.Fatal(err)
	}
	if err := img.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same files gave two different archives")
	}
	files := untar(t, a.Bytes())
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout %q", files["oci-layout"])
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		data, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok {
			t.Fatalf("no blob %s", d.Digest)
		}
		sum := sha256.Sum256(data)
		if "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(data)) != d.Size {
			t.Fatalf("blob %s: digest or size (%d, want %d) wrong", d.Digest, len(data), d.Size)
		}
		return data
	}
	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		Manifests     []descriptor `json:"manifests"`
	}
	decode(t, files["index.json"], &index)
	if index.SchemaVersion != 2 || len(index.Manifests) != 1 {
		t.Fatalf("index %s", files["index.json"])
	}
	md := index.Manifests[0]
	if md.MediaType != mediaManifest || md.Annotations["io.containerd.image.name"] != img.Name ||
		md.Annotations["org.opencontainers.image.ref.name"] != "e2e" || md.Platform == nil || md.Platform.Architecture != "amd64" {
		t.Errorf("index's manifest %+v", md)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	decode(t, blob(md), &manifest)
	if manifest.Config.MediaType != mediaConfig || len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != mediaLayer {
		t.Fatalf("manifest %+v", manifest)
	}
	var config struct {
		Arch   string `json:"architecture"`
		OS     string `json:"os"`
		Config struct {
			User       string   `json:"User"`
			Entrypoint []string `json:"Entrypoint"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	decode(t, blob(manifest.Config), &config)
	if config.Arch != "amd64" || config.OS != "linux" || config.Config.User != "65532:65532" ||
		len(config.Config.Entrypoint) != 1 || config.Config.Entrypoint[0] != "/pacer" {
		t.Errorf("config %+v", config)
	}
	if len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != manifest.Layers[0].Digest {
		t.Errorf("diff_ids %q, layer %s", config.RootFS.DiffIDs, manifest.Layers[0].Digest)
	}
	layer := tar.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	got := map[string]string{}
	for {
		h, err := layer.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(layer)
		got[h.Name] = strings.Join([]string{string(rune(h.Typeflag)), os.FileMode(h.Mode).String(), string(data)}, "|")
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 {
			t.Errorf("%s: owner %d:%d, time %v", h.Name, h.Uid, h.Gid, h.ModTime)
		}
	}
	want := map[string]string{
		"etc/":           "5|-rwxr-xr-x|",
		"etc/pacer/":     "5|-rwxr-xr-x|",
		"etc/pacer/conf": "0|-rw-r-----|k=v\n",
		"pacer":          "0|-rwxr-xr-x|#!fake binary\n",
	}
	if len(got) != len(want) {
		t.Errorf("layer holds %q", got)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("layer's %s: %q, want %q", name, got[name], w)
		}
	}
}

func TestTagOf(t *testing.T) {
	for ref, want := range map[string]string{
		"localhost/pacer:e2e":        "e2e",
		"localhost:5000/pacer":       "latest", // a port is not a tag
		"registry.example/a/b:1.2.3": "1.2.3",
		"pacer":                      "latest",
	} {
		if got := tagOf(ref); got != want {
			t.Errorf("tagOf(%q) = %q, want %q", ref, got, want)
		}
	}
}

func untar(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	r := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := r.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			files[h.Name], _ = io.ReadAll(r)
		}
	}
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
