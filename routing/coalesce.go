package routing

import (
	"context"
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
}

// coalescer queues updates per key while one of the key is being sent.
type coalescer struct {
	mu sync.Mutex
	// next has an entry for every key with a send in flight: the round
	// that goes out when that send completes (nil while nothing waits).
	next map[coalesceKey]*coalesceRound
	// wait, when set (tests), replaces waiting out the update window.
	wait func(ctx context.Context, window time.Duration)
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
	k := keyOf(b)
	c.mu.Lock()
	if c.next == nil {
		c.next = map[coalesceKey]*coalesceRound{}
	}
	if r, busy := c.next[k]; busy {
		if r == nil {
			r = &coalesceRound{ctx: ctx, done: make(chan struct{})}
			c.next[k] = r
		}
		r.batches = append(r.batches, b)
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
	c.mu.Unlock()

	r := &coalesceRound{ctx: ctx, batches: []*batch{b}, done: make(chan struct{})}
	if window > 0 {
		c.waitWindow(ctx, window)
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

// waitWindow waits out the update window, or until ctx ends.
func (c *coalescer) waitWindow(ctx context.Context, window time.Duration) {
	if c.wait != nil {
		c.wait(ctx, window)
		return
	}
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// sendRound sends r's batches as one notification, then hands k off.
func (c *coalescer) sendRound(k coalesceKey, r *coalesceRound, notify func(context.Context, *alert.Notification) error) {
	r.n = merge(r.batches)
	r.err = notify(r.ctx, r.n)
	close(r.done)
	c.handOff(k, notify)
}

// handOff ends a send of k: the round that queued behind it, if any, goes
// out now, in its own goroutine (the finished sender returns to its own
// webhook), else k is idle.
func (c *coalescer) handOff(k coalesceKey, notify func(context.Context, *alert.Notification) error) {
	c.mu.Lock()
	r := c.next[k]
	if r == nil {
		delete(c.next, k)
		c.mu.Unlock()
		return
	}
	c.next[k] = nil // r's send is now the one in flight
	c.mu.Unlock()
	go c.sendRound(k, r, notify)
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
		if b.n.Data != nil {
			data.Alerts = append(data.Alerts, b.n.Data.Alerts...)
		}
	}
	data.Status = string(alert.KindResolved)
	for _, a := range data.Alerts {
		if a.Status == string(alert.KindFiring) {
			data.Status = string(alert.KindFiring)
			break
		}
	}
	data.CommonLabels = common(data.Alerts, func(a template.Alert) template.KV { return a.Labels })
	data.CommonAnnotations = common(data.Alerts, func(a template.Alert) template.KV { return a.Annotations })
	groups := data.GroupLabels
	data.GroupLabels = template.KV{}
	for k, v := range groups {
		shared := true
		for _, b := range bs[1:] {
			if b.n.Data == nil || b.n.Data.GroupLabels[k] != v {
				shared = false
				break
			}
		}
		if shared {
			data.GroupLabels[k] = v
		}
	}
	m.Data = &data
	return &m
}

// countCoalesced counts a batch that went out in another batch's send.
func (p *Pipeline) countCoalesced(b *batch) {
	if p.Metrics != nil {
		p.Metrics.coalesced.WithLabelValues(b.receiver, b.integ.Name).Inc()
	}
}
