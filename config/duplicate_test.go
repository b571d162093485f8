package config_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/config"
)

// A key given twice is named by its YAML path with the lines of both:
// yaml.v2 said "field route already set in type config.Config (line 1)",
// a Go type for the path and the mapping's line for the duplicate's.
func TestADuplicateKeyNamesItsPathAndBothLines(t *testing.T) {
	const log = "receivers: [{name: log, log_configs: [{}]}]\n"
	for _, tc := range []struct{ name, yml, want string }{
		{"a top-level key", "route: {receiver: log}\nroute: {receiver: log}\n" + log, "route: duplicate key (lines 1, 2)"},
		{"a section's key", log + "route: {receiver: log}\nstore:\n  key_prefix: a\n  fail_closed: true\n  key_prefix: b\n", "store.key_prefix: duplicate key (lines 4, 6)"},
		{"a receiver's key", "route: {receiver: log}\nreceivers:\n  - name: log\n    log_configs: [{}]\n    name: other\n", "receivers[0].name: duplicate key (lines 3, 5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yml), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "config.") {
				t.Fatalf("%v\nwant %q", err, tc.want)
			}
		})
	}
}
