package notify

import (
	"slices"
	"testing"

	"github.com/prometheus/alertmanager/template"
)

func TestDifferingLabels(t *testing.T) {
	a := func(kv ...string) *template.Alert {
		l := template.KV{}
		for i := 0; i < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return &template.Alert{Labels: l}
	}
	for _, tc := range []struct {
		alerts []*template.Alert
		want   []string
	}{
		{[]*template.Alert{a("alertname", "A", "pod", "p1")}, nil},
		{[]*template.Alert{a("alertname", "A", "pod", "p1", "job", "x"), a("alertname", "A", "pod", "p2", "job", "x")}, []string{"pod"}},
		// a label one alert lacks differs; alertname and instance first
		{[]*template.Alert{a("zone", "a", "instance", "h1", "alertname", "A"), a("instance", "h2", "alertname", "B", "extra", "1")},
			[]string{"alertname", "instance", "extra", "zone"}},
	} {
		if got := DifferingLabels(tc.alerts); !slices.Equal(got, tc.want) {
			t.Errorf("DifferingLabels(%v) = %v, want %v", tc.alerts, got, tc.want)
		}
	}
}
