package enrich

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// corpusFile is one file of testdata/corpus: the alerts of one public rule
// file, fired as Alertmanager sends them, with what the router should make
// of each (see testdata/corpus/README.md).
type corpusFile struct {
	Source struct {
		Repository string `json:"repository"`
		Path       string `json:"path"`
		Commit     string `json:"commit"`
		Note       string `json:"note"`
	} `json:"source"`
	Category string         `json:"category"`
	Half     string         `json:"half"`
	Payload  webhook        `json:"payload"`
	Expect   []corpusExpect `json:"expect"`
	name     string         // file name, set by loadCorpus
}

type corpusExpect struct {
	Alertname string `json:"alertname"`
	Index     int    `json:"index"`
	Accept    []struct {
		Sector string `json:"sector"`
		KPI    string `json:"kpi"`
	} `json:"accept"`
	Action alert.Action `json:"action"`
}

const (
	halfTune    = "tune"
	halfHoldout = "holdout"
)

func loadCorpus(t *testing.T) []corpusFile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "corpus", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]corpusFile, 0, len(files))
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f corpusFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("decode %s: %v", path, err)
		}
		f.name = filepath.Base(path)
		out = append(out, f)
	}
	return out
}

// TestCorpusIsWellFormed checks that the corpus is what it claims: enough
// alerts from enough public rule files, each file citing its source, every
// alert fired as Alertmanager sends it with the rule's expression in its
// generatorURL, and no sector or kpi label the rule did not have.
func TestCorpusIsWellFormed(t *testing.T) {
	corpus := loadCorpus(t)
	alerts, halves := 0, map[string]int{}
	for _, f := range corpus {
		if f.Source.Repository == "" || f.Source.Path == "" {
			t.Errorf("%s: no source", f.name)
		}
		if f.Half != halfTune && f.Half != halfHoldout {
			t.Errorf("%s: half %q", f.name, f.Half)
		}
		w := f.Payload
		if w.Version != "4" || w.Receiver == "" || w.GroupKey == "" || w.ExternalURL == "" || len(w.GroupLabels) == 0 {
			t.Errorf("%s: payload envelope incomplete", f.name)
		}
		if len(w.Alerts) != len(f.Expect) {
			t.Errorf("%s: %d alerts, %d expectations", f.name, len(w.Alerts), len(f.Expect))
			continue
		}
		for i, a := range w.Alerts {
			e := f.Expect[i]
			if e.Index != i || e.Alertname != a.Labels["alertname"] {
				t.Errorf("%s[%d]: expectation for %s#%d", f.name, i, e.Alertname, e.Index)
			}
			if len(e.Accept) == 0 || e.Action == "" {
				t.Errorf("%s[%d]: empty expectation", f.name, i)
			}
			if a.Fingerprint == "" || a.StartsAt.IsZero() || a.Status != "firing" {
				t.Errorf("%s[%d]: alert incomplete", f.name, i)
			}
			if _, ok := a.Labels[LabelSector]; ok {
				t.Errorf("%s[%d]: carries a sector label", f.name, i)
			}
			if _, ok := a.Labels[LabelKPI]; ok {
				t.Errorf("%s[%d]: carries a kpi label", f.name, i)
			}
			u, err := url.Parse(a.GeneratorURL)
			if err != nil || u.Query().Get("g0.expr") == "" {
				t.Errorf("%s[%d]: generatorURL %q has no g0.expr", f.name, i, a.GeneratorURL)
			}
			alerts++
			halves[f.Half]++
		}
	}
	if len(corpus) < 25 || alerts < 150 {
		t.Errorf("corpus has %d alerts from %d rule files, want at least 150 from 25", alerts, len(corpus))
	}
	if halves[halfTune] == 0 || halves[halfHoldout] == 0 {
		t.Errorf("halves %v: both must hold alerts", halves)
	}
}

// score counts the alerts of one half or category.
type score struct {
	n, sector, kpi, action, all int
}

