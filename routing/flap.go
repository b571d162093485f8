package routing

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/internal/recent"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// flapRecord is what the store keeps per fingerprint: the alert's
// transition history and when its last firing notified as a page started,
// encoded as "<history>;p<unix seconds>;s<unix ms>" (History.String, then
// the fields; a field a later build adds is a new letter, which this build
// skips).
type flapRecord struct {
	h     flap.History
	paged time.Time // At of the last firing transition decided page; zero if none
	// start is the exact identity start (Unix ms, as the markers' keys
	// hold it) of the last firing recorded; 0 when unknown. The history's
	// times are seconds: this finds the markers of that firing when a
	// resolve carries a later instance's startsAt (earlierFirings).
	start int64
}

func (r flapRecord) String() string {
	s := r.h.String()
	if !r.paged.IsZero() {
		s += ";p" + strconv.FormatInt(r.paged.Unix(), 10)
	}
	if r.start > 0 {
		s += ";s" + strconv.FormatInt(r.start, 10)
	}
	return s
}

func parseFlapRecord(s string) (flapRecord, error) {
	parts := strings.Split(s, ";")
	h, err := flap.Parse(parts[0])
	if err != nil {
		return flapRecord{}, err
	}
	rec := flapRecord{h: h}
	for _, part := range parts[1:] {
		if part == "" {
			return flapRecord{}, fmt.Errorf("flap record %q: empty field", s)
		}
		if part[0] != 'p' && part[0] != 's' {
			// A later build's field: skipped, so that a rolling upgrade
			// or a rollback keeps the history this build reads (its
			// fields are added, never changed in meaning).
			continue
		}
		n, err := strconv.ParseInt(part[1:], 10, 64)
		if err != nil || n < 0 {
			return flapRecord{}, fmt.Errorf("flap record %q: bad field %q", s, part)
		}
		if part[0] == 'p' {
			rec.paged = time.Unix(n, 0).UTC()
		} else {
			rec.start = n
		}
	}
	return rec, nil
}

// flapState is one fingerprint of the payload as flap damping sees it.
type flapState struct {
	key     string
	results []*alert.Result // the alerts of the payload with this fingerprint
}

func (p *Pipeline) flapKey(fingerprint string) string {
	return store.Key(p.Dedup.KeyPrefix, "flap", fingerprint, "")
}

// flapStates returns the fingerprints whose history damping reads: every
// alert that may be notified (not suppressed, not a firing decided none)
// but those in skip (firings already notified everywhere: pending's
// notifiedFirings).
func (p *Pipeline) flapStates(results []*alert.Result, skip map[*alert.Result]bool) []*flapState {
	if p.Flap == nil {
		return nil
	}
	var index map[string]*flapState
	var out []*flapState
	for _, r := range results {
		if undamped(r) || skip[r] {
			continue
		}
		if index == nil {
			index = make(map[string]*flapState)
		}
		st := index[r.Alert.Fingerprint]
		if st == nil {
			st = &flapState{key: p.flapKey(r.Alert.Fingerprint)}
			index[r.Alert.Fingerprint] = st
			out = append(out, st)
		}
		st.results = append(st.results, r)
	}
	return out
}

