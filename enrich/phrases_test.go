package enrich

import (
	"os"
	"regexp"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// TestPhraseFilterNeverHidesAPhrase checks the filter's one promise: every
// phrase key and every prefix of one passes it (so readWords finds what a
// map look-up of every run would), while most other words are stopped
// before any map look-up.
func TestPhraseFilterNeverHidesAPhrase(t *testing.T) {
	c, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for k := range c.words {
		h := fnvOffset
		for i := 0; i < len(k); i++ {
			h = fnvAdd(h, []byte{k[i]})
			if !c.phrases.prefix.has(h) {
				t.Fatalf("prefix %q of phrase %q is filtered out", k[:i+1], k)
			}
		}
		if !c.phrases.key.has(h) {
			t.Fatalf("phrase %q is filtered out", k)
		}
	}
	stopped := 0
	others := []string{"zzqx", "frobnicate", "instance", "value", "above", "threshold", "minutes", "the", "for", "is"}
	for _, w := range others {
		if _, ok := c.words[w]; ok {
			continue
		}
		if !c.phrases.key.has(fnvAdd(fnvOffset, []byte(w))) {
			stopped++
		}
	}
	if stopped < len(others)/2 {
		t.Fatalf("the filter stops only %d of %d common non-phrase words", stopped, len(others))
	}
}

// TestSpecificHintsSkipOnlyAlertsWithoutHintKeys checks the short cut of
// specificHints: every key a specific hint reads (number(a, K), ratio(a, K),
// bytesOf(a, K), decibels(a, K), times(a, K1, K2) and value(a, K) in
// hints.go, and the burn-rate windows) is a hint key, and alerts carrying
// one key get the same hints as the full computation.
func TestSpecificHintsSkipOnlyAlertsWithoutHintKeys(t *testing.T) {
	src, err := os.ReadFile("hints.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(Ann\w+)\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		consts[m[1]] = m[2]
	}
	calls := regexp.MustCompile(`(?:number|ratio|bytesOf|decibels|times|value)\(a, (\w+)(?:, (\w+))?\)`).FindAllStringSubmatch(string(src), -1)
	if len(calls) < 20 {
		t.Fatalf("found only %d number/ratio/bytesOf/decibels/times/value calls in hints.go", len(calls))
	}
	for _, m := range calls {
		for _, key := range m[1:] {
			switch key {
			case "", "k", "key", "k1", "k2", "other":
				continue // burnHint's loop over burnWindows; the helpers' own calls; queueTimeHint's AnnComputeTime or AnnLatency
			}
			v, ok := consts[key]
			if !ok || !isHintKey(v) {
				t.Errorf("a hint reads %s (%q), which isHintKey does not know", key, v)
			}
		}
	}
	for _, k := range burnWindows {
		if !isHintKey(k) {
			t.Errorf("burn window %q is not a hint key", k)
		}
	}
	for _, v := range consts {
		for _, val := range []string{"0.7", "2s", "85%", "0"} {
			a := &alert.Alert{}
			a.Annotations = map[string]string{v: val, AnnLatency: "3"}
			a.Labels = map[string]string{"alertname": "X"}
			if got, want := specificHints(a), computeSpecificHints(a); got != want {
				t.Fatalf("%s=%s: got %q, want %q", v, val, got, want)
			}
		}
	}
	if got, want := specificHints(&alert.Alert{}), computeSpecificHints(&alert.Alert{}); got != want {
		t.Fatalf("no keys: got %q, want %q", got, want)
	}
}
