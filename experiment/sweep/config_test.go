package sweep

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/verdict"
)

func TestRatesBetween(t *testing.T) {
	for _, tc := range []struct {
		from, to, step float64
		want           []float64
	}{
		{1000, 2000, 500, []float64{1000, 1500, 2000}},
		{1000, 1000, 1, []float64{1000}},
		{0.1, 0.3, 0.1, []float64{0.1, 0.2, 0.3}}, // to is included despite rounding
		{1000, 2200, 500, []float64{1000, 1500, 2000}},
	} {
		if got, ok := ratesBetween(tc.from, tc.to, tc.step); !ok || !slices.Equal(got, tc.want) {
			t.Errorf("ratesBetween(%v, %v, %v) = %v, %v; want %v", tc.from, tc.to, tc.step, got, ok, tc.want)
		}
	}
	for _, bad := range [][3]float64{{1, 1e6, 1}, {1, 2, 0}, {1, 1, 0}, {1, 2, -1}} {
		if got, ok := ratesBetween(bad[0], bad[1], bad[2]); ok {
			t.Errorf("ratesBetween%v = %v: want refused", bad, got)
		}
	}
}

func TestParseRatesAndShare(t *testing.T) {
	if got, err := parseRates("10k, 20k,1.5M"); err != nil || !slices.Equal(got, []float64{10000, 20000, 1500000}) {
		t.Errorf("parseRates = %v, %v", got, err)
	}
	if _, err := parseRates("1k,fast"); err == nil {
		t.Error("parseRates accepted fast")
	}
	for in, want := range map[string]float64{"5%": 0.05, " 0.05 ": 0.05, "99%": 0.99} {
		if got, err := parseShare(in); err != nil || got != want {
			t.Errorf("parseShare(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0%", "0", "1", "100%", "1.5", "-5%", "x", ""} {
		if _, err := parseShare(in); err == nil {
			t.Errorf("parseShare(%q) accepted", in)
		}
	}
}

func TestValidate(t *testing.T) {
	slo, err := verdict.ParseSLO("p99<1ms")
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{StepDuration: time.Second, Rates: []float64{1000}}
	for _, tc := range []struct {
		edit func(*Config)
		want string // "" for valid
	}{
		{func(*Config) {}, ""},
		{func(c *Config) { c.StepDuration = 0 }, "--step-duration 0s"},
		{func(c *Config) { c.Settle = -time.Second }, "--settle -1s"},
		{func(c *Config) { c.AbortAfter = -time.Second }, "--abort-after -1s"},
		{func(c *Config) { c.Rates = make([]float64, MaxPoints+1) }, "--rates lists 1001 rates"},
		{func(c *Config) { c.Clients, c.Pipelines = make([]int, 100), make([]int, 11) }, "-c × -P makes 1100 points"},
		{func(c *Config) { c.Rates, c.Search = nil, true }, "--search needs --slo"},
		{func(c *Config) { c.Rates, c.Search, c.SLO = nil, true, slo }, "--max-steps 0"},
		{func(c *Config) { c.Rates, c.Search, c.SLO, c.MaxSteps = nil, true, slo, DefaultMaxSteps }, ""},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", c, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(usagetest.CLI(err), tc.want) || !usage.Is(err)):
			t.Errorf("Validate = %v; want a usage error %q", err, tc.want)
		}
	}
}

func TestSetRates(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		search bool
		f      RateFlags
		rates  []float64
		from   float64
		to     float64
		want   string // error; "" for none
	}{
		{false, RateFlags{Rates: s("1k,2k")}, []float64{1000, 2000}, 0, 0, ""},
		{false, RateFlags{From: s("1k"), To: s("2k"), Step: s("500")}, []float64{1000, 1500, 2000}, 0, 0, ""},
		{true, RateFlags{Precision: "5%", MaxSteps: 3}, nil, DefaultSearchFrom, 0, ""},
		{true, RateFlags{To: s("500"), Precision: "5%", MaxSteps: 3}, nil, DefaultSearchFrom, 500, ""}, // the search starts at --to
		{true, RateFlags{From: s("2k"), To: s("8k"), Precision: "5%", MaxSteps: 3}, nil, 2000, 8000, ""},
		{false, RateFlags{}, nil, 0, 0, "give the rates"},
		{false, RateFlags{Rates: s("1k"), To: s("2k")}, nil, 0, 0, "--rates lists the rates: drop --to"},
		{false, RateFlags{Rates: s("1k,x")}, nil, 0, 0, "--rates: "},
		{false, RateFlags{From: s("1k"), Step: s("1")}, nil, 0, 0, "go together"},
		{false, RateFlags{From: s("2k"), To: s("1k"), Step: s("1")}, nil, 0, 0, "--to 1k is below --from 2k"},
		{false, RateFlags{From: s("1"), To: s("1M"), Step: s("1")}, nil, 0, 0, "--from 1 --to 1M --step 1 makes more than 1000 steps"},
		{false, RateFlags{From: s("1"), To: s("2"), Step: s("x")}, nil, 0, 0, "--step: "},
		{true, RateFlags{Rates: s("1k"), Step: s("1")}, nil, 0, 0, "drop --rates"},
		{true, RateFlags{Step: s("1")}, nil, 0, 0, "drop --step"},
		{true, RateFlags{From: s("10k"), To: s("1k")}, nil, 0, 0, "--to 1k is below --from 10k"},
		{true, RateFlags{Precision: "0%"}, nil, 0, 0, `--precision "0%"`},
	} {
		c := Config{Search: tc.search}
		err := c.SetRates(tc.f)
		switch {
		case tc.want == "" && (err != nil || !slices.Equal(c.Rates, tc.rates) || c.From != tc.from || c.To != tc.to):
			t.Errorf("%+v: %v, rates %v from %v to %v", tc.f, err, c.Rates, c.From, c.To)
		case tc.want != "" && (err == nil || !strings.Contains(usagetest.CLI(err), tc.want) || !usage.Is(err)):
			t.Errorf("%+v: %v, want a usage error %q", tc.f, err, tc.want)
		}
	}
}
