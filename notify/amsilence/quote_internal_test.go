package amsilence

import "testing"

// A UTF-8 label name (Alertmanager 0.27 and later: OpenTelemetry's
// service.name, a name with a space) is quoted in the filter of GET
// /api/v2/alerts and in the matchers shown; unquoted, Alertmanager 0.28
// answered 400 "bad matcher format" and every Silence of such an alert
// failed, the user told to try again. Classic names stay bare (0.25).
func TestUTF8LabelNamesAreQuotedInMatchers(t *testing.T) {
	for _, tc := range []struct {
		m    Matcher
		want string
	}{
		{Matcher{Name: "job", Value: "vllm", IsEqual: true}, `job="vllm"`},
		{Matcher{Name: "my label", Value: "x y", IsEqual: true}, `"my label"="x y"`},
		{Matcher{Name: "service.name", Value: `a"b`, IsEqual: true}, `"service.name"="a\"b"`},
		{Matcher{Name: "région", Value: "Zürich", IsRegex: true, IsEqual: true}, `"région"=~"Zürich"`},
	} {
		if got := filterText(tc.m); got != tc.want {
			t.Errorf("filterText(%+v) = %s, want %s", tc.m, got, tc.want)
		}
	}
	if got := Text([]Matcher{{Name: "my label", Value: "x y", IsEqual: true}, {Name: "alertname", Value: "A", IsEqual: true}}); got != `{"my label"="x y", alertname="A"}` {
		t.Errorf("Text = %s", got)
	}
}
