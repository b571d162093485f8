package enrich

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// maxCachedExprs bounds exprCache; past it, expressions are unescaped on
// every call as before.
const maxCachedExprs = 2048

// exprCache memoizes alert.GeneratorExpr for URLs whose expression needs
// unescaping (url.QueryUnescape allocates on every call, and Alertmanager
// resends the same alerts, with the same URLs, every group interval). Safe
// for concurrent use; a cached value is what alert.GeneratorExpr returns.
type exprCache struct {
	m sync.Map // generator URL → expression
	n atomic.Int32
}

func (c *exprCache) get(u string) string {
	if v, ok := c.m.Load(u); ok {
		return v.(string)
	}
	e := alert.GeneratorExpr(u)
	if strings.ContainsAny(u, "%+") { // unescaped (or undecodable): worth remembering
		if c.n.Load() < maxCachedExprs {
			if _, loaded := c.m.LoadOrStore(u, e); !loaded {
				c.n.Add(1)
			}
		}
	}
	return e
}

// exprFacts is what a scan of a PromQL expression found.
type exprFacts struct {
	// metrics are the metric names in order of appearance (at most
	// maxMetrics, duplicates removed); they are substrings of the expression.
	metrics  [maxMetrics]string
	nMetrics int
	// averages names what makes the expression an average ("avg(",
	// "avg_over_time(", "_sum/_count", "…_average_…", a duration counter
	// divided by a request count: durationCountAverage), "" when none. An
	// average on the threshold side of a comparison (after its operator:
	// `histogram_quantile(…) > avg_over_time(x[7d]) * 1.3`) or of a
	// quantile series (`avg_over_time(latency_p99_seconds[5m])`,
	// {quantile="0.99"}, a histogram's _bucket) is none: the alert is on
	// a percentile.
	averages string
	// inAbsent and outAbsent have bit k set when metrics[k] occurs inside
	// an absent( or absent_over_time( call, and outside one.
	inAbsent, outAbsent uint8
}

// absentOnly reports whether metrics[k] occurs only inside absent() or
// absent_over_time(): the expression asks whether its series exist, not
// what they measure.
func (f *exprFacts) absentOnly(k int) bool {
	return f.inAbsent&^f.outAbsent&(1<<k) != 0
}

// absent reports whether some metric occurs only inside absent() or
// absent_over_time(): the alert fires when series are missing.
func (f *exprFacts) absent() bool { return f.inAbsent&^f.outAbsent != 0 }

const maxMetrics = 8 // fits the bit sets of exprFacts

// promqlKeywords are identifiers that are not metric names: aggregation
// operators and modifiers (which may be followed by "by (…)" before their
// parenthesis), binary keywords and literals. Functions are recognised by the
// parenthesis that follows them.
var promqlKeywords = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true,
	"stddev": true, "stdvar": true, "topk": true, "bottomk": true, "quantile": true,
	"count_values": true, "limitk": true, "limit_ratio": true,
	"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "bool": true,
	"and": true, "or": true, "unless": true, "atan2": true,
	"offset": true, "inf": true, "nan": true, "start": true, "end": true,
}

// labelListKeywords are followed by a parenthesised list of label names.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true,
}

// noRHS is scanExpr's rhsDepth outside the threshold side of a comparison.
const noRHS = -1

