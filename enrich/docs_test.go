package enrich

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// familyRow renders a family as a row of the table in
// docs/classification.md.
func familyRow(f family) string {
	name := f.Name
	switch {
	case f.Prefix != "":
		name = f.Prefix + "…"
	case f.Contains != "":
		name = "…" + f.Contains + "…"
	}
	sector := f.Sector
	switch {
	case sector == "" && len(f.Cands) > 0:
		sector = "(one of " + strings.Join(f.Cands, ", ") + ")"
	case sector == "":
		sector = "(any with the KPI)"
	}
	return "| `" + name + "` | " + sector + " | " + f.KPI + " | " + f.Source + " |"
}

// TestDocsListEveryFamily keeps the table of built-in metric families in
// docs/classification.md in step with the catalog.
func TestDocsListEveryFamily(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "classification.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var missing []string
	for _, f := range append(append([]family(nil), builtinFamilies...), exporterFamilies...) {
		if row := familyRow(f); !strings.Contains(doc, row) {
			missing = append(missing, row)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/classification.md lacks %d family rows:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
