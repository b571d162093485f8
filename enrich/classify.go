package enrich

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"

	"github.com/prometheus/alertmanager/pkg/labels"

	"github.com/alertrouter/alertrouter/internal/recent"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/matchers"
)

// The labels the classifier reads.
const (
	LabelSector = "sector"
	LabelKPI    = "kpi"
)

// textAnnotations are the annotations whose words are read, in order.
var textAnnotations = [...]string{"summary", "description", "message", "title"}

// maxTextBytes bounds how much of one text is tokenised.
const maxTextBytes = 1024

// Signal kinds, as in alert.Signal.Kind.
const (
	kindSectorLabel = "sector_label"
	kindKPILabel    = "kpi_label"
	kindRule        = "rule"
	kindMetric      = "metric"
	kindToken       = "token"
	kindJob         = "job"
	kindContext     = "context"
)

// selectorSignals are metrics whose selector says what the name alone does
// not: a guest's CPU steal time, node_cpu_seconds_total{mode="steal"}, is
// the in-guest view of the hypervisor's CPU ready time; Triton's
// TensorRT-LLM backend counts the requests waiting for a slot as
// nv_trt_llm_request_metrics{request_type="waiting"}, its queue (as
// trtllm-serve's trtllm_num_requests_waiting); Kong AI Gateway counts the
// requests its semantic cache answered as
// kong_ai_llm_requests_total{cache_status="hit"}. The signal counts when the
// expression names the metric and holds the selector.
var selectorSignals = [...]struct{ metric, selector, sector, kpi string }{
	{"node_cpu_seconds_total", `mode="steal"`, secVM, "RDY"},
	{"nv_trt_llm_request_metrics", `request_type="waiting"`, secGPU, "QTS"},
	// Kong AI Gateway's requests answered from its semantic cache
	// (Kong/kong spec/03-plugins/26-prometheus: ai_llm_requests_total
	// with cache_status="hit"): the cache's hits, its hit ratio.
	{"kong_ai_llm_requests_total", `cache_status="hit"`, secPStorage, "CHR"},
}

// Classify's selectors mask has a bit per selector signal.
const _ uint8 = 1 << (len(selectorSignals) - 1)

// contextLabels are the labels whose words break a tie between candidate
// sectors (see conclude) and whose values, quoted in an annotation, are not
// words of their own (see quotesContext): the labels that name where an
// alert fires — its target (job, instance, service), its Kubernetes
// objects (namespace, pod, container, node and the workloads and claims
// kube-state-metrics labels its alerts with) and a Kafka consumer group —
// not what it is about. A job named "backtest-nightly-28391" is no backtest
// KPI, and a consumer group named "spark-streaming" no Spark alert.
//
// After them come the labels that name an SLO (Sloth's, Pyrra's and
// hand-written rules' slo, slo-generator's, Nobl9's, Autometrics'): quoted
// in an annotation they are no words of their own either — a summary
// quoting `slo="order-latency"` made a burn alert's KPI an order latency
// (an audit) —, but they break no tie: an SLO's name says what it
// measures, not where the alert fires.
var contextLabels = [...]string{
	"job", "namespace", "pod", "container", "service", "instance",
	"job_name", "deployment", "statefulset", "daemonset", "cronjob",
	"persistentvolumeclaim", "consumergroup", "node",
	// quoted only (tieBreakLabels ends before them)
	"slo", "slo_name", "sloth_slo", "sloth_service", "feature_name", "objective_name",
}

// tieBreakLabels is how many of contextLabels, from the first, break ties
// (up to "node"; TestContextLabelsBreakTiesUpToNode holds it there).
const tieBreakLabels = 14

// scratch.ctxSplit has a bit per context label.
const _ uint32 = 1 << (len(contextLabels) - 1)

// target is what a signal points at, resolved once in New.
type target struct {
	sector int    // sector index, -1 when the signal names none (yet)
	kpi    string // canonical KPI acronym, "" when none
	cands  uint32 // candidate sectors (bit i = sector i) of an ambiguous KPI
	class  string // class-only words
	// nameClass is word.NameClass: class counts in the alertname and the
	// summary only;
	// whole is word.Whole: a match of one word only.
	nameClass, whole bool
	// generic marks a generic word (word.Generic): it counts only when a
	// signal that is not a generic word points at the same sector.
	generic bool
	// scrape marks a word about scrape health or the scraping system
	// (word.Scrape): not evidence in the annotations of an alert about a
	// target's health.
	scrape bool
	// store marks a general-purpose key-value store (word.Store,
	// family.Store): no evidence that the cache holds prompts.
	store bool
	// corrupt marks a counter of corrupted frames (family.Corrupt): loss
	// that is not congestion.
	corrupt bool
	// decode, kvFull, hardware, postFEC, prefill and noSplit are
	// family.Decode, KVFull, Hardware, PostFEC, Prefill and NoSplit: they
	// choose hints and hint texts (see hints).
	decode, kvFull, hardware, postFEC, prefill, noSplit bool
	// noDecode is family.NoDecode: no prefill-decode or kv-cache hint.
	noDecode bool
	// hostSide is family.HostSide: no microburst hint.
	hostSide bool
	// provider is family.Provider: read as the API when the alert names
	// an external provider (providerView).
	provider bool
	// partial marks a word naming a KPI of some of its candidate sectors
	// only (word.Cands with a KPI: "expert load", pre-training's EIR but
	// also what serving balances): the KPI, and its class, count only
	// where a sector having it wins.
	partial bool
}

type compiledRule struct {
	matchers labels.Matchers
	text     string
	tgt      target
}

type familyIndex struct {
	exact    map[string]target
	prefixes []prefixTarget
	// byHead holds the prefixes by their first two bytes (prefixes of one
	// byte under its own key), longest first, so that a metric is compared
	// only with the prefixes it can have.
	byHead   map[uint16][]prefixTarget
	contains []prefixTarget
	// ops are the substring families that begin with a colon (Pyrra's
	// ":burnrate"): operations a recording rule's last part names
	// (matchOperation), also among contains.
	ops []prefixTarget
}

type prefixTarget struct {
	s   string
	tgt target
}

// Classifier implements alert.Classifier over the sector catalog. It is
// immutable after New and safe for concurrent use.
type Classifier struct {
	sectorByKey map[string]int
	kpiByKey    map[string]target
	rules       []compiledRule
	families    [2]familyIndex // user families first, then built-in ones
	words       map[string]target
	maxWordLen  int
	// phrases filters look-ups in words: readWords asks the map only for
	// runs of words that can be a catalog phrase (almost none of them).
	phrases phraseFilter
	// exprs remembers the expressions of escaped generator URLs.
	exprs exprCache
	// memo remembers the classifications of recently seen alerts.
	memo *recent.Map[uint64, alert.Classification]
	// selectorTgt are the selector signals' targets, resolved once.
	selectorTgt [len(selectorSignals)]target
	// apiSector, apiUST and apiERR are what a GenAI server metric of an
	// external provider names (providerView), resolved once.
	apiSector, apiUST, apiERR target
	hintText                  [numHints]string
	hintOff                   [numHints]bool
}

var _ alert.Classifier = (*Classifier)(nil)

