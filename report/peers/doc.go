// Package peers holds the formats of the tools pacer is compared with:
// it reads redis-benchmark's --csv and memtier_benchmark's
// --json-out-file (the latter as it streams in, its per-second series
// merged into bounded intervals) as report documents of closed-loop
// tests with the figures their formats carry, saying which they lack,
// and it writes closed-loop results in redis-benchmark 7's output
// formats byte for byte (the CSV, the -q line, the full report, the
// progress line). ReadInputs reads the files pacer report and pacer
// merge are given, in any of these formats or pacer's own.
package peers
