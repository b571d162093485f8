package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// Orphans resolves, on Alertmanager's behalf, the firings of webhooks it
// will never send the resolve of. Alertmanager counts a notification sent
// only when the whole webhook is answered 2xx, and sends a group's resolve
// only for alerts it counted notified firing. The router answers 5xx when
// one integration fails — while the others may have delivered: a page
// PagerDuty holds while Slack's token is revoked, or PagerDuty throttles
// another receiver's key. When the failure outlasts the alerts, their
// resolve never comes and the delivered page stays open for good (an
// audit: 192 of 300 pages with five receivers on one throttled key).
//
// So each webhook answered 5xx that carries a firing alert is kept in the
// store (Record), under its group, until a later webhook of the group is
// answered 2xx (Forget: Alertmanager counted the group notified and sends
// its resolves itself). Sweep looks at the kept webhooks Alertmanager has
// stopped retrying — not written again for After, while it retries a
// failing notification every minute or so — and resolves their firing
// alerts that Alertmanager no longer holds (asked through Held, on two
// sweeps in a row): the webhook is processed again, those alerts resolved
// (endsAt now), as Alertmanager would have sent it. The integrations that
// delivered the firing get its resolve; one that never did gets the
// resolve of an alert it was never sent (PagerDuty ignores it; Slack draws
// nothing). A Held that fails, or an alert Alertmanager still holds, leaves
// the webhook kept.
type Orphans struct {
	Store store.Store
	// Prefix is the store's key prefix.
	Prefix string
	// Held returns the fingerprints of the alerts named alertname that
	// Alertmanager holds now (active, silenced, inhibited or unprocessed).
	Held func(ctx context.Context, alertname string) (map[string]bool, error)
	// After is how long a kept webhook goes unwritten before its alerts
	// are looked at (config alertmanager.resolve_unsent_after).
	After time.Duration
	// Logger receives what Sweep resolved.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex
	// absent holds, by group and fingerprint, the alerts Alertmanager did
	// not hold on the last sweep; resolved, those Sweep resolved.
	absent, resolved map[string]bool
	// known are the groups the last sweep found kept, and those this
	// process recorded since: Forget deletes only those (no store call on
	// the webhooks of every other group).
	known map[string]bool
}

// orphanTTL bounds how long a kept webhook lives unwritten: Alertmanager
// retries a failing notification within minutes; a webhook kept a day was
// resolved by Sweep long before, or its alerts still fire with no retry.
const orphanTTL = 24 * time.Hour

// orphanWriteTimeout bounds the edge's Record and Forget.
const orphanWriteTimeout = 2 * time.Second

// maxOrphanBody bounds the webhooks kept: a larger one is logged and not
// kept (its resolve, should the failure outlast it, is lost as before).
const maxOrphanBody = 1 << 20

func (o *Orphans) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Orphans) indexKey() string { return o.Prefix + "orphans" }

func (o *Orphans) recordKey(group string) string {
	return store.Key(o.Prefix, "orphan", group, "webhook")
}

// Record keeps body, the webhook msg was decoded from, answered 5xx: when
// it carries a firing alert (its resolve is what may never come).
func (o *Orphans) Record(ctx context.Context, msg *alert.Message, body []byte) {
	if msg.GroupID() == "" || !slices.ContainsFunc(msg.Items, func(a alert.Alert) bool { return a.Firing() }) {
		return // not Alertmanager's (no groupKey), or nothing fires
	}
	if len(body) > maxOrphanBody {
		o.Logger.Warn("webhook answered 5xx too large to keep for its resolve: should the failure outlast its alerts, Alertmanager sends no resolve and pages it delivered stay open",
			"group_key", msg.GroupKey, "bytes", len(body))
		return
	}
	group := msg.GroupID()
	at := strconv.FormatInt(o.now().UnixMilli(), 10)
	err := o.Store.Set(ctx, []store.Entry{{Key: o.recordKey(group), Value: at + "\n" + string(body), TTL: orphanTTL}})
	if err == nil {
		err = o.Store.AddMembers(ctx, o.indexKey(), orphanTTL, group)
	}
	if err != nil {
		o.Logger.Warn("keep the webhook answered 5xx for its resolve: not kept (should the failure outlast its alerts, pages it delivered stay open)", "group_key", msg.GroupKey, "err", err)
		return
	}
	o.mu.Lock()
	if o.known == nil {
		o.known = map[string]bool{}
	}
	o.known[group] = true
	o.mu.Unlock()
}

// Forget deletes msg's group's kept webhook, answered 2xx: Alertmanager
// counts the group notified and sends its resolves itself.
func (o *Orphans) Forget(ctx context.Context, msg *alert.Message) {
	group := msg.GroupID()
	o.mu.Lock()
	known := o.known[group]
	o.mu.Unlock()
	if !known {
		return
	}
	o.forget(ctx, group)
}

