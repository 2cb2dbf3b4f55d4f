package verdict

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// Judgement is the trust rule's decision on one test: its outcome, the
// verdict the result reports and one sentence saying why.
type Judgement struct {
	Outcome Outcome
	Verdict string
	Reason  string
	// Owners says whose each clause of the SLO is, in order (see
	// attribute): OwnerServer, OwnerClient or OwnerHost for a failing
	// clause, "" for one that passed; nil without a failed SLO.
	Owners []string
}

// Judge applies the trust rule to a test and its SLO verdict (t.SLO, nil
// without --slo). It is pure: no clock, no I/O. Response time = send
// lag + service time, both from the intended time, so the generator's
// lateness can only make latencies look worse:
//
//   - target lost (every connection gone for good, or nothing completed
//     of what was scheduled, unless interrupted first): Error. A test
//     read back keeps the target_lost it was given.
//   - no SLO: Inconclusive (generator_behind) when the lag is material — send
//     lag p99 above the limit and at least 10% of the response p99 — or
//     less than 99.5% of the requests the generator answered for were sent;
//     Pass otherwise (with a note when the lag was high but immaterial).
//   - SLO passed: Pass, noting a high lag, unless the load was
//     under-delivered (sent share below 99.5%, or the delivered rate short
//     of the target by more than 0.5%, whoever caused it): Inconclusive.
//   - SLO failed: Fail when the generator kept its timeline, or when
//     one failing clause fails regardless of it (a latency that also fails
//     on service time, or whose window's lag p99 is under 10% of it; errors
//     and timeouts; shares and rates the generator's own unsent requests
//     cannot account for); Inconclusive only when its lateness could explain
//     every failing clause.
//
// Requests the target held back (see Assess) count as the
// server's doing throughout, except for under-delivery: a pass at less
// than the target load is no pass.
//
// A test measured with a budget to decide in (--decide-within) is judged
// by this rule at its first look and when the budget runs out, and by the
// sequential rule (see sequential) at the looks between.
func Judge(t *report.Test) Judgement {
	if t == nil {
		return Judgement{Outcome: Pass, Verdict: report.VerdictOK}
	}
	return sequential(t, judge(t))
}

// judge is Judge's ordinary rule.
func judge(t *report.Test) Judgement {
	if t == nil {
		return Judgement{Outcome: Pass, Verdict: report.VerdictOK}
	}
	slo := t.SLO
	if lost, why := targetLost(t); lost {
		return Judgement{Outcome: Error, Verdict: report.VerdictTargetLost, Reason: why}
	}
	h := Assess(t)
	verdict, why := h.verdict()
	switch {
	case slo == nil && verdict == report.VerdictGeneratorBehind:
		return Judgement{Outcome: Inconclusive, Verdict: verdict, Reason: why + hiccupNote(t, h)}
	case slo == nil:
		return Judgement{Outcome: Pass, Verdict: verdict, Reason: why + hiccupNote(t, h)}
	case slo.Pass && h.UnderDelivered:
		return Judgement{Outcome: Inconclusive, Verdict: report.VerdictGeneratorBehind, Reason: "the SLO passed, but on an under-delivered load: " + shortfall(h) + h.HeldBackNote()}
	case slo.Pass && h.LagHigh:
		return Judgement{Outcome: Pass, Verdict: report.VerdictOK, Reason: fmt.Sprintf("the SLO passed on response time, which includes the send lag: a send lag p99 of %.3f ms (above %.3f ms) can only have made it look worse",
			dms(h.LagP99), dms(h.LagLimit)) + precisionNote(t, h)}
	case slo.Pass:
		return Judgement{Outcome: Pass, Verdict: report.VerdictOK, Reason: why}
	}
	// The SLO failed: each failing clause has an owner (attribute).
	host := hostOf(t)
	var server, client []string
	owners := make([]string, len(slo.Clauses))
	for i, c := range slo.Clauses {
		if c.Pass {
			continue
		}
		owner, because := attribute(c, h, host, t.Counts, clauseWait(t, c))
		owners[i] = owner
		if owner == OwnerServer {
			server = append(server, c.Clause+": "+because)
		} else {
			client = append(client, c.Clause+": "+because)
		}
	}
	if len(server) > 0 || len(client) == 0 {
		if len(server) == 0 { // a failed SLO without a failing clause
			server = []string{"the SLO"}
		}
		return Judgement{Outcome: Fail, Verdict: report.VerdictOK, Reason: "the server missed " + andMore(server) + host.evidence(t) + precisionNote(t, h), Owners: owners}
	}
	// The server's own account, when it gave one, says where the time
	// went (a server executing in microseconds beside a service time of
	// milliseconds points at the host), whoever the verdict names.
	return Judgement{Outcome: Inconclusive, Verdict: report.VerdictInconclusive, Reason: andMore(client) + h.HeldBackNote() + host.evidence(t) + precisionNote(t, h), Owners: owners}
}

