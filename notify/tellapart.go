package notify

import (
	"sort"

	"github.com/prometheus/alertmanager/template"
)

// DifferingLabels returns the names of the labels whose values differ
// between any two of alerts (a label some alerts lack differs from one they
// carry): what tells them apart. alertname comes first, then instance, then
// the others by name. None when alerts has fewer than two.
func DifferingLabels(alerts []*template.Alert) []string {
	var differ []string
	names := map[string]bool{}
	for _, a := range alerts {
		for name := range a.Labels {
			if names[name] {
				continue
			}
			names[name] = true
			for _, b := range alerts {
				if b.Labels[name] != a.Labels[name] {
					differ = append(differ, name)
					break
				}
			}
		}
	}
	rank := func(name string) int {
		switch name {
		case "alertname":
			return 0
		case "instance":
			return 1
		}
		return 2
	}
	sort.Slice(differ, func(i, j int) bool {
		if ri, rj := rank(differ[i]), rank(differ[j]); ri != rj {
			return ri < rj
		}
		return differ[i] < differ[j]
	})
	return differ
}