// damp records each fingerprint's current state in its history (read in
// values/found) and damps its alerts. It returns the alerts whose decision
// was downgraded (and routed again) and the writes of the records that
// changed — on a change of state, or when a firing pages for the first time
// after it fired (it was held as a ticket, or its policies raised it), so
// Alertmanager repeating an unchanged alert costs no write; the claims
// carry them to the store (writeHistories when nothing is claimed). A store
// failure never damps: the alert is decided as its policies say.
func (p *Pipeline) damp(states []*flapState, values []string, found []bool, unpaged map[*alert.Result]bool) (rerouted []*alert.Result, writes []store.Entry) {
	cfg := *p.Flap
	window := time.Duration(cfg.Window)
	// Histories hold alert times (Prometheus' and Alertmanager's clocks):
	// judged on the decisions' clock, the host's, not the store's — a Redis
	// minutes ahead ended cool_down early and a re-fire paged (a review).
	now := p.decideNow()
	handover := pageHandovers(states, values, found, window, now)
	var undelivered alertLine
	defer undelivered.log(context.Background(), p, "undelivered-pages", "the resolved firings' pages were never delivered: a re-fire pages, not damped")
	for i, st := range states {
		var rec flapRecord
		if found[i] {
			var err error
			if rec, err = parseFlapRecord(values[i]); err != nil {
				p.Logger.Warn("unreadable flap history; starting it afresh", "key", st.key, "err", err)
			}
		}
		a := st.results[0].Alert
		firing := a.Firing()
		h, change := rec.h.Record(flap.Transition{At: flap.TransitionTime(a, now), Firing: firing}, window)
		changed := change != flap.Unchanged
		cur := h[len(h)-1]
		at := now
		if cur.At.After(at) {
			at = cur.At // Alertmanager's clock is ahead of ours
		}
		// A resolve of a firing held as a ticket (read before the mark may
		// go below: the mark of a firing that was held is older than it).
		held := !firing && flap.HeldAsTicket(h, rec.paged, a)
		if !firing && changed && !rec.paged.IsZero() && len(h) >= 2 && !rec.paged.Before(h[len(h)-2].At) &&
			slices.ContainsFunc(st.results, func(r *alert.Result) bool { return unpaged[r] }) {
			// The firing this resolves was decided page, but its page
			// reached no integration (unpagedResolves: PagerDuty down
			// throughout): nobody was woken, so its mark goes, and a
			// re-fire within cool_down pages instead of being damped.
			undelivered.add(a.Fingerprint, "", "")
			rec.paged = time.Time{}
		}
		startMoved := false // a firing with another start, its resolve never seen
		if ms := a.IdentityStart().UnixMilli(); firing && (changed || rec.start != ms) {
			startMoved = !changed && rec.start != ms
			rec.start = ms
		}
		pagedBefore := rec.paged // as read: this webhook's page is not one
		marked := false          // rec.paged set on an unchanged firing
		for _, r := range st.results {
			v := cfg.Judge(r.Decision.Action, h, firing, at, rec.paged, pagedBefore)
			if held && r.Decision.Action == alert.ActionPage {
				// The firing this resolves went out as a ticket (damping
				// held it): its resolve goes where it went, said as a
				// ticket's — not to PagerDuty, and not as a page in Slack.
				r.Decision.Action = alert.ActionTicket
				r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons),
					"flapping: its firing went out as a ticket (held by flap damping): resolved as one, where it went")
				p.route(r)
			}
			if firing && change == flap.Resumed {
				r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), resumedReason(a, rec.h[len(rec.h)-1].At))
			}
			if !v.Flapping && v.Reason != "" {
				// A re-fire that goes on past cool_down (flap.Config.Refired).
				r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), v.Reason)
			}
			if v.Flapping {
				f := &alert.Flap{Transitions: v.Transitions, Reason: v.Reason, StableAt: v.StableAt}
				r.Flap = f
				r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), f.Reason)
				if from := handover[r.Incident]; firing && v.Action != r.Decision.Action && from != "" && from != a.Fingerprint {
					// The page passes to it from another alert of its
					// incident that resolves in this webhook (Sloth's page
					// alert moving from sloth_window 5m to 30m and back):
					// damped, it left the incident at PagerDuty with no
					// firing member and the page was resolved while the SLO
					// burned — tickets only for the cool-down (an audit).
					// Damping holds new pages; this one is open.
					r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), "it keeps its incident's page open: the page passes to it from "+from+", which resolves in this webhook, so damping does not hold it")
				} else if firing && v.Action != r.Decision.Action {
					f.Downgraded = true
					r.Decision.Action = v.Action
					p.route(r)
					rerouted = append(rerouted, r)
					if changed && p.Metrics != nil {
						p.Metrics.flapDowngrades.Inc()
					}
					if changed {
						p.Logger.Info("flapping alert downgraded to a ticket; it pages again once stable",
							"fingerprint", a.Fingerprint, "transitions", v.Transitions, "stable_at", v.StableAt)
					}
				}
			} else if firing && !changed && r.Decision.Action == alert.ActionPage {
				if why := heldReason(cfg, h, pagedBefore, at); why != "" {
					r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), why)
				}
			}
			if firing && r.Decision.Action == alert.ActionPage {
				switch {
				case changed:
					rec.paged = cur.At
				case rec.paged.Before(cur.At):
					// The first page of a firing that did not page when it
					// fired: marked at the time it pages, so that a re-fire
					// soon after its resolve is damped, and heldReason
					// knows it was held.
					rec.paged, marked = at.Truncate(time.Second), true
				}
			}
		}
		if changed || marked || startMoved {
			rec.h = h
			writes = append(writes, store.Entry{Key: st.key, Value: rec.String(), TTL: p.flapTTL(cfg, firing)})
		}
	}
	return rerouted, writes
}

