// Package host measures the client machine's own noise during a run, so
// that a verdict can tell the server's latency from the client's: a hiccup
// meter (jHiccup's method), the host's and the process's CPU time, and
// whether a target shares this host. It never prints and never exits.
// It sits below the drivers, over histo alone: the scheduler runs a Meter
// and reads the CPU around every test, and report judges what they found.
//
// # Hiccups
//
// A Meter's goroutine sleeps a fixed Interval I, again and again, and
// records how late it woke (nanoseconds) into a histogram with pacer's
// geometry, beside the run's latency histograms:
//
//	from              due = from+I              woke
//	|------ sleep I ------|------- lateness -------|
//	                                               from' = woke: the next sleep starts at once
//
// Whatever delays that goroutine — the kernel running another task on its
// CPU, a stolen vCPU, the Go scheduler with no free P, a stop-the-world GC
// phase — delays pacer's connection readers and pacing loop as much, so the
// lateness is a lower bound of what the client added to every measured
// latency.
//
// A stall longer than the interval hides the wakes that would have come
// during it, as a stalled load generator hides its unsent requests
// (coordinated omission). The meter records them too, as HdrHistogram's
// RecordCorrectedValue and jHiccup do: a wake L late with L ≥ 2I also
// records L−I, L−2I, … down to the last value ≥ I.
//
//	due                                        woke      one wake, L = 50 ms late
//	|------------------ stalled ------------------|
//	 ^  ^  ^  ^  ^                   ^                  the wakes a 1 ms sleeper missed:
//	                                                    recorded as 49, 48, … 1 ms late
//
// So a 50 ms stall of a 1 ms sleeper is 50 late wakes (50, 49, … 1 ms),
// what a request sent every millisecond would have seen, not one. All of
// them land at the instant the stall ended: in the same bucket (see below),
// as the run's response times land in the interval their replies arrived
// in.
//
// The sleep is the runtime's timer (time.Sleep) on an ordinary goroutine.
// While it sleeps the goroutine holds nothing, so pacer's other goroutines
// have every P; when the timer fires it must get a P like a reader woken by
// a reply, so the Go scheduler's delays and stop-the-world pauses are in
// the reading (bench/hiccup: beside two goroutines spinning on both CPUs
// it reads p50 11 ms, where a locked thread in clock_nanosleep reads
// 0.2 ms). A blocking clock_nanosleep would cost less in an otherwise idle
// process but keeps the goroutine's P through the syscall (sysmon takes a P
// back only from a syscall still running at its next tick, 10 ms apart
// when it is idle), taking a P from pacer and hiding those delays.
//
// The floor: a wake is about 0.1 ms late on an idle machine at a 1 ms
// interval (the kernel's 50 µs timer slack and the wake-up path), about
// 0.2 ms at longer ones (the netpoller waits whole milliseconds, so a
// longer sleep ends with a second, rounded-up wait). The cost is one or two
// thread wake-ups per sleep: on the 2-CPU VM pacer is developed on, where
// a wake-up costs 45–130 µs of CPU, a meter alone in a process takes about
// 3–4% of a core at 1 ms and 0.7–0.9% at 20 ms; beside a busy process its
// share is within that machine's noise (see bench/hiccup/README.md).
//
// # Fed by a run's own sleeps
//
// A run that sleeps to deadlines anyway can offer those sleeps to the
// meter (Feed) instead of paying for a second sleeper's wake-ups: a sleep
// due at due that ran again at woke is a sample of woke − due, taken as
// the meter takes its own (the wakes a stall hid included). The meter
// takes at most one sample per Interval, from the feed or its own
// sleeper, whichever woke first, so the samples are as dense either way
// and a stall is counted once. While the feed brings a sample at least
// every two intervals the sleeper stands by, sleeping standbyIntervals
// intervals at a time, and its wake is a sample only where the feed left
// an interval without one; when the feed stops it samples at its interval
// again. Result.FedWakes says how many samples the feed brought.
//
// pacer's open loop does not feed its meter. Measured with bench/hiccup
// beside a loop paced as the open loop paces (10k/s, 600 µs quantum), the
// feed costs 0.1% of a core against the sleeper's 1.5%, but it reads
// another thing: the pacing thread's own wake from a raw clock_nanosleep
// (p50 49 µs, p99 112 µs on an idle host; p99 2.8 ms beside two busy
// loops), which the run's send lag already reports, where the sleeper
// reads how late the Go runtime wakes an ordinary goroutine, as it wakes
// a reader (p50 199 µs, p99 306 µs idle; p99 1.6 ms beside the busy
// loops). Feeding would change what the hiccup figures mean.
//
// # Buckets
//
// With a Bucket length B the meter also keeps a histogram per bucket:
// bucket k holds the wakes that fell in [Start + k·B, Start + (k+1)·B), so
// the buckets line up with the run's intervals when Start and B are the
// run's, and they add up exactly to the total.
//
// # CPU
//
// ReadCPU samples /proc/stat's aggregate line and the process's own CPU
// time; Usage turns two samples into shares of the host's CPU time (busy,
// stolen) and pacer's own CPU in cores.
package host
