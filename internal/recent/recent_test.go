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

// GetOrPut keeps the value remembered (carried over from the previous
// generation too) and remembers the one given only when none is.
func TestGetOrPutKeepsWhatIsRemembered(t *testing.T) {
	m := New[string, int](2)
	if v := m.GetOrPut("a", 1); v != 1 {
		t.Fatalf("GetOrPut on an empty map = %d, want 1", v)
	}
	if v := m.GetOrPut("a", 2); v != 1 {
		t.Fatalf("GetOrPut of a remembered key = %d, want 1", v)
	}
	m.Put("b", 3)
	m.Put("c", 4) // a and b move to the previous generation
	if v := m.GetOrPut("a", 5); v != 1 {
		t.Fatalf("GetOrPut of a key of the previous generation = %d, want 1", v)
	}
	if v, ok := m.Get("a"); !ok || v != 1 {
		t.Fatalf("Get after GetOrPut = %d, %v; want 1 carried over", v, ok)
	}
}
