package report

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/safetext"
)

// This file bounds what a document read back (pacer report, pacer merge)
// may hold before anything renders or adds it: a result file is input,
// and may have been written by anyone. Every histogram must have pacer's
// own geometry (a valid but wide one costs tens of MB to decode);
// durations must fit a
// time.Duration; latencies are clamped to what a histogram can hold; and
// texts are cut to a length a report can show, with the verdict's words
// escaped, so no terminal escape and no megabyte of markup reaches the
// output.

// Bounds on what a document read back may hold.
const (
	// maxText is the longest text kept from a document (a test's name,
	// its first error, a verdict's reason, a setting's value): longer ones
	// are cut, saying how much was left out.
	maxText = 2048
	// maxSeconds bounds every duration (about 31 years): more does not fit
	// the nanosecond durations pacer measures in.
	maxSeconds = 1e9
	// maxRate bounds every rate (requests per second).
	maxRate = 1e12
)

// MaxMs is the largest latency a pacer histogram holds, in ms.
var MaxMs = histo.Millis(histo.Highest)

// checkDocument checks and bounds a document read back (see above): an
// error for what cannot be a pacer result (a duration or rate out of
// range), texts cut and latencies clamped in place otherwise.
func checkDocument(d *Document) error {
	for k, v := range d.Config {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, "_s") {
			if err := checkSeconds("config."+k, f); err != nil {
				return err
			}
		}
	}
	for i := range d.Tests {
		t := &d.Tests[i]
		where := "test " + strconv.Itoa(i+1)
		if err := checkTest(where, t); err != nil {
			return err
		}
		t.Verdict, t.VerdictReason = safetext.Escape(t.Verdict), safetext.Escape(t.VerdictReason)
		if s := t.SLO; s != nil {
			escapeAll(s.Violations)
			escapeAll(s.Warnings)
			escapeAll(s.Checked)
		}
	}
	cutTexts(reflect.ValueOf(d).Elem())
	return nil
}

