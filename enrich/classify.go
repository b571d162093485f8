package enrich

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/prometheus/alertmanager/pkg/labels"

	"github.com/alertrouter/alertrouter/routing/alert"
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
)

// target is what a signal points at, resolved once in New.
type target struct {
	sector int    // sector index, -1 when the signal names none (yet)
	kpi    string // canonical KPI acronym, "" when none
	cands  uint32 // candidate sectors (bit i = sector i) of an ambiguous KPI
	class  string // class-only words
}

type compiledRule struct {
	matchers labels.Matchers
	text     string
	tgt      target
}

type familyIndex struct {
	exact    map[string]target
	prefixes []prefixTarget
	contains []prefixTarget
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
	hintText    [numHints]string
	hintOff     [numHints]bool
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
			ms, err := labels.ParseMatchers(m)
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
	c.families[1] = c.indexFamilies(builtinFamilies)
	for _, w := range builtinWords {
		key := string(normKey(w.Phrase, buf[:0]))
		t := c.resolve(w.Sector, w.KPI)
		t.class = w.Class
		c.words[key] = t
		if len(key) > c.maxWordLen {
			c.maxWordLen = len(key)
		}
	}
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

func (c *Classifier) indexFamilies(fams []family) familyIndex {
	idx := familyIndex{exact: make(map[string]target)}
	for _, f := range fams {
		t := c.resolve(f.Sector, f.KPI)
		switch {
		case f.Name != "":
			if _, dup := idx.exact[f.Name]; !dup {
				idx.exact[f.Name] = t
			}
		case f.Prefix != "":
			idx.prefixes = append(idx.prefixes, prefixTarget{f.Prefix, t})
		case f.Contains != "":
			idx.contains = append(idx.contains, prefixTarget{f.Contains, t})
		}
	}
	// Longest prefix first, so "vllm:" is the fallback of the vLLM family.
	sort.SliceStable(idx.prefixes, func(i, j int) bool { return len(idx.prefixes[i].s) > len(idx.prefixes[j].s) })
	return idx
}

// matchMetric looks a metric name up in the families and returns the
// target and the weight of the match.
func (c *Classifier) matchMetric(m string) (target, float64, bool) {
	base := baseName(m)
	for i := range c.families {
		idx := &c.families[i]
		if t, ok := idx.exact[m]; ok {
			return t, weightMetricExact, true
		}
		if t, ok := idx.exact[base]; ok {
			return t, weightMetricExact, true
		}
		for _, p := range idx.prefixes {
			if strings.HasPrefix(m, p.s) {
				return p.tgt, familyWeight(p.tgt), true
			}
		}
		for _, p := range idx.contains {
			if strings.Contains(m, p.s) {
				return p.tgt, familyWeight(p.tgt), true
			}
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
func (c *Classifier) Classify(a *alert.Alert) alert.Classification {
	var s scratch
	lbl := a.Labels

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
	if expr := exprFromGeneratorURL(a.GeneratorURL); expr != "" {
		scanExpr(expr, &s.facts)
		for i := 0; i < s.facts.nMetrics; i++ {
			m := s.facts.metrics[i]
			if t, w, ok := c.matchMetric(m); ok {
				s.add(evidence{kind: kindMetric, value: m, tgt: t, weight: w})
			}
		}
	}
	// 5. Words of the alertname and of the text annotations.
	c.readWords(&s, lbl["alertname"], weightAlertname)
	for _, k := range textAnnotations {
		if v := a.Annotations[k]; v != "" {
			c.readWords(&s, v, weightAnnotation)
		}
	}
	return c.conclude(a, &s)
}

func matchAll(ms labels.Matchers, lbl map[string]string) bool {
	for _, m := range ms {
		if !m.Matches(lbl[m.Name]) {
			return false
		}
	}
	return true
}

// readWords adds a token signal for every catalog phrase in text, longest
// phrase first.
func (c *Classifier) readWords(s *scratch, text string, weight float64) {
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
		matched := 0
		for run := min(maxWordRun, ns-i); run >= 1; run-- {
			k := key[:0]
			for j := i; j < i+run; j++ {
				k = append(k, low[spans[j].start:spans[j].end]...)
			}
			if len(k) > c.maxWordLen {
				continue
			}
			t, ok := c.words[string(k)]
			if !ok {
				continue
			}
			matched = run
			if t.class != "" {
				if s.class == "" {
					s.class = t.class
				}
				break
			}
			// The value quotes the words as written in the alert.
			v := text[0:0]
			if st, en := origSpan(text, spans[i].start, spans[i+run-1].end); st >= 0 {
				v = text[st:en]
			}
			s.add(evidence{kind: kindToken, value: v, tgt: t, weight: weight})
			break
		}
		if matched == 0 {
			matched = 1
		}
		i += matched
	}
}

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

// conclude scores the evidence and builds the classification.
//
// Scoring: a signal that names a sector adds its weight w to that sector as
// an independent piece of evidence (score = 1 − Π(1 − w)). A signal with an
// ambiguous KPI (OWD, CHR, FLAT, MFU) adds only w/2 to each of its candidate
// sectors: it supports, it never decides. The winner must be named by some
// signal, or be the only sector all ambiguous signals agree on; a tie
// (within 0.05) leaves the alert unknown with the tied sectors as
// candidates. Confidence is the winner's score minus half the runner-up's.
func (c *Classifier) conclude(a *alert.Alert, s *scratch) alert.Classification {
	var miss [numSectors]float64
	var direct [numSectors]bool
	for i := range miss {
		miss[i] = 1
	}
	var agree uint32 = 1<<numSectors - 1
	ambiguous := 0
	labelSector := -1
	for i := 0; i < s.n; i++ {
		e := &s.ev[i]
		if e.weight == 0 {
			continue
		}
		switch {
		case e.tgt.sector >= 0:
			miss[e.tgt.sector] *= 1 - e.weight
			direct[e.tgt.sector] = true
			if e.kind == kindSectorLabel {
				labelSector = e.tgt.sector
			}
		case e.tgt.cands != 0:
			ambiguous++
			agree &= e.tgt.cands
			for si := 0; si < numSectors; si++ {
				if e.tgt.cands&(1<<si) != 0 {
					miss[si] *= 1 - e.weight/2
				}
			}
		}
	}
	best, second := -1, -1
	for si := 0; si < numSectors; si++ {
		eligible := direct[si] || (ambiguous > 0 && agree&(1<<si) != 0 && onlyBit(agree))
		if !eligible {
			continue
		}
		switch {
		case best < 0 || 1-miss[si] > 1-miss[best]:
			best, second = si, best
		case second < 0 || 1-miss[si] > 1-miss[second]:
			second = si
		}
	}
	if labelSector >= 0 {
		best = labelSector
	}

	out := alert.Classification{Sector: alert.Unknown, IncidentClass: alert.Unknown}
	out.Signals = c.signals(s)

	var confidence float64
	tied := false
	if best >= 0 && labelSector < 0 {
		sb := 1 - miss[best]
		var ss float64
		if second >= 0 {
			ss = 1 - miss[second]
		}
		if second >= 0 && sb-ss < 0.05 {
			tied = true
		}
		confidence = sb - ss/2
		if !direct[best] {
			confidence *= 0.8 // settled only by agreeing ambiguous KPIs
		}
	}
	switch {
	case best < 0 || tied:
		// Unknown: list what is still possible.
		var cands uint32
		if tied {
			for si := 0; si < numSectors; si++ {
				if direct[si] && (1-miss[best])-(1-miss[si]) < 0.05 {
					cands |= 1 << si
				}
			}
		} else if ambiguous > 0 {
			cands = agree
		}
		out.Candidates = sectorList(cands)
		out.KPIs = c.unknownKPIs(s)
		if len(out.KPIs) > 0 && out.Candidates != nil {
			out.IncidentClass = c.sharedClass(out.KPIs[0].ID, cands)
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
	case s.class != "":
		out.IncidentClass = s.class
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
