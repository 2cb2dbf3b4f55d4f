package scenarios

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// writeMonitorTrace writes n MONITOR lines of a busy server: 200 clients,
// a mix of GET, SET (with escaped bytes), HSET and INCR, 5 µs apart.
func writeMonitorTrace(b *testing.B, path string, n int, zip bool) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if zip {
		zw, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = zw
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	line := make([]byte, 0, 256)
	for i := 0; i < n; i++ {
		us := int64(1700000000)*1e6 + int64(i)*5
		line = strconv.AppendInt(line[:0], us/1e6, 10)
		line = append(line, '.')
		line = append(line, strconv.FormatInt(1e6+us%1e6, 10)[1:]...)
		line = append(line, " [0 127.0.0.1:"...)
		line = strconv.AppendInt(line, int64(40000+i%200), 10)
		line = append(line, "] "...)
		key := strconv.AppendInt([]byte("key:"), int64(i*7919%1000003), 10)
		switch i % 4 {
		case 0, 1:
			line = append(line, `"GET" `...)
			line = appendMonitorArg(line, key)
		case 2:
			line = append(line, `"SET" `...)
			line = appendMonitorArg(line, key)
			line = append(line, ` "value \"quoted\" \x00\xff\xc3\xa9 and some more text"`...)
		case 3:
			line = append(line, `"HINCRBY" "h:`...)
			line = strconv.AppendInt(line, int64(i%1000), 10)
			line = append(line, `" "field" "1"`...)
		}
		line = append(line, '\n')
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if zw != nil {
		zw.Close()
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScanTrace5M scans a generated 5-million-line MONITOR trace:
// one op is the whole file (read, check, classify, sum up, hash).
func BenchmarkScanTrace5M(b *testing.B) {
	const n = 5_000_000
	for _, zip := range []bool{false, true} {
		name := "plain"
		if zip {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "trace")
			writeMonitorTrace(b, path, n, zip)
			fi, _ := os.Stat(path)
			b.ResetTimer()
			for b.Loop() {
				r, err := OpenTrace(path, TraceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				s, err := ScanTrace(r, nil)
				r.Close()
				if err != nil || s.Commands != n {
					b.Fatalf("%v %d", err, s.Commands)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/line")
			b.ReportMetric(float64(fi.Size())/1e6, "MB-file")
		})
	}
}

// BenchmarkTraceNext is the reader alone, per record.
func BenchmarkTraceNext(b *testing.B) {
	path := filepath.Join(b.TempDir(), "trace")
	writeMonitorTrace(b, path, 200_000, false)
	r, err := OpenTrace(path, TraceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Next(); err == io.EOF {
			r.Close()
			r, _ = OpenTrace(path, TraceOptions{})
		}
	}
	r.Close()
}
