package store

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Operation label values of the Redis store's metrics.
const (
	opSetNX          = "set_nx"
	opSet            = "set"
	opGet            = "get"
	opDeleteIfEqual  = "delete_if_equal"
	opExpireIfEqual  = "expire_if_equal"
	opAddMembers     = "add_members"
	opRemoveMembers  = "remove_members"
	opMembers        = "members"
	opPing           = "ping"
	opIncidents      = "incidents"
	opIncidentState  = "incident_states"
	opWrite          = "write"
	opClaimJoin      = "claim_join"
	opRenewIncidents = "renew_incidents"
	// opDial counts failed connection attempts (TCP, TLS handshake); it
	// has no duration series.
	opDial = "dial"
	// opNewConn is the probe's ping on fresh connections
	// (Redis.PingNewConnection), apart from the pooled ping's.
	opNewConn = "new_conn"
	// opStalled counts the times Redis timed out and its commands were
	// failed at once after it (stallBreaker); it has no duration series.
	opStalled = "stalled"
)

var operations = []string{opSetNX, opSet, opGet, opDeleteIfEqual, opExpireIfEqual, opAddMembers, opRemoveMembers, opMembers, opPing, opIncidents, opIncidentState, opWrite, opClaimJoin, opRenewIncidents, opDial, opNewConn, opStalled}

// metrics of the Redis store, with every operation's series created at zero.
type metrics struct {
	duration map[string]prometheus.Observer
	errors   map[string]prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "alertrouter_store_operation_duration_seconds",
		Help: "Duration of state store operations, one batch (one pipeline) each.",
		// From a local round trip to the default read timeout.
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"operation"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "alertrouter_store_errors_total",
		Help: "State store operations that failed, unreachable store included.",
	}, []string{"operation"})
	if reg != nil {
		// A reload that builds a new store client registers again: reuse
		// the collectors already registered.
		var are prometheus.AlreadyRegisteredError
		if err := reg.Register(duration); errors.As(err, &are) {
			duration = are.ExistingCollector.(*prometheus.HistogramVec)
		} else if err != nil {
			return nil, fmt.Errorf("register store metrics: %w", err)
		}
		if err := reg.Register(errs); errors.As(err, &are) {
			errs = are.ExistingCollector.(*prometheus.CounterVec)
		} else if err != nil {
			return nil, fmt.Errorf("register store metrics: %w", err)
		}
	}
	m := &metrics{duration: map[string]prometheus.Observer{}, errors: map[string]prometheus.Counter{}}
	for _, op := range operations {
		if op != opDial && op != opStalled { // counted when they happen, never timed
			m.duration[op] = duration.WithLabelValues(op)
		}
		m.errors[op] = errs.WithLabelValues(op)
	}
	return m, nil
}
