package recent

import "testing"

func TestMapKeepsWhatIsUsedAndStaysBounded(t *testing.T) {
	m := New[int, string](4)
	m.Put(1, "one")
	for k := 10; k < 13; k++ {
		m.Put(k, "x")
	}
	// The generation is full: the next Put starts a new one, 1 moves to the
	// previous generation and is still found (and carried over on use).
	m.Put(20, "x")
	if v, ok := m.Get(1); !ok || v != "one" {
		t.Fatalf("Get(1) after one rollover = %q, %v; want one, true", v, ok)
	}
	for k := 30; k < 40; k++ { // two more rollovers without using 10
		m.Put(k, "x")
	}
	if _, ok := m.Get(10); ok {
		t.Fatal("an entry unused for two generations is still remembered")
	}
	if n := m.Len(); n > 8 {
		t.Fatalf("%d entries kept; at most 2×size = 8", n)
	}
	m.Put(50, "y")
	m.Delete(50)
	if _, ok := m.Get(50); ok {
		t.Fatal("Get after Delete found the entry")
	}
}
