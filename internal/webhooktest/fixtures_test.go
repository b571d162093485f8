package webhooktest_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
)

// update rewrites the generated fixtures of testdata/webhook.
var update = flag.Bool("update", false, "rewrite the generated files of testdata/webhook")

// TestFixturesAreCurrent keeps testdata/webhook in step with the generator
// above; run `go test ./internal/webhooktest -run TestFixturesAreCurrent -update` after
// changing it.
func TestFixturesAreCurrent(t *testing.T) {
	dir := webhooktest.Dir
	for name, want := range webhooktest.Fixtures(t) {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read fixture (run with -update to create it): %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go test ./internal/webhooktest -run TestFixturesAreCurrent -update", name)
		}
	}
}
