package slack

import (
	"testing"
	"time"
)

// SetMaxJournalRead lowers, for the duration of t, the bound of the
// decision entries one slash command look-up reads.
func SetMaxJournalRead(t testing.TB, n int) {
	t.Helper()
	old := maxJournalRead
	maxJournalRead = n
	t.Cleanup(func() { maxJournalRead = old })
}

// HoldCommandSlot takes the slot of the slash commands that read the
// journal, as a command reading it would, with a short wait for the
// others, until the test ends.
func HoldCommandSlot(t testing.TB, tr *Triage) {
	t.Helper()
	old := commandSlotWait
	commandSlotWait = 50 * time.Millisecond
	release, ok := tr.commandSlot(t.Context())
	if !ok {
		t.Fatal("the slot is taken")
	}
	t.Cleanup(func() { release(); commandSlotWait = old })
}
