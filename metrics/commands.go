package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/histo"
)

// A mix's commands are served in families of their own, pacer_command_*,
// labelled command="GET" beside the test's labels, rather than as more
// series of the test's families: so sum() over any family counts each
// request once (a mix's requests are in its test's series and in one
// command's), and a dashboard over the test's families never double
// counts. A test of one command has no pacer_command_* series: its test
// series are its command's.

func cmdDesc(name, help string, extra ...string) *prometheus.Desc {
	return desc(name, help, append([]string{"command"}, extra...)...)
}

var (
	descCmdCompleted = cmdDesc("pacer_command_requests_completed_total", "A mix's command: requests answered with a reply that is not an error.")
	descCmdErrors    = cmdDesc("pacer_command_requests_errors_total", "A mix's command: requests answered with an error reply (kind=reply).", "kind")

	descCmdHist = [numCmdHists]*prometheus.Desc{
		cmdDesc("pacer_command_response_seconds", "A mix's command: response time (reply received minus intended send time; closed mode: minus the send)."),
		cmdDesc("pacer_command_service_seconds", "A mix's command: service time (reply received minus the actual write)."),
		cmdDesc("pacer_command_send_lag_seconds", "A mix's command: send lag (actual write minus intended send time)."),
		cmdDesc("pacer_command_receive_lag_seconds", "A mix's command: receive lag (read instant minus the reply's arrival)."),
	}
)

// The histograms of a command: the test's but the host's hiccups.
const numCmdHists = histHiccup

// commandSource is one command of a mix in a running test: its counters
// (as replies arrive) and its recorders (nil in a mix too large to be
// timed per command; no send lag in an unthrottled closed loop).
type commandSource struct {
	name                   string
	completed, replyErrors func() uint64
	recs                   [numCmdHists]*histo.Recorder
}

// commandSnap is one command's cumulative numbers at one moment.
type commandSnap struct {
	name                   string
	completed, replyErrors uint64
	hists                  [numCmdHists]hist
}

func readCommands(cs []commandSource, bounds []int64) []commandSnap {
	if len(cs) == 0 {
		return nil
	}
	out := make([]commandSnap, len(cs))
	for i, c := range cs {
		out[i] = commandSnap{name: labelValue(c.name), completed: c.completed(), replyErrors: c.replyErrors()}
		for j, r := range c.recs {
			out[i].hists[j] = readHist(r, bounds)
		}
	}
	return out
}

// addCommands adds o's commands to s's by name (a test that runs again
// may have its commands in another order, or other commands).
func (s *snapshot) addCommands(o []commandSnap) {
next:
	for _, oc := range o {
		for i := range s.commands {
			if c := &s.commands[i]; c.name == oc.name {
				c.completed += oc.completed
				c.replyErrors += oc.replyErrors
				for j := range c.hists {
					c.hists[j].add(oc.hists[j])
				}
				continue next
			}
		}
		c := commandSnap{name: oc.name, completed: oc.completed, replyErrors: oc.replyErrors}
		for j := range c.hists {
			c.hists[j].add(oc.hists[j])
		}
		s.commands = append(s.commands, c)
	}
}

// collectCommands sends the pacer_command_* series of a test's commands;
// lv are the test's label values.
func collectCommands(ch chan<- prometheus.Metric, cs []commandSnap, le []float64, lv []string) {
	for _, c := range cs {
		clv := append(append([]string{}, lv...), c.name)
		ch <- prometheus.MustNewConstMetric(descCmdCompleted, prometheus.CounterValue, float64(c.completed), clv...)
		ch <- prometheus.MustNewConstMetric(descCmdErrors, prometheus.CounterValue, float64(c.replyErrors), append(clv, "reply")...)
		for j, h := range c.hists {
			if h.ok {
				ch <- constHistogram(descCmdHist[j], h, le, clv)
			}
		}
	}
}
