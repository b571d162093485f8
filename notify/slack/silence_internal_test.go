package slack

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alertrouter/alertrouter/notify/amsilence"
)

// The journal's view of an incident: the silences of the alerts routed to
// the message's receiver spare the incident's alerts routed elsewhere, or
// refuse when no absent label tells them apart.
func TestIncidentSilencesSpareTheIncidentsAlertsRoutedElsewhere(t *testing.T) {
	l := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	teamA := l("alertname", "KVCacheUsageHigh", "service", "search", "instance", "s-1")
	teamB := l("alertname", "KVCacheUsageHigh", "service", "search", "instance", "s-1", "team", "b", "zone", "z")
	teamA2 := l("alertname", "KVCacheUsageHigh", "service", "search", "instance", "s-2")
	for _, tc := range []struct {
		name        string
		own, others []map[string]string
		drawn       map[string]string
		want        []string
	}{{
		name:   "another team's alert with the same labels and more is spared with absent matchers of its extra labels",
		own:    []map[string]string{teamA},
		others: []map[string]string{teamB},
		want:   []string{`{alertname="KVCacheUsageHigh", instance="s-1", service="search", team="", zone=""}`},
	}, {
		name:   "an alert elsewhere that the silence does not match adds nothing",
		own:    []map[string]string{teamA2},
		others: []map[string]string{teamB},
		want:   []string{`{alertname="KVCacheUsageHigh", instance="s-2", service="search"}`},
	}, {
		name:   "several silences each spare what they match",
		own:    []map[string]string{teamA, l("alertname", "Other", "job", "x")},
		others: []map[string]string{teamB, l("alertname", "Other", "job", "x", "team", "b")},
		want:   []string{`{alertname="KVCacheUsageHigh", instance="s-1", service="search", team="", zone=""}`, `{alertname="Other", job="x", team=""}`},
	}, {
		name:   "the message's labels, the journal holding none of its alerts, spare the alerts routed elsewhere",
		others: []map[string]string{teamB},
		drawn:  teamA,
		want:   []string{`{alertname="KVCacheUsageHigh", instance="s-1", service="search", team="", zone=""}`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := incidentSilences("inc/1", tc.own, tc.others, tc.drawn)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var got []string
			for _, ms := range p.sets {
				got = append(got, amsilence.Text(ms))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("silences %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("silence %d = %s, want %s", i, got[i], tc.want[i])
				}
			}
			for _, o := range tc.others {
				for _, ms := range p.sets {
					if amsilence.Matches(ms, o) {
						t.Errorf("silence %s matches %v, routed elsewhere", amsilence.Text(ms), o)
					}
				}
			}
		})
	}
}

// exclude refuses, naming the alert, when the alert to spare carries no
// label the silenced alerts lack.
func TestExcludeNamesAnAlertNoAbsentLabelSpares(t *testing.T) {
	own := []map[string]string{{"alertname": "A", "job": "x", "team": "a"}, {"alertname": "A", "job": "y"}}
	other := map[string]string{"alertname": "A", "job": "x", "team": "a", "zone": "z"}
	// A silence matching both own alerts (as the message's labels do) and
	// the other: zone tells them apart.
	ms := []amsilence.Matcher{{Name: "alertname", Value: "A", IsEqual: true}}
	got, clash := exclude(ms, own, []map[string]string{other})
	if clash != nil || amsilence.Text(got) != `{alertname="A", zone=""}` {
		t.Fatalf("exclude = %s, %v; want zone=\"\" added", amsilence.Text(got), clash)
	}
	// Without zone, every label of the other is on a silenced alert.
	delete(other, "zone")
	other["job"] = "y"
	if _, clash := exclude(ms, own, []map[string]string{other}); clash == nil || clash["job"] != "y" {
		t.Fatalf("exclude clash = %v, want the alert named", clash)
	}
	p, err := incidentSilences("inc/1", []map[string]string{{"alertname": "A", "job": "x"}}, []map[string]string{{"alertname": "A", "job": "x", "team": ""}}, nil)
	if err != nil || len(p.sets) != 1 {
		t.Fatalf("an alert elsewhere with the same labels (an empty one aside) is the same alert: %v", err)
	}
	var r *refusal
	_, err = incidentSilences("inc/1", nil, nil, nil)
	if !errors.As(err, &r) || r.outcome != OutcomeUnknown {
		t.Fatalf("no firing alert: %v, want a refusal", err)
	}
}

