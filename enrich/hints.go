package enrich

import (
	"fmt"
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

// prefillText is the prefill-decode hint of an alert on time to first
// token only: TTFT is queueing plus prefill; decode does not enter it.
const prefillText = "TTFT is queue time plus prefill, before any decode: check requests waiting (saturation: scale out or shed load), prompt lengths and the prefix-cache hit rate (prompts recomputed), and whether long prompts are split (chunked prefill)."

// prefillTimeText is the prefill-decode hint of an alert on prefill time
// only (family.Prefill: vllm:request_prefill_time_seconds, time in the
// PREFILL phase): prompt processing after the queue, so neither requests
// waiting nor decode explain it.
const prefillTimeText = "This is prefill time (processing the prompt, after the request left the queue, up to its first token), not queue time or decode: check prompt lengths, the prefix-cache hit rate (prompt tokens recomputed instead of reused) and whether long prompts are split (chunked prefill); requests waiting and token generation do not enter it."

// decodeText is the prefill-decode hint of an alert on decode only:
// inter-token latency and time per output token (ITL, TPOT), and a
// request's decode time.
const decodeText = "This is decode time (token generation after the first token), not prefill: check batch size and running requests, KV-cache pressure and preemptions, and long prefills interleaving with decode steps (chunked prefill); prompt length and the prefix cache do not explain it."

// decodeTimeNote ends decodeText for a request's decode time
// (vllm:request_decode_time_seconds), which grows with the output length.
const decodeTimeNote = " A request's decode time also grows with its output length: compare time per output token (TPOT) before blaming the engine."

// spanDownText is the optical-health hint of an alert that the span or
// link is down (class availability): it failed, it is not degrading.
const spanDownText = "The span is down, not degrading: check loss of signal and Rx power at both ends and the amplifiers' alarms along the span — light lost at both ends with healthy amplifiers points at a fibre cut: locate it with an OTDR and move traffic to the protection path."

// postFECText is the optical-health hint of an alert on errors FEC could
// not correct (uncorrectable blocks, post-FEC errors): traffic is
// corrupted now.
const postFECText = "FEC can no longer correct every error: traffic on this span is being corrupted now — check pre-FEC BER and OSNR margin against their limits, then amplifiers, connectors and dispersion, and move traffic off the span."

// burnWindows are the burn_rate_<window> keys read for burn-exemplars, the
// shortest page window first.
var burnWindows = [...]string{"burn_rate_1h", "burn_rate_5m", "burn_rate_6h", "burn_rate_30m", "burn_rate_1d", "burn_rate_2h", "burn_rate_3d"}

// Rules of thumb quoted by the specific hints.
const (
	cpuReadyLimit   = 0.05 // VMware guidance: > 5% ready per vCPU hurts latency
	osnrMarginLimit = 3.0  // dB of margin below which a span needs attention
	// hdFECBERLimit is the pre-FEC BER that hard-decision FEC (ITU-T
	// G.975.1 class, 7% overhead) still corrects to an error-free output:
	// above it traffic takes errors; within a decade below it the span has
	// little margin left. Soft-decision FEC of coherent optics corrects
	// more (about 2e-2): the hint's words are then conservative.
	hdFECBERLimit = 3.8e-3
	// defaultBudgetPeriod is the SLO period the burn hint assumes, and says
	// it assumes, when the alert names none (Sloth's and the SRE
	// workbook's 30 days).
	defaultBudgetPeriod = 30 * 24 * time.Hour
)

// Indices of HintIDs, for the hints that hints and its helpers single out.
var (
	hiQueueTime     = hintIndex(HintQueueTime)
	hiPrefillDecode = hintIndex(HintPrefillDecode)
	hiKVCache       = hintIndex(HintKVCache)
	hiMicroburst    = hintIndex(HintMicroburst)
	hiSpillLag      = hintIndex(HintSpillLag)
	hiPercentiles   = hintIndex(HintPercentiles)
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
	// kv-cache made relevant by cache occupancy (COCC, or preemptions: the
	// KV cache ran out) alone, or also by another KPI (a hit rate, an
	// eviction rate, TTFT).
	var kvByOccupancy, kvByOther bool
	// prefill-decode made relevant by TTFT only (prefill), by ITL or TPOT
	// only (decode), or by something else as well (both halves).
	var pdPrefill, pdDecode, pdBoth bool
	// decodeTime, prefillTime: the alert reads a request's decode or
	// prefill time (family.Decode, family.Prefill); noSplit: a duration
	// that is neither queueing nor a phase (family.NoSplit).
	decodeTime, prefillTime, noSplit := false, false, false
	// noDecode: a request that generates no tokens (family.NoDecode);
	// hostSide: a process's metric, not the wire's (family.HostSide).
	noDecode, hostSide := false, false
	if sec != nil {
		// Read once, not for each cache KPI that lists kv-cache.
		noPromptCache := sec.ID == secPStorage && len(kpis) > 0 && !promptCacheEvidence(s)
		decodeTime = sec.ID == secGPU && countedSignal(s, func(t *target) bool { return t.decode })
		prefillTime = sec.ID == secGPU && countedSignal(s, func(t *target) bool { return t.prefill })
		noSplit = sec.ID == secGPU && countedSignal(s, func(t *target) bool { return t.noSplit })
		noDecode = sec.ID == secGPU && countedSignal(s, func(t *target) bool { return t.noDecode })
		hostSide = countedSignal(s, func(t *target) bool { return t.hostSide })
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
					case h == HintMoERouter && onlyHardware(s, d.ID):
						// An NVLink bandwidth drop is a link, NVSwitch or
						// fabric-manager matter before it is the router's.
					case hostSide && h == HintMicroburst:
						// A q process's query latency is no congestion.
					case noDecode && (h == HintPrefillDecode || h == HintKVCache):
						// An embedding or a predictive model's step has
						// no prefill, decode or KV cache.
					default:
						relevant[hintIndex(h)] = true
						switch h {
						case HintKVCache:
							occ := d.ID == "COCC" || d.ID == "RCR" && countedSignal(s, func(t *target) bool { return t.kvFull })
							kvByOccupancy = kvByOccupancy || occ
							kvByOther = kvByOther || !occ
						case HintPrefillDecode:
							switch d.ID {
							case "TTFT", "TTFTR":
								pdPrefill = true
							case "ITL", "TPOT":
								pdDecode = true
							default:
								pdBoth = true
							}
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
					i := hintIndex(h)
					switch {
					case !slices.Contains(hintClasses[i], class):
					case (decodeTime || prefillTime || noSplit) && i == hiQueueTime:
						// A request's decode or prefill time holds no
						// queueing, nor does a KV transfer or validation.
					case noSplit && !decodeTime && !prefillTime && i == hiPrefillDecode:
						// A KV transfer or validation is no phase.
					case hostSide && i == hiMicroburst:
					case noDecode && (i == hiPrefillDecode || i == hiKVCache):
						// Nor is a request that generates no tokens.
					default:
						relevant[i] = true
						pdBoth = pdBoth || i == hiPrefillDecode && !decodeTime && !prefillTime
					}
				}
			}
			if decodeTime {
				relevant[hiPrefillDecode], pdDecode = true, true
			}
			if prefillTime {
				relevant[hiPrefillDecode], pdPrefill = true, true
			}
		}
	}
	specific := specificHints(a)
	if (decodeTime || prefillTime || noSplit) && !relevant[hiQueueTime] {
		// No queue share of a time that holds no queueing: queue_time and
		// compute_time annotations (copied from a TTFT or E2E rule) do not
		// split a prefill, decode or transfer time.
		specific[hiQueueTime] = specificHint{}
	}
	if specific[hiSpillLag].text != "" && lagInSeconds(s) {
		specific[hiSpillLag] = spillLag(a, true)
	}
	if s.facts.averages != "" && latency {
		relevant[hiPercentiles] = true
	}
	n := 0
	for i := range HintIDs {
		if !c.hintOff[i] && (relevant[i] || specific[i] != specificHint{}) {
			n++
		}
	}
	out := make([]alert.Hint, 0, n)
	// What the generic texts are made to fit (fittingText).
	f := fit{
		averages: s.facts.averages, kvOccupancy: kvByOccupancy && !kvByOther,
		prefill: pdPrefill && !pdDecode && !pdBoth, decode: pdDecode && !pdPrefill && !pdBoth, decodeTime: decodeTime, prefillTime: prefillTime,
		spanDown: sec != nil && sec.ID == secFiber && (class == ClassAvailability || len(kpis) > 0 && kpis[0].ID == "AVAIL"),
		postFEC:  sec != nil && sec.ID == secFiber && countedSignal(s, func(t *target) bool { return t.postFEC }),
	}
	for i, id := range HintIDs {
		if c.hintOff[i] {
			continue
		}
		switch {
		case specific[i].text != "":
			out = append(out, alert.Hint{ID: id, Text: specific[i].text, Specific: true})
		case relevant[i] || specific[i].note != "":
			text := c.hintText[i]
			// A configured text is the operator's; the generic one is
			// made to fit what the alert is about.
			if text == defaultHintTexts[id] {
				text = fittingText(id, text, f)
			}
			if note := specific[i].note; note != "" {
				text += " (" + note + ")"
			}
			out = append(out, alert.Hint{ID: id, Text: text})
		}
	}
	return out
}

