package enrich

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// memoAlerts are every alert of the sector and policy fixtures.
func memoAlerts(t *testing.T) []*alert.Alert {
	t.Helper()
	var out []*alert.Alert
	for _, dir := range []string{"sectors", "policies"} {
		files, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var w webhook
			if err := json.Unmarshal(raw, &w); err != nil {
				continue // not a webhook payload
			}
			for i := range w.Alerts {
				out = append(out, &alert.Alert{Alert: w.Alerts[i]})
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d fixture alerts", len(out))
	}
	return out
}

// clone copies a's labels and annotations so that they can be changed.
func clone(a *alert.Alert) *alert.Alert {
	b := *a
	b.Labels, b.Annotations = map[string]string{}, map[string]string{}
	for k, v := range a.Labels {
		b.Labels[k] = v
	}
	for k, v := range a.Annotations {
		b.Annotations[k] = v
	}
	return &b
}

// A remembered classification is exactly what classifying computes, and
// changing any label, annotation or the generator URL is a new alert.
func TestMemoReturnsWhatClassifyComputes(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	alerts := memoAlerts(t)
	for _, a := range alerts {
		c.Classify(a)
	}
	changed := 0
	for i, a := range alerts {
		want := c.classify(a)
		if got := c.Classify(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("alert %d: remembered %+v, classify gives %+v", i, got, want)
		}
		var variants []*alert.Alert
		for k := range a.Labels {
			b := clone(a)
			b.Labels[k] = "pending_prefill_requests"
			variants = append(variants, b)
		}
		for k := range a.Annotations {
			b := clone(a)
			b.Annotations[k] = "0.97"
			variants = append(variants, b)
		}
		b := clone(a)
		b.GeneratorURL = "http://prometheus/graph?g0.expr=vllm%3Anum_requests_waiting+%3E+10"
		variants = append(variants, b)
		for _, b := range variants {
			want := c.classify(b)
			if !reflect.DeepEqual(want, c.classify(a)) {
				changed++
			}
			if got := c.Classify(b); !reflect.DeepEqual(got, want) {
				t.Fatalf("alert %d changed: got %+v, want %+v (the memo answered for the unchanged alert)", i, got, want)
			}
		}
	}
	if changed < len(alerts) {
		t.Errorf("only %d variants classify differently from their alert: the check above proves little", changed)
	}
}

// The memo holds at most two generations of memoSize, and keeps the alerts
// seen last.
func TestMemoIsBounded(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	base := memoAlerts(t)[0]
	var last *alert.Alert
	for i := range 3 * memoSize {
		last = clone(base)
		last.Labels["instance"] = fmt.Sprintf("node-%d:9100", i)
		c.Classify(last)
	}
	if n := c.memo.Len(); n > 2*memoSize || n < memoSize {
		t.Errorf("memo holds %d classifications, want between %d and %d", n, memoSize, 2*memoSize)
	}
	if _, ok := c.memo.Get(inputKey(last)); !ok {
		t.Error("the last alert classified is not remembered")
	}
}

// Classify is safe for concurrent use with the memo (run with -race).
func TestMemoConcurrentClassify(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	alerts := memoAlerts(t)
	want := make([]alert.Classification, len(alerts))
	for i, a := range alerts {
		want[i] = c.classify(a)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 3 {
				for i := range alerts {
					j := (i + g + r) % len(alerts)
					if got := c.Classify(alerts[j]); !reflect.DeepEqual(got, want[j]) {
						t.Errorf("alert %d: got %+v", j, got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
