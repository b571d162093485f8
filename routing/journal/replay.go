package journal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// Replay errors callers branch on; the console maps them to 404 and 400.
var (
	ErrNotFound      = errors.New("no such dead letter")
	ErrNotDeadLetter = errors.New("journal entry is not a dead letter")
	// ErrDeliveredSince: the integration delivered a notification of the
	// dead letter's incident after it failed (Alertmanager's retry went
	// through): sending the old one now would page again for something
	// handled, or re-open a PagerDuty incident the router will never close.
	ErrDeliveredSince = errors.New("a later notification of the incident was delivered to that integration since: nothing sent")
	// ErrResolvedSince: every alert a firing dead letter notifies resolved
	// after it failed (the journal holds a later resolved decision of each,
	// delivered or not): sending it now would page, or open a ticket, for
	// something over — a PagerDuty incident nothing closes unless its
	// resolve, a dead letter of its own, is replayed too.
	ErrResolvedSince = errors.New("every alert of the notification resolved since: nothing sent")
	// ErrFiredSince: an alert a resolve's dead letter resolves fired again
	// since, a new start: the resolve would close an incident that fires.
	ErrFiredSince = errors.New("an alert of the incident fired since and fires on: nothing sent (it would close an incident that fires; once those alerts resolve, their resolve closes the incident, or replay this one then)")
)

// SendFunc sends a dead letter again through the current configuration.
type SendFunc func(ctx context.Context, d DeadLetter) error

// Claims is the part of store.Store the replayer needs: one claim per dead
// letter and one per notification (its copies share it), so that it is
// replayed once across replicas and retries.
type Claims interface {
	SetNX(ctx context.Context, entries []store.Entry) ([]bool, error)
	Set(ctx context.Context, entries []store.Entry) error
	Get(ctx context.Context, keys []string) (values []string, found []bool, err error)
	DeleteIfEqual(ctx context.Context, entries []store.Entry) error
}

// DefaultReplayClaimTTL is how long a replayed mark lives: longer than the
// journal's default age retention, so a dead letter still listed is never
// replayed twice.
const DefaultReplayClaimTTL = 30 * 24 * time.Hour

// replayHold is how long a replay's claims live while its send runs: made
// DefaultReplayClaimTTL (the Replayer's TTL) once the send succeeded,
// released when it failed. A replica that dies mid-send, or a release
// that fails (Redis unreachable), leaves a claim that lapses by itself
// instead of marking the dead letter replayed for a month with nothing
// sent; a send that succeeded is kept from a second one by its journaled
// replay all the same (sentBefore). The send is bounded by replaySendTimeout,
// well inside it.
const (
	replayHold        = 10 * time.Minute
	replaySendTimeout = 2 * time.Minute
)

// Replayer sends dead letters again, each at most once: it claims the dead
// letter's id and its notification (sameNotification: Alertmanager's
// retries of one failing notification write several dead letters of it) in
// the store (SET NX) before sending, keeps the claims once sent and
// releases them when the send fails. It is safe for concurrent use.
type Replayer struct {
	Journal store.Journal
	Claims  Claims
	Send    SendFunc
	// KeyPrefix prefixes the claim keys (the store's key prefix).
	KeyPrefix string
	// Owner is written in the claim (e.g. the replica id).
	Owner string
	// TTL is the claim's lifetime (DefaultReplayClaimTTL when 0).
	TTL time.Duration
	// Hold is the claims' lifetime while the send runs (replayHold when 0).
	Hold time.Duration
	// Via says what replays (Replay.Via: "console", "cli"), journaled with
	// each replay's outcome.
	Via string
	// Recorder journals each replay's outcome (a KindReplay entry, sent or
	// failed), so that the incident's page shows it beside the dead
	// letter; *Writer implements it. nil: appended to Journal at once (the
	// CLI, which has no writer), a failure to append logged nowhere — the
	// send is done, and the dead letter is marked replayed all the same.
	Recorder interface{ Write(entries ...Entry) }
}

