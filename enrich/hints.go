package enrich

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The annotations (or labels) that make hints specific. Durations are in
// seconds (a Go duration such as "250ms" works too); ratios are 0–1 or a
// percentage ("42%").
const (
	AnnQueueTime       = "queue_time_seconds"
	AnnComputeTime     = "compute_time_seconds"
	AnnLatency         = "latency_seconds"
	AnnPrefill         = "prefill_seconds"
	AnnDecode          = "decode_seconds"
	AnnPrefixHit       = "prefix_cache_hit_ratio"
	AnnPrefixHitBase   = "baseline_prefix_cache_hit_ratio"
	AnnCPUReady        = "cpu_ready_ratio"
	AnnCoStop          = "co_stop_ratio"
	AnnNUMAMiss        = "numa_miss_ratio"
	AnnConsumerLag     = "consumer_lag"
	AnnSpillBytes      = "spill_bytes"
	AnnOSNRMargin      = "osnr_margin_db"
	AnnPreFECBER       = "pre_fec_ber"
	AnnAuxLoss         = "aux_loss"
	AnnRouterZLoss     = "router_z_loss"
	AnnAuxLossBase     = "baseline_aux_loss"
	AnnMicroburstDepth = "microburst_depth_bytes"
	AnnECNMarkRatio    = "ecn_mark_ratio"
)

// kvOccupancyText is the kv-cache hint of an alert on the cache's
// occupancy (COCC: vLLM's KV cache usage, SGLang's token usage) rather than
// its hit rate: a nearly full KV cache preempts running requests before the
// hit rate says anything.
const kvOccupancyText = "The KV cache is nearly full: check preemptions (running requests recomputed or swapped out, e.g. vllm:num_preemptions) and whether the prefix/KV cache hit rate is falling — a full cache evicts reusable prefixes — both raise TTFT; more KV memory per replica (gpu_memory_utilization), fewer concurrent sequences or more replicas relieve it."

// burnWindows are the burn_rate_<window> keys read for burn-exemplars, the
// shortest page window first.
var burnWindows = [...]string{"burn_rate_1h", "burn_rate_5m", "burn_rate_6h", "burn_rate_30m", "burn_rate_1d", "burn_rate_2h", "burn_rate_3d"}

// Rules of thumb quoted by the specific hints.
const (
	cpuReadyLimit   = 0.05 // VMware guidance: > 5% ready per vCPU hurts latency
	osnrMarginLimit = 3.0  // dB of margin below which a span needs attention
	budgetPeriod    = 30 * 24 * time.Hour
)

// hints builds the hints of an alert: the ones its sector/KPIs make relevant
// (sec nil: none), each made specific when the alert carries the numbers,
// plus specific hints for any numbers it carries, plus
// percentiles-not-averages for latency alerts on an average.
//
// A hint is relevant through a KPI of the alert that lists it. An alert of
// a known sector without KPI gets only what is true of it: the sector-level
// hints (sectorDef.Hints), and the hints of the sector's KPIs of its
// incident class that diagnose that class (hintClasses) — a TLS certificate
// expiring on a load balancer gets no queue-time or KV-cache hint.
func (c *Classifier) hints(a *alert.Alert, s *scratch, sec *sectorDef, kpis []alert.KPI, class string) []alert.Hint {
	var relevant [numHints]bool
	latency := class == ClassLatency
	// kv-cache made relevant by cache occupancy (COCC) alone, or also by
	// another KPI (a hit rate, an eviction rate, TTFT).
	var kvByOccupancy, kvByOther bool
	if sec != nil {
		// Read once, not for each cache KPI that lists kv-cache.
		noPromptCache := sec.ID == secPStorage && len(kpis) > 0 && !promptCacheEvidence(s)
		for _, k := range kpis {
			for _, d := range sec.KPIs {
				if d.ID != k.ID {
					continue
				}
				latency = latency || d.Class == ClassLatency
				for _, h := range d.Hints {
					switch {
					case h == HintMicroburst && d.ID == "LOSS" && !congestionLoss(s):
						// Error counters (CRC, symbol errors) are a bad
						// cable, optic or port, not congestion.
					case h == HintKVCache && noPromptCache:
						// A Redis or Memcached eviction is not a prefix
						// cache recomputing prompts.
					default:
						relevant[hintIndex(h)] = true
						if h == HintKVCache {
							kvByOccupancy = kvByOccupancy || d.ID == "COCC"
							kvByOther = kvByOther || d.ID != "COCC"
						}
					}
				}
			}
		}
		if len(kpis) == 0 {
			for _, h := range sec.Hints {
				relevant[hintIndex(h)] = true
			}
			for _, d := range sec.KPIs {
				if d.Class != class {
					continue
				}
				for _, h := range d.Hints {
					if i := hintIndex(h); slices.Contains(hintClasses[i], class) {
						relevant[i] = true
					}
				}
			}
		}
	}
	specific := specificHints(a)
	if s.facts.averages != "" && latency {
		relevant[9] = true
	}
	n := 0
	for i := range HintIDs {
		if !c.hintOff[i] && (relevant[i] || specific[i] != specificHint{}) {
			n++
		}
	}
	out := make([]alert.Hint, 0, n)
	for i, id := range HintIDs {
		if c.hintOff[i] {
			continue
		}
		switch {
		case specific[i].text != "":
			out = append(out, alert.Hint{ID: id, Text: specific[i].text, Specific: true})
		case relevant[i] || specific[i].note != "":
			text := c.hintText[i]
			if i == 9 && text == defaultHintTexts[HintPercentiles] {
				avg := s.facts.averages
				if strings.HasSuffix(avg, "(") {
					avg += ")"
				}
				text = "The expression averages (" + avg + "): " + text[len("This alert is on an average: "):]
			}
			if id == HintKVCache && text == defaultHintTexts[HintKVCache] && kvByOccupancy && !kvByOther {
				text = kvOccupancyText
			}
			if note := specific[i].note; note != "" {
				text += " (" + note + ")"
			}
			out = append(out, alert.Hint{ID: id, Text: text})
		}
	}
	return out
}

