package policies

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// errNotNumber and friends say why a value is not usable; they end up in
// decision reasons.
var (
	errEmpty     = errors.New("empty")
	errNotNumber = errors.New("not a number")
	errNotFinite = errors.New("not finite")
	errRange     = errors.New("out of range")
	// errComma: "15,2" is 15.2 with a decimal comma, "1,500" is 1500 with a
	// thousands separator; no template of Prometheus prints either.
	errComma = fmt.Errorf("%w: a decimal comma or a thousands separator?", errNotNumber)
)

// suffixError is a number followed by a suffix that is not one of the unit
// prefixes Prometheus' humanize and humanize1024 print ("15.2x", "1.2K").
type suffixError struct{ suffix string }

func (e suffixError) Error() string {
	return "not a number: " + strconv.Quote(e.suffix) + " is not a unit prefix that Prometheus' humanize or humanize1024 prints"
}

// Is makes a suffixError an errNotNumber for errors.Is.
func (e suffixError) Is(target error) bool { return target == errNotNumber }

// parsedValue is a number read from a label or annotation.
type parsedValue struct {
	v float64
	// percent is true when the text ended in "%" (v is already divided by
	// 100).
	percent bool
	// unit is 1 + the index in unitPrefixes of the unit prefix the text
	// ended in, 0 for a plain number (a byte, not a string: parsedValue
	// stays two words, as it is returned for every value read).
	unit uint8
}

// prefix is the unit prefix the text ended in ("m", "k", "Mi"), as written;
// "" for a plain number.
func (p parsedValue) prefix() string {
	if p.unit == 0 {
		return ""
	}
	return unitPrefixes[p.unit-1].text
}

// unitPrefix is one of the suffixes Prometheus' humanize and humanize1024
// template functions print after "%.4g" of the scaled value: humanize
// divides by 1000 and appends k M G T P E Z Y while the value is at least
// 1000, or multiplies by 1000 and appends m u n p f a z y while it is below
// 1; humanize1024 divides by 1024 and appends ki Mi Gi Ti Pi Ei Zi Yi.
type unitPrefix struct {
	text string
	// mul multiplies the printed number, or div divides it (one of the
	// two is 0): dividing by 1000 rather than multiplying by 0.001 reads
	// "900m" as exactly the float64 of 0.9, so thresholds compare as for
	// "0.9".
	mul, div float64
}

// unitPrefixes lists the suffixes parseValue accepts. Prometheus prints
// "u" for micro; "µ" (micro sign) and "μ" (Greek mu) are the same prefix.
// humanize1024 prints "ki"; "Ki" is the IEC spelling.
var unitPrefixes = [...]unitPrefix{
	{"k", 1e3, 0}, {"M", 1e6, 0}, {"G", 1e9, 0}, {"T", 1e12, 0},
	{"P", 1e15, 0}, {"E", 1e18, 0}, {"Z", 1e21, 0}, {"Y", 1e24, 0},
	{"m", 0, 1e3}, {"u", 0, 1e6}, {"µ", 0, 1e6}, {"μ", 0, 1e6}, {"n", 0, 1e9},
	{"p", 0, 1e12}, {"f", 0, 1e15}, {"a", 0, 1e18}, {"z", 0, 1e21}, {"y", 0, 1e24},
	{"ki", 1 << 10, 0}, {"Ki", 1 << 10, 0}, {"Mi", 1 << 20, 0}, {"Gi", 1 << 30, 0},
	{"Ti", 1 << 40, 0}, {"Pi", 1 << 50, 0}, {"Ei", 1 << 60, 0}, {"Zi", 1 << 70, 0},
	{"Yi", 1 << 80, 0},
}

// durationUnit reports whether a unit prefix is also a unit of Prometheus
// durations: "5m" is 0.005 to humanize and 5 minutes to a duration, "1y"
// is 1e-24 or a year. See regressionRatio.
func durationUnit(prefix string) bool { return prefix == "m" || prefix == "y" }

