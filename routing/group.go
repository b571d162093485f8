package routing

import (
	"context"
	"slices"
	"sort"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// groupReader is a notifier whose every notification is a message of its
// own, no parent or thread holding the incident's earlier alerts (Slack's
// incoming webhook): its operator's templates read the incident as the
// webhook held it (notify.WithGroup), as Alertmanager renders a group —
// not only the alerts that changed, which the notification carries.
type groupReader interface{ ReadsGroup() bool }

func readsGroup(i *Integration) bool {
	g, ok := i.Notifier.(groupReader)
	return ok && g.ReadsGroup()
}

// groups sets the group of every batch whose integration reads it
// (groupReader): the template data of the alerts of msg in the batch's
// incident that reach its receiver — those the batch sends, and those it
// does not (a firing already notified, which Alertmanager sends again with
// its group; a resolve already sent) —, in the webhook's order. Alerts
// decided none, suppressed by an SLO page or muted reach no receiver and
// are left out, and so are resolved alerts where the integration sends no
// resolves (send_resolved: false), as Alertmanager renders them.
func groups(msg *alert.Message, results []*alert.Result, batches []*batch) {
	var byIncident map[string][]int // result indexes by incident
	var index map[*alert.Result]int
	for _, b := range batches {
		if b.integ.Notifier == nil || !readsGroup(b.integ) {
			continue
		}
		if byIncident == nil {
			byIncident = map[string][]int{}
			index = make(map[*alert.Result]int, len(results))
			for i, r := range results {
				index[r] = i
				if r.Incident != "" {
					byIncident[r.Incident] = append(byIncident[r.Incident], i)
				}
				if r.NotifiedIn != "" && r.NotifiedIn != r.Incident {
					byIncident[r.NotifiedIn] = append(byIncident[r.NotifiedIn], i)
				}
			}
		}
		in := make(map[int]bool, len(b.trs))
		for _, t := range b.trs {
			if i, ok := index[t.res]; ok {
				in[i] = true
			}
		}
		for _, i := range byIncident[b.incident] {
			r := results[i]
			if r.MutedBy == "" && r.SuppressedBy == "" && slices.Contains(r.Receivers, b.receiver) {
				in[i] = true
			}
		}
		if !b.integ.SendResolved {
			// Alertmanager leaves resolved alerts out of what such an
			// integration renders (send_resolved: false): (index .Alerts 0)
			// and len .Alerts are the firing ones.
			for i := range in {
				if !results[i].Alert.Firing() {
					delete(in, i)
				}
			}
		}
		idx := make([]int, 0, len(in))
		for i := range in {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		alerts := make(template.Alerts, len(idx))
		rs := make([]*alert.Result, len(idx))
		for j, i := range idx {
			alerts[j], rs[j] = results[i].Alert.Alert, results[i]
		}
		b.group = templateData(msg, b.receiver, alerts, rs)
	}
}

// templateData is the template data of alerts, alerts of msg routed to
// receiver (rs their results): their status (firing when one fires), the
// labels and annotations they share, and as group labels, as Alertmanager
// renders its route's group_by, those they share of the group_by of the
// route that formed their incident (Result.GroupedBy) — a channel
// templated on `.GroupLabels.team` under an imported route grouping by
// team rendered "#-alerts" when Alertmanager's route to the router grouped
// by less —, else of Alertmanager's own group labels (incidents.group_by
// and its scope are the router's, not labels Alertmanager's templates
// knew: they stay out, titles as Alertmanager renders them).
func templateData(msg *alert.Message, receiver string, alerts template.Alerts, rs []*alert.Result) *template.Data {
	data := &template.Data{Receiver: receiver, ExternalURL: msg.ExternalURL, RouteLabels: msg.RouteLabels, Alerts: alerts}
	data.Status = mergedStatus(alerts)
	alert.SetCommon(data)
	data.GroupLabels = template.KV{}
	routed := false
	for _, r := range rs {
		if r.GroupedBy != nil {
			routed = true
		}
		for _, name := range r.GroupedBy {
			if v := data.CommonLabels[name]; v != "" {
				data.GroupLabels[name] = v
			}
		}
	}
	if routed {
		return data
	}
	for k, v := range msg.GroupLabels {
		if data.CommonLabels[k] == v {
			data.GroupLabels[k] = v
		}
	}
	return data
}

// mergedStatus is the status of a notification of alerts: firing when one
// of them fires, else resolved.
func mergedStatus(alerts template.Alerts) string {
	for _, a := range alerts {
		if a.Status == string(alert.KindFiring) {
			return string(alert.KindFiring)
		}
	}
	return string(alert.KindResolved)
}

// withGroup returns ctx carrying the group of the send of bs
// (notify.WithGroup): the group of a batch sent alone, the merged groups
// of coalesced ones (mergedGroup); ctx itself when the integration reads
// none.
func withGroup(ctx context.Context, bs []*batch) context.Context {
	return notify.WithGroup(ctx, mergedGroup(bs))
}

// mergedGroup is the group of a send carrying the updates bs (coalesced:
// one incident, integration and receiver): every alert of their groups
// once, the latest webhook's copy of each, in the order first seen; the
// group labels those the groups share. nil when the integration reads
// no group.
func mergedGroup(bs []*batch) *template.Data {
	if len(bs) == 1 || bs[0].group == nil {
		return bs[0].group
	}
	g := *bs[0].group
	g.Alerts = nil
	at := map[string]int{}
	for _, b := range bs {
		if b.group == nil {
			continue
		}
		for _, a := range b.group.Alerts {
			if i, ok := at[a.Fingerprint]; ok {
				g.Alerts[i] = a
				continue
			}
			at[a.Fingerprint] = len(g.Alerts)
			g.Alerts = append(g.Alerts, a)
		}
	}
	g.Status = mergedStatus(g.Alerts)
	alert.SetCommon(&g)
	g.GroupLabels = sharedGroupLabels(bs[0].group.GroupLabels, bs[1:], func(b *batch) *template.Data { return b.group })
	return &g
}

// sharedGroupLabels returns the pairs of first that the data of every
// batch of rest (data) hold alike.
func sharedGroupLabels(first template.KV, rest []*batch, data func(*batch) *template.Data) template.KV {
	out := template.KV{}
	for k, v := range first {
		shared := true
		for _, b := range rest {
			if d := data(b); d == nil || d.GroupLabels[k] != v {
				shared = false
				break
			}
		}
		if shared {
			out[k] = v
		}
	}
	return out
}