// congestionLoss reports whether the packet loss (LOSS) of the alert is
// read from anything but error counters (family.Corrupt): discards, drops,
// retransmits, a word or a label. Loss read only from frames received or
// sent with errors is a bad cable, optic or port, which microburst depth
// and ECN/PFC counters do not explain.
func congestionLoss(s *scratch) bool {
	for i := 0; i < s.n; i++ {
		if e := &s.ev[i]; e.weight > 0 && e.tgt.kpi == "LOSS" && !e.tgt.corrupt {
			return true
		}
	}
	return false
}

// promptCacheEvidence reports whether something in the alert says its
// cache serves an LLM: a sector or kpi label or a rule (the operator says
// so), or a counted signal of GPU serving, prompt-cache compute or
// prompt-cache storage that is neither a generic word ("evictions") nor a
// general-purpose store's (Redis, Memcached: family.Store, word.Store) —
// a vLLM or SGLang cache metric, LMCache, "KV cache". Without it, a cache
// KPI of prompt-cache storage does not bring the kv-cache hint, whose
// text is about prefix-cache recompute and TTFT.
func promptCacheEvidence(s *scratch) bool {
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if e.weight == 0 || e.kind == kindContext {
			continue
		}
		switch e.kind {
		case kindSectorLabel, kindKPILabel, kindRule:
			return true
		}
		if e.tgt.generic || e.tgt.store || e.tgt.sector < 0 {
			continue
		}
		switch sectors[e.tgt.sector].ID {
		case secGPU, secPCompute, secPStorage:
			return true
		}
	}
	return false
}

// specificHint is what a specific hint made of the alert's numbers: its
// text, or a note saying why numbers the alert carries give none (then
// the hint's generic text is attached with the note), or both empty.
type specificHint struct{ text, note string }

// specificHintFuncs compute the specific hints, in HintIDs order. They
// read the alert only through number, ratio and times, by the keys
// isHintKey knows.
var specificHintFuncs = [...]func(*alert.Alert) specificHint{
	queueTimeHint, prefillDecodeHint, textOnly(kvCacheHint), textOnly(moeRouterHint), textOnly(cpuReadyHint),
	microburstHint, opticalHint, spillLagHint, textOnly(burnHint),
}

// textOnly adapts a specific hint that makes no notes.
func textOnly(f func(*alert.Alert) string) func(*alert.Alert) specificHint {
	return func(a *alert.Alert) specificHint { return specificHint{text: f(a)} }
}

// specificHints computes the specific hints of a. Most alerts carry none
// of their keys; for those it returns at once what the hints give an alert
// without them (computed once, at start-up), instead of some forty map
// look-ups that all miss.
func specificHints(a *alert.Alert) [numHints]specificHint {
	if !carriesHintKey(a) {
		return noSpecificHints
	}
	return computeSpecificHints(a)
}