func (r *Replayer) key(id string) string { return store.Key(r.KeyPrefix, "replayed", id, "") }

// notificationKey is the claim of d's notification, which every copy of it
// takes before sending: two copies replayed at once (two SREs, the CLI
// and the console) send once.
func (r *Replayer) notificationKey(d *DeadLetter) string {
	sum := sha256.Sum256([]byte(sameNotification(d)))
	return store.Key(r.KeyPrefix, "replayed-notification", hex.EncodeToString(sum[:16]), "")
}

// Replay sends the dead letter with the given id. It returns sent=false and
// no error when the dead letter, or another copy of its notification, was
// already replayed (by anyone) or is being replayed, ErrNotFound or
// ErrNotDeadLetter for a wrong id, ErrDeliveredSince or ErrResolvedSince
// when it is superseded, and the send's error (claims released, so a later
// replay tries again) when sending failed. sent=true with an error: sent,
// but a mark of it was not written.
func (r *Replayer) Replay(ctx context.Context, id string) (sent bool, err error) {
	if !ValidID(id) {
		return false, fmt.Errorf("replay %q: %w", id, ErrNotFound)
	}
	e, ok, err := Get(ctx, r.Journal, id)
	if err != nil {
		return false, fmt.Errorf("replay %s: %w", id, err)
	}
	if !ok {
		return false, fmt.Errorf("replay %s: %w", id, ErrNotFound)
	}
	if e.Kind != KindDeadLetter || e.DeadLetter == nil {
		return false, fmt.Errorf("replay %s: %w", id, ErrNotDeadLetter)
	}
	// One read of the journal: the other dead letters of this one's
	// notification (Alertmanager's retries failing alike).
	copies, later, err := r.copiesOf(ctx, e)
	if err != nil {
		return false, fmt.Errorf("replay %s: %w", id, err)
	}
	if newer, err := r.firstReplayed(ctx, later); err != nil {
		return false, fmt.Errorf("replay %s: %w", id, err)
	} else if newer != "" {
		// A later copy was replayed: this one was with it.
		return false, r.markRepeated(ctx, []string{id}, newer)
	}
	sent, err = r.replay(ctx, liveJournal{r.Journal}, &e, copies)
	if sent {
		// Its other copies, older and newer, are handled with it: a
		// replay --all, an old replica's included, sends none of them.
		if merr := r.markRepeated(ctx, copies, id); merr != nil {
			err = errors.Join(err, fmt.Errorf("replay %s: sent, but its other dead letters are not marked replayed: %w", id, merr))
		}
	}
	return sent, err
}

// copiesOf returns the ids of the other dead letters of e's notification
// (sameNotification) in the journal, and of those the ones written after
// e.
func (r *Replayer) copiesOf(ctx context.Context, e Entry) (copies, later []string, err error) {
	all, err := Read(ctx, r.Journal, Query{Kind: KindDeadLetter})
	if err != nil {
		return nil, nil, fmt.Errorf("read the dead letters: %w", err)
	}
	k := sameNotification(e.DeadLetter)
	after := false // the journal's order
	for _, l := range all {
		switch {
		case l.ID == e.ID:
			after = true
		case l.DeadLetter != nil && sameNotification(l.DeadLetter) == k:
			copies = append(copies, l.ID)
			if after {
				later = append(later, l.ID)
			}
		}
	}
	return copies, later, nil
}

// firstReplayed returns the first of ids that was replayed, "" when none
// was.
func (r *Replayer) firstReplayed(ctx context.Context, ids []string) (string, error) {
	if len(ids) == 0 {
		return "", nil
	}
	done, err := r.Replayed(ctx, ids)
	if err != nil {
		return "", fmt.Errorf("dead letter replay marks: %w", err)
	}
	for i, d := range done {
		if d {
			return ids[i], nil
		}
	}
	return "", nil
}

