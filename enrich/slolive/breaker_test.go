package slolive

import (
	"testing"
	"time"
)

func TestBreakerLetsOneProbeThrough(t *testing.T) {
	var b breaker
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if !b.allow(t0) {
			t.Fatalf("closed breaker refused lookup %d", i)
		}
		opened, _ := b.record(false, t0)
		if opened != (i == 2) {
			t.Fatalf("failure %d: opened %v", i+1, opened)
		}
	}
	later := t0.Add(breakerOpenFor)
	if !b.allow(later) {
		t.Fatal("no probe after the open period")
	}
	if b.allow(later) {
		t.Fatal("a second lookup while the probe is under way")
	}
	if _, closed := b.record(true, later); !closed {
		t.Fatal("a successful probe did not close the breaker")
	}
	for i := range 2 {
		if !b.allow(later) {
			t.Fatalf("closed breaker refused lookup %d", i+1)
		}
	}
}
