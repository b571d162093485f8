package store

import (
	"context"
	"strconv"
	"time"
)

// incidentState is the memory store's copy of an incident's state hash.
type incidentState struct {
	state   string // "", "opening", "open", "resolving"
	token   string
	until   time.Time
	ref     string
	trigger string // the last trigger's time, ms ("" unknown): IncidentOp.Retrigger
	// pending is the retrigger a Join took and its sender has not settled
	// (StepTriggered, StepUntrigger) yet; its token "" when none.
	pending pendingRetrigger
	members map[string]string // fingerprint → startsAt
	// joined is when each member became one (IncidentJoins).
	joined  map[string]time.Time
	expires time.Time
	indexed int64 // the time of its entry in Memory.expiring; 0: none
}

// Incidents applies each step atomically with the same semantics as the
// Redis script (see IncidentStep).
func (m *Memory) Incidents(ctx context.Context, ops []IncidentOp) ([]IncidentResult, error) {
	if err := m.begin(ctx, "incidents"); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	now := m.now()
	out := make([]IncidentResult, len(ops))
	for i, op := range ops {
		if m.incidents == nil {
			m.incidents = map[string]*incidentState{}
		}
		st := m.incidents[op.Key]
		if st == nil || expired(st.expires, now) {
			st = &incidentState{members: map[string]string{}}
			m.incidents[op.Key] = st
		}
		out[i] = st.apply(op, now)
		// An aborted opening keeps its trigger time, as the Redis script's
		// state hash does (a review: their next retriggers differed).
		if len(st.members) == 0 && st.state == "" && st.ref == "" && st.trigger == "" {
			delete(m.incidents, op.Key)
		} else if op.TTL > 0 {
			// A step without a time to live (a retrigger's settle) leaves
			// the incident's as it was, as the Redis script's PEXPIRE-less
			// steps do (a review: the memory store kept a settled
			// incident for good).
			st.expires = expiry(now, op.TTL)
			m.schedule(op.Key, true, st.expires, &st.indexed)
		}
		m.sweep(now)
	}
	return out, nil
}

// RenewIncidents sets the expiry of each incident that exists to ttl from
// now.
func (m *Memory) RenewIncidents(ctx context.Context, keys []string, ttl time.Duration) error {
	if err := m.begin(ctx, "renew incidents"); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.now()
	for _, k := range keys {
		if st := m.incidents[k]; st != nil && !expired(st.expires, now) {
			st.expires = expiry(now, ttl)
			m.schedule(k, true, st.expires, &st.indexed)
		}
	}
	return nil
}

// pendingRetrigger is a retrigger a Join took and its sender has not
// settled yet; its token "" when none.
type pendingRetrigger struct {
	token         string
	until         time.Time
	taken, before string
}

// holds reports whether the unsettled retrigger p still holds other
// senders' Joins at now: before its end, and that end no more than twice
// its lease ahead — a take whose end lies further (the store's clock
// stepped back since it was taken: NTP, a restored or failed-over Redis)
// is void, as past its end (a review: Joins were held busy for the hour
// the clock went back).
func (p *pendingRetrigger) holds(now time.Time) bool {
	taken, _ := strconv.ParseInt(p.taken, 10, 64)
	return now.Before(p.until) && p.until.Sub(now) <= 2*p.until.Sub(time.UnixMilli(taken))
}