// fit is what an alert is about, as far as the generic text of a hint
// depends on it (see fittingText).
type fit struct {
	averages    string // exprFacts.averages
	kvOccupancy bool   // kv-cache by cache occupancy or preemptions only
	prefill     bool   // prefill-decode by TTFT only
	decode      bool   // prefill-decode by decode only (ITL, TPOT, a decode time)
	decodeTime  bool   // a request's decode time (family.Decode)
	prefillTime bool   // a request's prefill time (family.Prefill)
	spanDown    bool   // a dark-fiber span or link is down
	postFEC     bool   // errors FEC could not correct (family.PostFEC)
}

// fittingText returns the generic text of hint id (text) as it fits the
// alert: percentiles-not-averages names the average; kv-cache speaks of a
// full cache when occupancy or preemptions brought it; prefill-decode
// keeps only the half the alert's KPI measures; optical-health says that a
// span that is down or corrupting traffic is failing, not degrading.
func fittingText(id, text string, f fit) string {
	switch {
	case id == HintPercentiles:
		avg := f.averages
		if strings.HasSuffix(avg, "(") {
			avg += ")"
		}
		return "The expression averages (" + avg + "): " + text[len("This alert is on an average: "):]
	case id == HintKVCache && f.kvOccupancy:
		return kvOccupancyText
	case id == HintPrefillDecode && f.decode && f.decodeTime:
		return decodeText + decodeTimeNote
	case id == HintPrefillDecode && f.decode:
		return decodeText
	case id == HintPrefillDecode && f.prefill && f.prefillTime:
		return prefillTimeText
	case id == HintPrefillDecode && f.prefill:
		return prefillText
	case id == HintOpticalHealth && f.spanDown:
		return spanDownText
	case id == HintOpticalHealth && f.postFEC:
		return postFECText
	}
	return text
}

