package testrun

import "runtime"

// Allocated runs f and returns how many bytes the process allocated on
// the heap meanwhile. The count is process-wide: a test that calls it
// does not call t.Parallel.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