// scanExpr extracts metric names from a PromQL expression with a small hand
// tokenizer: identifiers [a-zA-Z_:][a-zA-Z0-9_:]* that are not followed by
// "(" (functions), not keywords, not label names inside {…} or after
// by/without/on/ignoring, and not inside string literals or durations. A
// Prometheus 3 quoted metric name ({"my.metric", job="x"}) is recognised too.
// It records which metrics occur inside absent() or absent_over_time()
// (exprFacts.absentOnly). It never panics on garbage and does not allocate.
func scanExpr(expr string, f *exprFacts) {
	var ms metricScan
	var lower [32]byte
	// Parentheses are counted only inside the outermost absent( call
	// (inAbsent): depth is the number open since its own.
	inAbsent, openAbsent := false, false // openAbsent: the next '(' opens an absent( call
	depth := 0
	// paren is the number of parentheses open (ms.rhsDepth: metricScan).
	paren := 0
	ms.rhsDepth = noRHS
	n := len(expr)
	for i := 0; i < n; {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = scanBraces(expr, i, f, &ms, inAbsent)
		case c == '[':
			if j := strings.IndexByte(expr[i:], ']'); j >= 0 {
				i += j + 1
			} else {
				i = n
			}
		case c == '#': // comment to end of line
			if j := strings.IndexByte(expr[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = n
			}
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(expr[i+1])):
			// Number or duration: 5m, 1h30m, 0x1f, 1e-3, 2.5.
			i++
			for i < n && (isIdentChar(expr[i]) || expr[i] == '.' ||
				((expr[i] == '-' || expr[i] == '+') && (expr[i-1] == 'e' || expr[i-1] == 'E'))) {
				i++
			}
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(expr[j]) {
				j++
			}
			id := expr[i:j]
			k := j
			for k < n && isSpace(expr[k]) {
				k++
			}
			low := lowerInto(id, lower[:])
			switch {
			case labelListKeywords[string(low)]:
				// Skip the label list of by/without/on/ignoring/group_*.
				if k < n && expr[k] == '(' {
					if e, ok := labelListEnd(expr, k); ok {
						j = e
					} else {
						j = n
					}
				}
			case k < n && expr[k] == '(':
				// A function or aggregation call.
				openAbsent = !inAbsent && (string(low) == "absent" || string(low) == "absent_over_time")
				// The argument is scanned only for the two averages.
				if isAvg := string(low) == "avg" || string(low) == "avg_over_time"; isAvg && f.averages == "" && ms.rhsDepth == noRHS && !quantileSeries(callArg(expr, k)) {
					f.averages = string(low) + "("
				}
			case promqlKeywords[string(low)]:
				switch string(low) {
				case "avg":
					if f.averages == "" && ms.rhsDepth == noRHS && !quantileSeries(aggregationArg(expr, k)) {
						f.averages = "avg("
					}
				case "and", "or", "unless":
					if paren <= ms.rhsDepth {
						ms.rhsDepth = noRHS // a new operand, not the threshold
					}
					ms.durCounter, ms.divided = false, false
				}
			default:
				ms.see(f, id, inAbsent)
			}
			i = j
		default:
			switch {
			case c == '/':
				ms.divided = ms.durCounter
			case c == '(':
				paren++
			case c == ')':
				if paren--; paren < ms.rhsDepth {
					ms.rhsDepth = noRHS
				}
			case c == '>' || c == '<' || (c == '=' || c == '!') && i+1 < n && expr[i+1] == '=':
				// A comparison (>, >=, <, <=, ==, !=; =~ and !~ are
				// matchers, inside braces): its right side is the
				// threshold.
				if ms.rhsDepth == noRHS {
					ms.rhsDepth = paren
				}
			}
			if inAbsent || openAbsent {
				switch {
				case c == '(' && openAbsent:
					inAbsent, openAbsent, depth = true, false, 1
				case c == '(':
					depth++
				case c == ')' && inAbsent:
					if depth--; depth == 0 {
						inAbsent = false
					}
				}
			}
			i++
		}
	}
	if f.averages == "" {
		for a := 0; a < ms.nSum; a++ {
			for b := 0; b < ms.nCount; b++ {
				if ms.sumBase[a] == ms.countBase[b] {
					f.averages = "_sum/_count"
				}
			}
		}
	}
}

// metricScan is what scanExpr keeps of the metrics it read to tell an
// average from a percentile, for bare names and for those quoted in braces
// or named by __name__ alike (an audit: quoted _sum/_count ratios lost the
// hint).
type metricScan struct {
	sumBase, countBase [maxMetrics]string
	nSum, nCount       int
	// durCounter: a duration counter (Triton's
	// nv_inference_request_duration_us, the total time of all requests)
	// was read on the alert's side; divided is set by a "/" after it. A
	// request count read after both makes the expression a sum-over-count
	// average (durationCountAverage).
	durCounter, divided bool
	// rhsDepth is scanExpr's paren at the comparison operator whose right
	// side (the threshold) is being read, noRHS when none: an average
	// there is not what the alert is on.
	rhsDepth int
}