// New validates cfg and compiles the catalog, the rules, the families and
// the words into look-up tables so that Classify compiles nothing.
func New(cfg Config) (*Classifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("validate classifier config: %w", err)
	}
	if len(sectors) != numSectors {
		return nil, fmt.Errorf("catalog has %d sectors, want %d", len(sectors), numSectors)
	}
	c := &Classifier{
		sectorByKey: make(map[string]int, 2*numSectors),
		kpiByKey:    make(map[string]target),
		words:       make(map[string]target, len(builtinWords)),
		memo:        recent.New[uint64, alert.Classification](memoSize),
	}
	var buf [128]byte
	for i := range sectors {
		c.sectorByKey[string(normKey(sectors[i].ID, buf[:0]))] = i
		c.sectorByKey[string(normKey(sectors[i].Name, buf[:0]))] = i
		for _, k := range sectors[i].KPIs {
			key := string(normKey(k.ID, buf[:0]))
			t, ok := c.kpiByKey[key]
			if !ok {
				t = target{sector: i, kpi: k.ID}
			} else {
				t.sector = -1
			}
			t.cands |= 1 << i
			c.kpiByKey[key] = t
		}
	}
	// Also accept the KPIs' expansions as kpi label values.
	for i := range sectors {
		for _, k := range sectors[i].KPIs {
			key := string(normKey(k.Name, buf[:0]))
			if _, ok := c.kpiByKey[key]; !ok {
				c.kpiByKey[key] = c.kpiByKey[string(normKey(k.ID, buf[:0]))]
			}
		}
	}
	for _, r := range cfg.Rules {
		cr := compiledRule{text: strings.Join(r.Matchers, ", "), tgt: c.resolve(r.Sector, r.KPI)}
		for _, m := range r.Matchers {
			ms, err := matchers.Parse(m)
			if err != nil { // already validated
				return nil, fmt.Errorf("parse matcher %q: %w", m, err)
			}
			cr.matchers = append(cr.matchers, ms...)
		}
		c.rules = append(c.rules, cr)
	}
	user := make([]family, 0, len(cfg.MetricFamilies))
	for _, f := range cfg.MetricFamilies {
		user = append(user, family{Name: f.Name, Prefix: f.Prefix, Contains: f.Contains, Sector: f.Sector, KPI: f.KPI, Source: "config"})
	}
	c.families[0] = c.indexFamilies(user)
	c.families[1] = c.indexFamilies(append(append([]family(nil), builtinFamilies...), exporterFamilies...))
	for _, w := range builtinWords {
		key := string(normKey(w.Phrase, buf[:0]))
		t := c.resolve(w.Sector, w.KPI)
		t.class, t.nameClass, t.whole = w.Class, w.NameClass, w.Whole
		t.generic = w.Generic
		t.scrape = w.Scrape
		t.store = w.Store
		if len(w.Cands) > 0 {
			// Its candidates, even when its KPI belongs to one sector
			// alone: the KPI counts where that sector wins.
			t.sector, t.cands = -1, c.candSet(w.Cands)
			t.partial = t.kpi != "" && !allHave(t.cands, t.kpi)
		}
		c.words[key] = t
		c.phrases.addKey(key)
		if len(key) > c.maxWordLen {
			c.maxWordLen = len(key)
		}
	}
	for i, sig := range selectorSignals {
		c.selectorTgt[i] = c.resolve(sig.sector, sig.kpi)
	}
	c.apiSector, c.apiUST, c.apiERR = c.resolve(secAPI, ""), c.resolve(secAPI, "UST"), c.resolve(secAPI, "ERR")
	for i, id := range HintIDs {
		c.hintText[i] = defaultHintTexts[id]
		if txt, ok := cfg.Hints[id]; ok {
			c.hintText[i] = txt
			c.hintOff[i] = txt == ""
		}
	}
	return c, nil
}

// resolve turns a (sector id, KPI acronym) pair of the tables into a target.
func (c *Classifier) resolve(sector, kpi string) target {
	t := target{sector: -1}
	if sector != "" {
		t.sector = sectorIndexByID(sector)
	}
	if kpi == "" {
		return t
	}
	var buf [64]byte
	kt, ok := c.kpiByKey[string(normKey(kpi, buf[:0]))]
	if !ok {
		return t
	}
	t.kpi = kt.kpi
	if t.sector < 0 {
		t.sector = kt.sector
		t.cands = kt.cands
	}
	return t
}

// headKey is the bucket of a prefix or metric name: its first two bytes,
// or its only byte.
func headKey(s string) uint16 {
	if len(s) < 2 {
		return uint16(s[0])
	}
	return uint16(s[0])<<8 | uint16(s[1])
}

// otelNamespaces are the metric namespaces written with a colon whose
// OpenTelemetry form uses an underscore.
var otelNamespaces = [...]string{"vllm:", "sglang:", "lmcache:"}

// familyTarget resolves a family's sector, KPI and candidate sectors.
func (c *Classifier) familyTarget(f family) target {
	t := c.resolve(f.Sector, f.KPI)
	t.store, t.corrupt = f.Store, f.Corrupt
	t.decode, t.kvFull, t.hardware, t.postFEC = f.Decode, f.KVFull, f.Hardware, f.PostFEC
	t.prefill, t.noSplit, t.noDecode, t.provider = f.Prefill, f.NoSplit, f.NoDecode, f.Provider
	t.hostSide = f.HostSide
	if t.sector < 0 {
		t.cands |= c.candSet(f.Cands)
	}
	return t
}

// candSet is the set of the sectors ids names (bit i = sector i).
func (c *Classifier) candSet(ids []string) uint32 {
	var set uint32
	for _, id := range ids {
		if si := sectorIndexByID(id); si >= 0 {
			set |= 1 << si
		}
	}
	return set
}

func (c *Classifier) indexFamilies(fams []family) familyIndex {
	idx := familyIndex{exact: make(map[string]target)}
	for _, f := range fams {
		t := c.familyTarget(f)
		switch {
		case f.Name != "":
			if _, dup := idx.exact[f.Name]; !dup {
				idx.exact[f.Name] = t
			}
		case f.Prefix != "":
			idx.prefixes = append(idx.prefixes, prefixTarget{f.Prefix, t})
		case f.Contains != "":
			idx.contains = append(idx.contains, prefixTarget{f.Contains, t})
			if f.Contains[0] == ':' {
				idx.ops = append(idx.ops, prefixTarget{f.Contains, t})
			}
		}
	}
	// The OpenTelemetry (and Prometheus 3 translation) spelling of colon
	// names: vllm:num_requests_waiting is exported as vllm_num_requests_waiting.
	for _, f := range fams {
		for _, ns := range otelNamespaces {
			if strings.HasPrefix(f.Name, ns) {
				alias := strings.Replace(f.Name, ":", "_", 1)
				if _, dup := idx.exact[alias]; !dup {
					idx.exact[alias] = idx.exact[f.Name]
				}
			}
			if strings.HasPrefix(f.Prefix, ns) {
				idx.prefixes = append(idx.prefixes, prefixTarget{strings.Replace(f.Prefix, ":", "_", 1), c.familyTarget(f)})
			}
		}
	}
	// Longest prefix first, so "vllm:" is the fallback of the vLLM family.
	sort.SliceStable(idx.prefixes, func(i, j int) bool { return len(idx.prefixes[i].s) > len(idx.prefixes[j].s) })
	idx.byHead = make(map[uint16][]prefixTarget)
	for _, p := range idx.prefixes {
		k := headKey(p.s)
		idx.byHead[k] = append(idx.byHead[k], p)
	}
	return idx
}

// matchMetric looks a metric name up in the families and returns the
// target and the weight of the match: the user's families first, then the
// built-in ones — a user's `prefix: redis_` overrides the built-in exact
// names it covers too, as docs/classification.md says (an audit found the
// built-in exact names winning) — each by matchIn.
func (c *Classifier) matchMetric(m string) (target, float64, bool) {
	if m == "" {
		return target{}, 0, false
	}
	// An operation that carries meaning of its own (a substring family
	// beginning with a colon: Pyrra's ":burnrate") names what a recording
	// rule measures, whatever the families of the metric it aggregates say:
	// the error-budget burn of haproxy_backend_http_responses_total, not
	// its errors — a user's `prefix: haproxy_` included (a review) —
	// unless the user names the rule itself.
	if last := strings.LastIndexByte(m, ':'); last >= 0 {
		if user := &c.families[0]; !user.empty() {
			if t, ok := user.matchExact(m); ok {
				return t, weightMetricExact, true
			}
		}
		for i := range c.families {
			if t, ok := c.families[i].matchOperation(m[last:]); ok {
				return t, familyWeight(t), true
			}
		}
	}
	for i := range c.families {
		if idx := &c.families[i]; !idx.empty() {
			if t, w, ok := idx.matchIn(m); ok {
				return t, w, ok
			}
		}
	}
	return target{}, 0, false
}

// empty reports whether the index holds no family (no user families).
func (idx *familyIndex) empty() bool {
	return len(idx.exact) == 0 && len(idx.prefixes) == 0 && len(idx.contains) == 0
}

