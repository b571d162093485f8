package notify

import (
	"encoding/json"
	"net/url"
	"strings"
)

// SilenceURL returns the Alertmanager page that creates a silence matching
// the notification's common labels (the first alert's labels when there are
// none in common), or "" without an external URL.
func SilenceURL(data *Data) string {
	if data.ExternalURL == "" {
		return ""
	}
	labels := data.CommonLabels
	if len(labels) == 0 && len(data.Alerts) > 0 {
		labels = data.Alerts[0].Labels
	}
	if len(labels) == 0 {
		return ""
	}
	pairs := labels.SortedPairs()
	ms := make([]string, 0, len(pairs))
	for _, p := range pairs {
		b, _ := json.Marshal(p.Value)
		ms = append(ms, p.Name+"="+string(b))
	}
	return data.ExternalURL + "/#/silences/new?filter=" + url.QueryEscape("{"+strings.Join(ms, ", ")+"}")
}
