package routing

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Coalescing updates to open incidents (group commit).
//
// A notification that neither opens nor resolves its incident — new members
// joining an incident that is already open, or members resolving while
// others still fire — is an update: Slack replies in the incident's thread.
// When several webhooks update the same incident at the same time (an alert
// storm: Alertmanager groups flushing together, several Alertmanagers, a
// retry), each used to send its own reply. Now updates of one incident,
// integration, kind and action that arrive while an update of it is being
// sent wait for that send to finish and then go out together as one
// notification listing all their alerts. A webhook is still answered only
// after the send that carries its alerts has completed, with that send's
// outcome: coalescing never answers 2xx for something not delivered, and a
// failure fails (and releases the claims of) every webhook whose alerts it
// carried, so each is retried by Alertmanager.
//
// An update that finds no send of its incident in flight waits the update
// window (incidents.update_window, Pipeline.UpdateWindow, 5ms by default)
// before it goes out, carrying the updates of the incident that arrived
// meanwhile: without it, webhooks processed side by side rarely overlap a
// send (a loopback send takes about a millisecond), and a storm became one
// thread reply per webhook. With a window of 0 it goes out at once, alone.
//
// The window ends early once every webhook known to be on its way to the
// incident has arrived. Each webhook counts itself, as soon as its alerts
// are decided, in the incidents its updates may go to (expect: the
// receivers' integrations that send updates, the alerts' incidents; not
// for firings it found quiet when last seen, which Alertmanager repeats and
// which send nothing), and
// leaves the count when its update arrives here or when it knows it will
// send none (nothing new after the store read, an opening instead of an
// update, a failure, the end of the webhook). An update that arrives while
// others are counted seals their cohort (webhooks counted later form the
// next one, so a steady stream cannot keep extending the wait) and waits
// for them, up to the window, going out as soon as they are all in; one
// that finds none counted waits the whole window, as before, for webhooks
// not yet arrived. A round that queued behind a send waits the same way,
// once that send completes, for the webhooks counted in its incident, so a
// cohort is not split into what queued during the send and the rest. So
// webhooks that come together (Alertmanager flushing groups at once, a
// burst of retries) share one send without waiting out a window none of
// them needs.
//
// Openings and resolutions are never coalesced: exactly one sender holds an
// incident's opening or resolving lease, and its notification is sent as
// it is.

// coalesceKey identifies updates that can go out as one notification.
type coalesceKey struct {
	receiver, integ, incident, ref, externalURL string
	kind                                        alert.Kind
	action                                      alert.Action
}

// coalesceRound is one send: the batches it carries and, once done is
// closed, its outcome.
type coalesceRound struct {
	// ctx is the first waiter's (detached) context: the round is sent
	// within its deadline, and that waiter holds it until done.
	ctx     context.Context
	batches []*batch
	done    chan struct{}
	n       *alert.Notification
	err     error
	// window: the update window of the batch that made the round.
	window time.Duration
}

// incidentKey identifies the updates of one incident at one integration
// of a receiver, whatever their kind and action: what a webhook expects to
// send before it knows which.
type incidentKey struct{ receiver, integ, incident string }

// of reports whether t is a transition of incident k (its receiver's
// integration and incident).
func (k incidentKey) of(t *transition) bool {
	return t.incident == k.incident && t.receiver == k.receiver && t.integ.Name == k.integ
}

func incidentKeyOf(b *batch) incidentKey {
	return incidentKey{b.receiver, b.integ.Name, b.incident}
}

// coalescer queues updates per key while one of the key is being sent.
type coalescer struct {
	mu sync.Mutex
	// next has an entry for every key with a send in flight: the round
	// that goes out when that send completes (nil while nothing waits).
	next map[coalesceKey]*coalesceRound
	// inbound holds, per incident, the open cohort of the webhooks in
	// flight that may still send it an update (expect).
	inbound map[incidentKey]*cohort
	// wait, when set (tests), replaces waiting out the update window.
	wait func(ctx context.Context, window time.Duration, gathered chan struct{})
}

// coalescible reports whether b is an update that may share a send.
func coalescible(b *batch) bool {
	return b.integ.Notifier != nil && !b.n.Opening && !b.n.IncidentResolved
}