// matchIn looks a metric name up in one index: an exact name first; then,
// for a recording rule named after the convention level:metric:operations,
// the metric it aggregates (what lies between the first and the last
// colon; of a two-part name, the first part and then the second); then
// prefixes and substrings of the whole name ("vllm:"). The rule's
// operations (":burnrate") are matchMetric's, before any index.
func (idx *familyIndex) matchIn(m string) (target, float64, bool) {
	if t, ok := idx.matchExact(m); ok {
		return t, weightMetricExact, true
	}
	if first := strings.IndexByte(m, ':'); first >= 0 {
		last := strings.LastIndexByte(m, ':')
		if last > first {
			if t, w, ok := idx.matchName(m[first+1 : last]); ok {
				return t, w, ok
			}
		} else {
			if t, w, ok := idx.matchName(m[:first]); ok {
				return t, w, ok
			}
			if t, w, ok := idx.matchName(m[first+1:]); ok {
				return t, w, ok
			}
		}
	}
	return idx.matchPattern(m)
}

// matchOperation looks the last part of a recording rule's name (":op",
// colon included) up among the substring families that begin with a colon.
func (idx *familyIndex) matchOperation(op string) (target, bool) {
	for _, p := range idx.ops {
		if strings.HasPrefix(op, p.s) {
			return p.tgt, true
		}
	}
	return target{}, false
}

// matchName looks one metric name up in the index's families.
func (idx *familyIndex) matchName(m string) (target, float64, bool) {
	if m == "" {
		return target{}, 0, false
	}
	if t, ok := idx.matchExact(m); ok {
		return t, weightMetricExact, true
	}
	return idx.matchPattern(m)
}

// matchExact looks a name up among the index's exact families, as it is and
// without its _bucket, _sum, _count or _total suffix.
func (idx *familyIndex) matchExact(m string) (target, bool) {
	if t, ok := idx.exact[m]; ok {
		return t, true
	}
	if t, ok := idx.exact[baseName(m)]; ok {
		return t, true
	}
	return target{}, false
}

// matchPattern looks a name up among the index's prefix and substring
// families.
func (idx *familyIndex) matchPattern(m string) (target, float64, bool) {
	if len(m) >= 2 {
		for _, p := range idx.byHead[headKey(m)] {
			if strings.HasPrefix(m, p.s) {
				return p.tgt, familyWeight(p.tgt), true
			}
		}
	}
	for _, p := range idx.byHead[uint16(m[0])] { // one-byte prefixes
		if strings.HasPrefix(m, p.s) {
			return p.tgt, familyWeight(p.tgt), true
		}
	}
	for _, p := range idx.contains {
		if strings.Contains(m, p.s) {
			return p.tgt, familyWeight(p.tgt), true
		}
	}
	return target{}, 0, false
}

func familyWeight(t target) float64 {
	if t.kpi == "" {
		return weightMetricVendor
	}
	return weightMetricPrefix
}

// evidence is one signal with its resolved target.
type evidence struct {
	kind   string
	value  string
	tgt    target
	weight float64
}

const maxEvidence = 24

// scratch holds the per-alert working state; it lives on the stack.
type scratch struct {
	ev    [maxEvidence]evidence
	n     int
	facts exprFacts
	class string // first class-only word seen
	// prose is set while an annotation other than the summary is read:
	// word.NameClass words name no class there.
	prose bool
	// nameEnd is the number of signals after the alertname's words;
	// nameWordClass the alertname's first class-only word (see
	// alertnameClass).
	nameEnd       int
	nameWordClass string
	// health is set when the expression reads up or absent(): the alert is
	// about a target's health (its scrape, its series being there).
	health bool
	// lbl are the alert's labels; ctx their context labels' values, read
	// from lbl on first use (ctxRead).
	lbl     map[string]string
	ctx     [len(contextLabels)]string
	ctxRead bool
	// ctxWords are the words of ctx, each value split on first use (bit i
	// of ctxSplit).
	ctxWords ctxWords
	ctxSplit uint32
	// provider is whether the alert is about an external GenAI provider
	// (externalProvider), read once, on first use: 0 unread, 1 yes, 2 no.
	provider int8
}

// external is externalProvider of the alert, read once per alert.
func (s *scratch) external(expr string) bool {
	if s.provider == 0 {
		s.provider = 2
		if externalProvider(s.lbl, expr) {
			s.provider = 1
		}
	}
	return s.provider == 1
}

func (s *scratch) add(e evidence) {
	if s.n == maxEvidence {
		return
	}
	for i := 0; i < s.n; i++ {
		if s.ev[i].kind == e.kind && s.ev[i].value == e.value {
			return
		}
	}
	s.ev[s.n] = e
	s.n++
}

// Classify classifies one alert. It never fails: an alert nothing
// identifies gets Sector alert.Unknown, IncidentClass alert.Unknown and
// Confidence 0, with the signals that were considered. The alert's status
// does not change the classification, so a resolved alert joins the
// incident its firing twin opened.
//
// Classifications of recently seen alerts are remembered (memo.go), so the
// slices of the result may be shared with other callers: append to them
// only after slices.Clip, never write into them.
func (c *Classifier) Classify(a *alert.Alert) alert.Classification {
	k := inputKey(a)
	if cl, ok := c.memo.Get(k); ok {
		return cl
	}
	cl := c.classify(a)
	c.memo.Put(k, cl)
	return cl
}

// classify is Classify without the memo.
func (c *Classifier) classify(a *alert.Alert) alert.Classification {
	var s scratch
	lbl := a.Labels
	s.lbl = lbl

	// 1. Explicit sector label.
	if v := lbl[LabelSector]; v != "" {
		var buf [128]byte
		si, ok := c.sectorByKey[string(normKey(v, buf[:0]))]
		if ok {
			s.add(evidence{kind: kindSectorLabel, value: v, tgt: target{sector: si}, weight: weightSectorLabel})
		} else {
			s.add(evidence{kind: kindSectorLabel, value: v, tgt: target{sector: -1}})
		}
	}
	// 2. Explicit kpi label.
	if v := lbl[LabelKPI]; v != "" {
		var buf [128]byte
		t, ok := c.kpiByKey[string(normKey(v, buf[:0]))]
		if ok {
			s.add(evidence{kind: kindKPILabel, value: v, tgt: t, weight: weightKPILabel})
		} else {
			s.add(evidence{kind: kindKPILabel, value: v, tgt: target{sector: -1}})
		}
	}
	// 3. Config rules: the first that matches.
	for i := range c.rules {
		r := &c.rules[i]
		if matchAll(r.matchers, lbl) {
			s.add(evidence{kind: kindRule, value: r.text, tgt: r.tgt, weight: weightRule})
			break
		}
	}
	// 4. Metric names of the generator expression.
	if expr := c.exprs.get(a.GeneratorURL); expr != "" {
		scanExpr(expr, &s.facts)
		var selectors uint8 // bit j: the expression names selectorSignals[j]'s metric
		var health uint8    // bit i: metrics[i] is up or only inside absent()
		for i := 0; i < s.facts.nMetrics; i++ {
			m := s.facts.metrics[i]
			for j := range selectorSignals {
				if m == selectorSignals[j].metric {
					selectors |= 1 << j
				}
			}
			t, w, ok := c.matchMetric(m)
			switch {
			case m == "up":
				// up{job="X"} and absent(up{…}) are about the target X,
				// not about the monitoring system: the job's words decide.
				health |= 1 << i
				w = weightUp
				if s.facts.absentOnly(i) && s.facts.outAbsent != 0 {
					// absent(up{…}) beside what the alert reads outside
					// absent() ("node_timex_sync_status == 0 and on()
					// absent(up{job="ptp-monitor-service"})"): a guard that
					// another monitor is missing, not the alert's KPI.
					t.kpi = ""
				}
			case s.facts.absentOnly(i):
				// absent(X) asks whether X's target still reports, not
				// what X measures: X names its sector, as a vendor prefix
				// does, but no KPI; the job of its selector names the
				// target, as for absent(up{…}).
				health |= 1 << i
				t.kpi, w = "", weightMetricVendor
			case ok && t.provider && s.external(expr):
				// An AI gateway's gen_ai.server.* series of an external
				// provider (gen_ai_provider_name="openai"): the API's.
				t, w = c.providerView(t, w, expr, m)
			case ok && t.kpi != "" && c.countOnly(expr, m):
				// A histogram's or summary's _count series counts
				// requests; it does not measure what the histogram
				// observes: vllm:e2e_request_latency_seconds_count in an
				// error ratio is no E2E latency. The family names its
				// sector, as a vendor prefix does, but no KPI — unless
				// the expression also reads the family's _bucket or
				// _sum (a quantile, or the _sum/_count mean).
				t.kpi, w = "", weightMetricVendor
			}
			if ok {
				s.add(evidence{kind: kindMetric, value: m, tgt: t, weight: w})
			}
		}
		// The jobs of their selectors, after every metric signal (the
		// order of the evidence decides the primary KPI).
		s.health = health != 0
		for i := 0; health != 0; i, health = i+1, health>>1 {
			if health&1 != 0 {
				selectorJobs(expr, s.facts.metrics[i], func(job string) { c.readWords(&s, job, weightJob, kindJob, 0, false) })
			}
		}
		for j := 0; selectors != 0; j, selectors = j+1, selectors>>1 {
			if sig := &selectorSignals[j]; selectors&1 != 0 && strings.Contains(expr, sig.selector) {
				s.add(evidence{kind: kindMetric, value: sig.metric + "{" + sig.selector + "}", tgt: c.selectorTgt[j], weight: weightMetricExact})
			}
		}
	}
	// 5. Words of the alertname and of the text annotations. A word of an
	// annotation that quotes a context label's value is context, not a word
	// of its own (see readWords).
	c.readWords(&s, lbl["alertname"], weightAlertname, kindToken, 0, false)
	s.nameEnd, s.nameWordClass = s.n, s.class
	for _, k := range textAnnotations {
		if v := a.Annotations[k]; v != "" {
			s.prose = k != "summary"
			c.readWords(&s, v, weightAnnotation, kindToken, 0, true)
		}
	}
	s.prose = false
	c.yieldToAlertname(&s)
	return c.conclude(a, &s)
}