// replay sends dead letter e (copies: the other dead letters of its
// notification) unless the journal, as view reads it, supersedes it.
func (r *Replayer) replay(ctx context.Context, view journalView, e *Entry, copies []string) (bool, error) {
	d, at := e.DeadLetter, e.Time
	sup, err := r.since(ctx, view, d, at)
	switch {
	case err != nil:
		return false, fmt.Errorf("replay %s: read the journal since: %w", d.ID, err)
	case !sup.delivered.IsZero():
		return false, fmt.Errorf("replay %s (%s/%s, incident %s, delivered %s): %w", d.ID, d.Receiver, d.Integration, d.Incident, sup.delivered.UTC().Format(time.RFC3339), ErrDeliveredSince)
	case sup.resolved:
		return false, fmt.Errorf("replay %s (%s/%s, incident %s): %w", d.ID, d.Receiver, d.Integration, d.Incident, ErrResolvedSince)
	case sup.refired:
		return false, fmt.Errorf("replay %s (%s/%s, incident %s): %w", d.ID, d.Receiver, d.Integration, d.Incident, ErrFiredSince)
	}
	owner := holdPrefix + r.Owner + "/" + token()
	// The notification's claim first, alone: a copy holding it is being
	// sent, or was. Then the ids of this dead letter and of its copies: a
	// replica of an earlier build claims the id it replays alone (a review:
	// 9 notifications in 20 sent twice, one replay on each build).
	first := []store.Entry{{Key: r.notificationKey(d), Value: d.ID + "/" + owner, TTL: r.hold()}}
	ids := []store.Entry{{Key: r.key(d.ID), Value: owner, TTL: r.hold()}}
	for _, id := range copies {
		ids = append(ids, store.Entry{Key: r.key(id), Value: owner, TTL: r.hold()})
	}
	release := func(entries []store.Entry) error {
		return r.Claims.DeleteIfEqual(context.WithoutCancel(ctx), entries)
	}
	var claims []store.Entry
	for _, part := range [][]store.Entry{first, ids} {
		won, err := r.Claims.SetNX(ctx, part)
		lost := -1
		for i := range part {
			if err == nil && won[i] {
				claims = append(claims, part[i])
			} else if lost < 0 {
				lost = i
			}
		}
		if lost < 0 {
			continue
		}
		if rerr := release(claims); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release claims: %w", rerr))
		}
		if err != nil {
			return false, fmt.Errorf("replay %s: claim: %w", d.ID, err)
		}
		return false, r.inFlight(ctx, d.ID, part[lost].Key)
	}
	if ok, err := r.sentBefore(ctx, view, e, copies); err != nil || ok {
		// Sent by a replay whose marks did not last: sending again would
		// page twice.
		if err == nil {
			err = r.Claims.Set(context.WithoutCancel(ctx), r.kept(claims, d.ID))
		} else if rerr := release(claims); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release claims: %w", rerr))
		}
		if err != nil {
			return false, fmt.Errorf("replay %s: %w", d.ID, err)
		}
		return false, nil
	}
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, min(replaySendTimeout, r.hold()/2))
	send := *d
	send.ResolvedSince = sup.resolvedAlerts
	send.Results = withoutAlerts(d.Results, sup.resolvedAlerts)
	err = r.Send(sctx, send)
	cancel()
	if err != nil {
		r.record(ctx, e, time.Since(start), err)
		// Released so that replaying after the cause is fixed sends it;
		// a release that fails lapses with replayHold.
		if rerr := release(claims); rerr != nil {
			err = errors.Join(err, fmt.Errorf("release claims (replayable again within %s): %w", r.hold(), rerr))
		}
		return false, fmt.Errorf("replay %s to %s/%s: %w", d.ID, d.Receiver, d.Integration, err)
	}
	r.record(ctx, e, time.Since(start), nil)
	kept := r.kept(claims, d.ID)
	if err := r.Claims.Set(context.WithoutCancel(ctx), kept); err != nil {
		// Tried again in the background within the hold: the journaled
		// replay may have failed with the same store (a review), and once
		// the hold lapses nothing else keeps it from a second send.
		go r.keepMarks(kept)
		return true, fmt.Errorf("replay %s: sent, but not marked replayed yet (tried again for %s; its journaled replay, if written, keeps it from a second send): %w", d.ID, r.hold()/2, err)
	}
	return true, nil
}