// precisionNote is "" or a clause, starting with "; ", saying that this
// machine could not pace to the precision the run asked for: the send
// lag p99 the generator answers for was above its limit (by default a
// tenth of the tightest latency bound of the SLO) while the host was
// quiet (hiccups p99 under QuietShare of the limit's bound, CPUs neither
// busy nor stolen), so the lateness is the machine's wake-up latency
// itself, not a neighbour's load.
//
// When auto pacing stepped back from that precision during the run
// (report.PacingSteps), the note says so instead, with the host's idle CPU
// that made it.
func precisionNote(t *report.Test, h Health) string {
	if !h.LagHigh || t.SLO == nil {
		return ""
	}
	if steps := t.PacingSteps; len(steps) > 0 {
		first, last := steps[0], steps[len(steps)-1]
		from := "precise pacing"
		if first.FromQuantumUs > 0 {
			from = fmt.Sprintf("pacing with a %g µs quantum", first.FromQuantumUs)
		}
		at := fmt.Sprintf("at %g s", first.AtS)
		if len(steps) > 1 {
			at = fmt.Sprintf("from %g s to %g s", first.AtS, last.AtS)
		}
		return fmt.Sprintf("; this machine could not pay for the precision asked: %s stepped back to a %g µs quantum %s, when the host's CPUs had %.2f of a CPU idle",
			from, last.ToQuantumUs, at, last.HostIdleCPUs)
	}
	f := t.MustFacts()
	host := hostOf(t)
	if !host.measured || host.saturated() {
		return ""
	}
	bound := 0.0
	for _, c := range t.SLO.Clauses {
		if cl := clauseOf(c); cl.latency() && cl.upper() && c.Bound > 0 && (bound == 0 || c.Bound < bound) {
			bound = c.Bound
		}
	}
	p99 := time.Duration(f.Hiccups.ValueAtQuantile(99))
	if bound == 0 || dms(p99) >= QuietShare*bound {
		return ""
	}
	return fmt.Sprintf("; this machine could not pace to the precision asked: send lag p99 %.3f ms above the limit %.3f ms on a quiet host (hiccups p99 %.3f ms)",
		dms(h.LagP99), dms(h.LagLimit), dms(p99))
}

// hiccupNote is "" or a clause on the host's hiccups, starting with "; ",
// when their p99 exceeds MaterialLag of the response p99: the client
// machine's own noise is then a visible part of the latencies.
func hiccupNote(t *report.Test, h Health) string {
	f := t.MustFacts()
	if f.Hiccups == nil || f.Hiccups.TotalCount() == 0 || h.ResponseP99 <= 0 {
		return ""
	}
	p99 := time.Duration(f.Hiccups.ValueAtQuantile(99))
	if float64(p99) <= MaterialLag*float64(h.ResponseP99) {
		return ""
	}
	return fmt.Sprintf("; host hiccups p99 %.3f ms, %.0f%% of the response p99 (%.3f ms): the client machine's own noise is in these numbers",
		dms(p99), 100*float64(p99)/float64(h.ResponseP99), dms(h.ResponseP99))
}

