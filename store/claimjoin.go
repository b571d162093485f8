package store

import "context"

// OutcomeSkipped answers a step of ClaimJoin left without members: every
// member's claim was lost, so the step changed nothing.
const OutcomeSkipped = "skipped"

// ClaimedOp is an incident step of ClaimJoin (a Join or a Leave) whose
// members are each carried by a claim: Claims[i] is the index, in
// ClaimJoin's claims, of the claim of Op.Members[i] (one per member), and
// the claim's value is Op.Token.
type ClaimedOp struct {
	Op     IncidentOp
	Claims []int
	// After are keys read once the step is applied, their answers in
	// ClaimJoinResult.After: what another writer set before the step is
	// seen (a click's mark that the incident is being resolved by hand,
	// written after the caller's earlier read and before its Join).
	// Keys of the step's incident (its hash tag).
	After []string
}

// ClaimJoinResult is what ClaimJoin answers.
type ClaimJoinResult struct {
	// Won reports, for each claim, whether this call took it (as SetNX).
	Won []bool
	// Incidents answers each op, in order: a member whose claim this call
	// did not take was left out of its step, and a step left without
	// members answers OutcomeSkipped and changed nothing.
	Incidents []IncidentResult
	// ClaimErr is the claims' error (as SetNX's); when set, the steps'
	// answers are unknown and IncidentsErr is set too.
	ClaimErr error
	// AlsoErr is the other writes' error (as Set's).
	AlsoErr error
	// IncidentsErr is the steps' error (as Incidents').
	IncidentsErr error
	// After answers each op's After keys, in order (as Get's values and
	// found), read after every step of the call was applied; nil when no
	// op asked or AfterErr is set.
	After []AfterRead
	// AfterErr is the error of the After reads.
	AfterErr error
}

// AfterRead is what one ClaimedOp's After keys held once its step was
// applied.
type AfterRead struct {
	Values []string
	Found  []bool
}

// afterKeys are the After keys of ops, in order.
func afterKeys(ops []ClaimedOp) []string {
	var keys []string
	for _, o := range ops {
		keys = append(keys, o.After...)
	}
	return keys
}

// splitAfter hands each op its share of values and found, read for
// afterKeys(ops).
func splitAfter(ops []ClaimedOp, values []string, found []bool) []AfterRead {
	out := make([]AfterRead, len(ops))
	o := 0
	for i, op := range ops {
		n := len(op.After)
		out[i] = AfterRead{Values: values[o : o+n : o+n], Found: found[o : o+n : o+n]}
		o += n
	}
	return out
}

// ClaimJoiner is implemented by stores that take claims, write other
// entries and apply incident steps whose members depend on those claims in
// one round trip.
type ClaimJoiner interface {
	ClaimJoin(ctx context.Context, claims, also []Entry, ops []ClaimedOp) ClaimJoinResult
}

// ClaimJoin takes claims (SetNX), writes also (Set) and applies ops
// (Incidents), each op with only the members whose claim this call took: a
// member is never joined to, or removed from, an incident for a claim
// another sender holds, so it never races that sender's own step. In one
// round trip when s is a ClaimJoiner that can (a single Redis node or
// Sentinel), otherwise Claim, then Incidents on the members won.
func ClaimJoin(ctx context.Context, s Store, claims, also []Entry, ops []ClaimedOp) ClaimJoinResult {
	if cj, ok := s.(ClaimJoiner); ok {
		return cj.ClaimJoin(ctx, claims, also, ops)
	}
	return claimThenJoin(ctx, s, claims, also, ops)
}

// claimThenJoin is ClaimJoin in two calls: the claims and writes, then the
// steps with the members won.
func claimThenJoin(ctx context.Context, s Store, claims, also []Entry, ops []ClaimedOp) ClaimJoinResult {
	var res ClaimJoinResult
	res.Won, res.ClaimErr, res.AlsoErr = Claim(ctx, s, claims, also)
	if res.ClaimErr != nil {
		res.IncidentsErr = res.ClaimErr
		return res
	}
	res.Incidents = make([]IncidentResult, len(ops))
	var send []IncidentOp
	var at []int
	for i, c := range ops {
		op := c.Op
		op.Members = nil
		for j, m := range c.Op.Members {
			if res.Won[c.Claims[j]] {
				op.Members = append(op.Members, m)
			}
		}
		if len(op.Members) == 0 {
			res.Incidents[i] = IncidentResult{Outcome: OutcomeSkipped}
			continue
		}
		send = append(send, op)
		at = append(at, i)
	}
	if len(send) == 0 {
		return res
	}
	answers, err := s.Incidents(ctx, send)
	if err != nil {
		res.Incidents, res.IncidentsErr = nil, err
		return res
	}
	for j, a := range answers {
		res.Incidents[at[j]] = a
	}
	if keys := afterKeys(ops); len(keys) > 0 {
		// Read once the steps are applied.
		values, found, err := s.Get(ctx, keys)
		if err != nil {
			res.AfterErr = err
			return res
		}
		res.After = splitAfter(ops, values, found)
	}
	return res
}
