package main

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// A run against a redis-server on this host finds its process (the
// listening socket's owner, confirmed by INFO process_id) and reports
// what its threads did with the CPUs, over the test and in every
// interval; the embedded target, pacer's own process, has none. A
// sweep's steps say so as a run does, and where the target runs (the
// attribution reads it: steps once said every target was elsewhere).
func TestRunReportsTheServerProcess(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	info, err := srv.Info("server")
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(info["process_id"])
	out := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"run"}, hostPort(t, srv.Addr)...)
	args = append(args, "--rate", "2k", "--duration", "2s", "-c", "4", "-t", "get", "--json", out, "--lag-limit", "1s")
	code, stdout, stderr := pacer(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type proc struct {
		PID        int     `json:"pid"`
		How        string  `json:"how"`
		Seconds    float64 `json:"seconds"`
		CPUS       float64 `json:"cpu_s"`
		Timeslices uint64  `json:"timeslices"`
	}
	doc := readJSON[struct {
		Tests []struct {
			ServerProcess *proc `json:"server_process"`
			Intervals     []struct {
				ServerProcess *proc `json:"server_process"`
			} `json:"intervals"`
		} `json:"tests"`
	}](t, out)
	sp := doc.Tests[0].ServerProcess
	if sp == nil || sp.PID != pid || sp.How != "the listening socket's owner, confirmed by INFO process_id" || sp.CPUS <= 0 || sp.Timeslices == 0 || sp.Seconds < 1.5 {
		t.Fatalf("server_process %+v, want redis-server's (pid %d)", sp, pid)
	}
	var slices uint64
	for i, iv := range doc.Tests[0].Intervals {
		if iv.ServerProcess == nil {
			t.Fatalf("interval %d has no server_process", i)
		}
		slices += iv.ServerProcess.Timeslices
	}
	if slices != sp.Timeslices {
		t.Errorf("the intervals' time slices add up to %d, the test's are %d", slices, sp.Timeslices)
	}
	testrun.Contains(t, stdout, "server process pid "+strconv.Itoa(pid)+" (redis-server): CPU ", "waited for a CPU")

	type host struct {
		Local     bool `json:"target_local"`
		InProcess bool `json:"target_in_process"`
	}
	type steps struct {
		Tests []struct {
			Host          *host `json:"host"`
			ServerProcess *proc `json:"server_process"`
		} `json:"tests"`
	}
	outSweep := filepath.Join(t.TempDir(), "s.json")
	args = append([]string{"sweep"}, hostPort(t, srv.Addr)...)
	args = append(args, "--rates", "1k,2k", "--step-duration", "500ms", "-c", "4", "-t", "get", "--json", outSweep, "--lag-limit", "1s")
	if code, _, stderr := pacer(t, args...); code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for i, st := range readJSON[steps](t, outSweep).Tests {
		if st.Host == nil || !st.Host.Local || st.Host.InProcess || st.ServerProcess == nil || st.ServerProcess.PID != pid {
			t.Errorf("sweep step %d: host %+v, server_process %+v: want a local target, redis-server's process", i, st.Host, st.ServerProcess)
		}
	}

	out2 := filepath.Join(t.TempDir(), "e.json")
	if code, _, stderr := pacer(t, "run", "--embedded", "--rate", "1k", "--duration", "300ms", "-c", "2", "-t", "get", "--lag-limit", "1s", "--json", out2); code != exitOK {
		t.Fatalf("embedded: exit %d: %s", code, stderr)
	}
	if d := readJSON[struct {
		Tests []struct {
			ServerProcess *proc `json:"server_process"`
		} `json:"tests"`
	}](t, out2); d.Tests[0].ServerProcess != nil {
		t.Fatalf("the embedded target has a server process: %+v", d.Tests[0].ServerProcess)
	}
}