// Owners of a failing clause.
const (
	OwnerServer = "server"
	OwnerClient = "client"
	OwnerHost   = "host"
	// OwnerCapacity: the server's process waited for a CPU enough to
	// explain the miss, or the client host's noise could account for it,
	// while the test alone used the host's CPUs and kept them busy
	// (hostFacts.alone: pacer, with the target in its process or a
	// server's process beside it): no other load disturbed the test, and
	// the server's code did not miss; at this rate the test needs more of
	// the host than it gives without delay. A run cannot say what the
	// server does on a host of its own: inconclusive; a sweep's step is
	// beyond what the setup sustains (StepSaturated).
	OwnerCapacity = "capacity"
)

// OthersQuiet is the most CPU, as a share of the host's CPUs, that other
// processes (and the hypervisor's other guests) may use while the host
// counts as running the test alone (hostFacts.alone). /proc/stat's busy
// time and the processes' own CPU times disagree by up to a tenth of a
// core on the 2-vCPU VM pacer is developed on (against pacer serve at
// 8-9k GET/s with nothing else running: -0.20 to +0.05 cores left for
// the others); one busy loop beside the test takes a whole core.
// OwnBusyShare is the least share of the CPUs the test itself must have
// used for the host's delays to be its own. Searches against pacer serve
// --delay exp:100us and the embedded target on that VM (2026-12-07, 16
// searches) kept 0.71 to 1.01 of the 2 CPUs busy in the steps at 8.3 to
// 9.5k/s that were beyond the setup; steps at 3 to 4k/s inside episodes
// the host's counters did not see (the server waited 15-28% of the time
// for a CPU with 1.4 CPUs idle) kept 0.51 to 0.60 busy, and a quarter of
// the CPUs (0.5) took them for the test's own: one search settled on
// 2,828/s, a third of what the setup sustains.
const (
	OthersQuiet  = 0.1
	OwnBusyShare = 1.0 / 3
)

// QuietShare is the share of a latency bound under which the client's
// host counts as quiet: its hiccups and pacer's receive lag at the
// clause's metric each stay under it (and its CPUs under BusyHost busy,
// StealHost stolen).
const (
	QuietShare = 0.25
	BusyHost   = 0.90
	StealHost  = 0.10
)

// andMore joins the first of list with how many more there are.
func andMore(list []string) string {
	if len(list) == 1 {
		return list[0]
	}
	return fmt.Sprintf("%s (and %d more clauses)", list[0], len(list)-1)
}

