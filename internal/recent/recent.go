// Package recent remembers what was seen recently in bounded memory: a map
// of two generations, for caches that Alertmanager's repeats keep warm.
package recent

import "sync"

// Map remembers up to 2×size values. When the current generation is full it
// becomes the previous one and a new one starts; a hit in the previous
// generation is carried over. So what is used keeps being remembered, and a
// storm of new keys costs at most two maps. It is safe for concurrent use;
// the zero value is not usable (New).
type Map[K comparable, V any] struct {
	size      int
	mu        sync.Mutex
	cur, prev map[K]V
}

// New returns an empty Map of generations of size entries.
func New[K comparable, V any](size int) *Map[K, V] {
	return &Map[K, V]{size: max(size, 1)}
}

// Get returns the value remembered for k.
func (m *Map[K, V]) Get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.prev[k]
	if ok {
		m.putLocked(k, v)
	}
	return v, ok
}

// Put remembers v for k.
func (m *Map[K, V]) Put(k K, v V) {
	m.mu.Lock()
	m.putLocked(k, v)
	m.mu.Unlock()
}

// Len returns the number of entries remembered (both generations).
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.prev)
}

// Delete forgets k.
func (m *Map[K, V]) Delete(k K) {
	m.mu.Lock()
	delete(m.cur, k)
	delete(m.prev, k)
	m.mu.Unlock()
}

func (m *Map[K, V]) putLocked(k K, v V) {
	if m.cur == nil || len(m.cur) >= m.size {
		m.prev, m.cur = m.cur, make(map[K]V, m.size/4)
	}
	m.cur[k] = v
}