func computeSpecificHints(a *alert.Alert) [numHints]specificHint {
	var out [numHints]specificHint
	for i, f := range specificHintFuncs {
		out[i] = f(a)
	}
	return out
}

var noSpecificHints = computeSpecificHints(&alert.Alert{})

// carriesHintKey reports whether an annotation or label of a is read by
// a specific hint.
func carriesHintKey(a *alert.Alert) bool {
	for k := range a.Annotations {
		if isHintKey(k) {
			return true
		}
	}
	for k := range a.Labels {
		if isHintKey(k) {
			return true
		}
	}
	return false
}

// isHintKey reports whether the specific hints read key (a string switch:
// no hashing, no map).
func isHintKey(key string) bool {
	switch key {
	case AnnQueueTime, AnnComputeTime, AnnLatency, AnnPrefill, AnnDecode, AnnPrefixHit, AnnPrefixHitBase,
		AnnCPUReady, AnnCoStop, AnnNUMAMiss, AnnConsumerLag, AnnSpillBytes, AnnOSNRMargin, AnnPreFECBER,
		AnnAuxLoss, AnnRouterZLoss, AnnAuxLossBase, AnnMicroburstDepth, AnnECNMarkRatio,
		"burn_rate_1h", "burn_rate_5m", "burn_rate_6h", "burn_rate_30m", "burn_rate_1d", "burn_rate_2h", "burn_rate_3d":
		return true
	}
	return false
}

func hintIndex(id string) int {
	for i, h := range HintIDs {
		if h == id {
			return i
		}
	}
	panic("enrich: unknown hint id in catalog: " + id)
}

// value is the annotation, or label, key of the alert.
func value(a *alert.Alert, key string) (string, bool) {
	v, ok := a.Annotations[key]
	if !ok {
		v, ok = a.Labels[key]
	}
	return v, ok
}

// number reads a unitless numeric annotation, or label, of the alert (a
// rate, a ratio, a count; bytes and dB go through bytesOf and decibels)
// as the policies read theirs
// (policies.ParseNumber): "15.2", "85%", humanize's "500m" (0.5, not 500
// minutes) and "1.5k".
func number(a *alert.Alert, key string) (float64, bool) {
	v, ok := value(a, key)
	if !ok {
		return 0, false
	}
	f, err := policies.ParseNumber(v)
	return f, err == nil
}

// times reads two times of the alert that are compared with each other
// (queue and compute time, prefill and decode) as policies.ReadTimes reads
// them: numbers are seconds ("0.35", humanize's "510m" is 0.51 s), and so
// are durations ("350ms", "1h30m", humanizeDuration's "1m 30s"), "2m"
// beside another duration being minutes. ok is false when either is
// missing. A pair with no one reading ("2.9" beside "510m": milli or
// minutes?), a time that is no time, or a negative one gives a note
// saying why instead; t.Relative says the two are known only relative to
// each other ("164m" beside "36m").
func times(a *alert.Alert, k1, k2 string) (t policies.Times, note string, ok bool) {
	v1, ok1 := value(a, k1)
	v2, ok2 := value(a, k2)
	if !ok1 || !ok2 {
		return policies.Times{}, "", false
	}
	pair := k1 + " " + strconv.Quote(strings.TrimSpace(v1)) + " and " + k2 + " " + strconv.Quote(strings.TrimSpace(v2))
	t, err := policies.ReadTimes(v1, v2)
	switch {
	case err != nil:
		return t, pair + " give no split: " + err.Error() + "; write both in seconds", false
	case t.A < 0 || t.B < 0:
		return t, pair + " give no split: a time is never negative", false
	}
	return t, "", true
}

// timeText renders a time of a pair read by times: in seconds, or as
// written when the pair is only relative.
func timeText(a *alert.Alert, key string, v float64, relative bool) string {
	if relative {
		raw, _ := value(a, key)
		return strings.TrimSpace(raw)
	}
	return seconds(v)
}

