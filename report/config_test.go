package report

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scenarios"
)

func TestRunConfigEcho(t *testing.T) {
	t.Parallel()
	mask := func(s string) string { return strings.ReplaceAll(s, "pw", "***") }
	m := RunConfig{Target: "redis://u:pw@h:1", Sizes: scenarios.FixedSize(3), Seed: 1 << 60}.Echo(
		map[string]any{"command": "AUTH pw", "target": "overwritten", "mine": 1}, mask)
	for k, want := range map[string]any{
		"target": "redis://u:***@h:1", "command": "AUTH ***", "mine": 1, "connections": 0, "data_size": "3",
		"keyspace": uint64(0), "key_dist": "uniform", "seed": uint64(1 << 60), "seed_str": "1152921504606846976",
		"pipeline": nil, "rate": nil, "duration_s": nil, "requests": nil, "user": nil, "password": nil, "tls": nil,
	} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %#v (present %v), want %#v", k, got, ok, want)
		}
	}
	if tests, ok := m["tests"].([]string); !ok || tests == nil || len(tests) != 0 {
		t.Errorf("tests = %#v, want an empty list", m["tests"])
	}
	if _, ok := m["embedded"]; ok {
		t.Error("embedded echoed for a target that is not embedded")
	}
	m = RunConfig{Dial: conn.Options{Password: "pw", TLS: &tls.Config{ServerName: "h", CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}},
		Pipeline: 4, Embedded: "no faults"}.Echo(nil, mask)
	if m["user"] != "default" || m["password"] != "***" || m["pipeline"] != 4 || m["embedded"] != "no faults" {
		t.Errorf("dial: %v", m)
	}
	tl, _ := m["tls"].(map[string]any)
	if tl["server_name"] != "h" || tl["ca"] != "system" || tl["insecure"] != false || tl["client_certificate"] != false ||
		len(tl["tls12_ciphers"].([]string)) != 1 {
		t.Errorf("tls: %v", tl)
	}
}
