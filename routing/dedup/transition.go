// Package dedup decides which alert transitions still need a notification
// and holds them while one sender delivers: the marker of what was
// notified, the transition state machine (a pure function), and the one
// lease helper every exactly-once step uses (transition claims here,
// incident openings and closings through store.Incidents).
package dedup

import (
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Marker is what a receiver's integration was last notified of one alert
// firing (identified by its fingerprint and startsAt): the decision tier of
// the firing, or Resolved; when; and the incident it was notified in, so a
// resolve reaches the incident its firing opened even if the alert would
// now be grouped elsewhere.
type Marker struct {
	Tier     string
	Resolved bool
	At       time.Time
	Incident string
}

const resolvedTier = "resolved"

// String encodes m as "<tier>|<unix ms>|<incident>" ("resolved" as tier for
// a notified resolve).
func (m Marker) String() string {
	tier := m.Tier
	if m.Resolved {
		tier = resolvedTier
	}
	return tier + "|" + strconv.FormatInt(m.At.UnixMilli(), 10) + "|" + m.Incident
}

// ParseMarker decodes a Marker written by String. A value it cannot read is
// taken as a tier with no time, which never matches a current tier: the
// transition is sent again rather than lost.
func ParseMarker(v string) Marker {
	parts := strings.SplitN(v, "|", 3)
	if len(parts) < 2 {
		return Marker{Tier: v}
	}
	ms, _ := strconv.ParseInt(parts[1], 10, 64)
	m := Marker{Tier: parts[0], At: time.UnixMilli(ms)}
	if len(parts) == 3 {
		m.Incident = parts[2]
	}
	if m.Tier == resolvedTier {
		m.Tier, m.Resolved = "", true
	}
	return m
}

// Tier names the decision tier that is part of a transition's identity: a
// firing whose tier changes (ticket → page) is a new transition.
func Tier(d *alert.Decision) string { return string(d.Action) + ":" + d.Policy + ":" + d.Tier }

// escalates reports whether tier now decides louder than the tier
// notified (an unreadable one says nothing).
func escalates(notified, now string) bool {
	was, _, _ := strings.Cut(notified, ":")
	is, _, _ := strings.Cut(now, ":")
	switch alert.Action(was) {
	case alert.ActionNone, alert.ActionTicket:
		return alert.Rank(alert.Action(is)) > alert.Rank(alert.Action(was))
	}
	return false
}

// Input is everything the transition function looks at for one alert and
// one integration.
type Input struct {
	// Found and Marker: what the store remembers (Found false: nothing).
	Found  bool
	Marker Marker
	// StoreDown: the marker could not be read (fail open).
	StoreDown bool
	// StoreLost: the store's state began after the alert started (Epoch),
	// so a missing marker may have been lost with the earlier state.
	StoreLost bool
	// SendUnseen: a resolve no marker says was notified is sent all the
	// same, where routed — to an integration that holds incidents
	// (PagerDuty), whose resolve of an incident it does not hold changes
	// nothing there, while one it does hold (its firing's marker lost
	// with a replica that never wrote it) would otherwise stay open.
	SendUnseen bool
	Firing     bool
	// Tier is Tier(decision) of the alert now.
	Tier string
	// StartsAt is the alert's start as it enters the identity (zero when
	// Alertmanager sent none: the fingerprint alone identifies it).
	StartsAt       time.Time
	Now            time.Time
	RepeatInterval time.Duration
	// NotifiedTTL is how long a marker lives (dedup.notified_ttl; 0: not
	// renewed).
	NotifiedTTL time.Duration
}

// Verdict says what to do with one transition.
type Verdict int

// The verdicts.
const (
	// Skip: already notified (a dedup hit).
	Skip Verdict = iota
	// Ignore: a resolve of a firing this integration was never notified of.
	Ignore
	// Send the transition with Kind.
	Send
	// SendIfRouted: fail open on a resolve whose marker could not be read,
	// or may have been lost with the store's earlier state, or was never
	// written (Input.SendUnseen) — send it where the route tree sends the
	// alert now.
	SendIfRouted
)

// Step is the transition function's answer.
type Step struct {
	Verdict Verdict
	Kind    alert.Kind
	// ClaimSuffix tells re-fires and reminders apart from the first firing
	// in the claim key, so their claims never collide.
	ClaimSuffix string
	// Incident is the incident of the notified firing (resolves,
	// reminders and firings in another tier; "" when unknown).
	Incident string
	// Escalates is true for a firing whose decision is louder than the one
	// notified (a ticket that now pages).
	Escalates bool
	// Unseen is true for a resolve sent although no marker says its
	// firing was notified, nor that the store lost it (Input.SendUnseen).
	Unseen bool
	// Refire is true for a firing whose marker says its resolve was
	// notified, the same startsAt: Alertmanager firing again an alert it
	// had resolved — or an Alertmanager HA peer's copy of the firing,
	// flushed before the resolve and sent after it.
	Refire bool
	// ResolvedAt is when the resolve a Refire follows was notified.
	ResolvedAt time.Time
	// Renew, on a Skip of a firing, says its marker has lived half its
	// NotifiedTTL or more: its lifetime is renewed, so an alert firing
	// longer than notified_ttl with no reminder sent (repeat_interval 0,
	// or Alertmanager repeating less often than the marker lives) is not
	// notified again as new when the marker expires.
	Renew bool
}

// Transition is the dedup state machine: given what was notified and what
// the alert is now, it says whether and how to notify. It is a pure
// function; its table test covers every (marker, status, tier) case.
//
//	marker        firing, same tier   firing, other tier   resolved
//	none          Send firing         Send firing          Ignore (SendIfRouted when the store is down or lost its state since the alert started, or SendUnseen)
//	firing        Skip / reminder     Send firing          Send resolved (to the marker's incident)
//	              (reminders and tier changes: to the marker's incident)
//	resolved      Send firing (re-fire, own claim)         Skip
func Transition(in Input) Step {
	m := in.Marker
	switch {
	case !in.Firing && !in.Found && (in.StoreDown || in.StoreLost):
		return Step{Verdict: SendIfRouted, Kind: alert.KindResolved}
	case !in.Firing && !in.Found && in.SendUnseen:
		return Step{Verdict: SendIfRouted, Kind: alert.KindResolved, Unseen: true}
	case !in.Firing && !in.Found:
		return Step{Verdict: Ignore}
	case !in.Firing && m.Resolved:
		return Step{Verdict: Skip}
	case !in.Firing:
		// The resolve of this firing: its claim names the firing's marker
		// time, so the resolve of a later re-fire with the same startsAt
		// (Prometheus restoring an alert Alertmanager had resolved) claims
		// afresh instead of finding the earlier resolve's claim and waiting
		// on it for claim_ttl.
		return Step{Verdict: Send, Kind: alert.KindResolved, Incident: m.Incident, ClaimSuffix: ":f" + strconv.FormatInt(m.At.UnixMilli(), 10)}
	case !in.Found:
		return Step{Verdict: Send, Kind: alert.KindFiring}
	case m.Resolved:
		// Alertmanager re-fired an alert it had resolved (same startsAt,
		// e.g. Prometheus missed its resends): a new transition.
		return Step{Verdict: Send, Kind: alert.KindFiring, ClaimSuffix: ":a" + strconv.FormatInt(m.At.UnixMilli(), 10), Refire: true, ResolvedAt: m.At}
	case m.Tier != in.Tier:
		// Claimed after the marker's time: a flip back to a tier notified
		// before claims afresh instead of finding that tier's old claim.
		// Sent in the incident the alert was notified in, as a reminder
		// and a resolve are: the same firing, still a member there. Sent
		// to a new incident key (a reload of incidents.group_by, a
		// classification changed), it paged a second incident and the
		// first never resolved — its member never left it.
		st := Step{Verdict: Send, Kind: alert.KindFiring, Escalates: escalates(m.Tier, in.Tier), Incident: m.Incident}
		if !m.At.IsZero() {
			st.ClaimSuffix = ":t" + strconv.FormatInt(m.At.UnixMilli(), 10)
		}
		return st
	case in.RepeatInterval > 0 && in.Now.Sub(m.At) >= in.RepeatInterval:
		bucket := int64(in.Now.Sub(in.StartsAt) / in.RepeatInterval)
		if in.StartsAt.IsZero() {
			bucket = in.Now.UnixMilli() / in.RepeatInterval.Milliseconds()
		}
		// The reminder of the incident the alert was notified in, even if
		// the alert's incident key is another now (the grouping, the
		// classifier or an upgrade changed it): moved to the new key, the
		// old incident — open in PagerDuty and Slack — would never get its
		// resolve, and the reminder would page anew.
		return Step{Verdict: Send, Kind: alert.KindReminder, Incident: m.Incident, ClaimSuffix: ":r" + strconv.FormatInt(bucket, 10)}
	}
	return Step{Verdict: Skip, Renew: in.Firing && in.NotifiedTTL > 0 && !m.At.IsZero() && in.Now.Sub(m.At) >= in.NotifiedTTL/2}
}