func (s *score) add(sector, kpi, action bool) {
	s.n++
	if sector {
		s.sector++
	}
	if kpi {
		s.kpi++
	}
	if action {
		s.action++
	}
	if sector && kpi && action {
		s.all++
	}
}

func pct(a, n int) float64 {
	if n == 0 {
		return 100
	}
	return 100 * float64(a) / float64(n)
}

func (s score) String() string {
	return fmt.Sprintf("%3d alerts  sector %5.1f%%  kpi %5.1f%%  action %5.1f%%  all %5.1f%%",
		s.n, pct(s.sector, s.n), pct(s.kpi, s.n), pct(s.action, s.n), pct(s.all, s.n))
}

// TestCorpusScore runs the classifier and the default policies over the
// real-world corpus and prints the score per half and per category. The
// split into a tuning half and a held-out half is fixed by the corpus
// (by source file); both halves must score at least 95% (sector, KPI and
// action all right) and no decision may be a wrong page or a wrong none.
func TestCorpusScore(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	eng, err := policies.New(policies.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	halves := map[string]*score{halfTune: {}, halfHoldout: {}}
	cats := map[string]*score{}
	var misses, wrongPageNone []string
	for _, f := range loadCorpus(t) {
		key := f.Half + "/" + f.Category
		if cats[key] == nil {
			cats[key] = &score{}
		}
		for i := range f.Payload.Alerts {
			if i >= len(f.Expect) {
				break
			}
			a := alert.Alert{Alert: f.Payload.Alerts[i]}
			e := f.Expect[i]
			cl := c.Classify(&a)
			d := eng.Decide(&a, &cl, now)
			kpi := ""
			if len(cl.KPIs) > 0 {
				kpi = cl.KPIs[0].ID
			}
			sectorOK, kpiOK := false, false
			for _, acc := range e.Accept {
				if acc.Sector == cl.Sector {
					sectorOK = true
					if acc.KPI == kpi {
						kpiOK = true
					}
				}
			}
			actionOK := d.Action == e.Action
			halves[f.Half].add(sectorOK, kpiOK, actionOK)
			cats[key].add(sectorOK, kpiOK, actionOK)
			if !actionOK && (d.Action == alert.ActionPage || d.Action == alert.ActionNone) {
				wrongPageNone = append(wrongPageNone, fmt.Sprintf("%s[%d] %s: %s by %s, want %s (%q)",
					f.name, i, e.Alertname, d.Action, d.Policy, e.Action, d.Reasons))
			}
			if !(sectorOK && kpiOK && actionOK) {
				misses = append(misses, fmt.Sprintf("%s %s[%d] %s: got %s/%q/%s (candidates %v), want %+v/%s; signals %s",
					f.Half, f.name, i, e.Alertname, cl.Sector, kpi, d.Action, cl.Candidates, e.Accept, e.Action, signalText(cl.Signals)))
			}
		}
	}
	keys := make([]string, 0, len(cats))
	for k := range cats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-26s %s", k, cats[k])
	}
	for _, h := range []string{halfTune, halfHoldout} {
		t.Logf("%-26s %s", "TOTAL "+h, halves[h])
	}
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	for _, h := range []string{halfTune, halfHoldout} {
		if s := halves[h]; pct(s.all, s.n) < 95 {
			t.Errorf("%s half scores %.1f%%, want at least 95%%", h, pct(s.all, s.n))
		}
	}
	for _, w := range wrongPageNone {
		t.Errorf("wrong page/none decision: %s", w)
	}
}

func signalText(sigs []alert.Signal) string {
	parts := make([]string, 0, len(sigs))
	for _, s := range sigs {
		parts = append(parts, fmt.Sprintf("%s:%s→%s/%s@%.2f", s.Kind, s.Value, s.Sector, s.KPI, s.Weight))
	}
	return strings.Join(parts, " ")
}
