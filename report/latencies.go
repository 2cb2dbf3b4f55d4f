package report

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// Latencies are the latency summaries (ms) of a test, of one command of a
// mix or of one interval, and the histograms they summarise. A summary of
// no samples is null: no samples is no latency, not a latency of zero.
type Latencies struct {
	// ResponseMs is reply − intended send (the closed loop's: reply − send),
	// ServiceMs reply − actual write, SendLagMs write − intended (null in
	// closed mode); a reply's time is the kernel's receive timestamp
	// (see receive_clock).
	ResponseMs *histo.Summary `json:"response_ms"`
	ServiceMs  *histo.Summary `json:"service_ms"`
	SendLagMs  *histo.Summary `json:"send_lag_ms"`
	// ReceiveLagMs is the receive lag: the instant pacer's reader had a
	// reply − its arrival in the kernel, the generator's lateness on the
	// way in. Absent from documents written before it was measured.
	ReceiveLagMs *histo.Summary `json:"receive_lag_ms,omitempty"`
	// HiccupMs is how late the host hiccup meter woke (tests and their
	// intervals; absent without the meter).
	HiccupMs   *histo.Summary `json:"hiccup_ms,omitempty"`
	Histograms Histograms     `json:"histograms"`
}

// Histograms hold base64 HdrHistogram V2 compressed encodings, in ns.
type Histograms struct {
	Response   string  `json:"response"`
	Service    string  `json:"service"`
	SendLag    *string `json:"send_lag"`
	ReceiveLag *string `json:"receive_lag,omitempty"`
	Hiccup     *string `json:"hiccup,omitempty"`
}

// latencySet is the histograms behind a Latencies (nil: absent).
type latencySet struct {
	response, service, lag, receive, hiccup *hdrhistogram.Histogram
}

// newLatencies summarises s and, with encode, encodes its histograms.
// Without a response histogram (a command of a mix too large to time each
// command) it keeps only the summaries.
func newLatencies(s latencySet, encode bool) (Latencies, error) {
	l := Latencies{ResponseMs: summary(s.response), ServiceMs: summary(s.service)}
	if s.response == nil {
		return l, nil
	}
	optional := []struct {
		h   *hdrhistogram.Histogram
		ms  **histo.Summary
		enc **string
	}{{s.lag, &l.SendLagMs, &l.Histograms.SendLag}, {s.receive, &l.ReceiveLagMs, &l.Histograms.ReceiveLag}, {s.hiccup, &l.HiccupMs, &l.Histograms.Hiccup}}
	for _, o := range optional {
		if o.h != nil {
			*o.ms = summary(o.h)
		}
	}
	if !encode {
		return l, nil
	}
	var err error
	if l.Histograms.Response, err = histo.Encode(s.response); err != nil {
		return l, err
	}
	if l.Histograms.Service, err = histo.Encode(s.service); err != nil {
		return l, err
	}
	for _, o := range optional {
		if o.h == nil {
			continue
		}
		e, err := histo.Encode(o.h)
		if err != nil {
			return l, err
		}
		*o.enc = &e
	}
	return l, nil
}

// decode decodes the histograms; an absent one is nil.
// Decode returns the response and service histograms (nil when absent).
func (h Histograms) Decode() (response, service *hdrhistogram.Histogram, err error) {
	s, err := h.decode()
	return s.response, s.service, err
}

func (h Histograms) decode() (latencySet, error) {
	var s latencySet
	dec := func(enc *string, into **hdrhistogram.Histogram) error {
		if enc == nil || *enc == "" {
			return nil
		}
		var err error
		*into, err = DecodeHistogram(*enc)
		return err
	}
	for _, o := range []struct {
		enc  *string
		into **hdrhistogram.Histogram
	}{{&h.Response, &s.response}, {&h.Service, &s.service}, {h.SendLag, &s.lag}, {h.ReceiveLag, &s.receive}, {h.Hiccup, &s.hiccup}} {
		if err := dec(o.enc, o.into); err != nil {
			return s, err
		}
	}
	return s, nil
}

// mergeLatencies adds several parts' histograms (the shards' of a test,
// or of an interval) and summarises the sums; a histogram some part lacks
// counts as empty there, one every part lacks stays absent.
func mergeLatencies(hs []Histograms) (Latencies, error) {
	var sum latencySet
	for _, h := range hs {
		s, err := h.decode()
		if err != nil {
			return Latencies{}, err
		}
		for _, o := range []struct {
			into **hdrhistogram.Histogram
			from *hdrhistogram.Histogram
		}{
			{&sum.response, s.response}, {&sum.service, s.service}, {&sum.lag, s.lag}, {&sum.receive, s.receive}, {&sum.hiccup, s.hiccup},
		} {
			if o.from == nil {
				continue
			}
			if *o.into == nil {
				*o.into = histo.New() // pacer's geometry, whatever a part's was
			}
			if *o.into, err = addChecked(*o.into, o.from); err != nil {
				return Latencies{}, err
			}
		}
	}
	if sum.response == nil { // no part timed each command of this mix
		return Latencies{}, nil
	}
	return newLatencies(sum, true)
}

// MergeHist merges packed histograms into one (nil: no samples).
func MergeHist(ps []histo.Packed) (*hdrhistogram.Histogram, error) {
	var hs []*hdrhistogram.Histogram
	for _, p := range ps {
		if p.Empty() {
			continue
		}
		h, err := p.Histogram()
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	switch len(hs) {
	case 0:
		return nil, nil
	case 1:
		return hs[0], nil
	}
	sum, _ := histo.Merge(hs...)
	return sum, nil
}
