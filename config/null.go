package config

import (
	"reflect"
	"strings"

	"go.yaml.in/yaml/v2"
)

// given records whether a top-level key holds a value: yaml.v2 calls
// UnmarshalYAML for a value and never for null, which leaves it false.
type given bool

// UnmarshalYAML records the value without decoding it.
func (g *given) UnmarshalYAML(func(interface{}) error) error {
	*g = true
	return nil
}

// restoreNullSections gives every top-level section that the document b
// leaves null (`incidents:` with its children commented out) its
// defaults, as an absent or `{}` one has. yaml.v2 zeroes a struct on null
// without calling its UnmarshalYAML, where each section fills its
// defaults, so `incidents:` read retrigger_interval 0 (never) and
// `policies:` failed on keys nobody wrote. A document that is null as a
// whole (only `---`) is the empty file: every section's defaults.
func (c *Config) restoreNullSections(b []byte) {
	var keys map[string]given
	if err := yaml.Unmarshal(b, &keys); err != nil {
		return // the strict parse, already passed, read it as a mapping
	}
	def := reflect.ValueOf(Default()).Elem()
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		if set, ok := keys[name]; (keys == nil || ok) && !bool(set) {
			v.Field(i).Set(def.Field(i))
		}
	}
}