// countedSignal reports whether a counted signal of the alert has a target
// for which is returns true.
func countedSignal(s *scratch, is func(*target) bool) bool {
	for i := 0; i < s.n; i++ {
		if e := &s.ev[i]; e.weight > 0 && is(&e.tgt) {
			return true
		}
	}
	return false
}

// onlyHardware reports whether every counted signal of KPI kpi is a GPU
// interconnect device counter (family.Hardware): DCGM's NVLink bandwidth
// as A2AS says nothing of the MoE router.
func onlyHardware(s *scratch, kpi string) bool {
	return countedSignal(s, func(t *target) bool { return t.kpi == kpi && t.hardware }) &&
		!countedSignal(s, func(t *target) bool { return t.kpi == kpi && !t.hardware })
}

// lagInSeconds reports whether the expression reads a consumer lag in
// seconds (kafka-lag-exporter's kafka_consumergroup_group_max_lag_seconds,
// any …lag_seconds…): a consumer_lag annotation is then seconds too.
func lagInSeconds(s *scratch) bool {
	for i := 0; i < s.facts.nMetrics; i++ {
		if strings.Contains(s.facts.metrics[i], "lag_seconds") {
			return true
		}
	}
	return false
}

// congestionLoss reports whether the packet loss (LOSS) of the alert is
// read from anything but error counters (family.Corrupt): discards, drops,
// retransmits, a word or a label. Loss read only from frames received or
// sent with errors is a bad cable, optic or port, which microburst depth
// and ECN/PFC counters do not explain.
func congestionLoss(s *scratch) bool {
	return countedSignal(s, func(t *target) bool { return t.kpi == "LOSS" && !t.corrupt })
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
	microburstHint, opticalHint, func(a *alert.Alert) specificHint { return spillLag(a, false) }, textOnly(burnHint),
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
// OSNR) and the pre-FEC BER. A margin at or below 0, or a BER above the
// hard-decision FEC limit (hdFECBERLimit), is a span failing now, at the
// edge of what FEC corrects; a margin below osnrMarginLimit, or a BER
// within a decade of the limit, a span degrading before it fails.
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
	level := 0 // 0 healthy, 1 degrading, 2 failing
	if okM {
		fmt.Fprintf(&b, "OSNR margin is %.1f dB", m)
		switch {
		case m <= 0:
			b.WriteString(" (margin exhausted)")
			level = 2
		case m < osnrMarginLimit:
			fmt.Fprintf(&b, " (below %.0f dB)", osnrMarginLimit)
			level = 1
		}
	}
	if okB {
		if okM {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "pre-FEC BER %.1e", ber)
		switch {
		case ber > hdFECBERLimit:
			fmt.Fprintf(&b, " (above the %.1e HD-FEC limit)", hdFECBERLimit)
			level = 2
		case ber > hdFECBERLimit/10:
			fmt.Fprintf(&b, " (within a decade of the %.1e HD-FEC limit)", hdFECBERLimit)
			level = max(level, 1)
		}
	}
	switch level {
	case 2:
		b.WriteString(": the span is failing now, at the edge of what FEC corrects — traffic takes errors or is about to; check amplifiers, connectors and dispersion now, and move traffic off the span")
	case 1:
		b.WriteString(": the span is degrading before it fails — check amplifiers, connectors and dispersion, and plan maintenance before FEC runs out")
	default:
		b.WriteString(": watch the trend of OSNR, CD and PMD — optical health degrades long before the link fails")
	}
	return withNote(b.String(), notes)
}