// attribute says whose failing clause cr is, and why in a clause of its
// own. A latency bound from above that the server's side (service time,
// to the kernel's arrival) meets is the client's: its send lag made the
// response miss it. One the server's side misses too is decided by the
// server's own evidence first, where there is some:
//
//   - an event of the server's latency monitor during the test that
//     itself took the bound or longer (an fsync, a fork, an expire
//     cycle): the server's, quoting the event; unless the event is one
//     of computing (a command, a cycle) and the server process's waits
//     for a CPU explain the miss (below), since such an event's time
//     includes the waits;
//   - a server process on this host whose busiest thread was found
//     waiting for the disk (uninterruptible sleep, looked at every 10 ms)
//     in at least the share of the looks the percentile leaves beyond it
//     (serverWait.diskExplains): the server's, whatever its waits for a
//     CPU: the same fsyncs the latency monitor reports when it is on;
//   - a server process on this host that in some intervals hardly
//     waited for a CPU (under half the share beyond the percentile), and
//     whose service time over those intervals alone still misses the
//     bound, on samples enough to tell: the server's, even on a busy
//     host (serverWait.calmMiss);
//   - a server process on this host whose waits for a CPU, in the
//     intervals that missed, explain the miss (serverWait.explains:
//     waiting at least the share of the time the percentile leaves
//     beyond it): the host's, naming the wait: the server's code may be
//     fast, its machine did not run it;
//   - a server process measured not waiting (serverWait.idle: under half
//     that share), with the kernel's receive timestamps (so that pacer's
//     own reading is not in the service time): the server's, even on a
//     busy client host, quoting the wait.
//
// Otherwise the host's noise decides: the server's on a quiet host
// (hostFacts.noise), and also on a busy one when the target is
// elsewhere and the service time misses by more than the host's hiccups
// at that metric could have added; otherwise the host's: it was too busy
// to tell. Shares and rates are the server's unless the generator's own
// unsent requests could account for them (regardless); a bound from
// below, errors and timeouts are always the server's.
func attribute(cr report.ClauseResult, h Health, host hostFacts, total scheduler.Counts, wait serverWait) (owner, because string) {
	c := clauseOf(cr)
	fig := cr.Figures
	if fig == nil {
		fig = &report.ClauseFigures{}
	}
	if !c.latency() || cr.Observed == nil || !c.upper() {
		because, theirs := regardless(cr, h, total)
		if theirs {
			return OwnerServer, because
		}
		return OwnerClient, because
	}
	bound := report.FormatValue(c.value, cr.Unit)
	share := func(v *float64) string {
		if v == nil || c.value <= 0 {
			return ""
		}
		return fmt.Sprintf(" (%.0f%% of the bound)", 100**v/c.value)
	}
	parts := cr.Client
	if parts == nil {
		parts = &report.ClientShare{}
	}
	if !fig.ServiceFails {
		lag := "its send lag"
		if parts.SendLagMs != nil {
			lag = fmt.Sprintf("its send lag %s %s%s", c.metric, report.FormatValue(*parts.SendLagMs, "ms"), share(parts.SendLagMs))
		}
		return OwnerClient, fmt.Sprintf("the server's side met it (service %s %s), the client's part did not: %s made the response time miss %s",
			c.metric, report.FormatValue(fig.ServiceMs, "ms"), lag, bound)
	}
	missed := fmt.Sprintf("service %s %s misses %s", c.metric, report.FormatValue(fig.ServiceMs, "ms"), bound)
	event, hasEvent := host.event(c.value)
	explains := wait.explains(metricQuantile(c.metric))

	q := metricQuantile(c.metric)
	switch {
	case hasEvent && (ioEvent(event.Event) || !explains):
		return OwnerServer, fmt.Sprintf("%s, beside the server's own latency event %s (its latency monitor)", missed, event)
	case wait.diskExplains(q):
		return OwnerServer, fmt.Sprintf("%s, and %s: its own I/O (an fsync, a write), which no wait for a CPU makes", missed, wait.diskWords())
	case host.kernelClock && wait.calmMiss(q, c.met):
		return OwnerServer, fmt.Sprintf("%s, and %s: the time is the server's own", missed, wait.calmWords(c.metric))
	case explains && host.alone(wait):
		return OwnerCapacity, fmt.Sprintf("%s, but %s, while %s: at this rate the two together need more of this host than it gives without delay",
			missed, wait.words(), host.aloneWords(wait))
	case explains:
		return OwnerHost, fmt.Sprintf("%s, but %s: the host did not run the server when it had work, which its code cannot help",
			missed, wait.words())
	case wait.idle(q) && host.kernelClock:
		return OwnerServer, fmt.Sprintf("%s, and %s: the time is the server's own", missed, wait.words())
	}
	waited := ""
	if wait.ok {
		waited = "; " + wait.words()
	}
	noise := host.noise(c.value, parts)
	if len(noise) == 0 {
		return OwnerServer, fmt.Sprintf("service %s %s misses %s too, on a quiet client host%s%s", c.metric, report.FormatValue(fig.ServiceMs, "ms"), bound, host.quietNote(c.metric, parts, share), waited)
	}
	// A miss larger than the client's measured noise could have added is
	// the server's, unless the server shares saturated CPUs with pacer
	// from a process of its own (its time then grows with them, beyond
	// what the meter sees; in pacer's process the meter sees it).
	if explain, what := host.explains(c.metric, parts); fig.ServiceMs-explain > c.value && !(host.local && !host.inProcess && host.saturated()) {
		return OwnerServer, fmt.Sprintf("service %s %s misses %s by more than the client's noise (%s) could have added",
			c.metric, report.FormatValue(fig.ServiceMs, "ms"), bound, what)
	}
	why := strings.Join(noise, "; ")
	if host.alone(wait) {
		return OwnerCapacity, fmt.Sprintf("service %s %s misses %s, and the client host's noise could account for it (%s), while %s: at this rate the test itself needs more of this host than it gives without delay%s",
			c.metric, report.FormatValue(fig.ServiceMs, "ms"), bound, why, host.aloneWords(wait), waited)
	}
	if host.local {
		why += "; the target is on this host: the server and pacer compete for the same cores"
	}
	return OwnerHost, fmt.Sprintf("service %s %s misses %s, but the client host was too busy to tell whose it is: %s%s",
		c.metric, report.FormatValue(fig.ServiceMs, "ms"), bound, why, waited)
}