// see records the metric id read in the expression.
func (ms *metricScan) see(f *exprFacts, id string, inAbsent bool) {
	addMetric(f, id, inAbsent)
	if ms.rhsDepth != noRHS || quantileSeries(id) {
		return
	}
	if b, ok := strings.CutSuffix(id, "_sum"); ok && ms.nSum < maxMetrics {
		ms.sumBase[ms.nSum] = b
		ms.nSum++
	} else if b, ok := strings.CutSuffix(id, "_count"); ok && ms.nCount < maxMetrics {
		ms.countBase[ms.nCount] = b
		ms.nCount++
	}
	if f.averages == "" && (strings.Contains(id, "_average") || strings.Contains(id, "_avg_")) {
		f.averages = id
	}
	switch {
	case isDurationCounter(id):
		ms.durCounter, ms.divided = true, false
	case ms.durCounter && ms.divided && isRequestCount(id) && f.averages == "":
		f.averages = durationCountAverage
	}
}

// durationCountAverage is exprFacts.averages of a duration counter divided
// by a request count.
const durationCountAverage = "total duration / request count"

// isDurationCounter reports whether metric m is a counter of the total
// time spent (Triton's nv_inference_request_duration_us and …_queue_…,
// any …_duration_… that is not a histogram's or summary's series, which
// _sum/_count and quantiles cover).
func isDurationCounter(m string) bool {
	if !strings.Contains(m, "_duration") {
		return false
	}
	for _, suf := range [...]string{"_bucket", "_sum", "_count"} {
		if strings.HasSuffix(m, suf) {
			return false
		}
	}
	return true
}

// isRequestCount reports whether metric m counts requests (Triton's
// nv_inference_request_success, nv_inference_count, an …_requests_total):
// a count, not a time or a size, so a duration divided by it is a mean.
func isRequestCount(m string) bool {
	if strings.Contains(m, "_duration") || strings.Contains(m, "_seconds") || strings.Contains(m, "_bytes") ||
		strings.HasSuffix(m, "_us") || strings.HasSuffix(m, "_ms") {
		return false
	}
	return strings.Contains(m, "success") || strings.Contains(m, "count") || strings.Contains(m, "request")
}

// callArg returns the argument list of the call whose parenthesis is at
// expr[k] (to the end of expr when it is not closed).
func callArg(expr string, k int) string {
	depth := 0
	for i := k; i < len(expr); i++ {
		switch expr[i] {
		case '"', '\'', '`':
			i = skipString(expr, i) - 1
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return expr[k+1 : i]
			}
		}
	}
	if k+1 > len(expr) {
		return ""
	}
	return expr[k+1:]
}

// labelListEnd returns the index after the ')' that closes the label list
// opened at expr[k] == '(' (by, without, on, ignoring, group_*); false when
// none does. Quoted names are skipped: Prometheus 3's UTF-8 names may hold
// a ')' (an audit: `by ("a)b", le)` hid the rest of the expression).
func labelListEnd(expr string, k int) (int, bool) {
	for i := k + 1; i < len(expr); {
		switch expr[i] {
		case ')':
			return i + 1, true
		case '"', '\'', '`':
			i = skipString(expr, i)
		default:
			i++
		}
	}
	return len(expr), false
}

// aggregationArg returns the argument of an aggregation whose name ends
// before expr[k]: after an optional by (…) or without (…) clause.
func aggregationArg(expr string, k int) string {
	for k < len(expr) && isSpace(expr[k]) {
		k++
	}
	for _, kw := range [...]string{"by", "without"} {
		if len(expr) >= k+len(kw) && strings.EqualFold(expr[k:k+len(kw)], kw) {
			if p := strings.IndexByte(expr[k:], '('); p >= 0 {
				if e, ok := labelListEnd(expr, k+p); ok {
					k = e
				}
			}
			for k < len(expr) && isSpace(expr[k]) {
				k++
			}
			break
		}
	}
	if k < len(expr) && expr[k] == '(' {
		return callArg(expr, k)
	}
	return ""
}

