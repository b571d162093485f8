package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
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

// refusalReasons are the reason label values of
// alertrouter_store_refusals_total: the codes of the error replies that
// say why Redis refused a command, lower-cased, and other.
var refusalReasons = []string{"oom", "readonly", "noperm", "noauth", "wrongpass", "loading", "busy", "misconf", "masterdown", "clusterdown", "noscript", "other"}

// metrics of the Redis store, with every operation's series created at zero.
type metrics struct {
	duration map[string]prometheus.Observer
	errors   map[string]prometheus.Counter
	refusals map[string]prometheus.Counter
}

// countError counts err, op's: in alertrouter_store_errors_total, and, when
// Redis answered it (an error reply), in alertrouter_store_refusals_total
// by its code.
func (m *metrics) countError(op string, err error) {
	m.errors[op].Inc()
	if reason, ok := refusalReason(err); ok {
		m.refusals[reason].Inc()
	}
}

// refusalReason is the reason label of err when it is an error reply of
// Redis ("OOM command not allowed…": oom), false otherwise (unreachable,
// timed out).
func refusalReason(err error) (string, bool) {
	var re redis.Error
	if err == nil || errors.Is(err, redis.Nil) || !errors.As(err, &re) {
		return "", false
	}
	msg := re.Error()
	code, _, _ := strings.Cut(msg, " ")
	code = strings.ToLower(code)
	if slices.Contains(refusalReasons, code) {
		return code, true
	}
	return "other", true
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
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "alertrouter_store_refusals_total",
		Help: "Commands Redis answered with an error, by its code: oom (full: maxmemory with noeviction), readonly (a replica: failed over, or replicaof), noperm, noauth and wrongpass (ACL, password), loading, busy (a script), misconf (its persistence failing), masterdown, clusterdown, noscript, other. Each is also in alertrouter_store_errors_total.",
	}, []string{"reason"})
	if reg != nil {
		// A reload that builds a new store client registers again: reuse
		// the collectors already registered.
		var are prometheus.AlreadyRegisteredError
		if err := reg.Register(refused); errors.As(err, &are) {
			refused = are.ExistingCollector.(*prometheus.CounterVec)
		} else if err != nil {
			return nil, fmt.Errorf("register store metrics: %w", err)
		}
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
	m := &metrics{duration: map[string]prometheus.Observer{}, errors: map[string]prometheus.Counter{}, refusals: map[string]prometheus.Counter{}}
	for _, r := range refusalReasons {
		m.refusals[r] = refused.WithLabelValues(r)
	}
	for _, op := range operations {
		if op != opDial && op != opStalled { // counted when they happen, never timed
			m.duration[op] = duration.WithLabelValues(op)
		}
		m.errors[op] = errs.WithLabelValues(op)
	}
	return m, nil
}