// hostFacts are what a test says of the client machine.
type hostFacts struct {
	cpu      scheduler.HostCPU
	measured bool // the hiccup meter ran
	local    bool
	// inProcess: the target runs in pacer's process, so the hiccup meter
	// sees what delays its goroutines.
	inProcess bool
	server    *serverinfo.Stats
	// kernelClock: replies' arrivals are the kernel's receive
	// timestamps, so pacer's own reading is not in the service time.
	kernelClock bool
}

func hostOf(t *report.Test) hostFacts {
	f := t.MustFacts()
	return hostFacts{cpu: f.CPU, measured: f.Hiccups != nil && f.Hiccups.TotalCount() > 0, local: f.Local, inProcess: f.InProcess, server: t.Server,
		kernelClock: t.ReceiveClock == scheduler.ReceiveKernel}
}

// others is the CPU, in cores, that processes other than the test's own
// (pacer's, with the target when it runs in pacer's process, and a
// server's process on this host) used over the test, the hypervisor's
// other guests' steal included; own is the test's. ok when it can be
// told: the target runs in pacer's process, or on this host in a process
// whose CPU time was read.
func (h hostFacts) others(w serverWait) (others, own float64, ok bool) {
	switch {
	case !h.local || !h.cpu.Available || h.cpu.CPUs <= 0:
		return 0, 0, false
	case h.inProcess:
		own = h.cpu.Self
	case w.ok && w.all.Seconds > 0:
		own = h.cpu.Self + w.serverCores()
	default:
		return 0, 0, false
	}
	return max(h.cpu.Busy*float64(h.cpu.CPUs)-own, 0), own, true
}

// alone reports whether the test had the host to itself and kept it
// busy: the others used under OthersQuiet of its CPUs, and the test at
// least OwnBusyShare of them. A test that hardly used the host cannot
// have made its noise: that noise came from outside, whether the host's
// counters saw it or not (a guest's vCPU the hypervisor wakes late shows
// as neither busy nor stolen time).
func (h hostFacts) alone(w serverWait) bool {
	o, own, ok := h.others(w)
	cpus := float64(h.cpu.CPUs)
	return ok && o < OthersQuiet*cpus && own >= OwnBusyShare*cpus
}

// aloneWords says what alone found: "pacer (0.49 cores) and the server's
// process (0.51) alone used the host's 2 CPUs (the rest 0.04)".
func (h hostFacts) aloneWords(w serverWait) string {
	o, _, _ := h.others(w)
	if h.inProcess {
		return fmt.Sprintf("pacer, the target in its process, alone used the host's %d CPUs (%.2f cores; the rest %.2f)", h.cpu.CPUs, h.cpu.Self, o)
	}
	return fmt.Sprintf("pacer (%.2f cores) and the server's process (%.2f) alone used the host's %d CPUs (the rest %.2f)",
		h.cpu.Self, w.serverCores(), h.cpu.CPUs, o)
}

// event is the server's longest latency event during the test, when it
// took boundMs or longer (ok false: none, or the monitor was off).
func (h hostFacts) event(boundMs float64) (serverinfo.LatencyEvent, bool) {
	e, ok := h.server.Worst()
	if !ok || float64(e.Ms) < boundMs {
		return serverinfo.LatencyEvent{}, false
	}
	return e, true
}

