package bytesize

import "testing"

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]int64{
		"123": 123, "2MiB": 2 << 20, "512KiB": 512 << 10, "4MB": 4000000, "1GiB": 1 << 30, "64k": 64 << 10, "2m": 2 << 20, "10 B": 10,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
		if got, _ := Parse(Format(want)); got != want {
			t.Errorf("Format(%d) = %q does not read back", want, Format(want))
		}
	}
	for _, in := range []string{"", "-1", "2XB", "MiB", "1.5MiB", "99999999999999999999"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}