func keyOf(b *batch) coalesceKey {
	k := coalesceKey{receiver: b.receiver, integ: b.integ.Name, incident: b.incident, ref: b.n.Ref, kind: b.kind, action: b.n.Action}
	if b.n.Data != nil {
		k.externalURL = b.n.Data.ExternalURL
	}
	return k
}

// send delivers b through notify, sharing the send with the updates of the
// same key that are waiting; it returns once the send that carried b has
// completed, with b.n updated by what the notifier set (Ref). When no send
// of b's key is in flight, b first waits window (see above), holding the
// key as if sending, and then goes out carrying whatever queued meanwhile.
// counted is called with each batch that rode on another's send.
func (c *coalescer) send(ctx context.Context, b *batch, window time.Duration, notify func(context.Context, *alert.Notification) error, counted func(*batch)) error {
	k, ik := keyOf(b), incidentKeyOf(b)
	c.mu.Lock()
	if c.next == nil {
		c.next = map[coalesceKey]*coalesceRound{}
	}
	if r, busy := c.next[k]; busy {
		if r == nil {
			r = &coalesceRound{ctx: ctx, done: make(chan struct{}), window: window}
			c.next[k] = r
		}
		r.batches = append(r.batches, b)
		b.in.arrived(ik) // after joining: the update it wakes finds it queued
		c.mu.Unlock()
		<-r.done
		if b != r.batches[0] {
			counted(b)
		}
		if r.n != b.n {
			b.n.Ref = r.n.Ref
		}
		return r.err
	}
	c.next[k] = nil
	b.in.arrived(ik)
	var gathered chan struct{}
	if window > 0 {
		gathered = c.seal(ik)
	}
	c.mu.Unlock()

	r := &coalesceRound{ctx: ctx, batches: []*batch{b}, done: make(chan struct{})}
	if window > 0 {
		c.waitWindow(ctx, window, gathered)
		c.mu.Lock()
		if q := c.next[k]; q != nil { // updates came meanwhile: b carries them
			q.ctx = ctx
			q.batches = append([]*batch{b}, q.batches...)
			r = q
		}
		c.next[k] = nil // r's send is now the one in flight
		c.mu.Unlock()
	}
	c.sendRound(k, r, notify)
	if r.n != b.n {
		b.n.Ref = r.n.Ref
	}
	return r.err
}

// waitWindow waits out the update window, or until ctx ends or, when not
// nil, gathered closes: every webhook of its cohort has arrived.
func (c *coalescer) waitWindow(ctx context.Context, window time.Duration, gathered chan struct{}) {
	if c.wait != nil {
		c.wait(ctx, window, gathered)
		return
	}
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-gathered: // nil: never
	}
}

// cohort is the webhooks counted in an incident between two updates of it
// that waited: n of them have not arrived yet. The update that starts
// waiting seals the incident's open cohort (later webhooks join a new one)
// and waits for full, closed when n reaches zero.
type cohort struct {
	n    int
	full chan struct{}
}

// counted is one incident a webhook is counted in, and its cohort there.
type counted struct {
	key incidentKey
	co  *cohort
}

// inbound is one webhook's part in the coalescer's counts: the incidents
// it is counted in and has not yet left. Its methods are safe on a nil
// inbound (nothing counted) and from the webhook's concurrent sends.
type inbound struct {
	c       *coalescer
	counted []counted
}

// expect counts a webhook in keys (distinct) until it leaves them.
func (c *coalescer) expect(keys []incidentKey) *inbound {
	if len(keys) == 0 {
		return nil
	}
	in := &inbound{c: c, counted: make([]counted, len(keys))}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inbound == nil {
		c.inbound = map[incidentKey]*cohort{}
	}
	for i, k := range keys {
		co := c.inbound[k]
		if co == nil {
			co = &cohort{}
			c.inbound[k] = co
		}
		co.n++
		in.counted[i] = counted{k, co}
	}
	return in
}

// arrived leaves ik, if counted in it, ending the wait of the update that
// sealed its cohort when it was the last to arrive. c.mu must be held.
func (in *inbound) arrived(ik incidentKey) {
	if in == nil {
		return
	}
	i := slices.IndexFunc(in.counted, func(e counted) bool { return e.key == ik })
	if i < 0 {
		return
	}
	co := in.counted[i].co
	in.counted = slices.Delete(in.counted, i, i+1)
	if co.n--; co.n > 0 {
		return
	}
	if co.full != nil {
		close(co.full)
	}
	if in.c.inbound[ik] == co {
		delete(in.c.inbound, ik)
	}
}