// parseValue reads a number the way Prometheus templates print one:
// "15.2", "1.52e+01", " 16 " (surrounding space is ignored), "85%"
// (humanizePercentage; the result is 0.85), "932m", "1.5k", "2.5Gi"
// (humanize and humanize1024: the number followed by a unit prefix of
// unitPrefixes, with no space; the result is 0.932, 1500, 2.5×2³⁰). NaN,
// ±Inf, a comma ("15,2": decimal comma or thousands separator?), an unknown
// suffix ("15.2x", "1.2K": humanize writes k) and anything else are errors,
// never panics.
func parseValue(s string) (parsedValue, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return parsedValue{}, errEmpty
	}
	var p parsedValue
	if strings.HasSuffix(s, "%") {
		p.percent = true
		s = strings.TrimSpace(s[:len(s)-1])
	} else if c := s[len(s)-1]; c >= 0x80 || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
		// A letter at the end: a unit prefix, checked before ParseFloat
		// so that "932m" costs no error value.
		if num, pre, ok := cutPrefix(s); ok {
			return parsePrefixed(num, pre)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// ParseFloat reports overflow as ±Inf with ErrRange.
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return parsedValue{}, errNotFinite
		}
		if !errors.Is(err, strconv.ErrRange) {
			if strings.IndexByte(s, ',') >= 0 {
				return parsedValue{}, errComma
			}
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

// ParseNumber reads a unitless number (a rate, a ratio, a count) as
// Prometheus templates print one — "15.2", "85%" (0.85), humanize's "932m"
// (0.932) and "1.5k" — with parseValue's rules; the enrichment's hints read
// their inputs with it, as the policies do.
func ParseNumber(s string) (float64, error) {
	p, err := parseValue(s)
	return p.v, err
}

// cutPrefix splits s into a number as "%.4g" prints it and the letters
// after it ("932m" → "932", "m"; "1e+06Y" → "1e+06", "Y"). ok is false when
// s is not such a number followed by letters ("NaN", "fast", "0x1p-2").
func cutPrefix(s string) (num, suffix string, ok bool) {
	i := len(s)
	for i > 0 {
		c := s[i-1]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			i--
			continue
		}
		if c >= 0x80 {
			// µ and μ are two bytes each; any other non-ASCII ends the
			// suffix (and makes the number part fail below).
			if r, size := utf8.DecodeLastRuneInString(s[:i]); r == 'µ' || r == 'μ' {
				i -= size
				continue
			}
		}
		break
	}
	num, suffix = s[:i], s[i:]
	return num, suffix, suffix != "" && isDecimal(num)
}