// ioEvent reports whether a latency event is one of waiting for the disk
// or the kernel (an AOF write or fsync, a fork, an RDB save), whose time
// no wait for a CPU makes: Redis's aof-*, fork, rdb-*.
func ioEvent(name string) bool {
	return strings.HasPrefix(name, "aof-") || strings.HasPrefix(name, "fork") || strings.HasPrefix(name, "rdb-") || strings.Contains(name, "fsync")
}

// metricQuantile is the quantile (percent) a latency metric reads: 99 for
// p99, 100 for max, 50 for the mean and the median, 0 for min.
func metricQuantile(metric string) float64 {
	switch metric {
	case "max":
		return 100
	case "min":
		return 0
	case "mean":
		return 50
	}
	if q, err := strconv.ParseFloat(strings.TrimPrefix(metric, "p"), 64); err == nil {
		return q
	}
	return 50
}

// clauseWait is the server process's wait over a failing clause's scope:
// the worst window's intervals, or the whole test.
func clauseWait(t *report.Test, c report.ClauseResult) serverWait {
	if w := c.Window; w != nil {
		return serverWaitOf(t, seconds(w.StartS), seconds(w.DurationS), c.Metric, c.Bound)
	}
	return serverWaitOf(t, 0, 0, c.Metric, c.Bound)
}

// noise lists what made the host too busy to tell, for a bound of
// boundMs: hiccups or receive lag a material share of it (QuietShare),
// CPUs saturated or stolen. Nothing when quiet, or not measured.
func (h hostFacts) noise(boundMs float64, p *report.ClientShare) []string {
	var out []string
	if v := p.HostHiccupsMs; v != nil && *v >= QuietShare*boundMs {
		out = append(out, fmt.Sprintf("host hiccups %s on a %s bound", report.FormatValue(*v, "ms"), report.FormatValue(boundMs, "ms")))
	}
	if v := p.ReceiveLagMs; v != nil && *v >= QuietShare*boundMs {
		out = append(out, fmt.Sprintf("pacer's receive lag %s on a %s bound", report.FormatValue(*v, "ms"), report.FormatValue(boundMs, "ms")))
	}
	if c := h.cpu; c.Available && (c.Busy >= BusyHost || c.Steal >= StealHost) {
		out = append(out, fmt.Sprintf("host CPU %.0f%% busy, %.0f%% stolen", 100*c.Busy, 100*c.Steal))
	}
	return out
}

// saturated reports whether the host's CPUs were busy or stolen beyond
// BusyHost or StealHost.
func (h hostFacts) saturated() bool {
	return h.cpu.Available && (h.cpu.Busy >= BusyHost || h.cpu.Steal >= StealHost)
}

// explains is the most the client's noise could have added to a latency
// at metric (its hiccups and receive lag there), in ms, and it in words.
func (h hostFacts) explains(metric string, p *report.ClientShare) (float64, string) {
	var ms float64
	var parts []string
	if v := p.HostHiccupsMs; v != nil {
		ms += *v
		parts = append(parts, fmt.Sprintf("host hiccups %s %s", metric, report.FormatValue(*v, "ms")))
	}
	if v := p.ReceiveLagMs; v != nil {
		ms += *v
		parts = append(parts, fmt.Sprintf("receive lag %s %s", metric, report.FormatValue(*v, "ms")))
	}
	if len(parts) == 0 {
		return 0, "none measured"
	}
	return ms, strings.Join(parts, " + ")
}

