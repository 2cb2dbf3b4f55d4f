package plots

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"

	"github.com/pacer-load/pacer/diff"
	reporttext "github.com/pacer-load/pacer/report/text"
)

// DiffHTML renders a comparison as one self-contained page (styles
// inline, the pictures inlined as SVG, nothing fetched): the sides, the
// gate's decision, each test's table with its words and why, the
// pictures and the text report. Every text from the document is
// escaped.
func DiffHTML(d *diff.Document, text, title string) ([]byte, error) {
	svg, err := DiffPlot(d, SVG, PlotOptions{Title: title})
	if err != nil {
		return nil, err
	}
	if title == "" {
		title = "pacer diff: " + d.Baseline.Label + " → " + d.Candidate.Label
	}
	data := diffPage{Title: title, Base: d.Baseline, Cand: d.Candidate, Text: text, Plot: inlineSVG(svg),
		Unmatched: d.Unmatched, Equivalence: reporttext.DiffPct(d.EquivalencePct), ErrorEquivalence: reporttext.DiffNum(d.ErrorEquivalencePct)}
	if g := d.Gate; g != nil {
		data.Gate, data.GatePass = g, g.Outcome == "pass"
	}
	for _, t := range d.Tests {
		row := diffPageTest{Name: t.Name, Head: strings.TrimSpace(t.Mode + " " + rateText(t.TargetRate)), Method: reporttext.MethodText(t), Note: t.Note, Level: reporttext.LevelText(d.Level)}
		if t.Decide != nil {
			row.Decide, row.Level = reporttext.DecideText(t.Decide), reporttext.LevelText(t.Decide.Level)
		}
		for _, f := range t.Figures {
			digits := 3
			if f.Unit == "req/s" {
				digits = 2
			}
			row.Figures = append(row.Figures, diffPageFigure{Label: f.Figure + " (" + f.Unit + ")",
				Base: reporttext.DiffCell(f.Baseline, digits), Cand: reporttext.DiffCell(f.Candidate, digits), Change: reporttext.ChangeCell(f, digits),
				Interval: reporttext.IntervalCell(f, digits), Word: f.Word, Class: wordClass(f.Word), Why: f.Why})
		}
		data.Tests = append(data.Tests, row)
	}
	var b bytes.Buffer
	if err := diffTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("html: %w", err)
	}
	if b.Len() > maxPage {
		return nil, fmt.Errorf("html: the page would take %d MB (at most %d): too many tests for one page", b.Len()>>20, maxPage>>20)
	}
	return b.Bytes(), nil
}

func rateText(r *float64) string {
	if r == nil {
		return ""
	}
	return "at " + reporttext.DiffNum(*r) + " req/s"
}

func wordClass(w string) string {
	switch w {
	case "worse":
		return "bad"
	case "better":
		return "ok"
	case "same":
		return "same"
	}
	return "muted"
}

type diffPage struct {
	Title                         string
	Base, Cand                    diff.SideInfo
	Gate                          *diff.GateResult
	GatePass                      bool
	Tests                         []diffPageTest
	Unmatched                     []diff.Unmatched
	Equivalence, ErrorEquivalence string
	Text                          string
	Plot                          template.HTML
}

type diffPageTest struct {
	Name, Head, Method, Note string
	// Level heads the interval column; Decide says how pacer ab
	// --decide-within used its budget on the test.
	Level, Decide string
	Figures       []diffPageFigure
}

type diffPageFigure struct {
	Label, Base, Cand, Change, Interval, Word, Class, Why string
}

var diffTemplate = template.Must(template.New("diff").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; font-weight: bold; }
.bad { color: #b3261e; font-weight: bold; }
.same { color: #1f5fa0; font-weight: bold; }
.muted { color: #666; }
pre { background: #f8f8f8; border: 1px solid #e4e4e4; padding: 0.8em; overflow-x: auto; font-size: 0.8em; line-height: 1.3; white-space: pre-wrap; overflow-wrap: anywhere; }
figure { margin: 1em 0; }
figure svg { width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="muted">baseline: {{.Base.Label}}{{if .Base.Target}} ({{.Base.Target}}){{end}}, {{.Base.Tool}}; candidate: {{.Cand.Label}}{{if .Cand.Target}} ({{.Cand.Target}}){{end}}, {{.Cand.Tool}}</p>
{{with .Gate}}<p>gate <code>--max-regression {{.Spec}}</code>: <span class="{{if $.GatePass}}ok{{else}}bad{{end}}">{{.Outcome}}</span> <span class="muted">{{.Reason}}</span></p>{{end}}

<h2>Changes</h2>
{{range .Tests}}<h3>{{.Name}}</h3>
<p class="muted">{{.Head}}; {{.Method}}{{if .Note}} ({{.Note}}){{end}}{{if .Decide}}; {{.Decide}}{{end}}</p>
<table>
<tr><th>figure</th><th>baseline</th><th>candidate</th><th>change</th><th>{{.Level}} interval</th><th>word</th></tr>
{{range .Figures}}<tr><td>{{.Label}}</td><td class="num">{{.Base}}</td><td class="num">{{.Cand}}</td><td class="num">{{.Change}}</td><td class="num">{{.Interval}}</td><td><span class="{{.Class}}">{{.Word}}</span>{{if .Why}}<br><span class="muted">{{.Why}}</span>{{end}}</td></tr>
{{end}}</table>
{{end}}
{{if .Unmatched}}<h3>Not compared</h3>
<ul>{{range .Unmatched}}<li>{{.Test}}: {{.Why}}</li>{{end}}</ul>{{end}}
<p class="muted">worse, better: the interval excludes no change and the change is beyond ±{{.Equivalence}} (errors: ±{{.ErrorEquivalence}} points); same: the whole interval lies within that margin; cannot tell: neither, or a side cannot be trusted.</p>

<h2>Pictures</h2>
<figure>
{{.Plot}}
<figcaption>Left: each side's latency (ms, log scale) by percentile on HdrHistogram's 1/(1−p) axis, the band its interval (95%, or the level its table names; repeats: the spread between runs; one run: the block bootstrap over its intervals). Right: the candidate's change at each percentile (%), the bar its interval, the grey band the margin of no change, the colour its word.</figcaption>
</figure>

<h2>Results</h2>
<pre>{{.Text}}</pre>
</body>
</html>
`))