// alertnameClass returns the incident class the alertname's words name,
// read right after them: the class of its first KPI word that is not a
// generic word, of any sector ("ErrorBudget" of VLLMErrorBudgetBurnSlow:
// budget-burn), else its first class-only word ("Abort" of
// VLLMHighAbortRate: errors; the "Slow" of a slow burn is no latency), else
// "".
func (c *Classifier) alertnameClass(s *scratch) string {
	for i := 0; i < s.nameEnd; i++ {
		if e := &s.ev[i]; e.kind == kindToken && e.tgt.kpi != "" && e.weight > 0 && !e.tgt.generic {
			if class := c.targetClass(e.tgt); class != alert.Unknown {
				return class
			}
		}
	}
	return s.nameWordClass
}

// partialKPIClass is the class yieldToAlertname reads for an alertname
// whose KPI word names a KPI of some of its candidates only: no real
// class equals it, so every annotation KPI word yields.
const partialKPIClass = "\x00partial"

// partialAlertnameKPI returns the first alertname word that names a KPI of
// some of its candidate sectors only (word.Cands with a KPI), or nil.
func (c *Classifier) partialAlertnameKPI(s *scratch) *target {
	for i := 0; i < s.nameEnd; i++ {
		if e := &s.ev[i]; e.kind == kindToken && e.tgt.partial && e.weight > 0 &&
			(!e.tgt.generic || s.corroborated(e.tgt)) {
			// A generic word only as corroborate would count it:
			// MoELoadImbalanceHigh's "load imbalance", with its "MoE" —
			// not KafkaPartitionLoadImbalance's (a review: its summary's
			// consumer lag was erased).
			return &e.tgt
		}
	}
	return nil
}

// corroborated reports whether a signal read so far that is not a generic
// word points at one of t's sectors (corroborate's test) — not an
// annotation's KPI word: those yield to the alertname word t would be, so
// they cannot vouch for it (a review: "tokens dropped" in the summary
// vouched for CapacityFactorExceeded, then yielded to it, and the alert
// lost every signal).
func (s *scratch) corroborated(t target) bool {
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if i >= s.nameEnd && e.kind == kindToken && e.tgt.kpi != "" {
			continue
		}
		if !e.tgt.generic && e.weight > 0 && sectorSet(e.tgt)&sectorSet(t) != 0 {
			return true
		}
	}
	return false
}

// partialClassFor is the class of t's KPI, t such an alertname word (nil:
// none), where sec, one of its candidates, won without that KPI but
// measures nothing of another class (post-training's KPIs are all
// training-stability, as pre-training's EIR: a post-training MoE's
// expert-load alert is one; GPU serving's are latencies: no class); ""
// otherwise.
func partialClassFor(t *target, sec *sectorDef) string {
	if t == nil || t.cands&(1<<sectorIndexByID(sec.ID)) == 0 {
		return ""
	}
	class := ""
	for si := range sectors {
		if t.cands&(1<<si) != 0 {
			if k := kpiClass(&sectors[si], t.kpi); k != alert.Unknown {
				class = k
				break
			}
		}
	}
	if class == "" || len(sec.KPIs) == 0 {
		return ""
	}
	for _, k := range sec.KPIs {
		if k.Class != class {
			return ""
		}
	}
	return class
}

// targetClass is the incident class of a target's KPI: that of its sector,
// or the one all its candidate sectors agree on (alert.Unknown otherwise).
func (c *Classifier) targetClass(t target) string {
	if t.sector >= 0 {
		return kpiClass(&sectors[t.sector], t.kpi)
	}
	if t.partial {
		// No class of its own — SGLang's MoE expert load imbalance is no
		// training-stability alert (a review).
		return alert.Unknown
	}
	return c.sharedClass(t.kpi, t.cands)
}

// yieldToAlertname gives weight 0 to every KPI word of an annotation whose
// incident class is not the one the alertname's words name: an annotation
// word is the weakest evidence, and prose mentions other KPIs as causes or
// effects ("Usually TTFT too high causing client timeouts" on
// VLLMHighAbortRate, an alert about aborted requests, class errors). The
// word is listed, not counted, so neither its KPI nor its class is taken.
func (c *Classifier) yieldToAlertname(s *scratch) {
	nameClass, read := "", false
	// Every signal after the alertname's is an annotation's word: it runs
	// right after they are read (the context labels' come later, in
	// conclude).
	for i := s.nameEnd; i < s.n; i++ {
		e := &s.ev[i]
		if e.tgt.kpi == "" || e.weight == 0 {
			continue
		}
		if !read { // most alerts have no annotation KPI word
			nameClass, read = c.alertnameClass(s), true
			if nameClass == "" && c.partialAlertnameKPI(s) != nil {
				// The alertname names a KPI of some of its word's
				// candidates (VLLMExpertLoadImbalance): no class of its
				// own, but what the alert is about all the same — the
				// TTFT its summary names as an effect yields to it (a
				// review).
				nameClass = partialKPIClass
			}
		}
		if nameClass != "" && c.targetClass(e.tgt) != nameClass {
			e.weight = 0
		}
	}
}

// countOnly reports whether the metric m of expr is the _count series of a
// histogram or summary (or a recording rule of one,
// level:<name>_count:operations) whose family is named without the suffix,
// and expr reads neither that family's _bucket nor its _sum: the
// expression counts requests, it does not measure what the family observes.
// A family whose own name ends in _count (nv_inference_pending_request_count)
// is not such a series.
func (c *Classifier) countOnly(expr, m string) bool {
	const suffix = "_count"
	i := strings.LastIndex(m, suffix)
	if i <= 0 {
		return false
	}
	end := i + len(suffix)
	if end < len(m) && m[end] != ':' {
		return false
	}
	// The series' own name: all of m, or the metric part of a recording
	// rule (after the level's colon) when m goes on after _count.
	if c.isFamilyName(m[:end]) {
		return false
	}
	if end < len(m) {
		if j := strings.IndexByte(m, ':'); j >= 0 && j < i && c.isFamilyName(m[j+1:end]) {
			return false
		}
	}
	base := m[:i]
	return !hasSeries(expr, base, "_bucket") && !hasSeries(expr, base, "_sum")
}

