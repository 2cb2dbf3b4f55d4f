package histo

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Log is an HdrHistogram interval log (".hlog", log format 1.3), the file
// jHiccup, wrk2, Cassandra and HdrHistogram's own tools write and read:
//
//	#[Logged with pacer 1.2.3]
//	#[Histogram log format version 1.3]
//	#[StartTime: 1700000000.123 (seconds since epoch), 2023-11-14T22:13:20.123Z]
//	#[BaseTime: 1700000000.123 (seconds since epoch)]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	Tag=response,0.000000,1.000000,0.301055,HISTFAAAAC...
//
// Each interval line is one histogram (values in nanoseconds) of one
// interval under one tag: its start in seconds from BaseTime, its length
// in seconds, its largest value divided by 10^6 (so in milliseconds: the
// writer's default max-value unit ratio, which is also the Java
// HistogramLogProcessor's default -outputValueUnitRatio) and its base64
// V2 compressed encoding.
type Log struct {
	// Comment, when not empty, is written first as "#[Comment]".
	Comment string
	// Start is written as both StartTime and BaseTime: every interval's
	// timestamp is an offset from it, at millisecond resolution.
	Start time.Time
	// Entries are written in order, one line each; readers expect them in
	// time order.
	Entries []LogEntry
}

// LogEntry is one interval line.
type LogEntry struct {
	// Tag names the series (LogTag makes any text a valid tag); "" writes
	// an untagged line.
	Tag string
	// Start and Duration place the interval in wall-clock time.
	Start    time.Time
	Duration time.Duration
	// Encoded is the histogram as Encode writes it; "" is an empty one.
	Encoded string
	// Max is the histogram's largest value (its Max(), in nanoseconds)
	// for the line's max column; 0 when not known: WriteLog then decodes
	// the histogram to find it.
	Max int64
}

// WriteLog writes l to w. The format version, the comments and the legend
// come from hdrhistogram-go's log writer; StartTime and BaseTime are
// written as comments in the Java writer's form (seconds with
// milliseconds) because the library's OutputStartTime and OutputBaseTime
// drop the milliseconds. Interval lines are laid out exactly as the
// library's OutputIntervalHistogram lays them out ("Tag=%s," then
// "%f,%f,%f,%s"), but with the entry's own encoding: the library would
// decode and compress every histogram again (about 1.5 ms each, half a
// minute for an hour of one-second intervals under three tags) to produce
// the same text. TestWriteLogLinesAreTheLibrarys checks the equality.
func WriteLog(w io.Writer, l Log) error {
	bw := bufio.NewWriter(w)
	lw := hdrhistogram.NewHistogramLogWriter(bw)
	base := l.Start.UnixMilli()
	if l.Comment != "" {
		if err := lw.OutputComment("[" + oneLine(l.Comment) + "]"); err != nil {
			return err
		}
	}
	if err := lw.OutputLogFormatVersion(); err != nil {
		return err
	}
	stamp := l.Start.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00")
	if err := lw.OutputComment(fmt.Sprintf("[StartTime: %s (seconds since epoch), %s]", epochSeconds(base), stamp)); err != nil {
		return err
	}
	if err := lw.OutputComment(fmt.Sprintf("[BaseTime: %s (seconds since epoch)]", epochSeconds(base))); err != nil {
		return err
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	var empty string
	for _, e := range l.Entries {
		if e.Tag != LogTag(e.Tag) {
			return fmt.Errorf("interval log: tag %q: a tag cannot hold commas, spaces or control characters", e.Tag)
		}
		enc, maxNs := e.Encoded, e.Max
		switch {
		case enc == "":
			if empty == "" {
				var err error
				if empty, err = Encode(New()); err != nil {
					return fmt.Errorf("interval log: %w", err)
				}
			}
			enc, maxNs = empty, 0
		case !strings.HasPrefix(enc, encodedPrefix) || strings.ContainsAny(enc, ", \r\n"):
			return fmt.Errorf("interval log: %.20q… is not a base64 HdrHistogram V2 compressed encoding", enc)
		case maxNs <= 0:
			h, err := Decode(enc)
			if err != nil {
				return fmt.Errorf("interval log: %w", err)
			}
			maxNs = h.Max()
		}
		if e.Tag != "" {
			bw.WriteString("Tag=" + e.Tag + ",")
		}
		// The library's arithmetic: milliseconds as float64, less the base
		// time, in seconds; the max scaled by MsToNsRatio.
		start := (float64(e.Start.UnixMilli()) - float64(base)) / 1000.0
		end := (float64(e.Start.Add(e.Duration).UnixMilli()) - float64(base)) / 1000.0
		fmt.Fprintf(bw, "%f,%f,%f,%s\n", start, end-start, float64(maxNs)/hdrhistogram.MsToNsRatio, enc)
	}
	return bw.Flush()
}

// encodedPrefix starts every base64 V2 compressed encoding (its cookie).
const encodedPrefix = "HISTF"

// epochSeconds formats milliseconds since the epoch as seconds with three
// decimals, exactly (no float rounding).
func epochSeconds(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}

// LogTag turns s into a valid interval-log tag: every byte that is not a
// printable ASCII character other than a comma or a space becomes '_'
// (readers split a line at its first comma; the Java processor's -tag is a
// shell word).
func LogTag(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == ',' {
			c = '_'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