func (o *Orphans) forget(ctx context.Context, group string) {
	key := o.recordKey(group)
	vals, found, err := o.Store.Get(ctx, []string{key})
	if err == nil && found[0] {
		err = o.Store.DeleteIfEqual(ctx, []store.Entry{{Key: key, Value: vals[0]}})
	}
	if err == nil {
		_, err = o.Store.RemoveMembers(ctx, o.indexKey(), group)
	}
	if err != nil {
		return // Sweep finds it kept, and Alertmanager's alerts decide
	}
	o.mu.Lock()
	delete(o.known, group)
	for _, m := range []map[string]bool{o.absent, o.resolved} {
		for k := range m {
			if strings.HasPrefix(k, group+"/") {
				delete(m, k)
			}
		}
	}
	o.mu.Unlock()
}

// Sweep resolves the kept webhooks' alerts Alertmanager no longer holds
// (Orphans), processing each webhook with proc within timeout.
func (o *Orphans) Sweep(ctx context.Context, proc Processor, timeout time.Duration) {
	groups, err := o.Store.Members(ctx, o.indexKey())
	if err != nil || len(groups) == 0 {
		o.mu.Lock()
		if err == nil {
			o.known = nil
		}
		o.mu.Unlock()
		return
	}
	keys := make([]string, len(groups))
	for i, g := range groups {
		keys[i] = o.recordKey(g)
	}
	vals, found, err := o.Store.Get(ctx, keys)
	if err != nil {
		return
	}
	o.mu.Lock()
	o.known = map[string]bool{}
	for i, g := range groups {
		o.known[g] = found[i]
	}
	o.mu.Unlock()
	now := o.now()
	for i, g := range groups {
		if !found[i] {
			_, _ = o.Store.RemoveMembers(ctx, o.indexKey(), g) // expired
			continue
		}
		at, body, _ := strings.Cut(vals[i], "\n")
		ms, err := strconv.ParseInt(at, 10, 64)
		if err != nil || now.Sub(time.UnixMilli(ms)) < o.After {
			continue // Alertmanager may still be retrying it
		}
		msg, err := Decode([]byte(body), now)
		if err != nil {
			o.forget(ctx, g)
			continue
		}
		o.sweepGroup(ctx, proc, timeout, g, msg, now)
	}
}

// sweepGroup resolves msg's firing alerts that Alertmanager held on
// neither this sweep nor the last, and forgets the group once none fires.
func (o *Orphans) sweepGroup(ctx context.Context, proc Processor, timeout time.Duration, group string, msg *alert.Message, now time.Time) {
	held := map[string]map[string]bool{}
	for _, a := range msg.Items {
		name := a.Labels["alertname"]
		if _, ok := held[name]; ok || !a.Firing() {
			continue
		}
		fps, err := o.Held(ctx, name)
		if err != nil {
			o.Logger.Warn("cannot ask Alertmanager whether the alerts of a webhook answered 5xx still fire: kept for the next sweep", "group_key", msg.GroupKey, "err", err)
			return
		}
		held[name] = fps
	}
	var gone []string
	firing := 0
	o.mu.Lock()
	if o.absent == nil {
		o.absent, o.resolved = map[string]bool{}, map[string]bool{}
	}
	for i := range msg.Items {
		a := &msg.Items[i]
		k := group + "/" + a.Fingerprint
		switch {
		case !a.Firing() || o.resolved[k]:
		case held[a.Labels["alertname"]][a.Fingerprint]:
			delete(o.absent, k)
			firing++
		case !o.absent[k]:
			o.absent[k] = true // absent once: asked again next sweep
			firing++
		default:
			a.Status, a.EndsAt = "resolved", now
			gone = append(gone, k)
		}
	}
	o.mu.Unlock()
	if len(gone) > 0 {
		msg.Status = "resolved"
		if firing > 0 {
			msg.Status = "firing"
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := proc.Process(pctx, msg)
		cancel()
		if err != nil {
			o.Logger.Warn("resolve on Alertmanager's behalf the alerts of a webhook answered 5xx, which it no longer holds: failed, tried again next sweep", "group_key", msg.GroupKey, "alerts", len(gone), "err", err)
			return
		}
		o.Logger.Warn(fmt.Sprintf("resolved on Alertmanager's behalf %d alert(s) of a webhook answered 5xx: Alertmanager no longer holds them and, never having counted their firing notified, sends no resolve", len(gone)),
			"group_key", msg.GroupKey, "receiver", msg.Receiver, "still_firing", firing)
		o.mu.Lock()
		for _, k := range gone {
			o.resolved[k] = true
			delete(o.absent, k)
		}
		o.mu.Unlock()
	}
	if firing == 0 {
		o.forget(ctx, group)
	}
}
