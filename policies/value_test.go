package policies

import (
	"math"
	"strings"
	"testing"
)

func TestParseValue(t *testing.T) {
	cases := []struct {
		in      string
		want    float64
		percent bool
		err     error
	}{
		{"15.2", 15.2, false, nil},
		{"1.52e+01", 15.2, false, nil},
		{" 16 ", 16, false, nil},
		{"\t0.5\n", 0.5, false, nil},
		{"85%", 0.85, true, nil},
		{"85 %", 0.85, true, nil},
		{"-0.2", -0.2, false, nil},
		{"0", 0, false, nil},
		{"", 0, false, errEmpty},
		{"   ", 0, false, errEmpty},
		{"%", 0, false, errNotNumber},
		{"NaN", 0, false, errNotFinite},
		{"+Inf", 0, false, errNotFinite},
		{"-Inf", 0, false, errNotFinite},
		{"1e400", 0, false, errNotFinite},
		{"fast", 0, false, errNotNumber},
		{"15.2.1", 0, false, errNotNumber},
		{"<no value>", 0, false, errNotNumber},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseValue(tc.in)
			if err != tc.err {
				t.Fatalf("parseValue(%q) error = %v, want %v", tc.in, err, tc.err)
			}
			if err == nil && (math.Abs(got.v-tc.want) > 1e-12 || got.percent != tc.percent) {
				t.Errorf("parseValue(%q) = %+v, want %v (percent %v)", tc.in, got, tc.want, tc.percent)
			}
		})
	}
}

func TestParseRatio(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		err  error
	}{
		{"0.85", 0.85, nil},
		{"1", 1, nil},
		{"85%", 0.85, nil},
		{"120%", 1.2, nil},
		{"85", 0.85, nil},
		{"100", 1, nil},
		{"100.5", 0, errRange},
		{"-0.1", 0, errRange},
		{"NaN", 0, errNotFinite},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRatio(tc.in)
			if err != tc.err || (err == nil && math.Abs(got-tc.want) > 1e-12) {
				t.Errorf("parseRatio(%q) = %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestFmtNum(t *testing.T) {
	cases := map[float64]string{16: "16.0", 15.2: "15.2", 14.41: "14.41", 0.1 + 0.2: "0.3", 1.0 / 3: "0.3333", -1: "-1.0",
		// Sub-millisecond latencies in seconds keep 4 significant digits.
		0.0000873: "0.0000873", 0.000012: "0.000012", 0.00004 / 3: "0.00001333", -0.00004 / 3: "-0.00001333",
		0.0012345: "0.0012", 1e-15: "0.0"}
	for in, want := range cases {
		if got := fmtNum(in); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", in, got, want)
		}
	}
	if got := fmtRatio(1.1); got != "1.10" {
		t.Errorf("fmtRatio(1.1) = %q, want 1.10", got)
	}
}

// FuzzParseValue checks that no text crashes the parser and that every value
// it accepts is finite, so no NaN ever reaches a comparison.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"15.2", "1.52e+01", "85%", " 16 ", "NaN", "+Inf", "-Inf", "garbage", "", "%", "1e400", "0x1p-2", "1_000", "１２",
		"932m", "1.5k", "1e+06Y", "5µ", "2.5Gi", "1ki", "15,2", "15.2x", "5ms", "Infk", "1e300Y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseValue(s)
		if err != nil {
			return
		}
		if math.IsNaN(p.v) || math.IsInf(p.v, 0) {
			t.Fatalf("parseValue(%q) = %v: not finite", s, p.v)
		}
		if p.percent != strings.HasSuffix(strings.TrimSpace(s), "%") {
			t.Fatalf("parseValue(%q) percent = %v", s, p.percent)
		}
		if p.prefix() != "" && (p.percent || !strings.HasSuffix(strings.TrimSpace(s), p.prefix())) {
			t.Fatalf("parseValue(%q) prefix = %q", s, p.prefix())
		}
		r, err := parseRatio(s)
		if err == nil && (r < 0 || math.IsNaN(r)) {
			t.Fatalf("parseRatio(%q) = %v", s, r)
		}
		_ = fmtNum(p.v)
	})
}
