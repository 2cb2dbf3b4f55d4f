// Package resulttest holds the results and server statistics that the
// tests of report and of the packages around it (report/text,
// report/merge, report/peers, report/plots, verdict) render, judge and
// merge, and their golden-file check. It builds them from scheduler's,
// serverinfo's and histo's types and never imports report, so report's
// own tests can import it as well as the packages above report.
package resulttest
