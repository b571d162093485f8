package webhook

import (
	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/matchers"
)

// LeftOut is a firing alert of a truncated webhook's group as
// Alertmanager's API lists it (GET /api/v2/alerts/groups): what the webhook
// would have carried of it.
type LeftOut struct {
	Fingerprint  string
	Labels       map[string]string
	Annotations  map[string]string
	StartsAt     string
	GeneratorURL string
}

// Complete adds to msg, which Alertmanager truncated (max_alerts), the
// firing alerts of its group it left out — listed, the group's receiver and
// labels the webhook's, from Alertmanager's API when the webhook arrived —
// decoded as the webhook's own alerts are, and says msg is whole
// (TruncatedAlerts 0; firing when it gained any). Alertmanager counts the
// alerts it left out as notified and sends them again only at its
// repeat_interval: they paged late, and the webhook's resolves closed no
// incident, as those alerts could fire in it.
//
// Only alerts of msg's own aggregation group are added: those its route's
// matchers (the route part of its group key, {}/{team="a"}:…) match — the
// listing holds every route's group of that receiver and those labels, a
// time-muted route's included (a review). The listing must hold every
// firing alert msg carries, else it is no listing of msg's group (an
// alertmanager.url naming another Alertmanager, an alert resolved since):
// msg is left as it came, and ok is false; so it is when its group key is
// not Alertmanager's. An empty listing of a webhook with no firing alert
// (its alerts all resolved) makes it whole. Resolved alerts left out are
// not listed by Alertmanager's API: their incidents' resolves are lost as
// before. An alert msg carries (by fingerprint) is not added again.
func Complete(msg *alert.Message, group []LeftOut) (added int, ok bool) {
	route, ok := routeMatchers(msg.GroupKey)
	if !ok {
		return 0, false
	}
	ours := group[:0:0]
	listed := map[string]bool{}
	for _, g := range group {
		if matchesAll(route, g.Labels) {
			ours = append(ours, g)
			listed[g.Fingerprint] = true
		}
	}
	have := make(map[string]bool, len(msg.Items))
	for i := range msg.Items {
		a := &msg.Items[i]
		have[a.Fingerprint] = true
		if a.Firing() && !listed[a.Fingerprint] {
			return 0, false
		}
	}
	for _, g := range ours {
		if g.Fingerprint != "" && have[g.Fingerprint] {
			continue
		}
		w := wireAlert{Status: "firing", Labels: g.Labels, Annotations: g.Annotations, StartsAt: g.StartsAt,
			GeneratorURL: g.GeneratorURL, Fingerprint: g.Fingerprint}
		n := len(msg.Items)
		addAlert(msg, n+len(msg.Rejected), &w, false)
		if len(msg.Items) > n {
			have[msg.Items[n].Fingerprint] = true
			added++
		}
	}
	msg.TruncatedAlerts = 0
	if added > 0 {
		msg.Status = "firing"
	}
	return added, true
}

// routeMatchers reads the matchers of the route of an Alertmanager group
// key, "{}/{a=\"1\"}/{b=~\"2\"}:{alertname=\"X\"}": one set per route from
// the root; false when key is not of that form.
func routeMatchers(key string) ([]amlabels.Matchers, bool) {
	var out []amlabels.Matchers
	for i := 0; ; {
		if i >= len(key) || key[i] != '{' {
			return nil, false
		}
		end, quoted := -1, false
		for j := i + 1; j < len(key) && end < 0; j++ {
			switch c := key[j]; {
			case quoted && c == '\\':
				j++
			case c == '"':
				quoted = !quoted
			case !quoted && c == '}':
				end = j
			}
		}
		if end < 0 {
			return nil, false
		}
		ms, err := matchers.Parse(key[i : end+1])
		if err != nil {
			return nil, false
		}
		out = append(out, ms)
		switch {
		case end+1 < len(key) && key[end+1] == '/':
			i = end + 2
		case end+1 < len(key) && key[end+1] == ':':
			return out, true
		default:
			return nil, false
		}
	}
}

// matchesAll reports whether labels match every matcher of route (an
// absent label reads as "", as in Alertmanager).
func matchesAll(route []amlabels.Matchers, labels map[string]string) bool {
	ls := make(model.LabelSet, len(labels))
	for k, v := range labels {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	for _, ms := range route {
		if !ms.Matches(ls) {
			return false
		}
	}
	return true
}
