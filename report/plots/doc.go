// Package plots draws saved results: the percentile spectrum and the
// interval series as PNG, SVG or PDF (Plot), the self-contained HTML page
// that embeds them (HTML), and a comparison's pictures and page (DiffPlot,
// DiffHTML). It is the one package that imports gonum's plotting and its
// fonts: the results, their verdicts and their text (package report) and
// the library (package pacer) do without it.
package plots