// quietNote says what made the host count as quiet.
func (h hostFacts) quietNote(metric string, p *report.ClientShare, share func(*float64) string) string {
	if p.HostHiccupsMs == nil && !h.cpu.Available {
		return " (host not measured)"
	}
	var parts []string
	if v := p.HostHiccupsMs; v != nil {
		parts = append(parts, fmt.Sprintf("hiccups %s %s%s", metric, report.FormatValue(*v, "ms"), share(v)))
	}
	if c := h.cpu; c.Available {
		parts = append(parts, fmt.Sprintf("CPU %.0f%% busy, %.0f%% stolen", 100*c.Busy, 100*c.Steal))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// evidence quotes the server's own account of the test, when it gave one:
// its LATENCY HISTOGRAM's p99 over every command it ran, or its mean time
// per call.
func (h hostFacts) evidence(t *report.Test) string {
	s := h.server
	if s == nil || !s.Available {
		return ""
	}
	total := s.Total()
	if total.Calls == 0 {
		return ""
	}
	if lh := total.LatencyHistogram; lh != nil && lh.Calls > 0 {
		return fmt.Sprintf("; the server's own LATENCY HISTOGRAM: p99 ≤ %d µs", lh.Percentile(99))
	}
	return fmt.Sprintf("; the server's own commandstats: %.2f µs per call", total.UsecPerCall)
}

// targetLost decides whether a test lost its target: nothing completed of
// what was scheduled, or every connection gone at the end of the
// timeline. The reason is one sentence naming the first error. A test
// read back whose verdict says so keeps it (a merge of shards judges its
// parts first).
func targetLost(t *report.Test) (bool, string) {
	c := t.Counts
	f := t.MustFacts()
	if f.Read && t.Verdict == report.VerdictTargetLost {
		return true, t.VerdictReason
	}
	cause := ""
	switch {
	case t.FirstError != "":
		cause = "; the first error was: " + t.FirstError
	case c.Timeouts > 0:
		cause = fmt.Sprintf("; %d requests timed out without a reply", c.Timeouts)
	}
	switch {
	case c.Scheduled > 0 && c.Completed == 0:
		return true, fmt.Sprintf("none of %d scheduled requests completed%s", c.Scheduled, cause)
	case f.TargetGone:
		return true, "every connection was lost and none came back by the end of the timeline" + cause
	}
	return false, ""
}

// regardless decides whether failing clause c fails whatever the
// generator did, and says why (or, when not, how lateness could explain
// it).
func regardless(cr report.ClauseResult, h Health, total scheduler.Counts) (string, bool) {
	c := clauseOf(cr)
	fig := cr.Figures
	if fig == nil {
		fig = &report.ClauseFigures{}
	}
	switch {
	case c.latency() && cr.Observed == nil:
		return "nothing was answered", true
	case c.latency() && !c.upper():
		return "lateness only makes latencies higher", true
	case c.metric == "errors" || c.metric == "timeouts":
		return "errors and timeouts are the server's answers, not the generator's lateness", true
	case c.metric == "loss":
		return "what the subscribers never received was the server's to deliver, whenever it was sent", true
	case c.metric == "lag":
		return "a backlog is the server's and its consumers' pace, not the publisher's lateness", true
	}
	// Shares and rates: had the generator sent its own unsent requests
	// (and had they completed), would the clause pass?
	gen := h.GeneratorUnsent(total)
	v := *cr.Observed
	switch {
	case c.metric == "unsent" && c.upper() && fig.Scheduled > 0:
		v = math.Max(0, v-100*float64(gen)/float64(fig.Scheduled))
	case (c.metric == "rate" || c.metric == "achieved") && !c.upper() && fig.Duration > 0:
		v += float64(gen) / fig.Duration.Seconds()
	default:
		return "lateness cannot account for it", true
	}
	if !c.met(v) {
		return fmt.Sprintf("the generator's own %d unsent requests cannot account for it", gen), true
	}
	return fmt.Sprintf("(%s) could be the generator's %d unsent requests", report.FormatValue(*cr.Observed, cr.Unit), gen), false
}

// shortfall says how the load fell short: the sent share or the
// delivered rate.
func shortfall(h Health) string {
	if h.SentShare < MinSentFraction {
		return fmt.Sprintf("only %.2f%% of scheduled requests were sent (below %.1f%%)", h.SentShare*100, MinSentFraction*100)
	}
	return fmt.Sprintf("requests were sent at %s req/s, %.1f%% short of the target %s req/s (more than %.1f%%)",
		strconv.FormatFloat(h.Delivered, 'f', 1, 64), 100*(1-h.Delivered/h.Target), strconv.FormatFloat(h.Target, 'f', -1, 64), MaxRateShortfall*100)
}

func dms(d time.Duration) float64 { return histo.Millis(int64(d)) }
