package enrich

import (
	"errors"
	"fmt"

	"github.com/alertrouter/alertrouter/routing/matchers"
)

// Config is the `classifier` section of the router's configuration.
//
//	classifier:
//	  rules:
//	    - matchers: ['job=~"vllm.*"']
//	      sector: llm-inference-gpu
//	      kpi: TTFT
//	  metric_families:
//	    - prefix: "mycache_"
//	      kpi: CHR
//	      sector: llm-prompt-cache-storage
//	  hints:
//	    queue-time: "See the saturation runbook: https://runbooks.example/queue"
type Config struct {
	// Rules assign a sector (and optionally a KPI) to alerts whose labels
	// match all the rule's matchers. The first matching rule wins.
	Rules []RuleConfig `yaml:"rules,omitempty"`
	// MetricFamilies extend the built-in catalog of metric families; they
	// are consulted before the built-in ones.
	MetricFamilies []FamilyConfig `yaml:"metric_families,omitempty"`
	// Hints override the generic text of hints by id; an empty text turns
	// the hint off. Specific hints (computed from the alert's numbers) are
	// not affected.
	Hints map[string]string `yaml:"hints,omitempty"`
}

// RuleConfig is one sector rule.
type RuleConfig struct {
	// Matchers are Alertmanager matchers, e.g. `job=~"vllm.*"`; one string
	// may hold several, e.g. `{job="x", env="prod"}`. All must match.
	Matchers []string `yaml:"matchers"`
	// Sector is a sector id of the catalog.
	Sector string `yaml:"sector"`
	// KPI is optional; it must be a KPI of Sector.
	KPI string `yaml:"kpi,omitempty"`
}

// FamilyConfig is one user-defined metric family. Exactly one of Name,
// Prefix and Contains is set; at least one of KPI and Sector.
type FamilyConfig struct {
	// Name matches a metric exactly, after stripping _bucket, _sum, _count
	// and _total.
	Name string `yaml:"name,omitempty"`
	// Prefix matches metric names that start with it.
	Prefix string `yaml:"prefix,omitempty"`
	// Contains matches metric names that contain it (e.g. ":burnrate").
	Contains string `yaml:"contains,omitempty"`
	// KPI is a KPI acronym of the catalog.
	KPI string `yaml:"kpi,omitempty"`
	// Sector is a sector id; without it the KPI's sectors are candidates.
	Sector string `yaml:"sector,omitempty"`
}

// DefaultConfig returns the configuration used when the section is absent:
// no rules, no extra families, the built-in hint texts.
func DefaultConfig() Config { return Config{} }

// UnmarshalYAML fills the defaults, then decodes the section.
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	type plain Config
	return unmarshal((*plain)(c))
}

// Validate checks the section and returns every problem found, each
// prefixed by its YAML path relative to the section (e.g.
// "rules[2].matchers[0]: …"), joined with errors.Join; nil when valid.
func (c *Config) Validate() error {
	var errs []error
	for i, r := range c.Rules {
		p := fmt.Sprintf("rules[%d]", i)
		if len(r.Matchers) == 0 {
			errs = append(errs, fmt.Errorf("%s.matchers: at least one matcher is required", p))
		}
		for j, m := range r.Matchers {
			ms, err := matchers.Parse(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.matchers[%d]: parse %q: %w", p, j, m, err))
			} else if len(ms) == 0 {
				errs = append(errs, fmt.Errorf("%s.matchers[%d]: %q holds no matcher", p, j, m))
			}
		}
		errs = append(errs, checkSectorKPI(p, r.Sector, r.KPI, true)...)
	}
	for i, f := range c.MetricFamilies {
		p := fmt.Sprintf("metric_families[%d]", i)
		set := 0
		for _, s := range []string{f.Name, f.Prefix, f.Contains} {
			if s != "" {
				set++
			}
		}
		if set != 1 {
			errs = append(errs, fmt.Errorf("%s: exactly one of name, prefix and contains must be set", p))
		}
		if f.KPI == "" && f.Sector == "" {
			errs = append(errs, fmt.Errorf("%s: kpi or sector is required", p))
		}
		errs = append(errs, checkSectorKPI(p, f.Sector, f.KPI, false)...)
	}
	for id := range c.Hints {
		if !knownHint(id) {
			errs = append(errs, fmt.Errorf("hints.%s: unknown hint id (known: %v)", id, HintIDs))
		}
	}
	return errors.Join(errs...)
}

// checkSectorKPI validates a sector id and a KPI acronym, and that the KPI
// belongs to the sector when both are given.
func checkSectorKPI(path, sector, kpi string, sectorRequired bool) []error {
	var errs []error
	si := -1
	switch {
	case sector == "" && sectorRequired:
		errs = append(errs, fmt.Errorf("%s.sector: required", path))
	case sector != "":
		si = sectorIndexByID(sector)
		if si < 0 {
			errs = append(errs, fmt.Errorf("%s.sector: unknown sector %q", path, sector))
		}
	}
	if kpi == "" {
		return errs
	}
	var buf [32]byte
	key := string(normKey(kpi, buf[:0]))
	found := false
	for s := range sectors {
		for _, k := range sectors[s].KPIs {
			if string(normKey(k.ID, buf[:0])) == key {
				found = true
				if si >= 0 && s == si {
					return errs
				}
			}
		}
	}
	switch {
	case !found:
		errs = append(errs, fmt.Errorf("%s.kpi: unknown KPI %q", path, kpi))
	case si >= 0:
		errs = append(errs, fmt.Errorf("%s.kpi: KPI %q is not a KPI of sector %q", path, kpi, sector))
	}
	return errs
}

func sectorIndexByID(id string) int {
	for i := range sectors {
		if sectors[i].ID == id {
			return i
		}
	}
	return -1
}

func knownHint(id string) bool {
	for _, h := range HintIDs {
		if h == id {
			return true
		}
	}
	return false
}