// checkTest checks one test's durations and rates and clamps its
// latencies.
func checkTest(where string, t *Test) error {
	for _, s := range []struct {
		name string
		v    float64
	}{{"duration_s", t.DurationS}, {"interval_s", t.IntervalS}, {"warmup_s", t.WarmupS}, {"blocked_s", t.BlockedS}} {
		if err := checkSeconds(where+": "+s.name, s.v); err != nil {
			return err
		}
	}
	for _, r := range []*float64{t.TargetRate, &t.AchievedRate} {
		if r != nil && !(*r >= 0 && *r <= maxRate) {
			return fmt.Errorf("%s: rate %g is not a rate pacer could have measured", where, *r)
		}
	}
	for i, s := range t.Stages {
		if err := checkSeconds(fmt.Sprintf("%s: stage %d: duration_s", where, i+1), s.DurationS); err != nil {
			return err
		}
		if !(s.TargetRate >= 0 && s.TargetRate <= maxRate) {
			return fmt.Errorf("%s: stage %d: rate %g is not a rate pacer could have measured", where, i+1, s.TargetRate)
		}
	}
	clampLatencies(&t.Latencies)
	for i := range t.Intervals {
		iv := &t.Intervals[i]
		if err := checkSeconds(fmt.Sprintf("%s: interval %d: start_s", where, i+1), iv.StartS); err != nil {
			return err
		}
		if err := checkSeconds(fmt.Sprintf("%s: interval %d: duration_s", where, i+1), iv.DurationS); err != nil {
			return err
		}
		clampLatencies(&iv.Latencies)
		clampMs(iv.OldestInflightMs)
		clampMs(iv.OldestInflightMaxMs)
	}
	for k, c := range t.Commands {
		clampLatencies(&c.Latencies)
		for i := range c.Intervals {
			clampLatencies(&c.Intervals[i].Latencies)
		}
		t.Commands[k] = c
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		clampSummary(n.ResponseMs)
		clampSummary(n.ServiceMs)
		clampSummary(n.ReceiveLagMs)
	}
	if m := t.Messages; m != nil {
		clampLatencies(&m.Publish)
		for i := range m.Receivers {
			clampSummary(m.Receivers[i].LatencyMs)
			if at := m.Receivers[i].EndedAtS; at != nil {
				if err := checkSeconds(where+": messages: ended_at_s", *at); err != nil {
					return err
				}
			}
		}
		for _, e := range m.Events {
			if err := checkSeconds(where+": messages: event at_s", e.AtS); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSeconds refuses a duration that is negative or too long to be one.
func checkSeconds(name string, s float64) error {
	if s >= 0 && s <= maxSeconds {
		return nil
	}
	return fmt.Errorf("%s %g is not a duration pacer could have measured (0 to %g s)", name, s, maxSeconds)
}

func clampLatencies(l *Latencies) {
	for _, s := range []*histo.Summary{l.ResponseMs, l.ServiceMs, l.SendLagMs, l.ReceiveLagMs, l.HiccupMs} {
		clampSummary(s)
	}
}

// clampSummary clamps every figure of s to what a histogram holds.
func clampSummary(s *histo.Summary) {
	if s == nil {
		return
	}
	for _, v := range []*float64{&s.Min, &s.Mean, &s.P50, &s.P90, &s.P95, &s.P99, &s.P999, &s.P9999, &s.Max} {
		clampMs(v)
	}
}

// clampMs clamps a latency in ms to [0, maxMs]; not a number is 0.
func clampMs(v *float64) {
	if v == nil {
		return
	}
	switch {
	case math.IsNaN(*v) || *v < 0:
		*v = 0
	case *v > MaxMs:
		*v = MaxMs
	}
}

func escapeAll(list []string) {
	for i, s := range list {
		list[i] = safetext.Escape(s)
	}
}

// cutText cuts s to maxText bytes (on a character boundary), saying how
// much was left out.
func cutText(s string) string {
	if len(s) <= maxText {
		return s
	}
	n := maxText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes more)", len(s)-n)
}

// cutTexts cuts every string reachable from v (fields, slices, map keys
// and values) to maxText, except encoded histograms (fields whose JSON
// name begins with "histogram"), which are checked when decoded.
func cutTexts(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.Len() > maxText && v.CanSet() {
			v.SetString(cutText(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if v.Kind() == reflect.Interface && e.Kind() == reflect.String {
			if e.Len() > maxText && v.CanSet() {
				v.Set(reflect.ValueOf(cutText(e.String())))
			}
			return
		}
		cutTexts(e)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || strings.HasPrefix(f.Tag.Get("json"), "histogram") {
				continue
			}
			cutTexts(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			cutTexts(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		changed := false
		iter := v.MapRange()
		for iter.Next() {
			k, val := iter.Key(), iter.Value()
			if k.Kind() == reflect.String && k.Len() > maxText {
				k, changed = reflect.ValueOf(cutText(k.String())).Convert(k.Type()), true
			}
			// Map values cannot be set in place: cut a copy.
			c := reflect.New(val.Type()).Elem()
			c.Set(val)
			cutTexts(c)
			changed = changed || !reflect.DeepEqual(c.Interface(), val.Interface())
			out.SetMapIndex(k, c)
		}
		if changed && v.CanSet() {
			v.Set(out)
		}
	}
}

// DecodeHistogram decodes an encoded histogram of a document read back:
// only pacer's own geometry is accepted (checked on the encoding's header,
// before anything is allocated for the counts). The library refuses
// counts that add up beyond an int64.
func DecodeHistogram(enc string) (*hdrhistogram.Histogram, error) {
	if err := checkGeometry(enc, histo.Lowest, histo.Highest, histo.SigFigs); err != nil {
		return nil, err
	}
	return histo.Decode(enc)
}

// errGeometry refuses a histogram of another geometry.
var errGeometry = errors.New("decode histogram: not pacer's geometry")

// checkGeometry refuses an encoded histogram of any geometry but the one
// given (see readGeometry).
func checkGeometry(enc string, lowest, highest int64, sigFigs int) error {
	low, high, sig, err := readGeometry(enc)
	if err != nil {
		return err
	}
	if low != lowest || high != highest || sig != sigFigs {
		return fmt.Errorf("%w (%d to %d, %d digits; pacer writes %d to %d, %d digits)", errGeometry, low, high, sig, lowest, highest, sigFigs)
	}
	return nil
}

// readGeometry reads the header of a base64 HdrHistogram V2 compressed
// encoding (cookie and length, then the deflated payload's first 40
// bytes: cookie, payload length, normalizing offset, significant digits,
// lowest and highest trackable values), without decoding its counts.
func readGeometry(enc string) (lowest, highest int64, sigFigs int, err error) {
	// 8 bytes of header and at most a few hundred of deflate stream are
	// needed for the payload's header: decode no more than that.
	const prefix = 4096
	s := enc
	if len(s) > prefix {
		s = s[:prefix]
	}
	raw, err := base64.StdEncoding.DecodeString(s) // prefix is a multiple of 4
	if err != nil {
		return 0, 0, 0, fmt.Errorf("decode histogram: %w", err)
	}
	if len(raw) < 8 {
		return 0, 0, 0, errors.New("decode histogram: too short")
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("decode histogram: %w", err)
	}
	defer z.Close()
	var hdr [40]byte
	if _, err := io.ReadFull(z, hdr[:]); err != nil {
		return 0, 0, 0, fmt.Errorf("decode histogram: header: %w", err)
	}
	sig := int32(binary.BigEndian.Uint32(hdr[12:16]))
	return int64(binary.BigEndian.Uint64(hdr[16:24])), int64(binary.BigEndian.Uint64(hdr[24:32])), int(sig), nil
}