// pageHandovers returns, by incident, the fingerprint of an alert of
// states that resolves in this webhook after its firing paged (its history
// says so; not one damping held as a ticket): the incident's page is open
// until this webhook leaves it, and a firing of the same incident in the
// webhook takes it over rather than paging anew.
func pageHandovers(states []*flapState, values []string, found []bool, window time.Duration, now time.Time) map[string]string {
	var out map[string]string
	for i, st := range states {
		a := st.results[0].Alert
		if a.Firing() || !found[i] {
			continue
		}
		rec, err := parseFlapRecord(values[i])
		if err != nil || rec.paged.IsZero() {
			continue
		}
		h, change := rec.h.Record(flap.Transition{At: flap.TransitionTime(a, now), Firing: false}, window)
		if change == flap.Unchanged || flap.HeldAsTicket(h, rec.paged, a) {
			// A resolve sent again (a retry, an HA pair's copy) hands
			// nothing over: the page closed with the first (a review).
			continue
		}
		for _, r := range st.results {
			if r.Decision.Action == alert.ActionPage && r.Incident != "" {
				if out == nil {
					out = map[string]string{}
				}
				out[r.Incident] = a.Fingerprint
			}
		}
	}
	return out
}

// flapTTL is how long a history written now lives: window + cool_down
// after a resolve (a re-fire later than that is judged without it); while
// the alert fires, as long as its markers (dedup's notified TTL), since a
// firing repeated by Alertmanager writes nothing: a firing longer than the
// window that paged is still known to have paged when it resolves, and its
// re-fire within cool_down is damped like a short firing's.
func (p *Pipeline) flapTTL(cfg flap.Config, firing bool) time.Duration {
	if firing {
		return max(cfg.TTL(), p.Dedup.NotifiedTTL)
	}
	return cfg.TTL()
}

// resumedReason explains a firing that resumed the one its last resolve
// (at resolved) ended (flap.Resumed).
func resumedReason(a *alert.Alert, resolved time.Time) string {
	return fmt.Sprintf("fired again with startsAt %s, before its resolve at %s: the same firing, which never stopped "+
		"(Alertmanager resolves an alert whose resends from Prometheus lapse); neither counts as flapping",
		a.StartsAt.UTC().Format(time.RFC3339), resolved.UTC().Format(time.RFC3339))
}

// heldReason returns, for a firing that pages without flapping now, why it
// did not page when it fired ("" when it did, or was not flapping then):
// damping held it as a ticket, and it has made no transition since, long
// enough to be flapping no more. paged is the record's page mark as read:
// the start of the last firing that paged when it fired, or the time a
// firing paged after it fired — this one's, when its hold ended in an
// earlier webhook (this is a retry or a reminder of that page).
func heldReason(cfg flap.Config, h flap.History, paged, now time.Time) string {
	n := len(h)
	cur := h[n-1]
	if !cur.Firing || paged.IsZero() || paged.Equal(cur.At) {
		return "" // it paged when it fired, or nothing ever paged (then it would have: "paged once")
	}
	pagedThen := paged // the mark as it was when this firing started
	if paged.After(cur.At) {
		// Overwritten by this firing's own page: the firing before its
		// last resolve is taken to have paged.
		pagedThen = time.Time{}
		if n >= 3 {
			pagedThen = h[n-3].At
		}
	}
	v := cfg.Damp(alert.ActionPage, h, true, cur.At)
	if !v.Flapping {
		// Judged now: a re-fire released past its cool-down is no longer
		// held, and its own reason (flap.GoesOn) says why it pages.
		v = cfg.Refired(v, h, pagedThen, alert.ActionPage, now)
	}
	if !v.Flapping {
		return ""
	}
	why := strings.TrimSuffix(strings.TrimPrefix(v.Reason, "flapping: "), ": page downgraded to ticket")
	return fmt.Sprintf("flapping stopped: held as a ticket since it fired at %s (flapping: %s); stable since, for %s (flap window %s): it pages",
		cur.At.UTC().Format(time.RFC3339), why, now.Sub(cur.At).Truncate(time.Second), cfg.Window)
}