// providerView is what a GenAI server metric (family.Provider) of an
// external provider names: an AI gateway's view of that provider's API.
// Its durations (time to first token, per output token, the request's) are
// the upstream's service time (UST), as LiteLLM's are; its request count
// read with error_type (the gateway's error.type attribute) in an error
// ratio is the API's error rate (ERR); any other count, and the rest of
// gen_ai.server.*, name the API without KPI.
func (c *Classifier) providerView(t target, w float64, expr, m string) (target, float64) {
	switch {
	case t.kpi != "" && c.countOnly(expr, m):
		if strings.Contains(expr, "error_type") {
			return c.apiERR, weightMetricExact
		}
		return c.apiSector, weightMetricVendor
	case t.kpi != "":
		return c.apiUST, w
	}
	return c.apiSector, w
}

// providerLabels are the labels that name a GenAI provider: OpenTelemetry's
// gen_ai.provider.name and the older gen_ai.system, as Prometheus
// translates them and as UTF-8 names keep them.
var providerLabels = [...]string{"gen_ai_provider_name", "gen_ai_system", "gen_ai.provider.name", "gen_ai.system"}

// modelLabels are the labels that name the model a GenAI request asked
// for or got (gen_ai.request.model, gen_ai.response.model, Envoy AI
// Gateway's gen_ai.original.model).
var modelLabels = [...]string{"gen_ai_request_model", "gen_ai_response_model", "gen_ai_original_model",
	"gen_ai.request.model", "gen_ai.response.model", "gen_ai.original.model"}

// externalProviders are the values of gen_ai.provider.name that name a
// provider's hosted API (open-telemetry/semantic-conventions
// model/gen-ai/registry.yaml, the attribute's well-known values; Envoy AI
// Gateway's own, envoyproxy/ai-gateway internal/metrics/genai.go:
// azure.openai, aws.anthropic, gcp.anthropic), and the older gen_ai.system
// spellings of the same (az.ai.inference, az.ai.openai, xai). A
// self-hosted model server's own name (vllm, a model id) is none of them —
// nor is openai alone (openaiSchema).
var externalProviders = map[string]bool{
	"anthropic": true, "aws.bedrock": true, "azure.ai.openai": true, "azure.ai.inference": true,
	"gcp.vertex_ai": true, "gcp.gemini": true, "gcp.gen_ai": true, "cohere": true, "mistral_ai": true,
	"groq": true, "deepseek": true, "perplexity": true, "x_ai": true, "ibm.watsonx.ai": true, "moonshot_ai": true,
	"azure.openai": true, "aws.anthropic": true, "gcp.anthropic": true,
	"az.ai.openai": true, "az.ai.inference": true, "xai": true,
}

// openaiSchema is the provider name an AI gateway gives every upstream
// speaking OpenAI's API (envoyproxy/ai-gateway: InferencePools of
// self-hosted vLLM included): OpenAI's hosted API only when the alert's
// model label names one of its models (openaiModel).
const openaiSchema = "openai"

// openaiModel reports whether model is one of OpenAI's hosted models (its
// ids: gpt-4o, o3-mini, chatgpt-4o-latest, text-embedding-3-small…), not
// an open-weight one a self-hosted server runs: gpt-oss, and the
// community's GPT-named models (EleutherAI's gpt-j and gpt-neo/gpt-neox,
// AI Sweden's gpt-sw3, OpenAI's own open gpt-2) a --served-model-name may
// keep.
func openaiModel(model string) bool {
	m := strings.ToLower(model)
	m = strings.TrimPrefix(m, "openai/")
	switch {
	case strings.HasPrefix(m, "gpt-oss"), strings.HasPrefix(m, "gpt-j"), strings.HasPrefix(m, "gpt-neo"),
		strings.HasPrefix(m, "gpt-sw3"), strings.HasPrefix(m, "gpt-2"):
		return false
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt-"), strings.HasPrefix(m, "text-embedding-"),
		strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4-"), strings.HasPrefix(m, "omni-moderation"):
		return true
	}
	return false
}

// externalProvider reports whether an alert of labels lbl and expression
// expr is about an external provider's hosted API: the alert's provider
// label when it carries one (an expression's other selectors do not
// outrank it), else the expression's selectors of it (providerLabels =
// one of externalProviders, or a regular expression only of them). openai
// counts only beside a model naming an OpenAI model (openaiSchema).
func externalProvider(lbl map[string]string, expr string) bool {
	for _, k := range providerLabels {
		if v, ok := lbl[k]; ok && v != "" {
			return externalName(v, lbl, expr)
		}
	}
	for _, k := range providerLabels {
		if anySelector(expr, k, func(v string, re bool) bool {
			return allOf(v, re, func(p string) bool { return externalName(p, lbl, expr) })
		}) {
			return true
		}
	}
	return false
}

// anySelector reports whether match holds for a positive matcher of label
// k in expr (selectorValue): k not preceded by a letter, digit, `_` or
// `.`, so that gen_ai_request_model is not read inside another label's
// name.
func anySelector(expr, k string, match func(v string, re bool) bool) bool {
	for off := 0; ; {
		i := strings.Index(expr[off:], k)
		if i < 0 {
			return false
		}
		at := off + i
		off = at + len(k)
		if at > 0 && (isIdentChar(expr[at-1]) || expr[at-1] == '.') {
			continue
		}
		if v, re, ok := selectorValue(expr[off:]); ok && match(v, re) {
			return true
		}
	}
}

// selectorValue reads the value of a label matcher whose name ends where
// rest begins: `="v"`, `=~"v"` (re), also single-quoted or in backticks,
// and after a quoted UTF-8 name's closing quote; ok false for another
// matcher (!=, !~) or none.
func selectorValue(rest string) (v string, re, ok bool) {
	rest = strings.TrimPrefix(rest, `"`) // a quoted UTF-8 name
	rest = strings.TrimLeft(rest, " ")
	switch {
	case strings.HasPrefix(rest, "=~"):
		rest, re = rest[2:], true
	case strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "=="):
		rest = rest[1:]
	default:
		return "", false, false
	}
	rest = strings.TrimLeft(rest, " ")
	if rest == "" || !strings.ContainsRune("\"'`", rune(rest[0])) {
		return "", false, false
	}
	v, _, found := strings.Cut(rest[1:], rest[:1])
	return v, re, found
}

// externalName reports whether provider name v is an external provider's
// (openai only beside an OpenAI model: openaiModelNamed).
func externalName(v string, lbl map[string]string, expr string) bool {
	if v == openaiSchema {
		return openaiModelNamed(lbl, expr)
	}
	return externalProviders[v]
}

// openaiModelNamed reports whether the model an alert is about is one of
// OpenAI's (openaiModel): the first model label it carries, else the
// expression's first positive matcher of one (a regular expression: all
// of its alternatives) — an aggregation may drop the model its selector
// names (`sum by (le) (…{gen_ai_request_model="gpt-4o"})`).
func openaiModelNamed(lbl map[string]string, expr string) bool {
	for _, k := range modelLabels {
		if m := lbl[k]; m != "" {
			return openaiModel(m)
		}
	}
	named, openai := false, false
	for _, k := range modelLabels {
		anySelector(expr, k, func(m string, re bool) bool {
			named, openai = true, allOf(m, re, openaiModel)
			return true
		})
		if named {
			return openai
		}
	}
	return false
}

// allOf reports whether ok holds for v, or, when re, for each of v's
// alternatives (anchors and one enclosing group dropped, `\\.` read as a
// dot).
func allOf(v string, re bool, ok func(string) bool) bool {
	if !re {
		return ok(v)
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "^"), "$")
	if strings.HasPrefix(v, "(") && strings.HasSuffix(v, ")") {
		v = v[1 : len(v)-1]
	}
	for alt := range strings.SplitSeq(v, "|") {
		if !ok(strings.ReplaceAll(alt, `\\.`, ".")) {
			return false
		}
	}
	return true
}

// modals are the words before a verb that make it what may or will
// happen, not what is ("will be disconnected", "may disconnect", "to
// disconnect").
var modals = map[string]bool{"will": true, "would": true, "may": true, "might": true, "can": true, "could": true,
	"shall": true, "should": true, "must": true, "to": true, "be": true}

// afterModal reports whether one of the two words before (the last of
// spans, in low) is a modal: a word.NameClass word there names no class,
// even in a summary (a review: "New clients will be disconnected when
// maxclients is reached").
func afterModal(low []byte, spans []span) bool {
	for j := len(spans) - 1; j >= 0 && j >= len(spans)-2; j-- {
		if modals[string(low[spans[j].start:spans[j].end])] {
			return true
		}
	}
	return false
}

