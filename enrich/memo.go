package enrich

import (
	"hash/maphash"
	"sync"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Alertmanager sends the same alerts again and again: every group_interval
// while a group changes, every repeat_interval while it fires, and on every
// retry. A classification depends only on the alert's labels, annotations
// and generator URL (and the catalog, fixed for a Classifier), so the
// classifier remembers the classifications of the alerts it has seen
// recently, by a hash of those inputs.

// memoSize bounds each of the memo's two generations: at most 2×memoSize
// classifications are kept (a few MiB), whatever the number of distinct
// alerts.
const memoSize = 4096

var memoSeed = maphash.MakeSeed()

// classMemo remembers classifications by inputKey. When the current
// generation is full it becomes the previous one and a new one starts; a
// hit in the previous generation is carried over. So recently seen alerts
// stay, and an alert storm of new ones costs at most two maps.
type classMemo struct {
	mu        sync.Mutex
	cur, prev map[uint64]alert.Classification
}

func (m *classMemo) get(k uint64) (alert.Classification, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.cur[k]; ok {
		return c, true
	}
	c, ok := m.prev[k]
	if ok {
		m.putLocked(k, c)
	}
	return c, ok
}

func (m *classMemo) put(k uint64, c alert.Classification) {
	m.mu.Lock()
	m.putLocked(k, c)
	m.mu.Unlock()
}

func (m *classMemo) putLocked(k uint64, c alert.Classification) {
	if len(m.cur) >= memoSize || m.cur == nil {
		m.prev, m.cur = m.cur, make(map[uint64]alert.Classification, memoSize/4)
	}
	m.cur[k] = c
}

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