// ratio reads a ratio in [0,1]; values in (1,100] are taken as percents.
func ratio(a *alert.Alert, key string) (float64, bool) {
	f, ok := number(a, key)
	if !ok || f < 0 || f > 100 {
		return 0, false
	}
	if f > 1 {
		f /= 100
	}
	return f, true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// relativeNote ends a queue-time or prefill-decode text whose times are
// known only relative to each other.
const relativeNote = ", as written: milli or minutes, the share is the same either way"

func queueTimeHint(a *alert.Alert) specificHint {
	other := AnnComputeTime
	if _, ok := value(a, AnnComputeTime); !ok {
		other = AnnLatency
	}
	t, note, ok := times(a, AnnQueueTime, other)
	if !ok {
		return specificHint{note: note}
	}
	q, comp, total := t.A, t.B, t.A+t.B
	if other == AnnLatency {
		if t.B < q {
			return specificHint{note: AnnQueueTime + " exceeds " + AnnLatency + ": no split"}
		}
		comp, total = t.B-q, t.B
	}
	if total <= 0 {
		return specificHint{}
	}
	share := q / total
	var where string
	switch {
	case t.Relative && other == AnnComputeTime && share >= 0.5:
		where = timeText(a, AnnQueueTime, q, true) + " queued, " + timeText(a, other, comp, true) + " computing" + relativeNote
	case t.Relative && other == AnnComputeTime:
		where = timeText(a, other, comp, true) + " computing, " + timeText(a, AnnQueueTime, q, true) + " queued" + relativeNote
	case t.Relative:
		where = timeText(a, AnnQueueTime, q, true) + " queued of " + timeText(a, other, total, true) + relativeNote
	case share >= 0.5:
		where = seconds(q) + " queued of " + seconds(total)
	default:
		where = seconds(comp) + " computing of " + seconds(total) + ", " + seconds(q) + " queued"
	}
	if share >= 0.5 {
		return specificHint{text: fmt.Sprintf("queue time is %.0f%% of latency (%s): saturation, not slow compute — scale out or shed load",
			share*100, where)}
	}
	return specificHint{text: fmt.Sprintf("compute time is %.0f%% of latency (%s): the work itself got slower, not saturation — profile the model or backend; scaling out will not help",
		(1-share)*100, where)}
}

func prefillDecodeHint(a *alert.Alert) specificHint {
	t, note, ok := times(a, AnnPrefill, AnnDecode)
	if !ok {
		return specificHint{note: note}
	}
	p, d := t.A, t.B
	if p+d <= 0 {
		return specificHint{}
	}
	pt, dt, rel := timeText(a, AnnPrefill, p, t.Relative), timeText(a, AnnDecode, d, t.Relative), ""
	if t.Relative {
		rel = relativeNote
	}
	share := p / (p + d)
	if share >= 0.5 {
		return specificHint{text: fmt.Sprintf("prefill is %.0f%% of request time (%s prefill vs %s decode%s): prompt processing is the bottleneck — check prompt lengths, prefix-cache hits and chunked prefill",
			share*100, pt, dt, rel)}
	}
	return specificHint{text: fmt.Sprintf("decode is %.0f%% of request time (%s decode vs %s prefill%s): token generation is the bottleneck — check batch size, KV-cache pressure and output lengths",
		(1-share)*100, dt, pt, rel)}
}

func kvCacheHint(a *alert.Alert) string {
	h, ok := ratio(a, AnnPrefixHit)
	if !ok {
		return ""
	}
	if b, ok := ratio(a, AnnPrefixHitBase); ok {
		if h < b {
			return fmt.Sprintf("prefix cache hit ratio fell to %.0f%% from a %.0f%% baseline (%.0f points): avoidable recompute is inflating TTFT — check cache-aware routing, evictions and prompt-template changes",
				h*100, b*100, (h-b)*100)
		}
		return fmt.Sprintf("prefix cache hit ratio is %.0f%%, at or above its %.0f%% baseline: the cache is not the cause — look at queueing and prefill",
			h*100, b*100)
	}
	if h < 0.5 {
		return fmt.Sprintf("prefix cache hit ratio is %.0f%%: most prompt tokens are recomputed — check cache-aware routing, cache size and evictions", h*100)
	}
	return fmt.Sprintf("prefix cache hit ratio is %.0f%%: caching works; look at queueing and decode for the latency", h*100)
}

func moeRouterHint(a *alert.Alert) string {
	aux, okA := number(a, AnnAuxLoss)
	z, okZ := number(a, AnnRouterZLoss)
	if !okA && !okZ {
		return ""
	}
	var b strings.Builder
	if okA {
		fmt.Fprintf(&b, "auxiliary load-balancing loss %.4g", aux)
		if base, ok := number(a, AnnAuxLossBase); ok && base > 0 {
			fmt.Fprintf(&b, " (%.1f× its %.4g baseline)", aux/base, base)
		}
	}
	if okZ {
		if okA {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "router z-loss %.4g", z)
	}
	b.WriteString(": experts are unevenly loaded or routing is unstable — compare per-layer expert load and token-drop rate, and consider the load-balancing coefficient or capacity factor")
	return b.String()
}

func cpuReadyHint(a *alert.Alert) string {
	r, ok := ratio(a, AnnCPUReady)
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CPU ready is %.1f%%", r*100)
	if cs, ok := ratio(a, AnnCoStop); ok {
		fmt.Fprintf(&b, ", co-stop %.1f%%", cs*100)
	}
	if nm, ok := ratio(a, AnnNUMAMiss); ok {
		fmt.Fprintf(&b, ", NUMA miss %.1f%%", nm*100)
	}
	if r > cpuReadyLimit {
		fmt.Fprintf(&b, " (above the %.0f%% rule of thumb): vCPUs wait for physical cores, so the latency comes from the hypervisor — reduce overcommit, pin vCPUs or raise latency sensitivity", cpuReadyLimit*100)
	} else {
		fmt.Fprintf(&b, " (below the %.0f%% rule of thumb): vCPU scheduling is not the cause — check NUMA locality and co-stop", cpuReadyLimit*100)
	}
	return b.String()
}

// bytesOf reads a size in bytes: a number as number reads it ("1258291",
// humanize's "1.2M", humanize1024's "1.2Mi"), or one followed by B, with
// or without a space ("1.2 MiB", "1.2MB", "512 KiB", "1.5 kB", "300 B";
// "KB" is 1000 B, as "kB"). present is true when the alert carries key,
// and ok when its value is such a size, not negative.
func bytesOf(a *alert.Alert, key string) (b float64, present, ok bool) {
	v, present := value(a, key)
	if !present {
		return 0, false, false
	}
	s := strings.TrimSpace(v)
	s = strings.TrimSpace(strings.TrimSuffix(s, "B"))
	i := len(s)
	for i > 0 && (s[i-1] >= 'a' && s[i-1] <= 'z' || s[i-1] >= 'A' && s[i-1] <= 'Z') {
		i--
	}
	num, pre := strings.TrimSpace(s[:i]), s[i:]
	if pre == "K" {
		pre = "k"
	}
	f, err := policies.ParseNumber(num + pre)
	return f, true, err == nil && f >= 0
}

// decibels reads a value in dB: a number as number reads it, with or
// without a "dB" after it ("1.5", "1.5 dB", "-0.5dB").
func decibels(a *alert.Alert, key string) (db float64, present, ok bool) {
	v, present := value(a, key)
	if !present {
		return 0, false, false
	}
	s := strings.TrimSpace(v)
	if len(s) >= 2 && strings.EqualFold(s[len(s)-2:], "db") {
		s = s[:len(s)-2]
	}
	f, err := policies.ParseNumber(s)
	return f, true, err == nil
}

// notUnderstood is the note of a value a specific hint could not read.
func notUnderstood(a *alert.Alert, key, want string) string {
	v, _ := value(a, key)
	return key + " " + strconv.Quote(strings.TrimSpace(v)) + " not understood: want " + want
}

// withNote is text with notes added: in parentheses after it when there is
// a text, else as the note of the generic text.
func withNote(text string, notes []string) specificHint {
	if len(notes) == 0 {
		return specificHint{text: text}
	}
	note := strings.Join(notes, "; ")
	if text == "" {
		return specificHint{note: note}
	}
	return specificHint{text: text + " (" + note + ")"}
}

func microburstHint(a *alert.Alert) specificHint {
	d, presentD, okD := bytesOf(a, AnnMicroburstDepth)
	e, okE := ratio(a, AnnECNMarkRatio)
	var notes []string
	if presentD && !okD {
		notes = append(notes, notUnderstood(a, AnnMicroburstDepth, "bytes, such as 1258291, 1.2Mi or 1.2 MiB"))
	}
	if !okD && !okE {
		return withNote("", notes)
	}
	var b strings.Builder
	if okD {
		fmt.Fprintf(&b, "microburst depth %s", bytesIEC(d))
	}
	if okE {
		if okD {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "ECN marks on %.2f%% of packets", e*100)
	}
	b.WriteString(": queues fill in bursts that average bandwidth hides — check switch buffer occupancy and PFC pauses on the path")
	return withNote(b.String(), notes)
}

// opticalHint reads the OSNR margin (dB above the receiver's required
// OSNR) and the pre-FEC BER. A margin at or below 0 is exhausted: the
// receiver is at the edge of what FEC corrects, failing now rather than
// degrading.
func opticalHint(a *alert.Alert) specificHint {
	m, presentM, okM := decibels(a, AnnOSNRMargin)
	ber, okB := number(a, AnnPreFECBER)
	var notes []string
	if presentM && !okM {
		notes = append(notes, notUnderstood(a, AnnOSNRMargin, "dB, such as 1.5 or 1.5 dB"))
	}
	if !okM && !okB {
		return withNote("", notes)
	}
	var b strings.Builder
	if okM {
		fmt.Fprintf(&b, "OSNR margin is %.1f dB", m)
	}
	if okB {
		if okM {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "pre-FEC BER %.1e", ber)
	}
	switch {
	case okM && m <= 0:
		b.WriteString(" (margin exhausted): the span is failing now, at the edge of what FEC corrects — check amplifiers, connectors and dispersion now, and move traffic off the span")
	case okM && m < osnrMarginLimit:
		fmt.Fprintf(&b, " (below %.0f dB): the span is degrading before it fails — check amplifiers, connectors and dispersion, and plan maintenance before FEC runs out", osnrMarginLimit)
	default:
		b.WriteString(": watch the trend of OSNR, CD and PMD — optical health degrades long before the link fails")
	}
	return withNote(b.String(), notes)
}

// spillLagHint reads consumer lag and spill bytes. A negative lag is
// unknown, not a backlog (kafka_exporter and Burrow give -1 for a group
// with no committed offset); the data path backs up only when the lag or
// the spill is above 0.
func spillLagHint(a *alert.Alert) specificHint {
	lag, okL := number(a, AnnConsumerLag)
	sp, presentS, okS := bytesOf(a, AnnSpillBytes)
	var notes []string
	if presentS && !okS {
		notes = append(notes, notUnderstood(a, AnnSpillBytes, "bytes, such as 3650722201, 3.4Gi or 3.4 GiB"))
	}
	if !okL && !okS {
		return withNote("", notes)
	}
	var parts []string
	backing, unknown := false, false
	switch {
	case !okL:
	case lag < 0:
		unknown = true
		parts = append(parts, "consumer lag is unknown ("+count(lag)+": no committed offset to measure it from)")
	case lag == 0:
		parts = append(parts, "no consumer lag")
	default:
		backing = true
		parts = append(parts, "consumer lag is "+count(lag)+" messages")
	}
	switch {
	case !okS:
	case sp == 0:
		parts = append(parts, "nothing spilled to disk")
	default:
		backing = true
		parts = append(parts, bytesIEC(sp)+" spilled to disk")
	}
	text := strings.Join(parts, " and ")
	switch {
	case backing:
		text += ": the data path is backing up — check partition/task skew and consumer throughput before adding consumers"
	case unknown:
		text += ": lag is not measured, so it says nothing of backpressure — check that the consumer group commits offsets"
	default:
		text += ": no backpressure by these numbers — the data path is not backing up"
	}
	return withNote(text, notes)
}

func burnHint(a *alert.Alert) string {
	for _, k := range burnWindows {
		r, ok := number(a, k)
		if !ok || r <= 0 {
			continue
		}
		left := time.Duration(float64(budgetPeriod) / r).Round(time.Hour)
		return fmt.Sprintf("burn rate %.1f over %s: at this pace a 30-day error budget lasts %s — use the exemplars of the failing requests to find what spends it",
			r, strings.TrimPrefix(k, "burn_rate_"), days(left))
	}
	return ""
}

func seconds(s float64) string {
	if s < 1 {
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(s, 'f', 2, 64) + "s"
}

func count(f float64) string {
	switch {
	case f >= 1e9:
		return strconv.FormatFloat(f/1e9, 'f', 1, 64) + "G"
	case f >= 1e6:
		return strconv.FormatFloat(f/1e6, 'f', 1, 64) + "M"
	case f >= 1e4:
		return strconv.FormatFloat(f/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

func bytesIEC(f float64) string {
	units := [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(f, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}

func days(d time.Duration) string {
	h := int(d.Hours())
	if h < 24 {
		return strconv.Itoa(h) + "h"
	}
	if h%24 == 0 {
		return strconv.Itoa(h/24) + "d"
	}
	return strconv.Itoa(h/24) + "d " + strconv.Itoa(h%24) + "h"
}
