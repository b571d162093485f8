package webhook

import (
	"github.com/alertrouter/alertrouter/routing/alert"
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

// Complete adds to msg, Alertmanager truncated (max_alerts), the firing
// alerts of its group it left out — group, read from Alertmanager's API
// when the webhook arrived — decoded as the webhook's own alerts are, and
// says msg is whole (TruncatedAlerts 0) and firing when it gained any. An
// alert msg carries (by fingerprint) is not added again. Alertmanager
// counts the alerts it left out as notified and sends them again only at
// its repeat_interval: they paged hours late, and the webhook's resolves
// closed no incident, as those alerts could fire in it. Resolved alerts
// left out are not listed by Alertmanager's API: their incidents' resolves
// are lost as before. Complete returns how many alerts it added.
func Complete(msg *alert.Message, group []LeftOut) int {
	have := make(map[string]bool, len(msg.Items))
	for i := range msg.Items {
		have[msg.Items[i].Fingerprint] = true
	}
	added := 0
	for _, g := range group {
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
	return added
}
