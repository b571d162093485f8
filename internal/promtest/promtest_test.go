package promtest

import (
	"testing"
	"time"
)

// TestBackfilledSeriesAndRules starts Prometheus with a backfilled counter
// and a recording rule over it, and reads the rule's value through the HTTP
// API.
func TestBackfilledSeriesAndRules(t *testing.T) {
	end := time.Now().Truncate(time.Second)
	series := OpenMetrics(end.Add(-2*time.Hour), end, 15*time.Second, Counter{
		Name: "requests_total", Labels: map[string]string{"job": "a"},
		Rate: func(time.Time) float64 { return 4 },
	})
	s := Start(t, Options{Series: series, Rules: `
groups:
  - name: test
    rules:
      - record: job:requests:rate1h
        expr: sum by (job) (rate(requests_total[1h]))
`})
	v := s.WaitValue(t, `job:requests:rate1h{job="a"}`)
	if v < 3.96 || v > 4.04 {
		t.Errorf("rate over the backfilled hour = %g, want 4 within 1%%", v)
	}
	s.Kill()
	if err := s.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if v := s.WaitValue(t, `job:requests:rate1h{job="a"}`); v < 3.96 || v > 4.04 {
		t.Errorf("after restart: %g", v)
	}
}
