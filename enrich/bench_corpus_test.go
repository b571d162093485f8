package enrich

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// BenchmarkClassifyCorpus classifies the alerts of the real-world corpus
// (testdata/corpus), without the memo: third-party annotations quote their
// labels, name Prometheus, and carry absent() and up expressions, which the
// spec's sector cases of BenchmarkClassify hardly do.
func BenchmarkClassifyCorpus(b *testing.B) {
	c := newClassifier(b, DefaultConfig())
	files, err := filepath.Glob(filepath.Join("..", "testdata", "corpus", "*.json"))
	if err != nil {
		b.Fatal(err)
	}
	var alerts []*alert.Alert
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var f struct {
			Payload webhook `json:"payload"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			b.Fatalf("decode %s: %v", path, err)
		}
		for i := range f.Payload.Alerts {
			alerts = append(alerts, &alert.Alert{Alert: f.Payload.Alerts[i]})
		}
	}
	if len(alerts) == 0 {
		b.Fatal("no corpus alerts")
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.classify(alerts[i%len(alerts)])
	}
}