// withoutAlerts returns results (a dead letter's, []*alert.Result as
// JSON) without the alerts of fingerprints fps: a replayed firing does not
// draw as firing an alert that resolved since (a review: its Slack parent
// said "2 firing" of one). results as they are when none is left out, or
// when they do not decode.
func withoutAlerts(results json.RawMessage, fps []string) json.RawMessage {
	if len(fps) == 0 {
		return results
	}
	var all []json.RawMessage
	if json.Unmarshal(results, &all) != nil {
		return results
	}
	kept := all[:0:0]
	for _, raw := range all {
		var r struct {
			Alert *struct {
				Fingerprint string `json:"fingerprint"`
			}
		}
		if json.Unmarshal(raw, &r) == nil && r.Alert != nil && slices.Contains(fps, r.Alert.Fingerprint) {
			continue
		}
		kept = append(kept, raw)
	}
	if len(kept) == len(all) || len(kept) == 0 {
		return results
	}
	out, err := json.Marshal(kept)
	if err != nil {
		return results
	}
	return out
}

// holdPrefix starts the value of a claim held while its send runs; a kept
// mark's value is the dead letter's id ("sent/…") or "repeated-by/…".
const holdPrefix = "holding/"

// ErrInFlight: the dead letter, or a copy of its notification, is being
// replayed (its claim held while that send runs): it stays replayable if
// that send fails.
var ErrInFlight = errors.New("being replayed (its claim held while that send runs): if that send fails it stays replayable")

// inFlight returns, for a claim at key that another replay holds, nil when
// that replay sent (or was marked done), ErrInFlight (with who holds it)
// while its send runs.
func (r *Replayer) inFlight(ctx context.Context, id, key string) error {
	v, found, err := r.Claims.Get(ctx, []string{key})
	if err != nil || !found[0] {
		return nil // sent, or released since: a replay now tries again
	}
	if _, rest, ok := strings.Cut(v[0], holdPrefix); ok {
		who, _, _ := strings.Cut(rest, "/")
		return fmt.Errorf("replay %s: by %s: %w", id, who, ErrInFlight)
	}
	return nil
}

// keepMarks writes a sent replay's marks, retrying for half the hold.
func (r *Replayer) keepMarks(kept []store.Entry) {
	deadline := time.Now().Add(r.hold() / 2)
	for wait := time.Second; time.Now().Before(deadline); wait = min(2*wait, 30*time.Second) {
		time.Sleep(min(wait, time.Until(deadline)))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := r.Claims.Set(ctx, kept)
		cancel()
		if err == nil {
			return
		}
	}
}

// kept returns the marks of a replay of dead letter id that was sent: the
// notification's and the id's say "sent/", its copies' "repeated-by/".
func (r *Replayer) kept(claims []store.Entry, id string) []store.Entry {
	out := slices.Clone(claims)
	for i := range out {
		out[i].TTL = r.ttl()
		switch out[i].Key {
		case r.key(id):
			out[i].Value = "sent/" + r.Owner
		case claims[0].Key:
			out[i].Value = id + "/sent/" + r.Owner
		default:
			out[i].Value = "repeated-by/" + id
		}
	}
	return out
}

// sentBefore reports whether the journal holds a sent replay of e or of
// one of copies, the other dead letters of its notification.
func (r *Replayer) sentBefore(ctx context.Context, view journalView, e *Entry, copies []string) (bool, error) {
	all, err := view.replays(ctx, e.Time, append([]string{e.ID}, copies...))
	if err != nil {
		return false, fmt.Errorf("read the replays: %w", err)
	}
	for _, l := range all {
		if len(l.Deliveries) > 0 && l.Deliveries[0].Outcome == OutcomeSent {
			return true, nil
		}
	}
	return false, nil
}

