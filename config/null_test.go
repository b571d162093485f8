package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/config"
)

// A top-level section left null (its children commented out) is the
// section's defaults, as `{}` and an absent one are. yaml.v2 zeroed it:
// `incidents:` never triggered PagerDuty again (retrigger_interval 0),
// `store:` had no key prefix, and `policies:`, `webhook:`, `dedup:` and
// `flap:` failed on keys nobody wrote.
func TestANullSectionMeansItsDefaults(t *testing.T) {
	const base = "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"
	want := mustParse(t, base)
	for _, section := range []string{"auth", "webhook", "store", "dedup", "incidents", "classifier", "policies", "prometheus", "flap", "templates", "console", "alertmanager", "time_intervals"} {
		for _, form := range []string{section + ":\n#  commented: out\n", section + ": ~\n", section + ": null\n"} {
			t.Run(strings.TrimSpace(form), func(t *testing.T) {
				got, err := config.Parse([]byte(form+base), t.TempDir())
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got.String() != want.String() || !reflect.DeepEqual(got.Incidents, want.Incidents) {
					t.Errorf("parsed as\n%s\nwant the defaults\n%s", got, want)
				}
			})
		}
	}
	// Null sections beside written ones: each written one is kept.
	got := mustParse(t, "incidents:\nwebhook: {timeout: 7s}\n"+base)
	if got.Webhook.Timeout.String() != "7s" || !reflect.DeepEqual(got.Incidents, config.DefaultIncidents()) {
		t.Errorf("webhook %+v, incidents %+v", got.Webhook, got.Incidents)
	}
}

// A file holding only `---` (a null document) says what an empty file
// says, instead of every policies.* key zeroed.
func TestANullDocumentIsAnEmptyFile(t *testing.T) {
	_, empty := config.Parse(nil, ".")
	for _, doc := range []string{"---\n", "---\n...\n", "# nothing\n---\n"} {
		_, err := config.Parse([]byte(doc), ".")
		if err == nil || empty == nil || err.Error() != empty.Error() {
			t.Errorf("%q: %v\nwant what an empty file says: %v", doc, err, empty)
		}
	}
}