func (st *incidentState) apply(op IncidentOp, now time.Time) IncidentResult {
	state := st.state
	if (state == "opening" || state == "resolving") && !now.Before(st.until) {
		state = "" // an expired lease reads as closed
	}
	leased := state == "opening" || state == "resolving"
	mine := leased && st.token == op.Token
	switch op.Step {
	case StepJoin:
		if leased && !mine {
			return IncidentResult{Outcome: OutcomeBusy, Ref: st.ref}
		}
		if op.Retrigger > 0 && state == "open" && st.pending.token != "" && st.pending.token != op.Token && st.pending.holds(now) {
			return IncidentResult{Outcome: OutcomeBusy, Ref: st.ref} // another sender's retrigger in flight
		}
		var added []Member
		stale := false
		for _, mb := range op.Members {
			old, ok := st.members[mb.Fingerprint]
			switch {
			case !ok:
				added = append(added, mb)
			case laterStart(old, mb.StartsAt):
				continue // a late report of an earlier instance: the live one stays
			case old != mb.StartsAt:
				stale = true
			}
			st.members[mb.Fingerprint] = mb.StartsAt
			if !ok || old != mb.StartsAt {
				// Added, or fired anew: when it became a member.
				if st.joined == nil {
					st.joined = map[string]time.Time{}
				}
				st.joined[mb.Fingerprint] = now
			}
		}
		if state == "open" && !stale {
			res := IncidentResult{Outcome: OutcomeOpen, Ref: st.ref, Added: added}
			was := st.trigger
			if p := st.pending; p.token != "" && st.trigger == p.taken && !p.holds(now) {
				was = p.before // never settled, past its end: void
			}
			if op.Retrigger > 0 && dueTrigger(was, now.UnixMilli(), op.Retrigger.Milliseconds()) {
				res.PrevTriggered = was
				st.trigger = strconv.FormatInt(now.UnixMilli(), 10)
				res.Retriggered = st.trigger
				st.pending.token, st.pending.until, st.pending.taken, st.pending.before = op.Token, now.Add(op.Lease), st.trigger, was
			} else if was != st.trigger {
				st.trigger, st.pending.token = was, ""
			}
			return res
		}
		st.state, st.token, st.until = "opening", op.Token, now.Add(op.Lease)
		if op.Retrigger > 0 {
			st.trigger = strconv.FormatInt(now.UnixMilli(), 10) // the opening triggers
		}
		st.pending.token = ""
		return IncidentResult{Outcome: OutcomeOpening, Ref: st.ref, Added: added}
	case StepLeave:
		if leased && !mine {
			return IncidentResult{Outcome: OutcomeBusy, Ref: st.ref}
		}
		removed := st.leave(op.Members)
		if n := len(st.members); n > 0 {
			st.forgetJoins(removed)
			return IncidentResult{Outcome: OutcomeStillOpen, Ref: st.ref, Remaining: int64(n), Removed: removed}
		}
		// Closing: its members' join times stay while it resolves, for
		// an Abort that puts them back (Redis keeps their m: fields);
		// IncidentJoins reads only members, and the resolve clears all.
		st.state, st.token, st.until = "resolving", op.Token, now.Add(op.Lease)
		return IncidentResult{Outcome: OutcomeClosing, Ref: st.ref, Removed: removed}
	case StepOpened:
		if state != "opening" || !mine {
			return IncidentResult{Outcome: OutcomeLost, Ref: st.ref}
		}
		st.state, st.token, st.until = "open", "", time.Time{}
		if op.Ref != "" {
			st.ref = op.Ref
		}
		return IncidentResult{Outcome: OutcomeOK, Ref: st.ref}
	case StepResolved:
		if state != "resolving" || !mine {
			return IncidentResult{Outcome: OutcomeLost, Ref: st.ref}
		}
		*st = incidentState{members: map[string]string{}}
		return IncidentResult{Outcome: OutcomeOK}
	case StepAbort:
		if !mine {
			return IncidentResult{Outcome: OutcomeLost, Ref: st.ref}
		}
		if state == "opening" {
			for _, mb := range op.Members {
				delete(st.members, mb.Fingerprint)
				delete(st.joined, mb.Fingerprint)
			}
			st.state, st.token, st.until = "", "", time.Time{}
		} else {
			for _, mb := range op.Members {
				st.members[mb.Fingerprint] = mb.StartsAt
			}
			st.state, st.token, st.until = "open", "", time.Time{}
			if len(st.members) == 0 {
				// No member left to put back (an unseen resolve's Leave
				// of an incident never opened, or one a truncated
				// webhook emptied): closed, the next firing opens it.
				st.state = ""
			}
		}
		return IncidentResult{Outcome: OutcomeOK, Ref: st.ref}
	case StepRef:
		if state != "" && op.Ref != "" {
			st.ref = op.Ref
		}
		return IncidentResult{Outcome: OutcomeOK, Ref: st.ref}
	case StepUnjoin:
		st.forgetJoins(st.leave(op.Members))
		return IncidentResult{Outcome: OutcomeOK, Ref: st.ref}
	case StepUntrigger:
		if op.Triggered != "" && st.trigger == op.Triggered {
			st.trigger = op.PrevTriggered
		}
		if st.pending.token != "" && st.pending.token == op.Token {
			st.pending.token = ""
		}
		return IncidentResult{Outcome: OutcomeOK, Ref: st.ref}
	case StepTriggered:
		if st.pending.token != "" && st.pending.token == op.Token {
			st.pending.token = ""
		}
		return IncidentResult{Outcome: OutcomeOK, Ref: st.ref}
	}
	return IncidentResult{Outcome: OutcomeLost, Ref: st.ref}
}