// spillLag reads consumer lag and spill bytes. A negative lag is unknown,
// not a backlog (kafka_exporter and Burrow give -1 for a group with no
// committed offset); the data path backs up only when the lag or the spill
// is above 0. The lag is a count (offsets or messages, as the exporter
// counts them), or seconds when secs is set (the expression reads a lag in
// seconds, see lagInSeconds) or the value is a duration ("14m 0s").
// Spilled bytes are a Spark job outgrowing executor memory; lag is
// consumers falling behind: each gets its own advice.
func spillLag(a *alert.Alert, secs bool) specificHint {
	lag, okL := number(a, AnnConsumerLag)
	if raw, present := value(a, AnnConsumerLag); present && !okL {
		if d, err := policies.ParseDuration(raw); err == nil {
			lag, okL, secs = d, true, true
		}
	}
	sp, presentS, okS := bytesOf(a, AnnSpillBytes)
	var notes []string
	if presentS && !okS {
		notes = append(notes, notUnderstood(a, AnnSpillBytes, "bytes, such as 3650722201, 3.4Gi or 3.4 GiB"))
	}
	if !okL && !okS {
		return withNote("", notes)
	}
	var parts []string
	lagging, spilling, unknown := false, false, false
	switch {
	case !okL:
	case lag < 0:
		unknown = true
		parts = append(parts, "consumer lag is unknown ("+count(lag)+": no committed offset to measure it from)")
	case lag == 0:
		parts = append(parts, "no consumer lag")
	case secs:
		lagging = true
		parts = append(parts, "consumer lag is "+lagDuration(lag))
	default:
		lagging = true
		parts = append(parts, "consumer lag is "+count(lag))
	}
	switch {
	case !okS:
	case sp == 0:
		parts = append(parts, "nothing spilled to disk")
	default:
		spilling = true
		parts = append(parts, bytesIEC(sp)+" spilled to disk")
	}
	text := strings.Join(parts, " and ")
	switch {
	case lagging && spilling:
		text += ": the data path is backing up — check partition/task skew, executor memory and consumer throughput before adding consumers"
	case lagging:
		text += ": the data path is backing up — check partition skew and consumer throughput before adding consumers"
	case spilling:
		text += ": the job's shuffle outgrows executor memory — check task skew, executor memory and the number of shuffle partitions"
	case unknown:
		text += ": lag is not measured, so it says nothing of backpressure — check that the consumer group commits offsets"
	default:
		text += ": no backpressure by these numbers — the data path is not backing up"
	}
	return withNote(text, notes)
}

// lagDuration renders a lag in seconds: as seconds() does below a minute,
// else as a duration to the second ("14m0s").
func lagDuration(s float64) string {
	if s < 60 {
		return seconds(s)
	}
	return (time.Duration(s) * time.Second).Round(time.Second).String()
}

