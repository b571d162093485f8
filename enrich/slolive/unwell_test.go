package slolive

import (
	"errors"
	"fmt"
	"testing"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// A lookup failure is Prometheus' (every lookup of the moment meets it)
// or the alert's own: the router stops looking up an SLO's other alerts
// only after the former.
func TestLookupErrorSaysWhetherPrometheusIsUnwell(t *testing.T) {
	for _, tc := range []struct {
		err    error
		unwell bool
	}{
		{ErrTimeout, true},
		{ErrBreakerOpen, true},
		{fmt.Errorf("dial: %w", ErrUnavailable), true},
		{&credentialsError{status: 401, err: errors.New("401")}, true},
		{&v1.Error{Type: v1.ErrServer, Msg: "boom"}, true},
		{errNoServer, false}, // the alert's own generatorURL names no Prometheus
		{ErrNoData, false},
		{errNoBudget, false},
		{ErrNotSLO, false},
		{&v1.Error{Type: v1.ErrBadData, Msg: "parse error"}, false},
		{errors.New(`template: expr: map has no entry for key "tier"`), false},
	} {
		le := lookupError(tc.err).(*LookupError)
		if got := le.PrometheusUnwell(); got != tc.unwell {
			t.Errorf("%v (reason %q): PrometheusUnwell %v, want %v", tc.err, le.Reason, got, tc.unwell)
		}
	}
}
