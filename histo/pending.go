package histo

// Pending is a run of equal values awaiting their recording, and how
// many samples had the value. The replies of one read share their
// arrival and read instants, so their receive lag (and, for requests
// written together, their service time) is one value: a reader records
// it once with its count, one atomic add into a shared Recorder instead of
// one per reply from as many goroutines. Not safe for concurrent use: it
// belongs to one reader.
type Pending struct{ value, n int64 }

// Add counts one sample of v. When the pending run held another value,
// it returns that run (n > 0) for the caller to record first.
func (p *Pending) Add(v int64) (prev, n int64) {
	if p.n > 0 && p.value != v {
		prev, n = p.value, p.n
		p.n = 0
	}
	p.value = v
	p.n++
	return prev, n
}

// Take returns the pending run (n 0: none) and empties it.
func (p *Pending) Take() (v, n int64) {
	v, n = p.value, p.n
	p.n = 0
	return v, n
}
