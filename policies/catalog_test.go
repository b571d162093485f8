package policies_test

import (
	"testing"

	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/prometheus/alertmanager/template"
)

// TestKnownKPIsAreCatalogKPIs checks that every acronym of the regression
// direction table is a KPI of enrich's catalog, so that a classified
// alert's primary KPI finds its direction.
func TestKnownKPIsAreCatalogKPIs(t *testing.T) {
	c, err := enrich.New(enrich.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range policies.KnownKPIIDs() {
		a := &alert.Alert{Alert: template.Alert{Status: "firing",
			Labels: map[string]string{"alertname": "Regression", "kpi": id}, Annotations: map[string]string{}}}
		cl := c.Classify(a)
		if cl.PrimaryKPI() != id {
			t.Errorf("kpi=%q classifies as KPI %q (sector %s), want the catalog KPI %q", id, cl.PrimaryKPI(), cl.Sector, id)
		}
	}
}
