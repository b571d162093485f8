package policies

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// errNotNumber and friends say why a value is not usable; they end up in
// decision reasons.
var (
	errEmpty     = errors.New("empty")
	errNotNumber = errors.New("not a number")
	errNotFinite = errors.New("not finite")
	errRange     = errors.New("out of range")
)

// parsedValue is a number read from a label or annotation.
type parsedValue struct {
	v float64
	// percent is true when the text ended in "%" (v is already divided by
	// 100).
	percent bool
}

// parseValue reads a number the way Prometheus templates print one:
// "15.2", "1.52e+01", " 16 " (surrounding space is ignored), "85%"
// (humanizePercentage; the result is 0.85). NaN, ±Inf and anything else are
// errors, never panics.
func parseValue(s string) (parsedValue, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return parsedValue{}, errEmpty
	}
	var p parsedValue
	if strings.HasSuffix(s, "%") {
		p.percent = true
		s = strings.TrimSpace(s[:len(s)-1])
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// ParseFloat reports overflow as ±Inf with ErrRange.
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return parsedValue{}, errNotFinite
		}
		if !errors.Is(err, strconv.ErrRange) {
			return parsedValue{}, errNotNumber
		}
		// Underflow: v is the nearest representable value (0 or a
		// denormal); that is a fine reading of the text.
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return parsedValue{}, errNotFinite
	}
	if p.percent {
		v /= 100
	}
	p.v = v
	return p, nil
}

// parseRatio reads a ratio in [0, ...) given as a ratio (0.85) or a
// percentage ("85%"). A bare number above 1 and at most 100 is read as a
// percentage (85 means 85%), because templates often print
// `{{ $value | printf "%.0f" }}` of a percent-valued expression; a bare
// number above 100 is ambiguous and rejected. Negative values are rejected.
func parseRatio(s string) (float64, error) {
	r, _, err := readRatio(s)
	return r, err
}

// maxAmbiguousRatio bounds the bare numbers that readRatio reports as
// ambiguous: a bare number in (1, maxAmbiguousRatio] is read as a
// percentage, but it is as plausibly a ratio above 100% (1.2: 1.2% or
// 120%?).
const maxAmbiguousRatio = 2

// readRatio is parseRatio that also reports whether the text was ambiguous:
// a bare number in (1, 2], read as a percentage (1.2 → 0.012) although a
// template printing a ratio above 100% writes the same text.
func readRatio(s string) (ratio float64, ambiguous bool, err error) {
	p, err := parseValue(s)
	if err != nil {
		return 0, false, err
	}
	if p.v < 0 {
		return 0, false, errRange
	}
	if !p.percent && p.v > 1 {
		if p.v > 100 {
			return 0, false, errRange
		}
		return p.v / 100, p.v <= maxAmbiguousRatio, nil
	}
	return p.v, false, nil
}

// lookup returns the value of name from the alert's labels, else its
// annotations, and where it was found.
func lookup(a *alert.Alert, name string) (value, source string, ok bool) {
	if v, ok := a.Labels[name]; ok {
		return v, "label", true
	}
	if v, ok := a.Annotations[name]; ok {
		return v, "annotation", true
	}
	return "", "", false
}

// parseBool reads a flag such as latency_above_slo: true, 1, yes (any
// case) are true; everything else is false.
func parseBool(s string) bool {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "yes") {
		return true
	}
	b, err := strconv.ParseBool(s)
	return err == nil && b
}

// fmtNum formats a number for reasons: shortest exact form, at least one
// decimal ("16.0", "14.41"), at most 4 decimals for computed ratios.
func fmtNum(v float64) string { return fmtMin(v, 1) }

// fmtRatio is fmtNum with at least two decimals, the way ratios to a
// baseline are written ("1.10", "1.25").
func fmtRatio(v float64) string { return fmtMin(v, 2) }

func fmtMin(v float64, minDecimals int) string {
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], v, 'f', -1, 64)
	dot := -1
	for i, c := range b {
		if c == '.' {
			dot = i
			break
		}
	}
	if dot >= 0 && len(b)-dot-1 > 4 {
		b = strconv.AppendFloat(buf[:0], v, 'f', 4, 64)
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
		dot = len(b) - 1
		for b[dot] != '.' {
			dot--
		}
	}
	if dot < 0 {
		dot = len(b)
		b = append(b, '.')
	}
	for len(b)-dot-1 < minDecimals {
		b = append(b, '0')
	}
	return string(b)
}

// fmtPercent formats a ratio as a percentage ("85.0%").
func fmtPercent(v float64) string { return fmtNum(v*100) + "%" }
