package enrich

import (
	"hash/maphash"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Alertmanager sends the same alerts again and again: every group_interval
// while a group changes, every repeat_interval while it fires, and on every
// retry. A classification depends only on the alert's labels, annotations
// and generator URL (and the catalog, fixed for a Classifier), so the
// classifier remembers the classifications of the alerts it has seen
// recently, by a hash of those inputs.

// memoSize bounds each of the memo's two generations (internal/recent): at
// most 2×memoSize classifications are kept (a few MiB), whatever the number
// of distinct alerts; the recently seen stay.
const memoSize = 4096

var memoSeed = maphash.MakeSeed()

// inputKey hashes what a classification depends on: every label and
// annotation (in any order: the pairs' hashes are summed) and the
// generator URL. 64 bits with a per-process random seed: two different
// alerts share a key with a probability of about n²/2⁶⁵ for n alerts
// remembered, i.e. never in practice.
func inputKey(a *alert.Alert) uint64 {
	var h maphash.Hash
	h.SetSeed(memoSeed)
	var sum uint64
	pair := func(kind byte, k, v string) {
		h.Reset()
		_ = h.WriteByte(kind)
		_, _ = h.WriteString(k)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(v)
		sum += h.Sum64()
	}
	for k, v := range a.Labels {
		pair('l', k, v)
	}
	for k, v := range a.Annotations {
		pair('a', k, v)
	}
	pair('g', "", a.GeneratorURL)
	return sum
}
