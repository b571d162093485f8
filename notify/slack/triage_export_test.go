package slack

import "testing"

// SetMaxJournalRead lowers, for the duration of t, the bound of the
// decision entries one slash command look-up reads.
func SetMaxJournalRead(t testing.TB, n int) {
	t.Helper()
	old := maxJournalRead
	maxJournalRead = n
	t.Cleanup(func() { maxJournalRead = old })
}
