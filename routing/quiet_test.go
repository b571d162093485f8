package routing

import (
	"testing"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
)

func mkAlert(fingerprint, status string, startsAt int64) *alert.Alert {
	return &alert.Alert{Alert: template.Alert{Fingerprint: fingerprint, Status: status, StartsAt: time.Unix(startsAt, 0)}}
}

// quietAlerts remembers a firing that was quiet and forgets it when it is
// no longer; a resolve, or another firing of the same fingerprint, is never
// taken for it.
func TestQuietAlertsFollowTheLastWebhook(t *testing.T) {
	var q quietAlerts
	firing := &alert.Result{Alert: mkAlert("f1", "firing", 100)}
	resolved := &alert.Result{Alert: mkAlert("f2", "resolved", 100)}
	results := []*alert.Result{firing, resolved}
	quiet := map[*alert.Result]bool{firing: true, resolved: true}

	q.note(results, []bool{false, false}, quiet)
	if !q.contains(firing) || q.contains(resolved) {
		t.Fatalf("after a quiet webhook: firing %v, resolved %v; want only the firing remembered", q.contains(firing), q.contains(resolved))
	}
	q.note(results, []bool{true, false}, quiet) // unchanged: nothing to write
	if n := q.m.Len(); n != 1 {
		t.Fatalf("%d entries after an unchanged webhook, want 1", n)
	}
	q.note(results, []bool{true, false}, map[*alert.Result]bool{})
	if q.contains(firing) {
		t.Fatal("a firing no longer quiet is still remembered as quiet")
	}
	later := &alert.Result{Alert: mkAlert("f1", "firing", 200)}
	q.note([]*alert.Result{firing}, []bool{false}, quiet)
	if q.contains(later) {
		t.Fatal("another firing of the same fingerprint (new startsAt) is taken for the quiet one")
	}
}
