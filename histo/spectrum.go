package histo

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// SpectrumTicks is the number of percentile steps per half distance to
// 100% that HdrHistogram's tools print (jHiccup, wrk2,
// HistogramLogProcessor): 5.
const SpectrumTicks = 5

// WriteSpectrum writes h's percentile distribution exactly as the Java
// HdrHistogram's outputPercentileDistribution(out, ticks, unitRatio) does
// (the ".hgrm" text that HdrHistogram's online plotter reads):
//
//	       Value     Percentile TotalCount 1/(1-Percentile)
//
//	       0.071 0.000000000000          1           1.00
//	       0.110 0.100000000000        500           1.11
//	       …
//	       8.954 1.000000000000       5000
//	#[Mean    =        1.006, StdDeviation   =        0.992]
//	#[Max     =        8.954, Total count    =         5000]
//	#[Buckets =           32, SubBuckets     =         2048]
//
// Values are divided by unitRatio (10^6 turns pacer's nanoseconds into
// milliseconds) and printed with as many decimals as h has significant
// digits. The steps, the arithmetic and the rounding (Java's %f rounds
// half up on the shortest decimal form of a double, Go's on its exact
// binary value) follow the Java code, so the output is byte for byte what
// HistogramLogProcessor writes to its .hgrm file for the same histogram.
// hdrhistogram-go's PercentilesPrint differs in layout (tabs, widths, an
// "inf" column on the last line), hence this function.
func WriteSpectrum(w io.Writer, h *hdrhistogram.Histogram, ticks int, unitRatio float64) error {
	if h == nil {
		h = New()
	}
	if ticks < 1 {
		return fmt.Errorf("percentile distribution: %d ticks per half distance, want at least 1", ticks)
	}
	g := geometryOf(h)
	digits := int(h.SignificantFigures())
	counts := h.Export().Counts
	total := h.TotalCount()

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	row := func(value int64, level float64, cum int64, last bool) {
		p := level / 100.0
		b.WriteString(pad(javaFixed(float64(value)/unitRatio, digits), 12))
		b.WriteByte(' ')
		b.WriteString(pad(javaFixed(p, 12), 2))
		b.WriteByte(' ')
		b.WriteString(pad(strconv.FormatInt(cum, 10), 10))
		if !last {
			b.WriteByte(' ')
			b.WriteString(pad(javaFixed(1/(1.0-p), 2), 14))
		}
		b.WriteByte('\n')
	}

	// The Java PercentileIterator over the counts array: it stops at the
	// first non-empty slot whose cumulative share reaches the level, then
	// raises the level by one tick, 100 / (ticks * 2^(k+1)) where k is the
	// number of halvings of the distance to 100% reached so far; a last
	// step reports 100% at the highest value.
	idx, cum, fresh := 0, int64(0), true
	level, lastStep := 0.0, false
	for {
		if cum >= total {
			if lastStep || total == 0 {
				break
			}
			level, lastStep = 100.0, true
		}
		found := false
		for idx < len(counts) {
			c := counts[idx]
			if fresh {
				cum += c
				fresh = false
			}
			if c != 0 && 100.0*float64(cum)/float64(total) >= level {
				row(g.highestEquivalent(g.valueAt(idx)), level, cum, level == 100.0)
				if !lastStep {
					halvings := int64(math.Log(100.0/(100.0-level)) / math.Log(2))
					reporting := int64(ticks) * int64(math.Pow(2, float64(halvings+1)))
					level += 100.0 / float64(reporting)
				}
				found = true
				break
			}
			idx++
			fresh = true
		}
		if !found {
			break
		}
	}

	mean, std := javaMeanStd(g, counts, total)
	fmt.Fprintf(b, "#[Mean    = %s, StdDeviation   = %s]\n", pad(javaFixed(mean/unitRatio, digits), 12), pad(javaFixed(std/unitRatio, digits), 12))
	maxV := float64(0)
	if total > 0 {
		maxV = float64(g.highestEquivalent(h.Max()))
	}
	fmt.Fprintf(b, "#[Max     = %s, Total count    = %12d]\n", pad(javaFixed(maxV/unitRatio, digits), 12), total)
	fmt.Fprintf(b, "#[Buckets = %12d, SubBuckets     = %12d]\n", g.countsLen/int(g.subHalfCount)-1, g.subCount)
	return b.Flush()
}

// javaMeanStd computes the mean and standard deviation as the Java
// getMean and getStdDeviation do: from each slot's median equivalent
// value, summed before dividing.
func javaMeanStd(g Geometry, counts []int64, total int64) (mean, std float64) {
	if total == 0 {
		return 0, 0
	}
	var sum float64
	for i, c := range counts {
		if c != 0 {
			sum += float64(g.medianEquivalent(g.highestEquivalent(g.valueAt(i)))) * float64(c)
		}
	}
	mean = sum / float64(total)
	var dev float64
	for i, c := range counts {
		if c != 0 {
			d := float64(g.medianEquivalent(g.highestEquivalent(g.valueAt(i)))) - mean
			dev += d * d * float64(c)
		}
	}
	return mean, math.Sqrt(dev / float64(total))
}

// pad right-aligns s in width columns, as %Nd and %N.Mf do.
func pad(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return strings.Repeat(" ", width-len(s)) + s
}

// javaFixed formats v as Java's String.format("%.Nf") does: it takes the
// shortest decimal digits that identify the double (as Double.toString)
// and rounds them half up at prec decimals. Go's %f rounds the exact
// binary value half to even, which differs on ties: Java prints 0.0015
// with %.3f as 0.002, and 1.2345 as 1.235.
func javaFixed(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	neg := math.Signbit(v)
	if neg {
		v = -v
	}
	// d.ddddde±X: the shortest digits that round-trip.
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := []byte(strings.Replace(mant, ".", "", 1))
	// value = 0.digits × 10^point
	point := exp + 1
	// Keep point+prec digits; round half up on the next one.
	keep := point + prec
	switch {
	case keep < 0:
		digits, point = []byte{'0'}, 1
	case keep < len(digits):
		up := digits[keep] >= '5'
		digits = digits[:keep]
		if up {
			i := len(digits) - 1
			for ; i >= 0; i-- {
				if digits[i] < '9' {
					digits[i]++
					break
				}
				digits[i] = '0'
			}
			if i < 0 {
				digits = append([]byte{'1'}, digits...)
				point++
			}
		}
		if len(digits) == 0 {
			digits, point = []byte{'0'}, 1
		}
	}
	// Lay the digits out around the decimal point.
	var b strings.Builder
	if neg && strings.Trim(string(digits), "0") != "" {
		b.WriteByte('-')
	}
	if point <= 0 {
		b.WriteByte('0')
	} else {
		for i := 0; i < point; i++ {
			if i < len(digits) {
				b.WriteByte(digits[i])
			} else {
				b.WriteByte('0')
			}
		}
	}
	if prec > 0 {
		b.WriteByte('.')
		for i := 0; i < prec; i++ {
			j := point + i
			if j >= 0 && j < len(digits) {
				b.WriteByte(digits[j])
			} else {
				b.WriteByte('0')
			}
		}
	}
	return b.String()
}