// leave removes members as a Leave does — each unless the member started
// after the member's EndsAt (store.Member) — and returns those removed,
// with the starts they held. Their join times stay: a closing keeps them
// for an Abort, the other callers drop them (forgetJoins).
func (st *incidentState) leave(members []Member) []Member {
	var removed []Member
	for _, mb := range members {
		if old, ok := st.members[mb.Fingerprint]; ok && !laterStart(old, mb.EndsAt) {
			delete(st.members, mb.Fingerprint)
			removed = append(removed, Member{Fingerprint: mb.Fingerprint, StartsAt: old})
		}
	}
	return removed
}

// forgetJoins drops the join times of members that left.
func (st *incidentState) forgetJoins(members []Member) {
	for _, mb := range members {
		delete(st.joined, mb.Fingerprint)
	}
}

// IncidentRef implements IncidentRefReader.
func (m *Memory) IncidentRef(ctx context.Context, key string) (string, error) {
	if err := m.begin(ctx, "incident ref"); err != nil {
		return "", err
	}
	defer m.mu.Unlock()
	st := m.incidents[key]
	if st == nil || expired(st.expires, m.now()) {
		return "", nil
	}
	return st.ref, nil
}

// TimeAt implements IncidentJoinsReader: the memory store's clock.
func (m *Memory) TimeAt(context.Context, string) (time.Time, error) { return m.now(), nil }

// IncidentJoins implements IncidentJoinsReader.
func (m *Memory) IncidentJoins(ctx context.Context, keys []string) ([]map[string]time.Time, error) {
	if err := m.begin(ctx, "incident joins"); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	out := make([]map[string]time.Time, len(keys))
	for i, k := range keys {
		st := m.incidents[k]
		if st == nil || expired(st.expires, m.now()) {
			continue
		}
		out[i] = make(map[string]time.Time, len(st.members))
		for fp := range st.members {
			if at, ok := st.joined[fp]; ok {
				out[i][fp] = at
			}
		}
	}
	return out, nil
}

// IncidentStates implements Store.IncidentStates.
func (m *Memory) IncidentStates(ctx context.Context, keys []string) ([]string, error) {
	if err := m.begin(ctx, "incident states"); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	now := m.now()
	out := make([]string, len(keys))
	for i, k := range keys {
		st := m.incidents[k]
		if st == nil || expired(st.expires, now) {
			continue
		}
		out[i] = st.state
		if (st.state == OutcomeOpening || st.state == "resolving") && !now.Before(st.until) {
			out[i] = "" // an expired lease reads as closed
		}
	}
	return out, nil
}