// isFamilyName reports whether name is an exact family name as it is
// (without stripping a suffix).
func (c *Classifier) isFamilyName(name string) bool {
	for i := range c.families {
		if _, ok := c.families[i].exact[name]; ok {
			return true
		}
	}
	return false
}

// hasSeries reports whether expr names the series base+suffix (or a
// recording rule of it that goes on after a colon): an occurrence not
// preceded by an identifier character and not followed by a letter, digit
// or underscore. (base and suffix are matched apart: no string is built.)
func hasSeries(expr, base, suffix string) bool {
	for off := 0; ; {
		k := strings.Index(expr[off:], base)
		if k < 0 {
			return false
		}
		k += off
		end := k + len(base)
		if strings.HasPrefix(expr[end:], suffix) {
			end += len(suffix)
			before := k == 0 || !isIdentChar(expr[k-1])
			after := end == len(expr) || !(isAlnum(expr[end]) || expr[end] == '_')
			if before && after {
				return true
			}
		}
		off = k + 1
	}
}

// readContext adds the words of the alert's context labels that point at
// one of the candidate sectors; it reports whether it added any.
func (c *Classifier) readContext(s *scratch, cands uint32) bool {
	if cands == 0 {
		return false
	}
	n := s.n
	for _, v := range s.contextValues()[:tieBreakLabels] {
		if v != "" {
			c.readWords(s, v, weightContext, kindContext, cands, false)
		}
	}
	return s.n > n
}

// maxContextBytes bounds how much of a context label's value is read for
// quoted context; label values are names, far shorter.
const maxContextBytes = 256

// contextValues returns the values of the alert's context labels, in the
// order of contextLabels ("" for a missing one), read once per alert.
func (s *scratch) contextValues() *[len(contextLabels)]string {
	if !s.ctxRead {
		if len(s.lbl) < len(contextLabels) {
			// Fewer labels than context labels (almost every alert):
			// one pass over them costs less than a look-up of each.
			for k, v := range s.lbl {
				if i := contextIndex(k); i >= 0 {
					s.ctx[i] = v
				}
			}
		} else {
			for i, l := range contextLabels {
				s.ctx[i] = s.lbl[l]
			}
		}
		s.ctxRead = true
	}
	return &s.ctx
}

// contextIndex returns the index of the label name k in contextLabels, or -1.
func contextIndex(k string) int {
	switch k {
	case "job":
		return 0
	case "namespace":
		return 1
	case "pod":
		return 2
	case "container":
		return 3
	case "service":
		return 4
	case "instance":
		return 5
	case "job_name":
		return 6
	case "deployment":
		return 7
	case "statefulset":
		return 8
	case "daemonset":
		return 9
	case "cronjob":
		return 10
	case "persistentvolumeclaim":
		return 11
	case "consumergroup":
		return 12
	case "node":
		return 13
	case "slo":
		return 14
	case "slo_name":
		return 15
	case "sloth_slo":
		return 16
	case "sloth_service":
		return 17
	case "feature_name":
		return 18
	case "objective_name":
		return 19
	}
	return -1
}

// quotesContext reports whether key (a phrase key: its words lowered and
// joined) is a run of whole words of the value of one of the alert's context
// labels: "vllm" of namespace="vllm" or pod="vllm-llama3-70b-0", "feature
// store" of namespace="feature-store" — but not "spark" of "sparkle". Each
// value is split into words once per alert, when first compared; it does
// not allocate.
func (s *scratch) quotesContext(key []byte) bool {
	for i, v := range s.contextValues() {
		if len(v) < len(key) {
			continue
		}
		if s.ctxSplit&(1<<i) == 0 {
			s.ctxWords.split(i, v)
			s.ctxSplit |= 1 << i
		}
		if s.ctxWords.hasRun(i, v, key) {
			return true
		}
	}
	return false
}

// ctxWords are the words of the context label values as splitWords splits
// them (its words are runs of ASCII letters and digits of the value, so
// they are marked in the value itself): bit p of start[i] is set when a
// word of value i starts at byte p, bit p of last[i] when one ends with
// byte p.
type ctxWords struct {
	start, last [len(contextLabels)][maxContextBytes / 64]uint64
}

// split marks the words of value vi (its first maxContextBytes bytes) where
// splitWords would split them: at every byte that is no ASCII letter or
// digit, and inside a run of them where camelBreak says.
func (w *ctxWords) split(vi int, v string) {
	if len(v) > maxContextBytes {
		v = v[:maxContextBytes]
	}
	start, last := &w.start[vi], &w.last[vi]
	in := false
	for p := 0; p < len(v); p++ {
		c := v[p]
		switch {
		case !isAlnum(c):
			if in {
				last[(p-1)/64] |= 1 << ((p - 1) % 64)
			}
			in = false
			continue
		case in && isUpper(c) && camelBreak(v, p):
			last[(p-1)/64] |= 1 << ((p - 1) % 64)
		case in:
			continue
		}
		start[p/64] |= 1 << (p % 64)
		in = true
	}
	if in {
		last[(len(v)-1)/64] |= 1 << ((len(v) - 1) % 64)
	}
}

// hasRun reports whether key is a run of whole words of v, the value vi
// that split marked: the letters and digits of v from a word's start,
// lowered, are key, and the last of them ends a word.
func (w *ctxWords) hasRun(vi int, v string, key []byte) bool {
	if len(v) > maxContextBytes {
		v = v[:maxContextBytes]
	}
	last := &w.last[vi]
	for b, set := range w.start[vi] {
		for set != 0 {
			p := b*64 + bits.TrailingZeros64(set)
			set &= set - 1
			if p+len(key) > len(v) {
				return false // starts ascend: no later one fits either
			}
			k, j := 0, p
			for ; j < len(v) && k < len(key); j++ {
				c := v[j]
				if isUpper(c) {
					c += 'a' - 'A'
				} else if !isLower(c) && !isDigit(c) {
					continue
				}
				if c != key[k] {
					break
				}
				k++
			}
			if k == len(key) && last[(j-1)/64]&(1<<((j-1)%64)) != 0 {
				return true
			}
		}
	}
	return false
}

func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }

// pointsAt reports whether t names one of the sectors in set.
func pointsAt(t target, set uint32) bool {
	if t.sector >= 0 {
		return set&(1<<t.sector) != 0
	}
	return t.cands&set != 0
}

// sameTarget returns a signal of kind that already points where t does,
// one that is not a generic word if there is one, or nil. Signals listed
// with weight 0 (not evidence) are not counted.
func (s *scratch) sameTarget(kind string, t target) *evidence {
	var found *evidence
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if e.kind == kind && e.weight > 0 && e.tgt.sector == t.sector && e.tgt.kpi == t.kpi && e.tgt.cands == t.cands {
			if !e.tgt.generic {
				return e
			}
			if found == nil {
				found = e
			}
		}
	}
	return found
}

// listed reports whether a signal of kind points where t does, counted or
// not.
func (s *scratch) listed(kind string, t target) bool {
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if e.kind == kind && e.tgt.sector == t.sector && e.tgt.kpi == t.kpi && e.tgt.cands == t.cands {
			return true
		}
	}
	return false
}

// quote returns the words of text between the [start,end) range of the
// lowered buffer as written in the alert ("" when it cannot be mapped).
func quote(text string, start, end int) string {
	if st, en := origSpan(text, start, end); st >= 0 {
		return text[st:en]
	}
	return ""
}

// sectorSet is the set of sectors (bit i = sector i) a target points at:
// its sector, or the candidates of an ambiguous KPI.
func sectorSet(t target) uint32 {
	if t.sector >= 0 {
		return 1 << t.sector
	}
	return t.cands
}

// corroborate gives weight 0 to every generic word that no other signal
// corroborates: a generic word counts only when a signal that is not a
// generic word (a label, a rule, a metric family, a job, a specific word)
// points at one of its sectors. Two generic words do not corroborate each
// other ("vCPU" and "hypervisor" of an OpenStack alert stay uncounted).
func (s *scratch) corroborate() {
	var specific uint32 // sectors some counted non-generic signal points at
	for i := 0; i < s.n; i++ {
		if e := &s.ev[i]; !e.tgt.generic && e.weight > 0 {
			specific |= sectorSet(e.tgt)
		}
	}
	for i := 0; i < s.n; i++ {
		if e := &s.ev[i]; e.tgt.generic && sectorSet(e.tgt)&specific == 0 {
			e.weight = 0
		}
	}
}

