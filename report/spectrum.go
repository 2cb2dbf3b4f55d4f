package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// SpectrumUnitRatio divides the histograms' nanoseconds in a spectrum:
// values print in milliseconds, as HdrHistogram's tools print them.
const SpectrumUnitRatio = 1e6

// OutputFile is one file to write: its path and its contents.
type OutputFile struct {
	Path string
	Data []byte
}

// Spectrum writes the classic percentile distribution (HdrHistogram's
// outputPercentileDistribution, 5 ticks per half distance, milliseconds;
// see histo.WriteSpectrum) of one test: its response time in open mode,
// its latency from the send in closed mode.
func Spectrum(t Test) ([]byte, error) {
	h, err := decodeOrEmpty(t.Histograms.Response)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	var b bytes.Buffer
	if err := histo.WriteSpectrum(&b, h, histo.SpectrumTicks, SpectrumUnitRatio); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func decodeOrEmpty(enc string) (*hdrhistogram.Histogram, error) {
	if enc == "" {
		return histo.New(), nil
	}
	return DecodeHistogram(enc)
}

// spectrumOutputs returns what --hdr-spectrum PATH writes for d:
//
//   - one test (or none: an empty distribution): PATH holds its spectrum;
//   - several tests: PATH holds the first test's (compare: the closed
//     loop), and each other test's goes to PATH with ".<key>" inserted
//     before the extension (TestKeys): spectrum.hgrm,
//     spectrum.get_open_loop_at_5k_req_s.hgrm, …;
//   - several tests to "-" or to a path that is written in place (a
//     device, a FIFO, /dev/stdout): one stream, each test's spectrum
//     preceded by a comment line "#[Test <key>: <name>]".
func spectrumOutputs(path string, d *Document) ([]OutputFile, error) {
	if len(d.Tests) <= 1 {
		t := Test{}
		if len(d.Tests) == 1 {
			t = d.Tests[0]
		}
		data, err := Spectrum(t)
		if err != nil {
			return nil, err
		}
		return []OutputFile{{Path: path, Data: data}}, nil
	}
	keys := TestKeys(d)
	stream := path == "-"
	if !stream {
		out, err := resolveOutput(path)
		if err != nil {
			return nil, err
		}
		stream = out.kind == toDirect || out.kind == toFIFO || out.kind == toStdout
	}
	var files []OutputFile
	var all bytes.Buffer
	for i, t := range d.Tests {
		data, err := Spectrum(t)
		if err != nil {
			return nil, err
		}
		if stream {
			fmt.Fprintf(&all, "#[Test %s: %s]\n", keys[i], oneLineText(t.Name))
			all.Write(data)
			continue
		}
		p := path
		if i > 0 {
			p = insertKey(path, keys[i])
		}
		files = append(files, OutputFile{Path: p, Data: data})
	}
	if stream {
		return []OutputFile{{Path: path, Data: all.Bytes()}}, nil
	}
	return files, nil
}

// insertKey puts ".key" before path's extension (or at its end).
func insertKey(path, key string) string {
	ext := filepath.Ext(path)
	if ext == filepath.Base(path) {
		ext = "" // a name that starts with its only dot
	}
	return strings.TrimSuffix(path, ext) + "." + key + ext
}

func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