// isDecimal reports whether s is a decimal number as "%.4g" prints one: an
// optional sign, digits with at most one '.', and an optional exponent
// (e+06). No hex, no underscores, no Inf or NaN.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits, dot := 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			continue
		case c == '.' && !dot:
			dot = true
			continue
		}
		break
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// parsePrefixed reads num (isDecimal) scaled by the unit prefix pre.
func parsePrefixed(num, pre string) (parsedValue, error) {
	var u *unitPrefix
	var unit uint8
	for i := range unitPrefixes {
		if unitPrefixes[i].text == pre {
			u, unit = &unitPrefixes[i], uint8(i+1)
			break
		}
	}
	if u == nil {
		return parsedValue{}, suffixError{pre}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return parsedValue{}, errNotNumber // not reached: num is decimal
	}
	if u.div != 0 {
		v /= u.div
	} else {
		v *= u.mul
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return parsedValue{}, errNotFinite
	}
	return parsedValue{v: v, unit: unit}, nil
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

// flagWords are the words of a yes/no flag such as latency_above_slo, by
// their lower case: the yes words of a paging label (true, yes, on, 1) and
// their no words, with the short forms strconv.ParseBool and YAML know.
var flagWords = map[string]bool{
	"true": true, "t": true, "yes": true, "y": true, "on": true, "1": true, "enabled": true,
	"false": false, "f": false, "no": false, "n": false, "off": false, "0": false, "disabled": false,
}

// flagWordsText lists flagWords for reasons.
const flagWordsText = "yes: true, yes, y, on, 1, enabled; no: false, no, n, off, 0, disabled"

// parseFlag reads a yes/no flag such as latency_above_slo: a word of
// flagWords in any case, or a number that is 1 or 0 ("1.0", "0.0", "1e0").
// known is false for anything else ("maybe", "2", "NaN"), which reads as
// no; the caller names it in the reasons. An empty value is no.
func parseFlag(s string) (yes, known bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return false, true
	}
	if yes, ok := flagWords[s]; ok {
		return yes, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && (f == 0 || f == 1) {
		return f == 1, true
	}
	return false, false
}

// fmtNum formats a number for reasons: shortest exact form, at least one
// decimal ("16.0", "14.41"), at most 4 decimals for computed ratios — or 4
// significant digits for a number below 0.001, so that sub-millisecond
// latencies in seconds stay readable ("0.0000873 ÷ 0.000012", where 4
// decimals wrote "0.0001 ÷ 0.0" — an audit), up to 12 decimals.
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
	if keep := maxDecimals(b, dot); dot >= 0 && len(b)-dot-1 > keep {
		b = strconv.AppendFloat(buf[:0], v, 'f', keep, 64)
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

// maxDecimals is how many decimals fmtMin keeps of b, a number written in
// full with its dot at dot: 4, or 4 significant digits after the zeros
// that follow the dot (at most 12 decimals).
func maxDecimals(b []byte, dot int) int {
	if dot < 0 {
		return 4
	}
	zeros := 0
	for i := dot + 1; i < len(b) && b[i] == '0'; i++ {
		zeros++
	}
	belowOne := dot == 1 && b[0] == '0' || dot == 2 && b[0] == '-' && b[1] == '0'
	if !belowOne || zeros < 3 {
		return 4
	}
	return min(zeros+4, 12)
}

// fmtPercent formats a ratio as a percentage ("85.0%").
func fmtPercent(v float64) string { return fmtNum(v*100) + "%" }

// durationUnits are the units ParseDuration reads, in seconds: those of
// Prometheus durations (ms s m h d w y), of Go durations (ns us µs ms s m
// h), and the sub-second units humanizeDuration prints with a unit prefix
// of humanize (ps fs as zs ys).
var durationUnits = map[string]float64{
	"y": 365 * 24 * 3600, "w": 7 * 24 * 3600, "d": 24 * 3600, "h": 3600, "m": 60, "s": 1,
	"ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
	"ps": 1e-12, "fs": 1e-15, "as": 1e-18, "zs": 1e-21, "ys": 1e-24,
}

// ParseDuration reads a duration, in seconds, as Prometheus' humanizeDuration
// prints one — "1d 2h 3m 4s", "1m 30s", "1.5s", "250ms", "1.5us", "0s",
// "-1m 30s" — or as a Prometheus or Go duration is written: "1h30m",
// "1h0m0s", "90s", "5m" (minutes), "2w". Each part is a decimal number
// followed by its unit; spaces between parts are allowed. A plain number
// (no unit), NaN, an unknown unit ("5x", "1.5k") or anything else is an
// error. The enrichment's hints read their times with it, and the
// regression policy a value and baseline written as durations.
func ParseDuration(s string) (float64, error) {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	total, parts := 0.0, 0
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		k := j
		for k < len(s) && s[k] != ' ' && !(s[k] >= '0' && s[k] <= '9') && s[k] != '.' {
			k++
		}
		num, unit := s[i:j], s[j:k]
		mul, ok := durationUnits[unit]
		if !ok || !isDecimal(num) {
			return 0, errNotDuration
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, errNotDuration
		}
		total += v * mul
		parts++
		i = k
	}
	if parts == 0 {
		return 0, errNotDuration
	}
	if math.IsInf(total, 0) {
		return 0, errNotFinite
	}
	if neg {
		total = -total
	}
	return total, nil
}

// errNotDuration: a text that ParseDuration cannot read.
var errNotDuration = errors.New("not a duration")

// secondsOf reads a side of value ÷ baseline as seconds when the pair is
// written as durations: a duration (ParseDuration), or a plain number,
// which is seconds, Prometheus' base unit and what humanizeDuration reads.
func secondsOf(raw string) (float64, bool) {
	if d, err := ParseDuration(raw); err == nil {
		return d, true
	}
	p, err := parseValue(raw)
	return p.v, err == nil && !p.percent && p.unit == 0
}

// Times are two times read by ReadTimes.
type Times struct {
	// A and B are the two times, in seconds unless Relative.
	A, B float64
	// Relative is true when both were written with the same letter that
	// is a unit prefix of humanize and a duration unit ("164m" and "36m":
	// milli or minutes, "2y" and "1y"): A ÷ B is the same either way, but
	// not A and B themselves, which are humanize's reading.
	Relative bool
}

// ReadTimes reads two times that are compared with each other — a queue
// time beside a compute time, a prefill beside a decode time — by the
// rules of a value + baseline pair (regressionRatio): two numbers as
// Prometheus prints them are seconds ("2.9", humanize's "510m" is 0.51 s,
// "1.5k"); two durations ("1m 30s", "250ms", "1h30m"), or a duration
// beside a plain number (seconds), are read as durations ("5m" beside
// "90s" is minutes). When one side ends in m or y and the other is a plain
// number or ends in the other letter ("2.9" beside "510m": 0.51 s or 8.5
// minutes?), the readings disagree and the error says so; when both end in
// the same one, Times.Relative is set. A percentage is no time. The
// enrichment's hints read their times with it.
func ReadTimes(a, b string) (Times, error) {
	pa, errA := parseValue(a)
	pb, errB := parseValue(b)
	if errA != nil || errB != nil {
		sa, okA := secondsOf(a)
		sb, okB := secondsOf(b)
		switch {
		case okA && okB:
			return Times{A: sa, B: sb}, nil
		case !okA:
			return Times{}, fmt.Errorf("%q is not a time", strings.TrimSpace(a))
		default:
			return Times{}, fmt.Errorf("%q is not a time", strings.TrimSpace(b))
		}
	}
	switch {
	case pa.percent:
		return Times{}, fmt.Errorf("%q is a percentage, not a time", strings.TrimSpace(a))
	case pb.percent:
		return Times{}, fmt.Errorf("%q is a percentage, not a time", strings.TrimSpace(b))
	}
	if amb, ok := unitAmbiguity(pa, a, pb, b); ok {
		return Times{}, errors.New(amb)
	}
	return Times{A: pa.v, B: pb.v, Relative: pa.unit != 0 && pa.unit == pb.unit && durationUnit(pa.prefix())}, nil
}
