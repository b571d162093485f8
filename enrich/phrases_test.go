package enrich

import "testing"

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