// burnHint says how long the error budget lasts at the alert's burn rate,
// over the SLO period the alert names (budgetPeriodOf), else over an
// assumed 30-day one, and says so.
func burnHint(a *alert.Alert) string {
	for _, k := range burnWindows {
		r, ok := number(a, k)
		if !ok || r <= 0 {
			continue
		}
		period, from := budgetPeriodOf(a)
		budget := "a 30-day error budget (assumed: no slo_period or period label says the SLO's)"
		if from != "" {
			budget = "the " + periodName(period) + " error budget (" + from + ")"
		}
		// A burn far below 1 outlasts any budget: a year says so (the
		// hours of a burn of 1e-9 overflowed a Duration: "-2562047h").
		lasts := "more than a year"
		if left := float64(period) / r; left < float64(365*24*time.Hour) {
			lasts = days(time.Duration(left).Round(time.Hour))
		}
		return fmt.Sprintf("burn rate %.1f over %s: at this pace %s lasts %s — use the exemplars of the failing requests to find what spends it",
			r, strings.TrimPrefix(k, "burn_rate_"), budget, lasts)
	}
	return ""
}

// pyrraTiers are Pyrra's burn-rate alerts (pyrra-dev/pyrra slo/rules.go):
// the long window is the SLO period ÷ div, and the exhaustion label the
// period ÷ factor, so exhaustion ÷ long window = div ÷ factor tells the
// tier (48, 16, 14, 7 for the 1h/5m, 6h/30m, 1d/2h and 4d/6h pairs of a
// 28-day SLO).
var pyrraTiers = [...]struct{ div, factor float64 }{{672, 14}, {112, 7}, {28, 2}, {7, 1}}

// budgetPeriodOf returns the SLO period the alert names and where it was
// read, or defaultBudgetPeriod and "": an slo_period or period label or
// annotation (as the Pyrra policy reads them), else Pyrra's exhaustion
// label over its long window (see pyrraTiers).
func budgetPeriodOf(a *alert.Alert) (time.Duration, string) {
	for _, k := range [...]string{"slo_period", "period"} {
		if raw, ok := value(a, k); ok {
			if p, err := policies.ParseDuration(raw); err == nil && p > 0 {
				return time.Duration(p * float64(time.Second)), k + " " + strings.TrimSpace(raw)
			}
		}
	}
	rawEx, okE := value(a, "exhaustion")
	rawLong, okL := value(a, "long")
	if !okE || !okL {
		return defaultBudgetPeriod, ""
	}
	ex, errE := policies.ParseDuration(rawEx)
	long, errL := policies.ParseDuration(rawLong)
	if errE != nil || errL != nil || ex <= 0 || long <= 0 {
		return defaultBudgetPeriod, ""
	}
	for _, t := range pyrraTiers {
		// Pyrra rounds its windows to the minute: 2% of slack.
		if r := ex / long / (t.div / t.factor); r > 0.98 && r < 1.02 {
			// Periods are whole days: 1h4m × 672 is a 30-day SLO's
			// rounded window, not 29d 21h.
			p := time.Duration(long * t.div * float64(time.Second)).Round(24 * time.Hour)
			return p, "Pyrra's exhaustion " + strings.TrimSpace(rawEx) + " on its " + strings.TrimSpace(rawLong) + " window"
		}
	}
	return defaultBudgetPeriod, ""
}

// periodName names an SLO period: "28-day", or as days renders it when it
// is no whole number of days.
func periodName(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "-day"
	}
	return days(d)
}

// seconds renders a time in seconds: "1.35s" from a second up, "810ms",
// "42.5ms" or "1.35ms" from a millisecond up, "400µs" or "950µs" below,
// each with two or three significant digits, so that a sub-millisecond
// queue time is not shown as 0ms.
func seconds(s float64) string {
	// The unit is chosen on the value as shown: 0.99996 s is "1.00s",
	// not "1000ms", and 999.97 µs "1ms".
	switch {
	case s >= 0.9995:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	case s == 0:
		return "0ms"
	case s >= 0.9995e-3:
		return sigDigits(s*1e3) + "ms"
	}
	return sigDigits(s*1e6) + "µs"
}

// sigDigits renders v (at most 1000) with three significant digits, no
// trailing zeros after the point: "810", "42.5", "1.35", "9.5".
func sigDigits(v float64) string {
	prec := 2
	switch {
	case v >= 99.95:
		prec = 0
	case v >= 9.995:
		prec = 1
	}
	out := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.IndexByte(out, '.') >= 0 {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
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
