package notify

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// TestCompiledTextsRenderAsAlertmanagerDoes checks that the parse-once
// cache renders every kind of text exactly as Alertmanager's
// ExecuteTextString (the behaviour it replaces): built-in and Alertmanager
// templates, a user file's definitions, routeLabels, missing keys, and the
// same errors for texts that fail to parse or to execute.
func TestCompiledTextsRenderAsAlertmanagerDoes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "u.tmpl"), []byte(`{{ define "user.title" }}U:{{ .CommonLabels.alertname }}/{{ len .Results }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	user, err := LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	n := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage,
		notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage),
		notifytest.Result("DiskFull", "bbb", "resolved", alert.ActionTicket))
	data := NewData(n)
	texts := []string{
		"", DefaultTitle, DefaultSummary, DefaultText,
		`{{ template "__subject" . }}`, `{{ template "__text_alert_list" .Alerts }}`, `{{ template "user.title" . }}`,
		`{{ routeLabels "team" }}|{{ .CommonLabels.nope }}|{{ .Incident }} {{ .Kind }} {{ .Action }}`,
		`{{ range .Results }}{{ .Classification.Sector }} {{ .Decision.Action }};{{ end }}`,
		`{{ .Nope.Deeper }}`, `{{ if }}`, `{{ template "missing" . }}`, `plain text`,
	}
	for _, tm := range []*Templates{user, BuiltinTemplates()} {
		for _, text := range texts {
			for range 2 { // first call compiles, second uses the cache
				want, wantErr := tm.user.ExecuteTextString(text, data)
				got, gotErr := tm.userTexts.execute(text, data)
				if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
					t.Fatalf("text %q: got %q, %v; Alertmanager renders %q, %v", text, got, gotErr, want, wantErr)
				}
			}
		}
	}
	if _, err := BuiltinTemplates().userTexts.execute(`{{ template "user.title" . }}`, data); err == nil {
		t.Fatal("the built-in set sees a user file's definition")
	}
}

// TestCompiledTextsAreSafeForConcurrentUse renders the same and different
// texts from many goroutines (run with -race).
func TestCompiledTextsAreSafeForConcurrentUse(t *testing.T) {
	tm := BuiltinTemplates()
	data := NewData(notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage,
		notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage)))
	want := tm.Render(nil, "title", DefaultTitle, DefaultTitle, data)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				if got := tm.Render(nil, "title", DefaultTitle, DefaultTitle, data); got != want {
					t.Errorf("goroutine %d: got %q, want %q", i, got, want)
					return
				}
				_ = tm.Render(nil, "summary", DefaultSummary, DefaultSummary, data)
			}
		})
	}
	wg.Wait()
}