// writeHistories writes flap histories when no claim carries them.
func (p *Pipeline) writeHistories(ctx context.Context, writes []store.Entry) {
	if len(writes) == 0 {
		return
	}
	if err := p.Store.Set(ctx, writes); err != nil && ctx.Err() == nil {
		p.countStoreError("write flap histories", err)
	}
}

// quietAlerts remembers the firing alerts (fingerprint, startsAt) this
// replica found already notified at every integration: Alertmanager repeats
// them every group_interval and repeat_interval, and their flap histories
// need not be read (pending's notifiedFirings). The histories of the other
// alerts — new ones, resolves, alerts not seen here yet — are read in the
// same round trip as their markers instead of a second one. A wrong guess
// either way costs only efficiency: a few extra keys in the read, or the
// second round trip, never a different decision.
type quietAlerts struct {
	once sync.Once
	m    *recent.Map[quietKey, struct{}]
}

type quietKey struct {
	fingerprint string
	startsAt    int64
}

// quietSize bounds each generation of the memory of quiet alerts.
const quietSize = 16384

func (q *quietAlerts) init() {
	q.once.Do(func() { q.m = recent.New[quietKey, struct{}](quietSize) })
}

func quietKeyOf(r *alert.Result) quietKey {
	return quietKey{r.Alert.Fingerprint, r.Alert.IdentityStart().UnixNano()}
}

// contains reports whether the firing r was quiet when last seen.
func (q *quietAlerts) contains(r *alert.Result) bool {
	if !r.Alert.Firing() {
		return false
	}
	q.init()
	_, ok := q.m.Get(quietKeyOf(r))
	return ok
}

// note records which firings of results are quiet this time (in quiet),
// given which were when last seen (wasQuiet, by index; quietNow): only
// a change touches the memory, so Alertmanager's repeats cost one lookup
// per alert.
func (q *quietAlerts) note(results []*alert.Result, wasQuiet []bool, quiet map[*alert.Result]bool) {
	for i, r := range results {
		switch now := r.Alert.Firing() && quiet[r]; {
		case now && !wasQuiet[i]:
			q.init()
			q.m.Put(quietKeyOf(r), struct{}{})
		case !now && wasQuiet[i]:
			q.m.Delete(quietKeyOf(r))
		}
	}
}

// quietNow returns, by index, which of results were quiet firings when
// last seen (nil when flap damping is off: nothing is remembered): one
// lookup per alert, shared by expectUpdates and prefetchFlap.
func (p *Pipeline) quietNow(results []*alert.Result) []bool {
	if p.Flap == nil {
		return nil
	}
	wasQuiet := make([]bool, len(results))
	for i, r := range results {
		wasQuiet[i] = !undamped(r) && p.quiet.contains(r)
	}
	return wasQuiet
}

// undamped reports whether flap damping leaves r alone: suppressed, or a
// firing decided none (nothing is notified either way).
func undamped(r *alert.Result) bool {
	return r.SuppressedBy != "" || (r.Alert.Firing() && r.Decision.Action == alert.ActionNone)
}

// prefetchFlap returns the flap-history keys to read with the markers —
// one per fingerprint of results that damping may read, except the
// firings quiet when last seen (wasQuiet, from quietNow).
func (p *Pipeline) prefetchFlap(results []*alert.Result, wasQuiet []bool) (keys []string) {
	if p.Flap == nil {
		return nil
	}
	var seen map[string]bool
	for i, r := range results {
		if undamped(r) || wasQuiet[i] {
			continue
		}
		if seen == nil {
			seen = make(map[string]bool)
		}
		if !seen[r.Alert.Fingerprint] {
			seen[r.Alert.Fingerprint] = true
			keys = append(keys, p.flapKey(r.Alert.Fingerprint))
		}
	}
	return keys
}
