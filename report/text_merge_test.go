package report_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/pacer-load/pacer/internal/reporttest"
	"github.com/pacer-load/pacer/internal/resulttest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/merge"
	reporttext "github.com/pacer-load/pacer/report/text"
)

// TestMergeServerSide: shards of one target keep the server's side once
// (each shard measured every client, so a sum would count it N times);
// shards of different targets keep each target's.
func TestMergeServerSide(t *testing.T) {
	t.Parallel()
	in := reporttest.Shards[merge.Input](t, 3)
	for k := range in {
		in[k].Doc.Tests[0].Server = resulttest.GetStats(6000 + uint64(k))
	}
	doc, err := merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := doc.Tests[0]
	if m.Server == nil || m.Server.Commands["get"].Calls != 6000 || len(m.Servers) != 0 {
		t.Fatalf("one target: server %+v, servers %+v", m.Server, m.Servers)
	}
	// Each shard its own embedded server (the config's target is then
	// the flags' default, the same for all); shard 2 has no reading.
	in = reporttest.Shards[merge.Input](t, 3)
	for k := range in {
		in[k].Doc.Config["embedded"] = "no faults"
		in[k].Doc.Config["target"] = "127.0.0.1:6379"
		if k != 1 {
			in[k].Doc.Tests[0].Server = resulttest.GetStats(2000 + uint64(k))
		}
	}
	doc, err = merge.Merge(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m = doc.Tests[0]
	if m.Server != nil || doc.Server != nil || len(m.Servers) != 2 || m.Servers[0].Target != "embedded" || fmt.Sprint(m.Servers[0].Shards) != "[1]" ||
		m.Servers[0].Server.Commands["get"].Calls != 2000 || fmt.Sprint(m.Servers[1].Shards) != "[3]" || m.Servers[1].Server.Commands["get"].Calls != 2002 {
		t.Fatalf("three servers: server %+v, servers %+v", m.Server, m.Servers)
	}
	back := report.InputOf(t, "merged.json", doc)
	text := render(t, func(b *bytes.Buffer) error { return reporttext.Render(b, back.Doc) })
	testrun.Contains(t, text, "server side of shard 1 (embedded)", "server side of shard 3 (embedded)", "30 connections (10 + 10 + 10 over 3 shards)")
}