// The user's answer keeps a long error's cause, at its end: a failed
// Silence whose error quoted Alertmanager's long URL was cut before
// "connection refused".
func TestErrTextKeepsTheCause(t *testing.T) {
	err := fmt.Errorf("list the alerts it matches: %w", &url.Error{Op: "Get", URL: "http://127.0.0.1:9093/api/v2/alerts?active=true&filter=" + strings.Repeat("a%3D%22b%22", 40),
		Err: errors.New("dial tcp 127.0.0.1:9093: connect: connection refused")})
	got := errText(err)
	if !strings.HasPrefix(got, "list the alerts it matches: Get") || !strings.HasSuffix(got, "connect: connection refused") || utf8.RuneCountInString(got) > 300 {
		t.Errorf("errText = %q (%d runes); want its start and its cause within 300 runes", got, utf8.RuneCountInString(got))
	}
	if short := errors.New("HTTP 500"); errText(short) != "HTTP 500" {
		t.Errorf("errText of a short error = %q", errText(short))
	}
}

// silenceAllocsPerAlert is incidentSilences' allocations per alert for n
// alerts of one incident that differ by instance alone (one silence of
// one n-value regex), a tenth of them also firing with a team label,
// routed elsewhere (spared by team="").
func silenceAllocsPerAlert(t *testing.T, n int) float64 {
	t.Helper()
	var own, others []map[string]string
	for i := range n {
		l := map[string]string{"alertname": "NodeDown", "job": "node", "instance": fmt.Sprintf("node-%05d:9100", i)}
		own = append(own, l)
		if i%10 == 0 {
			others = append(others, map[string]string{"alertname": "NodeDown", "job": "node", "instance": l["instance"], "team": "storage"})
		}
	}
	var p silencePlan
	var err error
	allocs := testing.AllocsPerRun(1, func() { p, err = incidentSilences("node/1", own, others, nil) })
	if err != nil || len(p.sets) != 1 || !strings.Contains(amsilence.Text(p.sets[0]), `team=""`) {
		t.Fatalf("%d alerts: %v, %d silences; want one sparing team=\"\"", n, err, len(p.sets))
	}
	return allocs / float64(n)
}

// A silence of an incident of thousands of alerts that differ by instance
// is one regex of thousands of values: it was compiled again for every
// alert it was tested on, so 2,000 instances took 36 s and the Silence
// timed out (an audit). Allocations are counted, not time.
func TestIncidentSilencesCostTheSamePerAlertAtAnySize(t *testing.T) {
	small := silenceAllocsPerAlert(t, 200)
	large := silenceAllocsPerAlert(t, 800)
	if large > 1.5*small {
		t.Fatalf("incidentSilences allocations per alert: %.0f at 200 alerts, %.0f at 800 (%.2f×): grows with the incident", small, large, large/small)
	}
	t.Logf("incidentSilences allocations per alert: %.0f at 200 alerts, %.0f at 800", small, large)
}

// A reply names each silence with its matchers cut to maxShownMatchers
// runes: 20 silences of 1,000-value regexes passed Slack's 40,000
// characters (an audit); the id finds the silence whole in Alertmanager.
func TestSilencesTextCutsLongMatchers(t *testing.T) {
	var values []string
	for i := range 1000 {
		values = append(values, fmt.Sprintf("node-%05d:9100", i))
	}
	ms := []amsilence.Matcher{{Name: "alertname", Value: "NodeDown", IsEqual: true}, amsilence.Regex("instance", values)}
	var ids []string
	var sets [][]amsilence.Matcher
	for i := range 20 {
		ids = append(ids, fmt.Sprintf("id-%02d", i))
		sets = append(sets, ms)
	}
	text := silencesText(ids, sets)
	if n := utf8.RuneCountInString(text); n > 20*(maxShownMatchers+40)+200 {
		t.Fatalf("silencesText of 20 silences of 1,000 values: %d runes", n)
	}
	if !strings.Contains(text, "`id-19` matching `{alertname=\"NodeDown\", instance=~\"node-00000:9100|") || !strings.Contains(text, "…`") {
		t.Errorf("silencesText = %.300s…; want each id with its matchers' start, cut", text)
	}
	if one := silencesText(ids[:1], sets[:1]); !strings.HasPrefix(one, "silence `id-00` matching `{alertname=\"NodeDown\"") || utf8.RuneCountInString(one) > maxShownMatchers+40 {
		t.Errorf("one silence: %.300s (%d runes)", one, utf8.RuneCountInString(one))
	}
}
