package routing

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// AdoptReplayedOpening records in the store the incident that n, a dead
// letter's opening just sent again (router dead-letters replay, the
// console's Replay), opened at an integration that threads updates under
// the incident's parent (Slack's Web API): its firing alerts join the
// incident and its parent (n.Ref, which the send set) is kept, as the
// pipeline does for an opening it delivers. Before, the incident stayed
// unknown to the store: its next notification — Alertmanager's retry of
// the same alerts, a new alert — posted a second parent, and the replayed
// one was left saying firing for good (audit REPLAY). An incident another
// notification opened meanwhile keeps its own parent (the replayed one is
// then an orphan, as before); other integrations (PagerDuty: its dedup key
// folds a trigger into the open incident) are left as they are. The
// alerts in resolvedSince (journal.DeadLetter.ResolvedSince) do not join.
func (p *Pipeline) AdoptReplayedOpening(ctx context.Context, n *alert.Notification, resolvedSince []string) error {
	if !n.Opening || n.Ref == "" || n.IncidentResolved || n.Incident == "" {
		return nil
	}
	threads := false
	for _, in := range p.Receivers[n.Receiver] {
		if in.Name == n.Integration {
			t, ok := in.Notifier.(alert.ThreadsUpdates)
			threads = ok && t.ThreadsUpdates()
		}
	}
	if !threads {
		return nil
	}
	var members []store.Member
	for _, r := range n.Results {
		// An alert that resolved since is no member: the incident closes
		// when the others resolve (a review: the parent said firing for
		// good, and took in the next episode).
		if r.Alert != nil && r.Alert.Firing() && !slices.Contains(resolvedSince, r.Alert.Fingerprint) {
			members = append(members, store.Member{Fingerprint: r.Alert.Fingerprint, StartsAt: strconv.FormatInt(r.Alert.IdentityStart().UnixMilli(), 10)})
		}
	}
	if len(members) == 0 {
		return nil
	}
	key := store.IncidentKey(p.Dedup.KeyPrefix, n.Incident, n.Receiver+"/"+n.Integration)
	token := dedup.NewToken()
	res, err := p.Store.Incidents(ctx, []store.IncidentOp{{Key: key, Step: store.StepJoin, Members: members, Token: token, Lease: settleTimeout, TTL: p.Dedup.NotifiedTTL}})
	if err != nil {
		return fmt.Errorf("record the replayed opening of incident %s: %w", n.Incident, err)
	}
	if res[0].Outcome != store.OutcomeOpening {
		return nil // open already, with its own parent; or being opened by another sender
	}
	if _, err := p.Store.Incidents(ctx, []store.IncidentOp{{Key: key, Step: store.StepOpened, Token: token, Ref: n.Ref, TTL: p.Dedup.NotifiedTTL}}); err != nil {
		return fmt.Errorf("record the replayed opening of incident %s: %w", n.Incident, err)
	}
	p.refs.note(key, n.Ref, time.Now())
	return nil
}

// MarkReplayedFirings writes, for n — a dead letter's firing just sent
// again — the markers of its alerts still firing (not in resolvedSince)
// at n's integration, as the settle writes them for a firing the pipeline
// delivers: Alertmanager's next repeat of those alerts is deduplicated.
// Before, it found no marker and sent them again (a thread reply under the
// replayed parent; PagerDuty's trigger again). A marker already there —
// another sender's, a resolve's, a claim — is kept.
func (p *Pipeline) MarkReplayedFirings(ctx context.Context, n *alert.Notification, resolvedSince []string) error {
	if n.Kind != alert.KindFiring || n.IncidentResolved {
		return nil
	}
	var integ *Integration
	for i, in := range p.Receivers[n.Receiver] {
		if in.Name == n.Integration {
			integ = &p.Receivers[n.Receiver][i]
		}
	}
	if integ == nil {
		return nil
	}
	now := p.now()
	var marks []store.Entry
	for _, r := range n.Results {
		if r.Alert == nil || !r.Alert.Firing() || slices.Contains(resolvedSince, r.Alert.Fingerprint) {
			continue
		}
		start := strconv.FormatInt(r.Alert.IdentityStart().UnixMilli(), 10)
		m := dedup.Marker{Tier: dedup.Tier(&r.Decision), At: now, Incident: r.Incident}
		marks = append(marks, store.Entry{Key: p.markerKey(r.Alert.Fingerprint, n.Receiver, integ, start), Value: m.String(), TTL: p.Dedup.NotifiedTTL})
	}
	if len(marks) == 0 {
		return nil
	}
	if _, err := p.Store.SetNX(ctx, marks); err != nil {
		return fmt.Errorf("mark the replayed firings of incident %s notified: %w", n.Incident, err)
	}
	return nil
}
