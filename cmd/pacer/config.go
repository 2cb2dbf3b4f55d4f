package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// commonConfig holds the settings every load command writes in its JSON
// config under the same keys and with the same types (README, "JSON
// output"). Every command builds its config through echo, so the names
// cannot drift apart; what only one command has goes in its extra keys.
type commonConfig struct {
	// target is the address connected to; embedded the embedded target's
	// faults ("" when the target is not embedded).
	target   string
	embedded string
	// dial is how the connections were made: the user, whether a password
	// was given (it is echoed as "***") and the TLS settings.
	dial     conn.Options
	conns    int
	pipeline int // 0: no pipeline (the open loop)
	sizes    scenarios.Sizes
	keyspace uint64 // 0: fixed keys (no -r)
	keyDist  scenarios.KeyDist
	seed     uint64
	tests    []string       // the tests' IDs, in run order
	rate     scheduler.Rate // zero: no target rate
	duration time.Duration  // 0: not bounded by time
	requests uint64         // 0: not bounded by a count
}

// echo returns the config: the common keys, always present (null where a
// setting does not apply), over the command's extra keys. The target and
// a command's text are redacted: a template or an address must not carry
// a password into a file.
func (cc commonConfig) echo(ctx context.Context, extra map[string]any) map[string]any {
	m := make(map[string]any, len(extra)+16)
	for k, v := range extra {
		m[k] = v
	}
	tests := cc.tests
	if tests == nil {
		tests = []string{}
	}
	keyDist := "uniform"
	if cc.keyDist != nil {
		keyDist = cc.keyDist.String()
	}
	m["target"] = cc.target
	m["connections"] = cc.conns
	m["data_size"] = cc.sizes.String()
	m["keyspace"] = cc.keyspace
	m["key_dist"] = keyDist
	m["seed"] = cc.seed
	m["seed_str"] = strconv.FormatUint(cc.seed, 10)
	m["tests"] = tests
	m["pipeline"], m["rate"], m["duration_s"], m["requests"] = nil, nil, nil, nil
	if cc.pipeline > 0 {
		m["pipeline"] = cc.pipeline
	}
	if !cc.rate.IsZero() {
		m["rate"] = cc.rate.PerSecond()
	}
	if cc.duration > 0 {
		m["duration_s"] = cc.duration.Seconds()
	}
	if cc.requests > 0 {
		m["requests"] = cc.requests
	}
	if cc.embedded != "" {
		m["embedded"] = cc.embedded
	}
	m["user"], m["password"], m["tls"] = nil, nil, nil
	if cc.dial.Password != "" {
		user := cc.dial.User
		if user == "" {
			user = "default"
		}
		m["user"], m["password"] = user, safetext.Mask
	}
	if t := cc.dial.TLS; t != nil {
		m["tls"] = tlsEcho(t)
	}
	s := secretsFrom(ctx)
	for _, k := range []string{"target", "command", "test"} { // the user's text
		if str, ok := m[k].(string); ok {
			m[k] = s.Redact(str)
		}
	}
	return m
}

// testIDs lists the IDs of a workload's tests.
func testIDs(w *workload) []string {
	ids := make([]string, len(w.tests))
	for i, t := range w.tests {
		ids[i] = t.id()
	}
	return ids
}

// faultsOf describes the embedded target's faults for the config ("" when
// srv is nil: the target is not embedded).
func faultsOf(srv *embedded.Server) string {
	if srv == nil {
		return ""
	}
	return srv.Faults().String()
}

// printSeed ends a human summary with the seed, so the run can be
// repeated exactly.
func printSeed(w io.Writer, seed uint64) {
	fmt.Fprintf(w, "seed %d (--seed to repeat)\n", seed)
}

// tlsEcho is the config's "tls": what the client's TLS settings were
// (files are not named: the certificates that were trusted are what
// mattered).
func tlsEcho(t *tls.Config) map[string]any {
	var suites []string
	for _, id := range t.CipherSuites {
		suites = append(suites, tls.CipherSuiteName(id))
	}
	ca := "system"
	if t.RootCAs != nil {
		ca = "given"
	}
	return map[string]any{
		"server_name":        t.ServerName,
		"insecure":           t.InsecureSkipVerify,
		"ca":                 ca,
		"client_certificate": len(t.Certificates) > 0,
		"tls12_ciphers":      suites,
	}
}
