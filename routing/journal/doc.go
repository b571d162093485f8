// Package journal is the router's decision journal: one Entry per alert the
// router decided (what it concluded, why, who was notified and how delivery
// went) and one dead-letter Entry per notification that failed permanently,
// kept in a store.Journal shared by every replica.
//
// The pipeline hands entries to a Writer, which never blocks a webhook: a
// bounded channel feeds one goroutine that appends in batches, and entries
// that do not fit are dropped and counted. A batch is stored as frames of
// up to 32 entries of one kind, compressed (frame.go); an entry's id is its
// record's id, with its index in the record after a dot when it is not the
// first. Read, Replayer and Simulate are
// the journal's readers: the operations console, `router dead-letters` and
// `router simulate`.
package journal
