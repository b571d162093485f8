package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
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
// store (Record), its group in the set dedup.UnsentKey, until a webhook of
// the group is delivered (the pipeline's settle removes it:
// routing.Pipeline.ForgetsUnsent; Forget, a 2xx that sent nothing) —
// Alertmanager counted the group notified and sends its resolves itself.
// Sweep looks at the kept webhooks Alertmanager has stopped retrying — not
// written again for After, while it retries a failing notification every
// minute or so — and resolves their firing alerts that Alertmanager has
// held on no sweep (asked through Held) for After either, over consecutive
// sweeps: a sweep that could not ask, or missed sweeps, start the count
// again. An Alertmanager restarted without its data holds no alert until
// Prometheus sends them again, every minute, so a short absence is no
// resolve (a review: a page resolved 7 s after such a restart). The webhook is processed again with those alerts resolved
// (endsAt now), as Alertmanager would have sent it. The integrations that
// delivered the firing get its resolve; one that never did gets the resolve
// of an alert it was never sent (PagerDuty ignores it; Slack draws
// nothing). A Held that fails, or an alert Alertmanager holds, resolves
// nothing. One process sweeps at a time (a lease its holder keeps, so the
// absences it saw are the sweeps' own).
type Orphans struct {
	Store store.Store
	// Prefix is the store's key prefix.
	Prefix string
	// Held returns the fingerprints of the alerts named alertname that
	// Alertmanager holds now (active, silenced, inhibited or unprocessed).
	Held func(ctx context.Context, alertname string) (map[string]bool, error)
	// After is how long a kept webhook goes unwritten, and its alerts
	// unheld by Alertmanager, before they are resolved (config
	// alertmanager.resolve_unsent_after).
	After time.Duration
	// Logger receives what Sweep resolved.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex
	// absent holds, by group then fingerprint, when a sweep first found
	// Alertmanager not holding the alert (since then every sweep found it
	// so); resolved, those Sweep resolved.
	absent   map[string]map[string]time.Time
	resolved map[string]map[string]bool
	// swept is when this process last swept and asked Alertmanager; kept
	// the groups the last Refresh found kept.
	swept time.Time
	kept  map[string]bool
}

// Every is how often the kept webhooks are swept: a quarter of After,
// between 1 and 30 seconds.
func (o *Orphans) Every() time.Duration {
	return min(max(o.After/4, time.Second), 30*time.Second)
}

// Refresh reads which groups are kept (Forget), on every replica once a
// sweep interval.
func (o *Orphans) Refresh(ctx context.Context) {
	groups, err := o.Store.Members(ctx, o.indexKey())
	if err != nil {
		return
	}
	kept := make(map[string]bool, len(groups))
	for _, g := range groups {
		kept[g] = true
	}
	o.mu.Lock()
	o.kept = kept
	o.mu.Unlock()
}

// Forget takes msg's group out of the kept ones when the last Refresh
// found it kept: a webhook of it answered 2xx that sent nothing (every
// alert deduplicated: no settle wrote it).
func (o *Orphans) Forget(ctx context.Context, msg *alert.Message) {
	o.mu.Lock()
	if len(o.kept) == 0 { // the usual case: nothing to hash or look up
		o.mu.Unlock()
		return
	}
	group := msg.GroupID()
	kept := o.kept[group]
	delete(o.kept, group)
	o.mu.Unlock()
	if kept {
		_, _ = o.Store.RemoveMembers(ctx, o.indexKey(), group)
	}
}

// orphanTTL bounds how long a kept webhook lives unwritten: Alertmanager
// retries a failing notification within minutes, and not while its alerts
// are silenced; a webhook kept 6 hours was resolved by Sweep long before,
// or its alerts were silenced as long (their resolve is then lost as
// before).
const orphanTTL = 6 * time.Hour

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

func (o *Orphans) indexKey() string { return dedup.UnsentKey(o.Prefix) }

func (o *Orphans) recordKey(group string) string {
	return store.Key(o.Prefix, "orphan", group, "webhook")
}

// Record keeps body, the webhook msg was decoded from, answered 5xx: when
// it carries a firing alert (its resolve is what may never come).
func (o *Orphans) Record(ctx context.Context, msg *alert.Message, body []byte) {
	group := msg.GroupID()
	if group == "" || !slices.ContainsFunc(msg.Items, func(a alert.Alert) bool { return a.Firing() }) {
		return // not Alertmanager's (no groupKey), or nothing fires
	}
	if len(body) > maxOrphanBody {
		o.Logger.Warn("webhook answered 5xx too large to keep for its resolve: should the failure outlast its alerts, Alertmanager sends no resolve and pages it delivered stay open",
			"group_key", msg.GroupKey, "bytes", len(body))
		return
	}
	at := strconv.FormatInt(o.now().UnixMilli(), 10)
	errs := store.Write(ctx, o.Store, store.Writes{
		Set: []store.Entry{{Key: o.recordKey(group), Value: at + "\n" + string(body), TTL: orphanTTL}},
		Add: []store.Members{{Key: o.indexKey(), TTL: orphanTTL, Members: []string{group}}},
	})
	if err := errors.Join(errs.Set, errs.Add); err != nil {
		o.Logger.Warn("keep the webhook answered 5xx for its resolve: not kept (should the failure outlast its alerts, pages it delivered stay open)", "group_key", msg.GroupKey, "err", err)
	}
}

