package notify_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
)

// Redefines follows Alertmanager's default call chain through the
// definitions in force: a default is redefined when the user's files
// define it or a template it calls, directly or not; an empty definition
// (which text/template does not let replace one) and a template no default
// calls redefine nothing.
func TestRedefinesFollowsTheDefaultsCallChain(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.tmpl": `{{ define "__alertmanager" }}AM{{ end }}{{ define "slack.default.text" }}{{ end }}`,
		"b.tmpl": `{{ define "pagerduty.default.description" }}{{ template "team.subject" . }}{{ end }}{{ define "team.subject" }}x{{ end }}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tmpl, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"slack.default.username":        true, // calls __alertmanager
		"pagerduty.default.client":      true, // calls __alertmanager
		"pagerduty.default.description": true,
		"slack.default.title":           false, // __subject is Alertmanager's
		"slack.default.text":            false, // an empty definition
		"pagerduty.default.clientURL":   false,
		"slack.default.iconemoji":       false,
	} {
		if got := tmpl.Redefines(name); got != want {
			t.Errorf("Redefines(%q) = %v, want %v", name, got, want)
		}
	}
	if notify.BuiltinTemplates().Redefines("slack.default.title") {
		t.Error("the built-in templates redefine slack.default.title")
	}
}
