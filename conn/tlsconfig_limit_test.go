package conn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/certs"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// bigFile makes a sparse file of size bytes: on disk it costs nothing,
// read whole it costs size.
func bigFile(t *testing.T, dir string, size int64) string {
	t.Helper()
	path := filepath.Join(dir, "big.pem")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTLSFilesAreCapped: --cacert, --cert, --key (and the files of
// --cacertdir, and the server's --tls-cert and --tls-key) are read up to
// MaxTLSFileSize, like --commands: /dev/zero or a huge file is an error
// after the limit, not gigabytes read.
func TestTLSFilesAreCapped(t *testing.T) {
	dir := t.TempDir()
	files, err := certs.Write(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	big := bigFile(t, t.TempDir(), MaxTLSFileSize+1)
	bigDir := filepath.Dir(big)
	paths := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	const limit = "the file holds more than 4MiB (the limit)"
	for _, p := range paths {
		for _, tc := range []struct {
			f    TLSFiles
			want string
		}{
			{TLSFiles{CACert: p}, "--cacert " + p + ": "},
			{TLSFiles{Cert: p, Key: files.ClientKey}, "--cert " + p + ": "},
			{TLSFiles{Cert: files.ClientCert, Key: p}, "--key " + p + ": "},
		} {
			_, err := tc.f.Client(t.Context(), "h")
			if err == nil || !usage.Is(err) || !strings.HasPrefix(usagetest.CLI(err), tc.want) || !strings.Contains(usagetest.CLI(err), limit) {
				t.Errorf("%+v: %v; want a usage error %q…%q", tc.f, err, tc.want, limit)
			}
		}
		for _, f := range []TLSServerFiles{{Cert: p, Key: files.ServerKey}, {Cert: files.ServerCert, Key: p}} {
			if _, err := f.Config(); err == nil || !usage.Is(err) || !strings.Contains(usagetest.CLI(err), limit) {
				t.Errorf("%+v: %v; want a usage error %q", f, err, limit)
			}
		}
	}
	if _, err := (TLSFiles{CACertDir: bigDir}).Client(t.Context(), "h"); err == nil || !strings.Contains(usagetest.CLI(err), "big.pem: "+limit) {
		t.Errorf("--cacertdir with a big file: %v", err)
	}
	// At the limit is still read.
	ok := bigFile(t, t.TempDir(), MaxTLSFileSize)
	if _, err := (TLSFiles{CACert: ok}).Client(t.Context(), "h"); err == nil || !strings.HasSuffix(usagetest.CLI(err), "no PEM certificate in it") {
		t.Errorf("a file at the limit: %v", err)
	}
}
