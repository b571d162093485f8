package amsilence_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/notify/amsilence"
)

// mutes reports whether Alertmanager's own matching (pkg/labels: a silence
// matches an alert when all its matchers do, regexes anchored, an absent
// label read as "") mutes labels with one of silences.
func mutes(t *testing.T, silences [][]amsilence.Matcher, labels map[string]string) bool {
	t.Helper()
	ls := model.LabelSet{}
	for k, v := range labels {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	for _, ms := range silences {
		var am amlabels.Matchers
		for _, m := range ms {
			typ := amlabels.MatchEqual
			switch {
			case m.IsRegex && m.IsEqual:
				typ = amlabels.MatchRegexp
			case m.IsRegex:
				typ = amlabels.MatchNotRegexp
			case !m.IsEqual:
				typ = amlabels.MatchNotEqual
			}
			mm, err := amlabels.NewMatcher(typ, m.Name, m.Value)
			if err != nil {
				t.Fatalf("matcher %+v: %v", m, err)
			}
			am = append(am, mm)
		}
		if am.Matches(ls) {
			return true
		}
	}
	return false
}

// The silences of an incident's firing alerts mute them all and none of
// the other alerts that share labels with them (the auditor's cases: one
// incident of two alertnames, with service on one and job on the other,
// silenced {severity="critical"}; two TTFT alertnames silenced {sector,
// service, severity}, which muted ITLHigh too).
func TestPinMutesTheIncidentsAlertsAndNoOther(t *testing.T) {
	for _, tc := range []struct {
		name   string
		firing []map[string]string
		others []map[string]string
		want   []string
	}{{
		name: "alertnames and service/job differ",
		firing: []map[string]string{
			{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "a"},
			{"alertname": "TimeToFirstTokenP99High", "job": "chat", "severity": "critical", "instance": "b"},
		},
		others: []map[string]string{
			{"alertname": "PagerTestOtherTeam", "service": "payments", "severity": "critical"},
			{"alertname": "VLLMTimeToFirstTokenHigh", "service": "chat", "severity": "critical", "instance": "b"},
			{"alertname": "TimeToFirstTokenP99High", "job": "chat", "severity": "critical", "instance": "a"},
		},
		want: []string{
			`{alertname="TimeToFirstTokenP99High", instance="b", job="chat", severity="critical"}`,
			`{alertname="VLLMTimeToFirstTokenHigh", instance="a", service="chat", severity="critical"}`,
		},
	}, {
		name: "two alertnames of one sector and service",
		firing: []map[string]string{
			{"alertname": "TTFTHigh", "sector": "llm", "service": "chat", "severity": "warning"},
			{"alertname": "TTFTP99High", "sector": "llm", "service": "chat", "severity": "warning"},
		},
		others: []map[string]string{
			{"alertname": "ITLHigh", "sector": "llm", "service": "chat", "severity": "warning"},
			{"alertname": "TTFTHighX", "sector": "llm", "service": "chat", "severity": "warning"},
		},
		want: []string{`{alertname=~"TTFTHigh|TTFTP99High", sector="llm", service="chat", severity="warning"}`},
	}, {
		name: "one rule on several instances (regex metacharacters quoted)",
		firing: []map[string]string{
			{"alertname": "DiskFull", "instance": "10.0.0.1:9100", "job": "node"},
			{"alertname": "DiskFull", "instance": "10.0.0.2:9100", "job": "node"},
			{"alertname": "DiskFull", "instance": "10.0.0.2:9100", "job": "node"}, // twice
		},
		others: []map[string]string{
			{"alertname": "DiskFull", "instance": "10x0x0x1:9100", "job": "node"},
			{"alertname": "DiskFull", "instance": "10.0.0.3:9100", "job": "node"},
			{"alertname": "DiskFull", "instance": "10.0.0.1:9100|10.0.0.2:9100", "job": "node"},
		},
		want: []string{`{alertname="DiskFull", instance=~"10\\.0\\.0\\.1:9100|10\\.0\\.0\\.2:9100", job="node"}`},
	}, {
		name: "alertnames by instances, not every combination firing",
		firing: []map[string]string{
			{"alertname": "A", "instance": "1", "job": "j"},
			{"alertname": "A", "instance": "2", "job": "j"},
			{"alertname": "B", "instance": "1", "job": "j"},
		},
		others: []map[string]string{{"alertname": "B", "instance": "2", "job": "j"}},
		want: []string{
			`{alertname="A", instance=~"1|2", job="j"}`,
			`{alertname="B", instance="1", job="j"}`,
		},
	}, {
		name:   "one alert: all its labels",
		firing: []map[string]string{{"alertname": "A", "job": "j", "empty": ""}},
		others: []map[string]string{{"alertname": "A", "job": "k"}, {"alertname": "B", "job": "j"}},
		want:   []string{`{alertname="A", job="j"}`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sets := amsilence.Pin(tc.firing)
			var got []string
			for _, ms := range sets {
				got = append(got, amsilence.Text(ms))
				if err := amsilence.CheckSafe(ms); err != nil {
					t.Errorf("unsafe: %v", err)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("silences\n %q\nwant\n %q", got, tc.want)
			}
			for _, a := range tc.firing {
				if !mutes(t, sets, a) {
					t.Errorf("firing alert %v is not muted by %q", a, got)
				}
			}
			for _, o := range tc.others {
				if mutes(t, sets, o) {
					t.Errorf("alert %v of no firing alert is muted by %q", o, got)
				}
			}
		})
	}
}

// Whatever alerts fire, out of every alert that could exist over their
// label names, the silences mute exactly the firing ones — and those
// carrying extra labels besides a firing one's, as any silence does.
func TestPinIsExactOnRandomIncidents(t *testing.T) {
	domains := []struct {
		name   string
		values []string // "" is absent
	}{
		{"alertname", []string{"A", "B", "C"}},
		{"instance", []string{"1", "2", "3"}},
		{"job", []string{"x", "y", ""}},
		{"pod", []string{"p", ""}},
		{"severity", []string{"critical"}},
	}
	universe := []map[string]string{{}}
	for _, d := range domains {
		var next []map[string]string
		for _, u := range universe {
			for _, v := range d.values {
				c := map[string]string{}
				for k, x := range u {
					c[k] = x
				}
				if v != "" {
					c[d.name] = v
				}
				next = append(next, c)
			}
		}
		universe = next
	}
	subset := func(a, b map[string]string) bool {
		for k, v := range a {
			if b[k] != v {
				return false
			}
		}
		return true
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		var firing []map[string]string
		for _, u := range universe {
			if rng.Intn(20) == 0 || len(firing) == 0 && rng.Intn(4) == 0 {
				firing = append(firing, u)
			}
		}
		if len(firing) == 0 {
			continue
		}
		sets := amsilence.Pin(firing)
		for _, u := range universe {
			fires, covered := false, false
			for _, f := range firing {
				fires = fires || subset(f, u) && subset(u, f)
				covered = covered || subset(f, u)
			}
			switch m := mutes(t, sets, u); {
			case fires && !m:
				t.Fatalf("round %d: firing %v is not muted (firing %v, silences %v)", round, u, firing, sets)
			case m && !covered:
				t.Fatalf("round %d: %v, which no firing alert is part of, is muted (firing %v, silences %v)", round, u, firing, sets)
			}
		}
	}
}

func TestCheckSafe(t *testing.T) {
	eq := func(kv ...string) []amsilence.Matcher {
		l := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return amsilence.Equal(l)
	}
	for _, ms := range [][]amsilence.Matcher{
		nil,
		eq("severity", "critical"),
		eq("alertname", "Watchdog"),
		eq("severity", "critical", "sector", "llm", "env", "prod"),
	} {
		if err := amsilence.CheckSafe(ms); !errors.Is(err, amsilence.ErrUnsafe) {
			t.Errorf("CheckSafe(%s) = %v, want it refused", amsilence.Text(ms), err)
		}
	}
	for _, ms := range [][]amsilence.Matcher{
		eq("alertname", "DiskFull", "severity", "warning"),
		eq("service", "chat", "severity", "critical"),
		{{Name: "alertname", Value: "A|B", IsRegex: true, IsEqual: true}, {Name: "sector", Value: "llm", IsEqual: true}},
	} {
		if err := amsilence.CheckSafe(ms); err != nil {
			t.Errorf("CheckSafe(%s) = %v, want it accepted", amsilence.Text(ms), err)
		}
	}
}
