package histo

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The HdrHistogram V2 compressed encoding, written here rather than by
// hdrhistogram-go: the library builds a new zlib writer for every call
// (about 0.8 MB of tables, most of its ~1 ms per histogram) and writes the
// counts one binary.Write at a time. Interval series encode five
// histograms per interval and command, so that was the largest source of
// garbage of a run. The layout is the one the Java, C and Go
// implementations share:
//
//	base64( cookie 0x1c849314 | int32 length | zlib(
//	    cookie 0x1c849313 | int32 payload length | int32 normalizing index offset (0)
//	    | int32 significant digits | int64 lowest | int64 highest
//	    | float64 integer-to-double ratio                    (40 bytes, big-endian)
//	    | payload: counts[0 .. last non-zero] as ZigZag LEB128 (at most 9 bytes),
//	      a run of two or more zeros as one negative number ) )
//
// The cookies carry the word size 8 in bits 4–7, as Java's do. With the
// library's compression level (best) the output is the library's, byte for
// byte (TestEncodeIsTheLibrarys), so golden files and the .hlog tests see
// no change.
const (
	v2Cookie           = 0x1c849303 | 0x10
	v2CompressedCookie = 0x1c849304 | 0x10
	v2HeaderLen        = 40
)

// encoder holds the buffers of one encoding, reused through encoders: the
// zlib writer's tables are most of the cost of a fresh one.
type encoder struct {
	raw  []byte       // the V2 record: header and payload
	comp bytes.Buffer // the compressed record: cookie, length, zlib stream
	zw   *zlib.Writer
	out  []byte // base64 of comp
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

// Encode returns the base64 text of the standard HdrHistogram V2 compressed
// encoding of h, readable by the Java, C, Go and Rust implementations; ""
// for nil (an absent histogram, as Decode reads it back).
func Encode(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	// Export copies the counts (the library has no other way to read
	// them); Delta.Pack encodes a recorder's counts without that copy.
	s := h.Export()
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1 // the library's zero value, which it writes as 1
	}
	return encodeCounts(s.LowestTrackableValue, s.HighestTrackableValue, s.SignificantFigures, ratio, s.Counts)
}

// encodeCounts encodes counts laid out in the geometry (lowest, highest,
// sigFigs) with its header.
func encodeCounts(lowest, highest, sigFigs int64, ratio float64, counts []int64) (string, error) {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	b, err := e.encode(lowest, highest, sigFigs, ratio, counts)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// encode is encodeCounts into e's buffer: the text it returns is valid
// until e's next use.
func (e *encoder) encode(lowest, highest, sigFigs int64, ratio float64, counts []int64) ([]byte, error) {
	raw, err := appendV2(e.raw[:0], lowest, highest, sigFigs, ratio, counts)
	e.raw = raw
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	e.comp.Reset()
	e.comp.Write(make([]byte, 8)) // cookie and length, filled in below
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.comp, zlib.BestCompression) // a valid level: no error
	} else {
		e.zw.Reset(&e.comp)
	}
	if _, err := e.zw.Write(raw); err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	b := e.comp.Bytes()
	binary.BigEndian.PutUint32(b[0:], v2CompressedCookie)
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)-8))
	e.out = base64.StdEncoding.AppendEncode(e.out[:0], b)
	return e.out, nil
}

// errNegativeCount: a negative count has no encoding (it would read back
// as a run of zeros); Java's encoder refuses it too.
var errNegativeCount = errors.New("negative count")

// appendV2 appends the uncompressed V2 record of counts to b. The payload
// ends at the last non-zero count, or holds one zero for an empty
// histogram (where the library and Java stop too: at the index of Max()).
func appendV2(b []byte, lowest, highest, sigFigs int64, ratio float64, counts []int64) ([]byte, error) {
	start := len(b)
	b = append(b, make([]byte, v2HeaderLen)...)
	limit := 1
	for i := len(counts) - 1; i > 0; i-- {
		if counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	limit = min(limit, len(counts))
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				b = appendZigZag(b, -zeros)
				continue
			}
		}
		if c < 0 {
			return b, fmt.Errorf("%w %d at index %d", errNegativeCount, c, i-1)
		}
		b = appendZigZag(b, c)
	}
	h := b[start : start+v2HeaderLen]
	binary.BigEndian.PutUint32(h[0:], v2Cookie)
	binary.BigEndian.PutUint32(h[4:], uint32(len(b)-start-v2HeaderLen))
	binary.BigEndian.PutUint32(h[8:], 0) // normalizing index offset: counts are not rotated
	binary.BigEndian.PutUint32(h[12:], uint32(sigFigs))
	binary.BigEndian.PutUint64(h[16:], uint64(lowest))
	binary.BigEndian.PutUint64(h[24:], uint64(highest))
	binary.BigEndian.PutUint64(h[32:], math.Float64bits(ratio))
	return b, nil
}

// appendZigZag appends v ZigZag-mapped as HdrHistogram's LEB128 variant:
// seven bits per byte for up to eight bytes, then the last eight bits
// whole, so any int64 takes at most nine bytes (binary.AppendUvarint would
// take ten above 2^63).
func appendZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u < 0x80 {
			return append(b, byte(u))
		}
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// Decode reads a histogram written by Encode (or by any HdrHistogram
// implementation's V2 compressed encoding).
func Decode(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return nil, errors.New("decode histogram: empty string")
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
