package report

import (
	"crypto/tls"
	"strconv"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/timeline"
)

// RunConfig holds the settings every load command writes in its
// document's config (Document.Config) under the same keys and with the
// same types (README, "JSON output"). Every command builds its config
// through Echo, so the names cannot drift apart; what only one command
// has goes in its extra keys.
type RunConfig struct {
	// Target is the address connected to; Embedded the embedded target's
	// faults ("" when the target is not embedded).
	Target   string
	Embedded string
	// Dial is how the connections were made: the user, whether a password
	// was given (it is echoed as "***") and the TLS settings.
	Dial     conn.Options
	Conns    int
	Pipeline int // 0: no pipeline (the open loop)
	Sizes    scenarios.Sizes
	Keyspace uint64 // 0: fixed keys (no -r)
	KeyDist  scenarios.KeyDist
	Seed     uint64
	Tests    []string      // the tests' IDs, in run order
	Rate     timeline.Rate // zero: no target rate
	Duration time.Duration // 0: not bounded by time
	Requests uint64        // 0: not bounded by a count
}

// Echo returns the config: the common keys, always present (null where a
// setting does not apply), over the command's extra keys. The target, the
// command and the test are the user's text and go through redact: a
// template or an address must not carry a password into a file.
func (c RunConfig) Echo(extra map[string]any, redact func(string) string) map[string]any {
	m := make(map[string]any, len(extra)+16)
	for k, v := range extra {
		m[k] = v
	}
	tests := c.Tests
	if tests == nil {
		tests = []string{}
	}
	keyDist := "uniform"
	if c.KeyDist != nil {
		keyDist = c.KeyDist.String()
	}
	m["target"] = c.Target
	m["connections"] = c.Conns
	m["data_size"] = c.Sizes.String()
	m["keyspace"] = c.Keyspace
	m["key_dist"] = keyDist
	m["seed"] = c.Seed
	m["seed_str"] = strconv.FormatUint(c.Seed, 10)
	m["tests"] = tests
	m["pipeline"], m["rate"], m["duration_s"], m["requests"] = nil, nil, nil, nil
	if c.Pipeline > 0 {
		m["pipeline"] = c.Pipeline
	}
	if !c.Rate.IsZero() {
		m["rate"] = c.Rate.PerSecond()
	}
	if c.Duration > 0 {
		m["duration_s"] = c.Duration.Seconds()
	}
	if c.Requests > 0 {
		m["requests"] = c.Requests
	}
	if c.Embedded != "" {
		m["embedded"] = c.Embedded
	}
	m["user"], m["password"], m["tls"] = nil, nil, nil
	if c.Dial.Password != "" {
		user := c.Dial.User
		if user == "" {
			user = "default"
		}
		m["user"], m["password"] = user, safetext.Mask
	}
	if t := c.Dial.TLS; t != nil {
		m["tls"] = tlsEcho(t)
	}
	for _, k := range []string{"target", "command", "test"} {
		if str, ok := m[k].(string); ok {
			m[k] = redact(str)
		}
	}
	return m
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
