package plots

import (
	"bytes"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/report/text"
)

// Page is what the HTML report shows: the documents and the text report
// of them (as pacer report prints it), under a title (--title; "" names
// the page after the inputs' labels).
type Page struct {
	Inputs []report.Input
	Text   string
	Title  string
}

// maxPage bounds the page: the texts of the documents are cut when read
// back (see checkDocument), so only a great many tests reach it.
const maxPage = 64 << 20

// HTML renders the page: one self-contained document (styles inline, both
// plots inlined as SVG, nothing fetched) with the runs' configuration, the
// verdicts and SLOs, the plots and the text report. Every text from the
// documents is escaped: markup by the template, control bytes and bidi
// overrides by safetext.
func HTML(p Page) ([]byte, error) {
	spec, series, err := SVGs(p.Inputs, PlotOptions{Title: p.Title})
	if err != nil {
		return nil, err
	}
	var labels []string
	for _, in := range p.Inputs {
		labels = append(labels, in.Label)
	}
	title := "pacer report: " + strings.Join(labels, " vs ")
	if p.Title != "" {
		title = p.Title
	}
	data := htmlData{
		Title:    title,
		Text:     p.Text,
		Spectrum: inlineSVG(spec),
		Series:   inlineSVG(series),
	}
	for _, in := range p.Inputs {
		d := in.Doc
		doc := htmlDoc{Label: in.Label, Tool: d.Tool.Name + " " + d.Tool.Version, Started: d.StartedAt,
			Mode: d.Mode + " mode", Interrupted: d.Interrupted, Config: setConfig(in.Config())}
		if in.Format != report.FormatPacer {
			doc.Tool, doc.Mode, doc.Lacks = in.Format, "closed loop (latency from the send)", strings.Join(in.Lacks, ", ")
		}
		for _, t := range d.Tests {
			row := htmlTest{Doc: in.Label, Name: t.Name, Mode: t.Mode, Verdict: t.Verdict, Reason: t.VerdictReason,
				OK: t.Verdict == "ok", Throughput: strconv.FormatFloat(t.AchievedRate, 'f', 2, 64), Target: "-", P99: "-", Max: "-"}
			if t.TargetRate != nil {
				row.Target = strconv.FormatFloat(*t.TargetRate, 'f', -1, 64)
			}
			if t.ResponseMs != nil && !t.Lacking("p99") {
				row.P99 = strconv.FormatFloat(t.ResponseMs.P99, 'f', 3, 64)
			}
			if t.ResponseMs != nil && !t.Lacking("max") {
				row.Max = strconv.FormatFloat(t.ResponseMs.Max, 'f', 3, 64)
			}
			if in.Format != report.FormatPacer && t.Verdict == "" {
				row.Verdict, row.OK, row.Foreign = "n/a", true, true
			}
			if t.SLO != nil {
				row.SLO = t.SLO.Lines()
				row.SLOPass = t.SLO.Pass
				data.HaveSLO = true
			}
			data.Tests = append(data.Tests, row)
			for _, e := range t.Events {
				data.Events = append(data.Events, htmlEvent{Doc: in.Label, Test: t.Name, Kind: e.Kind,
					At: strconv.FormatFloat(e.AtS, 'f', 3, 64) + " s", Nodes: strings.Join(e.Nodes, ", "), Seen: text.SeenText(e),
					Writes: text.WindowText(e.Write), Reads: text.WindowText(e.Read)})
			}
		}
		data.Docs = append(data.Docs, doc)
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	if b.Len() > maxPage {
		return nil, fmt.Errorf("html: the page would take %d MB (at most %d): too many tests for one page", b.Len()>>20, maxPage>>20)
	}
	// The template escapes markup, not control bytes: a --label, a
	// --title or a test name could bring ESC, BEL or a bidi override,
	// in the tables and in the plots' labels alike. One pass over the
	// page escapes them all (the text report's are escaped already, and
	// stay so).
	return []byte(safetext.Text(b.String())), nil
}

// setConfig leaves out the settings a run left unset (null, "", an
// empty list or object): a page lists what was set, not every flag.
func setConfig(items []report.ConfigItem) []report.ConfigItem {
	var out []report.ConfigItem
	for _, c := range items {
		switch strings.TrimSpace(c.Value) {
		case "", "null", "[]", "{}":
			continue
		}
		out = append(out, c)
	}
	return out
}

type htmlData struct {
	Title            string
	Docs             []htmlDoc
	Tests            []htmlTest
	Events           []htmlEvent
	HaveSLO          bool
	Text             string
	Spectrum, Series template.HTML
}

type htmlDoc struct {
	Label, Tool, Started, Mode, Lacks string
	Interrupted                       bool
	Config                            []report.ConfigItem
}

// htmlEvent is a row of the page's events table.
type htmlEvent struct {
	Doc, Test, Kind, At, Nodes, Seen, Writes, Reads string
}

type htmlTest struct {
	Doc, Name, Mode, Verdict, Reason string
	OK, Foreign                      bool
	Target, Throughput, P99, Max     string
	SLO                              []string
	SLOPass                          bool
}

// inlineSVG makes an SVG drawing of ours fit to inline in HTML: without
// its XML prologue, scaled to the page's width. Its texts were escaped
// when it was drawn (vgsvg escapes every string).
func inlineSVG(b []byte) template.HTML {
	s := string(b)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s) // #nosec: drawn by us, texts escaped by vgsvg
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; font-weight: bold; }
.bad { color: #b3261e; font-weight: bold; }
.muted { color: #666; }
pre { background: #f8f8f8; border: 1px solid #e4e4e4; padding: 0.8em; overflow-x: auto; font-size: 0.8em; line-height: 1.3; white-space: pre-wrap; overflow-wrap: anywhere; }
figure { margin: 1em 0; }
figure svg { width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="muted">{{range $i, $d := .Docs}}{{if $i}}; {{end}}{{$d.Label}}: {{$d.Tool}}, {{$d.Mode}}{{if $d.Started}}, started {{$d.Started}}{{end}}{{if $d.Interrupted}} (interrupted: partial result){{end}}{{if $d.Lacks}} (its format lacks {{$d.Lacks}}){{end}}{{end}}</p>

<h2>Verdicts</h2>
<table>
<tr><th>document</th><th>test</th><th>mode</th><th>target (req/s)</th><th>throughput (req/s)</th><th>p99 (ms)</th><th>max (ms)</th><th>verdict</th>{{if .HaveSLO}}<th>SLO</th>{{end}}</tr>
{{range .Tests}}<tr><td>{{.Doc}}</td><td>{{.Name}}</td><td>{{.Mode}}</td><td class="num">{{.Target}}</td><td class="num">{{.Throughput}}</td><td class="num">{{.P99}}</td><td class="num">{{.Max}}</td>
<td><span class="{{if .Foreign}}muted{{else if .OK}}ok{{else}}bad{{end}}">{{.Verdict}}</span><br><span class="muted">{{.Reason}}</span></td>{{if $.HaveSLO}}<td>{{if .SLO}}<span class="{{if .SLOPass}}ok{{else}}bad{{end}}">{{if .SLOPass}}pass{{else}}violated{{end}}</span>{{range .SLO}}<br><span class="muted">{{.}}</span>{{end}}{{else}}-{{end}}</td>{{end}}</tr>
{{end}}</table>
<p class="muted">p99 and max are of the response time (open tests, from the intended send) or of the latency from the send (closed tests).</p>

{{if .Events}}<h2>Events</h2>
<table>
<tr><th>document</th><th>test</th><th>at</th><th>event</th><th>nodes</th><th>seen</th><th>writes</th><th>reads</th></tr>
{{range .Events}}<tr><td>{{.Doc}}</td><td>{{.Test}}</td><td class="num">{{.At}}</td><td>{{.Kind}}</td><td>{{.Nodes}}</td><td>{{.Seen}}</td><td>{{.Writes}}</td><td>{{.Reads}}</td></tr>
{{end}}</table>
<p class="muted">What happened to the topology during the tests: a failover, slots that moved, connections lost and back, replies that said a node could not serve. A request counts against an event's window when it failed or took longer than the test's bound (event_bound_ms in the JSON); unavailable is from the first such request's intended time to that of the first served after it. The plots mark each event with a dashed line and shade its windows.</p>
{{end}}
<h2>Plots</h2>
<figure>
{{.Spectrum}}
<figcaption>Latency by percentile: each line is a test's latency (ms, log scale) against the percentile on HdrHistogram's 1/(1−p) axis, so the tail gets the room. Open tests have a response line (from the intended send time) and a service line (from the actual send); their gap is queueing that a closed loop does not see.</figcaption>
</figure>
<figure>
{{.Series}}
<figcaption>Per interval: p50, p99 and max latency (ms, log scale), the age of the oldest unanswered request at the interval's end, and the completed requests per second, against time; tests are laid end to end. A freeze shows where it happens: while nothing completes the latency lines break and the oldest request's age climbs; the replies it held back then raise p99 and max, and throughput dips. A last interval shorter than half an interval (the end of the window) is left out of the throughput.</figcaption>
</figure>

<h2>Results</h2>
<pre>{{.Text}}</pre>

<h2>Configuration</h2>
{{range .Docs}}<h3>{{.Label}}</h3>
{{if .Config}}<table>
<tr><th>setting</th><th>value</th></tr>
{{range .Config}}<tr><td>{{.Key}}</td><td>{{.Value}}</td></tr>
{{end}}</table>{{else}}<p class="muted">no configuration recorded</p>{{end}}
{{end}}
</body>
</html>
`))