// seal returns the channel that closes once the webhooks counted in ik so
// far have all arrived, or nil when none is counted; webhooks counted from
// now on join a new cohort. c.mu must be held.
func (c *coalescer) seal(ik incidentKey) chan struct{} {
	co := c.inbound[ik]
	if co == nil {
		return nil
	}
	delete(c.inbound, ik)
	co.full = make(chan struct{})
	return co.full
}

// keep leaves every incident the webhook is counted in but those for which
// sends reports true.
func (in *inbound) keep(sends func(incidentKey) bool) {
	if in == nil {
		return
	}
	in.c.mu.Lock()
	defer in.c.mu.Unlock()
	for i := len(in.counted) - 1; i >= 0; i-- {
		if k := in.counted[i].key; sends == nil || !sends(k) {
			in.arrived(k)
		}
	}
}

// done leaves every incident the webhook is still counted in.
func (in *inbound) done() { in.keep(nil) }

// sendRound sends r's batches as one notification, then hands k off.
func (c *coalescer) sendRound(k coalesceKey, r *coalesceRound, notify func(context.Context, *alert.Notification) error) {
	r.n = merge(r.batches)
	r.err = notify(withGroup(r.ctx, r.batches), r.n)
	close(r.done)
	c.handOff(k, notify)
}

// handOff ends a send of k: the round that queued behind it, if any, goes
// out now, in its own goroutine (the finished sender returns to its own
// webhook), else k is idle. When webhooks are counted in the round's
// incident, the round first waits for them as a waiting update does (at
// most its window), taking in the updates of k that arrive meanwhile: the
// cohort it belongs to goes out as one message, not as the part that
// queued during the send and then the rest.
func (c *coalescer) handOff(k coalesceKey, notify func(context.Context, *alert.Notification) error) {
	c.mu.Lock()
	r := c.next[k]
	if r == nil {
		delete(c.next, k)
		c.mu.Unlock()
		return
	}
	c.next[k] = nil // r's send is now the one in flight
	var gathered chan struct{}
	if r.window > 0 {
		if gathered = c.seal(incidentKeyOf(r.batches[0])); gathered != nil {
			c.next[k] = r // while it waits, updates of k join it
		}
	}
	c.mu.Unlock()
	go func() {
		if gathered != nil {
			c.waitWindow(r.ctx, r.window, gathered)
			c.mu.Lock()
			c.next[k] = nil // r's send is now the one in flight
			c.mu.Unlock()
		}
		c.sendRound(k, r, notify)
	}()
}

// merge returns one notification carrying the alerts of every batch, in
// arrival order; its template data are recomputed from them (common labels
// and annotations, group labels in common).
func merge(bs []*batch) *alert.Notification {
	if len(bs) == 1 {
		return bs[0].n
	}
	first := bs[0].n
	m := *first
	m.Results = nil
	var data template.Data
	if first.Data != nil {
		data = *first.Data
	}
	data.Alerts = nil
	for _, b := range bs {
		m.Results = append(m.Results, b.n.Results...)
		m.Escalated = m.Escalated || b.n.Escalated
		m.Repaged = m.Repaged || b.n.Repaged
		m.HeldOpen = m.HeldOpen || b.n.HeldOpen
		if alert.Rank(b.n.Action) > alert.Rank(m.Action) {
			m.Action = b.n.Action // the loudest, as for one batch
		}
		m.NotifiedTier = louderTier(m.NotifiedTier, b.n.NotifiedTier) // as in notification
		if b.n.Data != nil {
			data.Alerts = append(data.Alerts, b.n.Data.Alerts...)
		}
	}
	data.Status = mergedStatus(data.Alerts)
	alert.SetCommon(&data)
	data.GroupLabels = sharedGroupLabels(data.GroupLabels, bs[1:], func(b *batch) *template.Data { return b.n.Data })
	m.Data = &data
	return &m
}

// countCoalesced counts a batch that went out in another batch's send.
func (p *Pipeline) countCoalesced(b *batch) {
	if p.Metrics != nil {
		p.Metrics.coalesced.WithLabelValues(b.receiver, alert.IntegrationType(b.integ.Name)).Inc()
	}
}
