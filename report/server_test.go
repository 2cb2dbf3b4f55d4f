package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/serverinfo"
)

// TestJSONServerFields: the names README documents.
func TestJSONServerFields(t *testing.T) {
	t.Parallel()
	keys := uint64(3)
	doc := &Document{Schema: Schema, Tests: []Test{{Name: "SET", Server: resulttest.ServerSample()}},
		Server: &serverinfo.Identity{Available: true, Name: "redis", Version: "7.0.15", RedisVersion: "7.0.15", Keys: &keys,
			Config: map[string]string{"save": ""}, ConfigRefused: "not in JSON"}}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Server map[string]any `json:"server"`
		Tests  []struct {
			Server struct {
				Available bool
				Keys      uint64
				Commands  map[string]map[string]any
			} `json:"server"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"available", "name", "version", "redis_version", "config", "keys"} {
		if _, ok := m.Server[k]; !ok {
			t.Errorf("server lacks %q: %v", k, m.Server)
		}
	}
	if _, ok := m.Server["ConfigRefused"]; ok || strings.Contains(string(b), "not in JSON") {
		t.Error("ConfigRefused leaked into the JSON")
	}
	set := m.Tests[0].Server.Commands["set"]
	for _, k := range []string{"calls", "usec", "usec_per_call", "latency_histogram"} {
		if _, ok := set[k]; !ok {
			t.Errorf("tests[0].server.commands.set lacks %q: %v", k, set)
		}
	}
	h := set["latency_histogram"].(map[string]any)
	for _, k := range []string{"calls", "buckets", "p50_le_usec", "p99_le_usec", "max_le_usec"} {
		if _, ok := h[k]; !ok {
			t.Errorf("latency_histogram lacks %q: %v", k, h)
		}
	}
	if !m.Tests[0].Server.Available || m.Tests[0].Server.Keys != 1000 {
		t.Errorf("tests[0].server %+v", m.Tests[0].Server)
	}
	if m.Tests[0].Server.Commands["info\x1b[2J"]["latency_histogram"] != nil {
		t.Error("a command without a histogram has one")
	}
}