// NewReplay returns the entry of dead letter e sent again by owner (a
// replica, "cli@host") via what (Replay.Via), at now: sent, or failed
// with cause, after latency.
func NewReplay(e *Entry, owner, via string, now time.Time, latency time.Duration, cause error) Entry {
	d := e.DeadLetter
	out := Delivery{Receiver: d.Receiver, Integration: d.Integration, Outcome: OutcomeSent, Attempts: 1, Latency: latency, Closed: d.IncidentResolved}
	if cause != nil {
		out.Outcome, out.Error = OutcomeFailed, cause.Error()
	}
	return Entry{Kind: KindReplay, Time: now, Replica: owner, Incident: d.Incident,
		Fingerprint: e.Fingerprint, Alertname: e.Alertname, Status: e.Status,
		Decision: alert.Decision{Action: d.Action}, Deliveries: []Delivery{out},
		Replay: &Replay{DeadLetter: e.ID, Via: via, Kind: d.Kind, Action: d.Action}}
}

// record journals the outcome of e's send (cause nil: sent): through the
// Recorder, else appended to the journal at once.
func (r *Replayer) record(ctx context.Context, e *Entry, latency time.Duration, cause error) {
	entry := NewReplay(e, r.Owner, r.Via, time.Now(), latency, cause)
	if r.Recorder != nil {
		r.Recorder.Write(entry)
		return
	}
	_ = appendEntry(context.WithoutCancel(ctx), r.Journal, entry)
}