func matchAll(ms labels.Matchers, lbl map[string]string) bool {
	for _, m := range ms {
		if !m.Matches(lbl[m.Name]) {
			return false
		}
	}
	return true
}

// readWords adds a signal of the given kind for every catalog phrase in
// text, longest phrase first. A phrase whose target an earlier signal of the
// same kind already has adds nothing: a word repeated in the summary and
// the description is one piece of evidence — unless the earlier one is a
// generic word and this one is not; and a word that is neither generic nor
// a general-purpose store's ("LMCache") takes the place of an earlier
// store's word ("Redis") of the same target, so that the kv-cache hint
// does not depend on which was read first. With only ≠ 0, a phrase counts
// only if it points at one of those sectors.
//
// annotation is set for the text of an annotation. Its phrases that are
// whole words of a context label's value ("vllm" in "Pod vllm/vllm-0 is
// crash looping" with namespace="vllm") add nothing: they quote the
// context, which counts only as a tie-breaker (readContext), so a namespace
// does not become evidence by being quoted. On an alert about a target's
// health (s.health), a phrase about scrape health or the scraping system
// ("disappeared from Prometheus target discovery") is listed with weight 0:
// the prose names the observer, the up series already says the rest.
func (c *Classifier) readWords(s *scratch, text string, weight float64, kind string, only uint32, annotation bool) {
	if text == "" {
		return
	}
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	var low [maxTextBytes]byte
	var spans [256]span
	_, ns := splitWords(text, low[:], spans[:])
	var key [64]byte
	for i := 0; i < ns; {
		// The runs of words starting at word i that can be a phrase: the
		// hash of each run's key (its words concatenated), as long as the
		// run so far is a prefix of some phrase key.
		var hs [maxWordRun]uint32
		h, n, longest := fnvOffset, 0, 0
		for r := 0; r < maxWordRun && i+r < ns; r++ {
			w := low[spans[i+r].start:spans[i+r].end]
			if n += len(w); n > c.maxWordLen {
				break
			}
			h = fnvAdd(h, w)
			if !c.phrases.prefix.has(h) {
				break
			}
			hs[r], longest = h, r+1
		}
		matched := 0
		for run := longest; run >= 1; run-- {
			if !c.phrases.key.has(hs[run-1]) {
				continue
			}
			k := key[:0]
			for j := i; j < i+run; j++ {
				k = append(k, low[spans[j].start:spans[j].end]...)
			}
			t, ok := c.words[string(k)]
			if !ok || t.whole && run > 1 {
				continue
			}
			matched = run
			if t.class != "" {
				if s.class == "" && !(annotation && t.nameClass && (s.prose || afterModal(low[:], spans[:i]))) {
					s.class = t.class
				}
				break
			}
			if annotation && s.quotesContext(k) {
				break
			}
			if kind == kindContext && t.scrape {
				// A context label naming the scraping system
				// (job="kube-state-metrics" on every alert about a
				// Kubernetes object, job="prometheus-k8s") names the
				// observer, not the subject: it breaks no tie.
				break
			}
			if only == 0 || pointsAt(t, only) {
				// A specific word ("EVR") still counts after a generic one
				// ("eviction") with the same target: it is what makes the
				// generic one count (see corroborate).
				if annotation && s.health && t.scrape {
					// Listed, not counted (listed covers sameTarget's).
					if !s.listed(kind, t) {
						s.add(evidence{kind: kind, value: quote(text, spans[i].start, spans[i+run-1].end), tgt: t})
					}
				} else if prev := s.sameTarget(kind, t); prev == nil || (prev.tgt.generic && !t.generic) {
					s.add(evidence{kind: kind, value: quote(text, spans[i].start, spans[i+run-1].end), tgt: t, weight: weight})
				} else if prev.tgt.store && !t.store && !t.generic {
					// "Redis … LMCache": the word read second says the
					// store holds prompts (promptCacheEvidence). It takes
					// the place of the store's word, as if it had come
					// first: one piece of evidence, whatever the order.
					prev.tgt = t
					if v := quote(text, spans[i].start, spans[i+run-1].end); v != "" {
						prev.value = v
					}
				}
			}
			break
		}
		if matched == 0 {
			matched = 1
		}
		i += matched
	}
}

// phraseFilter holds two bit sets over FNV-1a hashes of the catalog's
// phrase keys: key has a bit per whole key, prefix a bit per prefix of
// every key (whole keys included). A clear bit proves that no key (or no
// key's prefix) has that hash, so a run of words that cannot be a phrase
// costs a hash and a bit test instead of map look-ups; a set bit (a real
// key, or a rare collision) is confirmed by the map. It changes no result.
type phraseFilter struct {
	key, prefix bitSet
}

func (f *phraseFilter) addKey(k string) {
	h := fnvOffset
	for i := 0; i < len(k); i++ {
		h = (h ^ uint32(k[i])) * fnvPrime
		f.prefix.set(h)
	}
	f.key.set(h)
}

const (
	fnvOffset  uint32 = 2166136261
	fnvPrime   uint32 = 16777619
	bitSetBits        = 1 << 15
)

// fnvAdd continues the FNV-1a hash h over b.
func fnvAdd(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = (h ^ uint32(c)) * fnvPrime
	}
	return h
}

type bitSet [bitSetBits / 64]uint64

func (b *bitSet) set(h uint32) { h %= bitSetBits; b[h/64] |= 1 << (h % 64) }

func (b *bitSet) has(h uint32) bool { h %= bitSetBits; return b[h/64]&(1<<(h%64)) != 0 }

// origSpan maps a [start,end) range of the lowered alphanumeric buffer back
// to the original text (which also holds separators).
func origSpan(text string, start, end int) (int, int) {
	n, st := 0, -1
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !(isUpper(c) || isLower(c) || isDigit(c)) {
			continue
		}
		if n == start {
			st = i
		}
		n++
		if n == end {
			return st, i + 1
		}
	}
	return -1, -1
}

// ranking is the outcome of scoring the evidence of one alert.
type ranking struct {
	miss          [numSectors]float64 // Π(1 − w) per sector; score = 1 − miss
	direct        [numSectors]bool    // some signal names the sector
	agree         uint32              // sectors every ambiguous signal allows
	ambiguous     int
	labelSector   int
	best, second  int
	tied, tooWeak bool
}

func (r *ranking) score(si int) float64 { return 1 - r.miss[si] }

// candidates are the sectors still possible when the alert stays unknown:
// the tied sectors, the weak winner, or the sectors the ambiguous signals
// agree on.
func (r *ranking) candidates() uint32 {
	var cands uint32
	switch {
	case r.tied:
		for si := 0; si < numSectors; si++ {
			if r.direct[si] && r.score(r.best)-r.score(si) < tieMargin+scoreEpsilon {
				cands |= 1 << si
			}
		}
	case r.tooWeak:
		cands = 1 << r.best
	case r.ambiguous > 0:
		cands = r.agree
	}
	return cands
}

// rank scores the evidence: a signal that names a sector adds its weight w
// to that sector as an independent piece of evidence (score = 1 − Π(1 − w)).
// A signal with an ambiguous KPI (OWD, CHR, FLAT, MFU) adds only w/2 to each
// of its candidate sectors: it supports, it never decides. The winner must
// be named by some signal, or be the only sector all ambiguous signals agree
// on; a tie (within tieMargin) or a winner below minWinScore leaves the alert
// unknown.
func (c *Classifier) rank(s *scratch) ranking {
	r := ranking{agree: 1<<numSectors - 1, labelSector: -1, best: -1, second: -1}
	for i := range r.miss {
		r.miss[i] = 1
	}
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if e.weight == 0 {
			continue
		}
		switch {
		case e.tgt.sector >= 0:
			r.miss[e.tgt.sector] *= 1 - e.weight
			r.direct[e.tgt.sector] = true
			if e.kind == kindSectorLabel {
				r.labelSector = e.tgt.sector
			}
		case e.tgt.cands != 0:
			r.ambiguous++
			r.agree &= e.tgt.cands
			for si := 0; si < numSectors; si++ {
				if e.tgt.cands&(1<<si) != 0 {
					r.miss[si] *= 1 - e.weight/2
				}
			}
		}
	}
	for si := 0; si < numSectors; si++ {
		eligible := r.direct[si] || (r.ambiguous > 0 && r.agree&(1<<si) != 0 && onlyBit(r.agree))
		if !eligible {
			continue
		}
		switch {
		case r.best < 0 || r.score(si) > r.score(r.best):
			r.best, r.second = si, r.best
		case r.second < 0 || r.score(si) > r.score(r.second):
			r.second = si
		}
	}
	if r.labelSector >= 0 {
		r.best = r.labelSector
		return r
	}
	if r.best >= 0 {
		r.tied = r.second >= 0 && r.score(r.best)-r.score(r.second) < tieMargin+scoreEpsilon
		r.tooWeak = !r.tied && r.score(r.best) < minWinScore-scoreEpsilon
	}
	return r
}

