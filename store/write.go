package store

import (
	"context"
	"errors"
	"time"
)

// Writes are independent writes sent to the store together: one round trip
// per node for all of them, where the separate calls would cost one each.
// Each part means what its method means.
type Writes struct {
	// Set: SET PX of every entry (Set).
	Set []Entry
	// Release: compare-and-delete of every entry (DeleteIfEqual).
	Release []Entry
	// Incidents: incident steps whose results are not needed (Incidents).
	Incidents []IncidentOp
	// Add: members added to sets, with their TTL (AddMembers).
	Add []Members
	// Remove: members removed from sets (RemoveMembers; the remaining
	// counts are not returned).
	Remove []Members
}

// Members names a set, members to add to or remove from it, and (for
// additions) its TTL.
type Members struct {
	Key     string
	TTL     time.Duration
	Members []string
}

// Empty reports whether w writes nothing.
func (w Writes) Empty() bool {
	return len(w.Set) == 0 && len(w.Release) == 0 && len(w.Incidents) == 0 && len(w.Add) == 0 && len(w.Remove) == 0
}

// WriteErrors are the outcomes of the parts of one Write: nil for a part
// that was written (or was empty). A store that could not be reached fails
// every part with an error wrapping ErrUnavailable.
type WriteErrors struct {
	Set, Release, Incidents, Add, Remove error
}

// Err joins the parts' errors (nil when every part was written).
func (e WriteErrors) Err() error {
	return errors.Join(e.Set, e.Release, e.Incidents, e.Add, e.Remove)
}

// Writer is implemented by stores that send several kinds of writes in one
// round trip.
type Writer interface {
	Write(ctx context.Context, w Writes) WriteErrors
}

// ClaimWriter is implemented by stores that take claims and write other
// entries in one round trip.
type ClaimWriter interface {
	// SetNXAndSet is SetNX of claims and Set of also, sent together: err is
	// the claims' (as SetNX's), alsoErr the writes' (as Set's).
	SetNXAndSet(ctx context.Context, claims, also []Entry) (won []bool, err, alsoErr error)
}

// Claim takes claims (SetNX) and writes also (Set) through s: in one round
// trip when s is a ClaimWriter, otherwise one call each. err is the claims'
// error, alsoErr the writes'.
func Claim(ctx context.Context, s Store, claims, also []Entry) (won []bool, err, alsoErr error) {
	if cw, ok := s.(ClaimWriter); ok {
		return cw.SetNXAndSet(ctx, claims, also)
	}
	won, err = s.SetNX(ctx, claims)
	return won, err, s.Set(ctx, also)
}

// Write sends w through s: in one round trip when s is a Writer, otherwise
// part by part (each part one call).
func Write(ctx context.Context, s Store, w Writes) WriteErrors {
	if wr, ok := s.(Writer); ok {
		return wr.Write(ctx, w)
	}
	return writeEach(ctx, s, w)
}

// writeEach writes w one part at a time with the Store's own methods.
func writeEach(ctx context.Context, s Store, w Writes) WriteErrors {
	var e WriteErrors
	if len(w.Set) > 0 {
		e.Set = s.Set(ctx, w.Set)
	}
	if len(w.Release) > 0 {
		e.Release = s.DeleteIfEqual(ctx, w.Release)
	}
	if len(w.Incidents) > 0 {
		_, e.Incidents = s.Incidents(ctx, w.Incidents)
	}
	for _, m := range w.Add {
		if err := s.AddMembers(ctx, m.Key, m.TTL, m.Members...); err != nil && e.Add == nil {
			e.Add = err
		}
	}
	for _, m := range w.Remove {
		if len(m.Members) == 0 {
			continue
		}
		if _, err := s.RemoveMembers(ctx, m.Key, m.Members...); err != nil && e.Remove == nil {
			e.Remove = err
		}
	}
	return e
}
