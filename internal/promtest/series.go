package promtest

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Counter is a counter series to generate: its labels and its rate per
// second as a function of time.
type Counter struct {
	// Name is the metric name, e.g. "http_requests_total".
	Name string
	// Labels are the series' labels, without the name.
	Labels map[string]string
	// Rate returns the counter's increase per second at t.
	Rate func(t time.Time) float64
}

// OpenMetrics renders counters sampled every step over [from, to] as
// OpenMetrics text for Backfill. Each counter integrates its Rate with the
// step (the rate at the start of each step holds for the whole step), so a
// rate that changes on step boundaries gives exact increases.
func OpenMetrics(from, to time.Time, step time.Duration, counters ...Counter) string {
	var b strings.Builder
	byName := map[string][]Counter{}
	var names []string
	for _, c := range counters {
		if _, ok := byName[c.Name]; !ok {
			names = append(names, c.Name)
		}
		byName[c.Name] = append(byName[c.Name], c)
	}
	sort.Strings(names)
	for _, name := range names {
		family := strings.TrimSuffix(name, "_total")
		fmt.Fprintf(&b, "# TYPE %s counter\n", family)
		for _, c := range byName[name] {
			lbl := labelText(c.Labels)
			v := 0.0
			for t := from; !t.After(to); t = t.Add(step) {
				fmt.Fprintf(&b, "%s%s %g %d\n", name, lbl, v, t.Unix())
				v += c.Rate(t) * step.Seconds()
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

func labelText(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, l[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}
