package histo

import (
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Packed is a histogram kept compactly, as interval series keep theirs: its
// Summary (Count 0: no samples) and its Encode text (base64 HdrHistogram V2
// compressed, nanoseconds), the same text the JSON carries. An interval's
// histogram costs a few hundred bytes this way instead of the ~350 KB of
// a decoded one, so an hour of one-second intervals stays in a few MB.
type Packed struct {
	Summary Summary
	// Encoded is the encoding, unless it was spilled (see Text).
	Encoded string
	spill   *Spill
	off     int64
	n       int
}

// Text returns the encoding, reading it back from its Spill if it was
// spilled.
func (p Packed) Text() (string, error) {
	if p.spill != nil {
		return p.spill.read(p.off, p.n)
	}
	return p.Encoded, nil
}

// Key names a Packed's encoding: Packed values with equal keys hold the
// same histogram (a spilled one by where it lies in its spill, one in
// memory by its text), so what was made from one may be kept for the
// other (stats.HistMemo).
type Key struct {
	spill *Spill
	off   int64
	n     int
	text  string
}

// Key returns p's key.
func (p Packed) Key() Key {
	if p.spill != nil {
		return Key{spill: p.spill, off: p.off, n: p.n}
	}
	return Key{text: p.Encoded}
}

// Pack summarises and encodes h (nil: an empty histogram).
func Pack(h *hdrhistogram.Histogram) (Packed, error) {
	if h == nil || h.TotalCount() == 0 && geometryOf(h) == pacerGeometry {
		// Intervals without samples are common (a closed mix's unused
		// recorders): they share one encoding.
		return emptyPacked()
	}
	enc, err := Encode(h)
	if err != nil {
		return Packed{}, err
	}
	return Packed{Summary: Summarize(h), Encoded: enc}, nil
}

var pacerGeometry = newGeometry(Lowest, Highest, SigFigs)

// Pack packs what the last Take read: the same Packed as
// Pack(d.Histogram()), summarised and encoded from the Delta's own counts,
// without building the histogram (hdrhistogram.Import allocates a counts
// array of 270 KB at pacer's geometry, and the encoding would copy it
// again): for interval series, which pack every recorder at every interval.
func (d *Delta) Pack() (Packed, error) {
	s := summarizeCounts(d.r.g, d.diff)
	if s.Count == 0 && d.r.g == pacerGeometry {
		return emptyPacked()
	}
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	b, err := d.encode(e)
	if err != nil {
		return Packed{}, err
	}
	return Packed{Summary: s, Encoded: string(b)}, nil
}

// encode encodes what the last Take read into e's buffer (see
// encoder.encode).
func (d *Delta) encode(e *encoder) ([]byte, error) {
	g := d.r.g
	return e.encode(g.lowest, g.highest, int64(g.sigFigs), 1, d.diff)
}

var emptyPacked = sync.OnceValues(func() (Packed, error) {
	enc, err := Encode(New())
	return Packed{Encoded: enc}, err
})

// Histogram decodes the packed histogram; the zero Packed decodes to an
// empty histogram with pacer's geometry.
func (p Packed) Histogram() (*hdrhistogram.Histogram, error) {
	text, err := p.Text()
	if err != nil {
		return nil, err
	}
	if text == "" {
		return New(), nil
	}
	return Decode(text)
}

// Empty reports whether the histogram holds no samples.
func (p Packed) Empty() bool { return p.Summary.Count == 0 }
