package scenarios

import (
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

func TestWorkloadBuild(t *testing.T) {
	d3 := FixedSize(3)
	for _, tc := range []struct {
		name   string
		w      Workload
		titles []string
		mixed  bool
		custom bool
	}{
		{"suite", Workload{Sizes: d3, Tests: "get,set"}, []string{"SET", "GET"}, false, false}, // the catalogue's order,
		{"mix", Workload{Sizes: d3, Mix: "get:9,set:1", Keyspace: "100", KeyspaceGiven: true}, nil, true, false},
		{"ratio", Workload{Sizes: d3, Ratio: "1:10", RatioGiven: true}, nil, true, false},
		{"templates", Workload{Sizes: d3, Commands: []string{"SET k:__key__ __data__", "GET k:__key__"}, Weights: []string{"3"},
			Keyspace: "10", KeyspaceGiven: true, KeyDist: "zipf:0.9", KeyDistGiven: true}, nil, true, false},
		{"trailing", Workload{Sizes: d3, Tests: "get", Trailing: []string{"HSET", "h", "f", "__data__"}}, []string{"HSET h f __data__"}, false, true},
	} {
		s, err := tc.w.Build(t.Context())
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s.Mixed != tc.mixed || len(s.Tests) == 0 || s.Tests[0].Custom != tc.custom || s.Keys == nil {
			t.Errorf("%s: %+v", tc.name, s)
		}
		for i, want := range tc.titles {
			if i >= len(s.Tests) || !strings.HasPrefix(s.Tests[i].Title, want) {
				t.Errorf("%s: tests %+v, want titles %q", tc.name, s.Tests, tc.titles)
			}
		}
		if tc.mixed && len(s.Tests[0].Names) != 2 {
			t.Errorf("%s: names %q, want one per command", tc.name, s.Tests[0].Names)
		}
	}
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		{Workload{Sizes: d3, Tests: " , ", TestsGiven: true}, `-t " , " names no test`},
		{Workload{Sizes: d3, Keyspace: "x", KeyspaceGiven: true}, `-r "x": want a keyspace size`},
		{Workload{Sizes: d3, Keyspace: "-1", KeyspaceGiven: true}, "-r -1: must not be negative"},
		{Workload{Sizes: d3, KeyDist: "zipf:0.99", KeyDistGiven: true}, "needs a keyspace"},
		{Workload{Sizes: d3, Keyspace: "10", KeyspaceGiven: true, KeyDist: "pareto"}, "--key-dist"},
		{Workload{Sizes: d3, Commands: []string{`GET "k`}}, "--command: "},
		{Workload{Sizes: d3, Weights: []string{"2"}}, "1 --command-weight for 0 --command"},
		{Workload{Sizes: d3, Commands: []string{"GET k"}, Weights: []string{"0"}}, `--command-weight "0"`},
		{Workload{Sizes: d3, CommandsFile: "/no/such/file"}, "--commands: "},
		{Workload{Sizes: d3, Mix: "get:1", Ratio: "1:1", RatioGiven: true}, "--ratio is a --mix"},
		{Workload{Sizes: d3, Mix: "get:1", Commands: []string{"GET k"}, Weights: []string{"2"}}, "--mix sets the weights"},
		{Workload{Sizes: d3, Mix: "get:1", Tests: "set", TestsGiven: true}, "-t selects catalogue tests"},
		{Workload{Sizes: d3, Mix: "get:1", Trailing: []string{"GET", "k"}}, "a command after the flags"},
		{Workload{Sizes: d3, Mix: "get:9,nosuch:1"}, `unknown command "nosuch"`},
		{Workload{Sizes: d3, Commands: []string{"GET k:__key__"}}, "__key__ needs a keyspace"},
		{Workload{Sizes: FixedSize(1 << 20), Trailing: []string{"SET", "k", "__data__"}, MaxCommand: 1 << 10}, "a command of 1048608 is larger than 1KiB"},
		{Workload{Sizes: d3, Tests: "nosuch"}, "nosuch"},
	} {
		_, err := tc.w.Build(t.Context())
		if err == nil || !strings.Contains(usagetest.CLI(err), tc.want) || !usage.Is(err) {
			t.Errorf("%+v: %v, want a usage error with %q", tc.w, err, tc.want)
		}
	}
}