// quantileSeries reports whether s (a metric name or a call's argument)
// names a quantile already: a word quantile or percentile (a quantile
// label, histogram_quantile), a percentile word such as p99, p95 or p999
// (latency_p99_seconds, api:p95:baseline), or a histogram's _bucket
// series. Words are split at anything but letters and digits. It does not
// allocate.
func quantileSeries(s string) bool {
	for i := 0; i < len(s); {
		for i < len(s) && !isAlnum(s[i]) {
			i++
		}
		j := i
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		if w := s[i:j]; w != "" {
			switch {
			case strings.EqualFold(w, "quantile"), strings.EqualFold(w, "quantiles"),
				strings.EqualFold(w, "percentile"), strings.EqualFold(w, "percentiles"):
				return true
			case strings.EqualFold(w, "bucket") && (j == len(s) || s[j] != '_' && s[j] != ':'):
				// A histogram's _bucket series ends its name; a storage
				// bucket in the middle of one (gcs_bucket_bytes) is no quantile.
				return true
			case len(w) >= 3 && len(w) <= 5 && (w[0] == 'p' || w[0] == 'P') && allDigits(w[1:]):
				return true
			}
		}
		i = j
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// scanBraces reads a {…} selector starting at expr[i] == '{' and returns
// the index after it. Label names are skipped; a quoted string that is
// followed by ',' or '}' (not by a matcher operator) is a metric name.
func scanBraces(expr string, i int, f *exprFacts, ms *metricScan, inAbsent bool) int {
	n := len(expr)
	i++
	for i < n {
		c := expr[i]
		switch {
		case c == '}':
			return i + 1
		case c == '"' || c == '\'' || c == '`':
			end := skipString(expr, i)
			k := end
			for k < n && isSpace(expr[k]) {
				k++
			}
			if end-i >= 2 && expr[i+1:end-1] == "__name__" {
				i = nameMatcher(expr, k, f, ms, inAbsent) // {"__name__"="x"}
				continue
			}
			if k < n && (expr[k] == ',' || expr[k] == '}') && end-i >= 2 {
				// Preceded by an operator? Then it is a label value.
				p := i - 1
				for p >= 0 && isSpace(expr[p]) {
					p--
				}
				if p >= 0 && (expr[p] == '{' || expr[p] == ',') {
					ms.see(f, expr[i+1:end-1], inAbsent)
				}
			}
			i = end
		case strings.HasPrefix(expr[i:], "__name__") && (i+8 >= n || !isIdentChar(expr[i+8])) && !isIdentChar(expr[i-1]):
			k := i + 8
			for k < n && isSpace(expr[k]) {
				k++
			}
			i = nameMatcher(expr, k, f, ms, inAbsent) // {__name__="x"}, {__name__=~"a|b"}
		default:
			i++
		}
	}
	return n
}

// nameMatcher reads the matcher of the metric name whose operator starts at
// expr[k] (`__name__="x"`, Prometheus 3's way to name a UTF-8 metric too, and
// `__name__=~"a|b"`) and returns the index after its value: an equality's
// value is a metric name, and so is each alternative of a regex's made of
// literal names (a regex of metacharacters names none). A negative matcher
// names none either. Without a quoted value it returns k.
func nameMatcher(expr string, k int, f *exprFacts, ms *metricScan, inAbsent bool) int {
	n := len(expr)
	regex := false
	switch {
	case strings.HasPrefix(expr[k:], "=~"):
		regex, k = true, k+2
	case strings.HasPrefix(expr[k:], "!=") || strings.HasPrefix(expr[k:], "!~"):
		k += 2
		for k < n && isSpace(expr[k]) {
			k++
		}
		if k < n && (expr[k] == '"' || expr[k] == '\'' || expr[k] == '`') {
			return skipString(expr, k)
		}
		return k
	case k < n && expr[k] == '=':
		k++
	default:
		return k
	}
	for k < n && isSpace(expr[k]) {
		k++
	}
	if k >= n || (expr[k] != '"' && expr[k] != '\'' && expr[k] != '`') {
		return k
	}
	end := skipString(expr, k)
	if end-k < 2 {
		return end
	}
	v := expr[k+1 : end-1]
	if !regex {
		ms.see(f, v, inAbsent)
		return end
	}
	for alt := range strings.SplitSeq(v, "|") {
		if alt != "" && !strings.ContainsAny(alt, `.*+?()[]{}^$\`) {
			ms.see(f, alt, inAbsent)
		}
	}
	return end
}

// skipString returns the index after the string literal starting at
// expr[i]; backslash escapes are honoured except in raw `…` strings.
func skipString(expr string, i int) int {
	q := expr[i]
	n := len(expr)
	for j := i + 1; j < n; j++ {
		switch expr[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			return j + 1
		}
	}
	return n
}

// addMetric records an occurrence of the metric name, inside an absent()
// call or not.
func addMetric(f *exprFacts, name string, inAbsent bool) {
	if name == "" {
		return
	}
	k := 0
	for k < f.nMetrics && f.metrics[k] != name {
		k++
	}
	if k == f.nMetrics {
		if k == maxMetrics {
			return
		}
		f.metrics[k] = name
		f.nMetrics++
	}
	if inAbsent {
		f.inAbsent |= 1 << k
	} else {
		f.outAbsent |= 1 << k
	}
}

// lowerInto lowers s into buf (truncating to len(buf)) without allocating.
func lowerInto(s string, buf []byte) []byte {
	if len(s) > len(buf) {
		s = s[:len(buf)]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(s)]
}

func isIdentStart(c byte) bool { return isLower(c) || isUpper(c) || c == '_' || c == ':' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }
func isSpace(c byte) bool      { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// baseName strips the series suffixes of histograms, summaries and counters
// so that a family is matched by its name: _bucket, _sum, _count, _total.
func baseName(m string) string {
	for _, suf := range [...]string{"_bucket", "_sum", "_count", "_total"} {
		if b, ok := strings.CutSuffix(m, suf); ok && b != "" {
			return b
		}
	}
	return m
}

// selectorJobs calls fn with the value of every job matcher of a selector
// of the metric name in expr (up{job="x"}, absent(up{job=~"snmp.*"}),
// absent(vllm:num_requests_running{job="vllm"})). It does not allocate.
func selectorJobs(expr, name string, fn func(string)) {
	for i := 0; i+len(name) < len(expr); i++ {
		if !strings.HasPrefix(expr[i:], name) || (i > 0 && isIdentChar(expr[i-1])) {
			continue
		}
		j := i + len(name)
		if i > 0 && (expr[i-1] == '"' || expr[i-1] == '\'') && expr[j] == expr[i-1] {
			// Quoted inside the braces, as Prometheus 3 writes a metric's
			// name ({"up", job="x"}, {__name__="up", job="x"}): the
			// selector is the braces around it (an audit: its job was
			// lost).
			p := i - 2
			for p >= 0 && isSpace(expr[p]) {
				p--
			}
			b := strings.LastIndexByte(expr[:i], '{')
			if b < 0 || strings.IndexByte(expr[b:i], '}') >= 0 || p < 0 ||
				!(expr[p] == '{' || expr[p] == ',' || expr[p] == '=' && strings.HasSuffix(strings.TrimRight(expr[:p], " \t\n\r\"'"), "__name__")) {
				continue // a label's value, not the metric's name
			}
			j = b
		}
		for j < len(expr) && isSpace(expr[j]) {
			j++
		}
		if j >= len(expr) || expr[j] != '{' {
			continue
		}
		end := strings.IndexByte(expr[j:], '}')
		if end < 0 {
			return
		}
		sel := expr[j+1 : j+end]
		for sel != "" {
			var m string
			m, sel, _ = strings.Cut(sel, ",")
			m = strings.TrimSpace(m)
			if !strings.HasPrefix(m, "job") {
				continue
			}
			rest := strings.TrimLeft(m[3:], " =~!")
			if len(rest) >= 2 && (rest[0] == '"' || rest[0] == '\'') {
				fn(strings.Trim(rest, "\"'"))
			}
		}
		i = j + end
	}
}
