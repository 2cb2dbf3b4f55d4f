package histo

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Spill keeps the encodings of packed histograms in an unlinked temporary
// file instead of memory, so that an interval series costs memory per
// interval only for its summaries: a one-second series at 100k requests/s
// packs 2–25 KB of histograms per interval (the wider the latencies, the
// more buckets), which is 7–90 MB an hour in memory but about 0.5 MB an
// hour spilled. The file is removed from the directory when it is created
// and closed when the Spill is no longer reachable, so nothing is left
// behind, whatever the exit.
type Spill struct {
	mu   sync.Mutex
	f    *os.File
	size int64
}

// NewSpill creates the spill file in the temporary directory.
func NewSpill() (*Spill, error) {
	f, err := os.CreateTemp("", "pacer-series-*")
	if err != nil {
		return nil, fmt.Errorf("interval series: %w", err)
	}
	os.Remove(f.Name()) // unlinked: the space is freed when f is closed
	s := &Spill{f: f}
	runtime.AddCleanup(s, func(f *os.File) { f.Close() }, f)
	return s, nil
}

// Pack summarises h and writes its encoding to the spill file.
func (s *Spill) Pack(h *hdrhistogram.Histogram) (Packed, error) {
	p, err := Pack(h)
	if err != nil {
		return p, err
	}
	return s.keep(p)
}

// PackDelta packs what d's last Take read (Delta.Pack) and writes its
// encoding to the spill file, straight from the encoder's buffer.
func (s *Spill) PackDelta(d *Delta) (Packed, error) {
	sum := summarizeCounts(d.r.g, d.diff)
	if sum.Count == 0 {
		return d.Pack() // an empty histogram's encoding stays in memory
	}
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	b, err := d.encode(e)
	if err != nil {
		return Packed{}, err
	}
	return s.write(Packed{Summary: sum}, b)
}

// keep moves p's encoding to the spill file.
func (s *Spill) keep(p Packed) (Packed, error) {
	if p.Empty() {
		return p, nil // an empty histogram's encoding is shared, in memory
	}
	return s.write(p, []byte(p.Encoded))
}

// write appends the encoding enc of p to the file and points p at it.
func (s *Spill) write(p Packed, enc []byte) (Packed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.f.WriteAt(enc, s.size)
	if err != nil {
		return Packed{}, fmt.Errorf("interval series: %w", err)
	}
	p.spill, p.off, p.n = s, s.size, n
	s.size += int64(n)
	p.Encoded = ""
	return p, nil
}

func (s *Spill) read(off int64, n int) (string, error) {
	b := make([]byte, n)
	if _, err := s.f.ReadAt(b, off); err != nil {
		return "", fmt.Errorf("interval series: %w", err)
	}
	return string(b), nil
}