// Sweep resolves the kept webhooks' alerts Alertmanager no longer holds
// (Orphans), processing each webhook with proc within timeout.
func (o *Orphans) Sweep(ctx context.Context, proc Processor, timeout time.Duration) {
	groups, err := o.Store.Members(ctx, o.indexKey())
	if err != nil {
		return
	}
	now := o.now()
	o.mu.Lock()
	o.keepOnly(groups)
	if !o.swept.IsZero() && now.Sub(o.swept) > 3*o.Every() {
		// Sweeps were missed (the lease elsewhere, the store down): an
		// absence is counted from consecutive sweeps only.
		clear(o.absent)
	}
	o.mu.Unlock()
	if len(groups) == 0 {
		o.sweptAt(now)
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
	held := map[string]map[string]bool{} // by alertname, asked once a sweep
	for i, g := range groups {
		if !found[i] {
			_, _ = o.Store.RemoveMembers(ctx, o.indexKey(), g) // expired
			continue
		}
		at, body, _ := strings.Cut(vals[i], "\n")
		ms, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			continue
		}
		kept := now.Sub(time.UnixMilli(ms))
		if kept < o.After {
			o.mu.Lock()
			delete(o.absent, g) // Alertmanager is retrying it: its alerts fire
			o.mu.Unlock()
			continue
		}
		msg, err := Decode([]byte(body), now)
		if err != nil {
			_, _ = o.Store.RemoveMembers(ctx, o.indexKey(), g)
			continue
		}
		if !o.sweepGroup(ctx, proc, timeout, g, msg, now, kept, held) {
			// Alertmanager cannot be asked: an absence seen before is
			// not one any more (a review: a crash-looping Alertmanager's
			// brief empty answers, minutes apart, resolved a live page).
			o.mu.Lock()
			clear(o.absent)
			o.mu.Unlock()
			return
		}
	}
	o.sweptAt(now)
}

// sweptAt records a sweep that asked what it had to.
func (o *Orphans) sweptAt(now time.Time) {
	o.mu.Lock()
	o.swept = now
	o.mu.Unlock()
}

// keepOnly forgets what the sweeps saw of groups no longer kept.
func (o *Orphans) keepOnly(groups []string) {
	kept := make(map[string]bool, len(groups))
	for _, g := range groups {
		kept[g] = true
	}
	maps.DeleteFunc(o.absent, func(g string, _ map[string]time.Time) bool { return !kept[g] })
	maps.DeleteFunc(o.resolved, func(g string, _ map[string]bool) bool { return !kept[g] })
}

// sweepGroup resolves msg's firing alerts that Alertmanager has held on no
// sweep for After, and forgets the group once none fires; held caches
// Alertmanager's answers by alertname. It reports false when Alertmanager
// could not be asked.
func (o *Orphans) sweepGroup(ctx context.Context, proc Processor, timeout time.Duration, group string, msg *alert.Message, now time.Time, kept time.Duration, held map[string]map[string]bool) bool {
	for _, a := range msg.Items {
		name := a.Labels["alertname"]
		if _, ok := held[name]; ok || !a.Firing() {
			continue
		}
		fps, err := o.Held(ctx, name)
		if err != nil {
			o.Logger.Warn("cannot ask Alertmanager whether the alerts of a webhook answered 5xx still fire: kept for the next sweep", "group_key", msg.GroupKey, "err", err)
			return false
		}
		held[name] = fps
	}
	var gone, names []string
	firing := 0
	o.mu.Lock()
	if o.absent == nil {
		o.absent, o.resolved = map[string]map[string]time.Time{}, map[string]map[string]bool{}
	}
	absent, resolved := o.absent[group], o.resolved[group]
	if absent == nil {
		absent = map[string]time.Time{}
		o.absent[group] = absent
	}
	for i := range msg.Items {
		a := &msg.Items[i]
		fp := a.Fingerprint
		if !a.Firing() || resolved[fp] {
			continue
		}
		if held[a.Labels["alertname"]][fp] {
			delete(absent, fp)
			firing++
			continue
		}
		since, seen := absent[fp]
		if !seen {
			absent[fp] = now
		}
		if !seen || now.Sub(since) < o.After {
			firing++
			continue
		}
		a.Status, a.EndsAt = "resolved", now
		gone = append(gone, fp)
		if len(names) < 10 {
			names = append(names, alertName(a))
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
			return true
		}
		o.Logger.Warn(fmt.Sprintf("resolved on Alertmanager's behalf %d alert(s) of a webhook answered 5xx (a delivery failed; Alertmanager, never having counted the firing notified, sends no resolve): Alertmanager held none of them on any sweep for %s or more", len(gone), o.After),
			"group_key", msg.GroupKey, "receiver", msg.Receiver, "alerts", strings.Join(names, ", "), "kept_for", kept.Round(time.Second), "still_firing", firing)
		o.mu.Lock()
		if o.resolved[group] == nil {
			o.resolved[group] = map[string]bool{}
		}
		for _, fp := range gone {
			o.resolved[group][fp] = true
			delete(o.absent[group], fp)
		}
		o.mu.Unlock()
	}
	if firing == 0 {
		_, _ = o.Store.RemoveMembers(ctx, o.indexKey(), group)
	}
	return true
}

// alertName names a for the log: its alertname and its instance, or its
// fingerprint.
func alertName(a *alert.Alert) string {
	id := a.Labels["instance"]
	if id == "" {
		id = a.Fingerprint
	}
	return a.Labels["alertname"] + "{" + id + "}"
}
