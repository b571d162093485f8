package policies

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// TestPageLabelsConfig: policies.page_labels names the paging labels; an
// empty list turns them off, and a name that is not a label name is
// refused.
func TestPageLabelsConfig(t *testing.T) {
	all := loadAudit2(t)
	cfg := DefaultConfig()
	cfg.PageLabels = []string{"oncall"}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, e.Decide(audit2Alert(t, all, fpGitLabApdex1h), nil, testNow), want{alert.ActionTicket, PolicySeverity, "s2", ""})
	a := audit2Alert(t, all, fpGitLabApdex1h)
	a.Labels["oncall"] = "yes"
	check(t, e.Decide(a, nil, testNow), want{alert.ActionPage, PolicySeverity, "oncall=yes", `oncall="yes" → page`})
	cfg.PageLabels = nil
	if e, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	check(t, e.Decide(audit2Alert(t, all, fpGitLabApdex1h), nil, testNow), want{alert.ActionTicket, PolicySeverity, "s2", ""})
	cfg.PageLabels = []string{"pager", "on-call"}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), `page_labels[1]: "on-call" is not a label name`) {
		t.Errorf("New with a bad page label: %v", err)
	}
	for in, want := range map[string][]string{"{}": {"pager", "page"}, "page_labels: []": {}, "page_labels: [oncall]": {"oncall"}} {
		var c Config
		if err := yaml.UnmarshalStrict([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if len(c.PageLabels) != len(want) || (len(want) > 0 && !reflect.DeepEqual(c.PageLabels, want)) {
			t.Errorf("%s: page_labels = %q, want %q", in, c.PageLabels, want)
		}
	}
}
