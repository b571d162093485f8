package enrich

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// webhook is the Alertmanager webhook (version 4) payload as it is on the
// wire; decoded with plain encoding/json, as a sanity check of the fixtures
// independent of the router's own decoder.
type webhook struct {
	Version           string          `json:"version"`
	GroupKey          string          `json:"groupKey"`
	TruncatedAlerts   uint64          `json:"truncatedAlerts"`
	Status            string          `json:"status"`
	Receiver          string          `json:"receiver"`
	GroupLabels       template.KV     `json:"groupLabels"`
	CommonLabels      template.KV     `json:"commonLabels"`
	CommonAnnotations template.KV     `json:"commonAnnotations"`
	ExternalURL       string          `json:"externalURL"`
	Alerts            template.Alerts `json:"alerts"`
}

func TestSectorFixturesClassifyAsTheirSector(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	files, err := filepath.Glob(filepath.Join("..", "testdata", "sectors", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range files {
		sector := strings.TrimSuffix(filepath.Base(path), ".json")
		seen[sector] = true
		t.Run(sector, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var w webhook
			if err := json.Unmarshal(raw, &w); err != nil {
				t.Fatalf("decode %s: %v", path, err)
			}
			if w.Version != "4" || w.Receiver == "" || w.GroupKey == "" || w.ExternalURL == "" || len(w.GroupLabels) == 0 {
				t.Errorf("payload envelope incomplete: %+v", w)
			}
			if n := len(w.Alerts); n < 2 || n > 3 {
				t.Errorf("%d alerts, want 2-3", n)
			}
			for i := range w.Alerts {
				a := alert.Alert{Alert: w.Alerts[i]}
				if a.Fingerprint == "" || a.StartsAt.IsZero() || (a.Status != "firing" && a.Status != "resolved") {
					t.Errorf("alert %d incomplete: %+v", i, a.Alert)
				}
				got := c.Classify(&a)
				if got.Sector != sector {
					t.Errorf("alert %d (%s) classified as %q, want %q; signals %+v candidates %v",
						i, a.Labels["alertname"], got.Sector, sector, got.Signals, got.Candidates)
				}
			}
		})
	}
	for _, id := range SectorIDs() {
		if !seen[id] {
			t.Errorf("no fixture testdata/sectors/%s.json", id)
		}
	}
}