// conclude scores the evidence and builds the classification (see rank),
// after giving weight 0 to the generic words nothing corroborates (see
// corroborate). When the evidence leaves a tie or only ambiguous
// candidates, the alert's context labels (job, namespace, pod, container,
// service, instance host) break it: their words count for the candidate
// sectors only. Confidence is the winner's score minus half the
// runner-up's.
func (c *Classifier) conclude(a *alert.Alert, s *scratch) alert.Classification {
	s.corroborate()
	r := c.rank(s)
	if r.labelSector < 0 && (r.tied || r.tooWeak || (r.best < 0 && r.ambiguous > 0)) {
		if c.readContext(s, r.candidates()) {
			s.corroborate()
			r = c.rank(s)
		}
	}
	best, second, labelSector := r.best, r.second, r.labelSector
	miss, direct := &r.miss, &r.direct
	tied := r.tied || r.tooWeak

	out := alert.Classification{Sector: alert.Unknown, IncidentClass: alert.Unknown}
	out.Signals = c.signals(s)

	var confidence float64
	if best >= 0 && labelSector < 0 {
		sb := 1 - miss[best]
		var ss float64
		if second >= 0 {
			ss = 1 - miss[second]
		}
		confidence = sb - ss/2
		if !direct[best] {
			confidence *= 0.8 // settled only by agreeing ambiguous KPIs
		}
	}
	switch {
	case best < 0 || tied:
		// Unknown: list what is still possible.
		cands := r.candidates()
		out.Candidates = sectorList(cands)
		out.KPIs = c.unknownKPIs(s)
		switch {
		case len(out.KPIs) > 0 && out.Candidates != nil:
			out.IncidentClass = c.sharedClass(out.KPIs[0].ID, cands)
		case len(out.KPIs) == 0 && s.facts.absent():
			out.IncidentClass = ClassAvailability
		}
		out.Hints = c.hints(a, s, nil, out.KPIs, out.IncidentClass)
		return out
	case labelSector >= 0:
		confidence = 1
	}
	sec := &sectors[best]
	out.Sector = sec.ID
	out.SectorName = sec.Name
	out.AlertStyle = sec.AlertStyle
	out.Sensitivity = sec.Sensitivity
	out.Confidence = math.Round(math.Min(1, math.Max(0, confidence))*100) / 100
	out.KPIs = c.sectorKPIs(s, sec)
	switch {
	case len(out.KPIs) > 0:
		out.IncidentClass = kpiClass(sec, out.KPIs[0].ID)
	case s.facts.absent():
		// absent(): the series are gone, whatever they measured.
		out.IncidentClass = ClassAvailability
	default:
		// The alertname's KPI word, even of another sector (a vLLM
		// error-budget alert is budget-burn), or its class-only word;
		// else a class-only word of the annotations.
		partial := c.partialAlertnameKPI(s)
		if class := c.alertnameClass(s); class != "" {
			out.IncidentClass = class
		} else if class := partialClassFor(partial, sec); class != "" {
			out.IncidentClass = class
		} else if s.class != "" && partial == nil {
			// (An alertname naming such a KPI is about it: the effects
			// its summary names — "errors up", "throughput down" — give
			// no class either, as its KPI words do not.)
			out.IncidentClass = s.class
		}
	}
	out.Hints = c.hints(a, s, sec, out.KPIs, out.IncidentClass)
	return out
}

func onlyBit(x uint32) bool { return x != 0 && x&(x-1) == 0 }

// signals returns the evidence as routing signals, strongest first (stable).
func (c *Classifier) signals(s *scratch) []alert.Signal {
	if s.n == 0 {
		return []alert.Signal{}
	}
	out := make([]alert.Signal, s.n)
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		sig := alert.Signal{Kind: e.kind, Value: e.value, KPI: e.tgt.kpi, Weight: e.weight}
		if e.tgt.sector >= 0 {
			sig.Sector = sectors[e.tgt.sector].ID
		}
		// Insertion sort by weight, descending, stable.
		j := i
		for j > 0 && out[j-1].Weight < sig.Weight {
			out[j] = out[j-1]
			j--
		}
		out[j] = sig
	}
	return out
}

// sectorKPIs returns the KPIs of sec the signals point at, strongest
// signal first, without duplicates.
func (c *Classifier) sectorKPIs(s *scratch, sec *sectorDef) []alert.KPI {
	var seen [8]string
	ns := 0
	var out []alert.KPI
	for w := 0; w < 2; w++ { // two passes: label/rule/metric signals, then tokens
		for i := 0; i < s.n; i++ {
			e := &s.ev[i]
			if e.tgt.kpi == "" || e.weight == 0 || (w == 0) == (e.kind == kindToken) {
				continue
			}
			dup := false
			for _, k := range seen[:ns] {
				if k == e.tgt.kpi {
					dup = true
				}
			}
			if dup {
				continue
			}
			for _, k := range sec.KPIs {
				if k.ID == e.tgt.kpi {
					if out == nil {
						out = make([]alert.KPI, 0, len(sec.KPIs))
					}
					out = append(out, alert.KPI{ID: k.ID, Name: k.Name})
					if ns < len(seen) {
						seen[ns] = k.ID
						ns++
					}
				}
			}
		}
	}
	if out == nil {
		return []alert.KPI{}
	}
	return out
}

// unknownKPIs returns the KPI of the strongest KPI-bearing signal of an
// alert whose sector stays unknown (e.g. OWD without a settling signal).
func (c *Classifier) unknownKPIs(s *scratch) []alert.KPI {
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if e.tgt.kpi == "" || e.weight == 0 {
			continue
		}
		if e.tgt.partial {
			// It names its KPI where a sector having it wins, not
			// between candidates.
			continue
		}
		for si := range sectors {
			for _, k := range sectors[si].KPIs {
				if k.ID == e.tgt.kpi {
					return []alert.KPI{{ID: k.ID, Name: k.Name}}
				}
			}
		}
	}
	return []alert.KPI{}
}

// allHave reports whether every sector of set has kpi (an empty set: no).
func allHave(set uint32, kpi string) bool {
	if set == 0 {
		return false
	}
	for si := range sectors {
		if set&(1<<si) != 0 && kpiClass(&sectors[si], kpi) == alert.Unknown {
			return false
		}
	}
	return true
}

// sharedClass returns the class of kpi when every candidate sector that has
// it agrees on it, else alert.Unknown.
func (c *Classifier) sharedClass(kpi string, cands uint32) string {
	class := ""
	for si := range sectors {
		if cands&(1<<si) == 0 {
			continue
		}
		for _, k := range sectors[si].KPIs {
			if k.ID != kpi {
				continue
			}
			if class != "" && class != k.Class {
				return alert.Unknown
			}
			class = k.Class
		}
	}
	if class == "" {
		return alert.Unknown
	}
	return class
}

func kpiClass(sec *sectorDef, id string) string {
	for _, k := range sec.KPIs {
		if k.ID == id {
			return k.Class
		}
	}
	return alert.Unknown
}

func sectorList(bits uint32) []string {
	if bits == 0 {
		return nil
	}
	out := make([]string, 0, 4)
	for si := 0; si < numSectors; si++ {
		if bits&(1<<si) != 0 {
			out = append(out, sectors[si].ID)
		}
	}
	return out
}