// appendEntry appends e to j at once, a frame of its own: for the CLI,
// which has no Writer.
func appendEntry(ctx context.Context, j store.Journal, e Entry) error {
	data, err := encodeFrame([]Entry{e}, &frameBuffers{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, appendTimeout)
	defer cancel()
	_, err = j.AppendJournal(ctx, []store.JournalRecord{{Kind: string(e.Kind), Data: data}})
	return err
}

// supersession is what the journal says happened to a dead letter's
// notification since it failed (Replayer.since).
type supersession struct {
	// delivered: when a later notification of its incident was delivered
	// to its integration (ErrDeliveredSince); zero when none was.
	delivered time.Time
	// resolved: every alert a firing dead letter fires resolved since
	// (ErrResolvedSince).
	resolved bool
	// refired: an alert a resolve's dead letter resolves fired again
	// since, a later start, and fires on — or, for a resolve closing the
	// incident, any alert of the incident fired since and fires on
	// (ErrFiredSince).
	refired bool
	// resolvedAlerts are the firing dead letter's alerts that resolved
	// since (DeadLetter.ResolvedSince).
	resolvedAlerts []string
}

// refireCheck follows, decision by decision, oldest first from a resolve's
// dead letter on, whether the incident fires again since it failed
// (ErrFiredSince): one of its alerts in a new episode (a later start: an
// HA peer's lagging copy of the same episode is not), or, for a resolve
// that closes the incident, any alert of it — the incident fires at the
// integration (PagerDuty's dedup key is the incident's; a review saw a
// replayed resolve close PagerDuty while another alert, folded in, fired)
// —, routed to its receiver and not decided none, until that alert
// resolved too (a re-fire decided none, or resolved since, keeps no
// incident open: a review saw the resolve refused for good). Part of
// SinceCheck.
type refireCheck struct {
	d      *DeadLetter
	starts map[string]time.Time // the resolve's alerts: their start
	refire map[string]time.Time // the alerts firing since: their start
}

// newRefireCheck returns the check of dead letter d (nil when d is not a
// resolve's: nothing to check).
func newRefireCheck(d *DeadLetter) *refireCheck {
	if d == nil || d.Kind != alert.KindResolved {
		return nil
	}
	c := &refireCheck{d: d, starts: map[string]time.Time{}, refire: map[string]time.Time{}}
	for _, a := range d.alerts() {
		c.starts[a.Fingerprint] = a.StartsAt
	}
	return c
}

// Observe notes e, the next decision of the dead letter's incident
// journaled after it.
func (c *refireCheck) Observe(e *Entry) {
	if c == nil || e.Incident != c.d.Incident {
		return
	}
	start, own := c.starts[e.Fingerprint]
	switch {
	case e.Status == "firing" && e.Decision.Action != alert.ActionNone && slices.Contains(e.Receivers, c.d.Receiver):
		if (own && e.StartsAt.After(start)) || (!own && c.d.IncidentResolved) {
			c.refire[e.Fingerprint] = e.StartsAt
		}
	case e.Status == "resolved":
		if rs, ok := c.refire[e.Fingerprint]; ok && !e.StartsAt.Before(rs) {
			delete(c.refire, e.Fingerprint)
		}
	}
}

// Refired reports whether an alert the check saw fire since fires on.
func (c *refireCheck) Refired() bool { return c != nil && len(c.refire) > 0 }

// SinceLookback is how far before a dead letter's time the journal is read
// for the resolves of its alerts: its decision is journaled when the
// webhook arrives and the dead letter only once the sends gave up, and a
// resolve of the same alerts decided meanwhile (a review: 7 s before) is
// a resolve since all the same.
const SinceLookback = 10 * time.Minute

// since reads the journal from the dead letter's time on (sinceLookback
// before, for resolves of the same start or later) for what supersedes it.
func (r *Replayer) since(ctx context.Context, view journalView, d *DeadLetter, at time.Time) (supersession, error) {
	var sup supersession
	if at.IsZero() || d.Incident == "" {
		return sup, nil
	}
	check := NewSinceCheck(d, at)
	found := errors.New("found")
	err := view.decisions(ctx, d.Incident, at.Add(-SinceLookback), func(e *Entry) error {
		if !e.Time.Before(at.Truncate(time.Millisecond)) {
			for _, dl := range e.Deliveries {
				if dl.Receiver == d.Receiver && dl.Integration == d.Integration && dl.Outcome == OutcomeSent {
					sup.delivered = e.Time
					return found
				}
			}
		}
		check.Observe(e)
		return nil
	})
	if errors.Is(err, found) {
		return supersession{delivered: sup.delivered}, nil
	}
	if err != nil {
		return sup, err
	}
	sup.resolved, sup.refired, sup.resolvedAlerts = check.Resolved(), check.Refired(), check.ResolvedAlerts()
	return sup, nil
}

// SinceCheck follows, decision by decision of a dead letter's incident,
// oldest first from SinceLookback before it, whether the journal
// supersedes it: every alert a firing fires resolved since
// (ErrResolvedSince; a resolve decided before the dead letter was written
// counts when of the same start or a later one), or the incident fires
// again since a resolve (ErrFiredSince, refireCheck). The replay and the
// console's dead letters page read it alike.
type SinceCheck struct {
	at     time.Time
	firing map[string]time.Time // a firing's alerts: their start
	done   map[string]bool      // those resolved since
	refire *refireCheck
}

// NewSinceCheck returns the check of dead letter d, written at at.
func NewSinceCheck(d *DeadLetter, at time.Time) *SinceCheck {
	c := &SinceCheck{at: at.Truncate(time.Millisecond), firing: map[string]time.Time{}, done: map[string]bool{}, refire: newRefireCheck(d)}
	for _, a := range d.alerts() {
		if d.Kind != alert.KindResolved && !d.IncidentResolved && a.Status == "firing" && a.Fingerprint != "" {
			c.firing[a.Fingerprint] = a.StartsAt
		}
	}
	return c
}

// Observe notes e, the next decision of the dead letter's incident.
func (c *SinceCheck) Observe(e *Entry) {
	after := !e.Time.Before(c.at)
	if start, ok := c.firing[e.Fingerprint]; ok && e.Status == "resolved" && (after || !e.StartsAt.Before(start)) {
		c.done[e.Fingerprint] = true
	}
	if after {
		c.refire.Observe(e)
	}
}

// Resolved reports whether every alert the firing dead letter fires
// resolved since.
func (c *SinceCheck) Resolved() bool { return len(c.firing) > 0 && len(c.done) == len(c.firing) }

// Refired reports whether the resolve's incident fires again since.
func (c *SinceCheck) Refired() bool { return c.refire.Refired() }

// ResolvedAlerts returns the fingerprints of the firing's alerts that
// resolved since (DeadLetter.ResolvedSince).
func (c *SinceCheck) ResolvedAlerts() []string {
	out := make([]string, 0, len(c.done))
	for fp := range c.done {
		out = append(out, fp)
	}
	return out
}

// Status is a dead letter with whether it was replayed, or is being
// replayed (its claim held while a replay sends it: ErrInFlight).
type Status struct {
	Entry
	Replayed, Replaying bool
}

// List returns the dead letters since the given time, newest first, each
// with whether it was replayed.
func (r *Replayer) List(ctx context.Context, since time.Time) ([]Status, error) {
	entries, err := Read(ctx, r.Journal, Query{Since: since, Kind: KindDeadLetter, Newest: true})
	if err != nil {
		return nil, err
	}
	return r.statuses(ctx, entries)
}

// statuses looks up the replayed marks of entries in one store call.
func (r *Replayer) statuses(ctx context.Context, entries []Entry) ([]Status, error) {
	out := make([]Status, 0, len(entries))
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.DeadLetter == nil {
			continue
		}
		out = append(out, Status{Entry: e})
		ids = append(ids, e.ID)
	}
	replayed, replaying, err := r.Marks(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("dead letter replay marks: %w", err)
	}
	for i := range replayed {
		out[i].Replayed, out[i].Replaying = replayed[i], replaying[i]
	}
	return out, nil
}

// Replayed reports, for each dead letter id, whether it was replayed.
func (r *Replayer) Replayed(ctx context.Context, ids []string) ([]bool, error) {
	replayed, _, err := r.Marks(ctx, ids)
	return replayed, err
}

// Marks reports, for each dead letter id, whether it was replayed and
// whether a replay is sending it (its claim held: ErrInFlight).
func (r *Replayer) Marks(ctx context.Context, ids []string) (replayed, replaying []bool, err error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = r.key(id)
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	values, found, err := r.Claims.Get(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	replaying = make([]bool, len(ids))
	for i := range found {
		replaying[i] = found[i] && strings.HasPrefix(values[i], holdPrefix)
		found[i] = found[i] && !replaying[i] // in flight: not yet
	}
	return found, replaying, nil
}

// AllReport counts what ReplayAll did.
type AllReport struct {
	Sent, AlreadyReplayed, Failed int
	// DeliveredSince counts the dead letters left because a later
	// notification of their incident was delivered (ErrDeliveredSince).
	DeliveredSince int
	// ResolvedSince counts the firing dead letters left because their
	// alerts resolved since (ErrResolvedSince), FiredSince the resolves'
	// because an alert fired again since (ErrFiredSince).
	ResolvedSince, FiredSince int
	// InFlight counts the dead letters another replay is sending
	// (ErrInFlight): replayable again if that send fails.
	InFlight int
	// Repeated counts the dead letters left because a later one holds the
	// same notification (sameNotification): Alertmanager retried the
	// webhook and each retry failed alike.
	Repeated int
	Errors   []error
}

// ReplayAll replays every dead letter since the given time that was not
// replayed yet, oldest first; one failure does not stop the others. Of the
// dead letters of one notification — a permanent failure answered 5xx is
// retried by Alertmanager, and every retry that fails alike writes one
// more — only the newest is sent: replaying each would send the page, or
// the resolve, as many times.
func (r *Replayer) ReplayAll(ctx context.Context, since time.Time) (AllReport, error) {
	var rep AllReport
	entries, err := Read(ctx, r.Journal, Query{Since: since, Kind: KindDeadLetter})
	if err != nil {
		return rep, err
	}
	// The journal read once for every dead letter's checks.
	view := newReplayIndex(r.Journal, entries)
	keys := make([]string, len(entries)) // sameNotification, once each
	newest := make(map[string]int, len(entries))
	older := map[string][]string{} // the ids each newest one repeats
	for i, e := range entries {
		if e.DeadLetter != nil {
			k := sameNotification(e.DeadLetter)
			keys[i] = k
			if j, ok := newest[k]; ok {
				older[k] = append(older[k], entries[j].ID)
			}
			newest[k] = i
		}
	}
	for i, e := range entries {
		if e.DeadLetter == nil {
			continue
		}
		k := keys[i]
		if newest[k] != i {
			rep.Repeated++
			continue
		}
		sent, err := r.replay(ctx, view, &e, older[k])
		if err == nil || sent {
			// Sent now or before: the older copies are handled too, for
			// list, the console and a replay of one of them by id.
			if merr := r.markRepeated(ctx, older[k], e.ID); merr != nil {
				rep.Errors = append(rep.Errors, merr)
			}
		}
		switch {
		case errors.Is(err, ErrDeliveredSince):
			rep.DeliveredSince++
		case errors.Is(err, ErrResolvedSince):
			rep.ResolvedSince++
		case errors.Is(err, ErrFiredSince):
			rep.FiredSince++
		case errors.Is(err, ErrInFlight):
			rep.InFlight++
		case sent:
			rep.Sent++
			if err != nil { // sent, a mark of it not written
				rep.Errors = append(rep.Errors, err)
			}
		case err != nil:
			rep.Failed++
			rep.Errors = append(rep.Errors, err)
		default:
			rep.AlreadyReplayed++
		}
	}
	return rep, nil
}

// markRepeated marks the dead letters ids replayed, repeated by the dead
// letter newest (sent, or replayed before): a mark already there stays.
func (r *Replayer) markRepeated(ctx context.Context, ids []string, newest string) error {
	if len(ids) == 0 {
		return nil
	}
	entries := make([]store.Entry, len(ids))
	for i, id := range ids {
		entries[i] = store.Entry{Key: r.key(id), Value: "repeated-by/" + newest, TTL: r.ttl()}
	}
	if _, err := r.Claims.SetNX(ctx, entries); err != nil {
		return fmt.Errorf("mark the dead letters %s repeated by %s replayed: %w", strings.Join(ids, ", "), newest, err)
	}
	return nil
}

// hold is the claims' lifetime while a send runs.
func (r *Replayer) hold() time.Duration {
	if r.Hold <= 0 {
		return replayHold
	}
	return r.Hold
}

// ttl is the replay marks' lifetime.
func (r *Replayer) ttl() time.Duration {
	if r.TTL <= 0 {
		return DefaultReplayClaimTTL
	}
	return r.TTL
}

// sameNotification is what dead letters of one notification share: its
// target, incident, kind and decision, and its alerts — each one's
// fingerprint, status and start — whatever changed in their decision's
// reasons between the retries.
func sameNotification(d *DeadLetter) string {
	var results []struct {
		Alert *struct {
			Fingerprint string    `json:"fingerprint"`
			Status      string    `json:"status"`
			StartsAt    time.Time `json:"startsAt"`
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%s\x00%t\x00%t", d.Receiver, d.Integration, d.Incident, d.Kind, d.Action, d.Opening, d.IncidentResolved)
	if err := json.Unmarshal(d.Results, &results); err != nil {
		return b.String() + "\x00" + string(d.Results) // unreadable: the same bytes only
	}
	alerts := make([]string, 0, len(results))
	for _, res := range results {
		if res.Alert != nil {
			alerts = append(alerts, res.Alert.Fingerprint+"/"+res.Alert.Status+"/"+res.Alert.StartsAt.UTC().Format(time.RFC3339Nano))
		}
	}
	slices.Sort(alerts)
	for _, a := range alerts {
		b.WriteString("\x00" + a)
	}
	return b.String()
}

func token() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StreamKey is the store key of the journal of routers sharing prefix.
func StreamKey(prefix string) string { return prefix + "journal" }
