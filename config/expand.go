package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"

	"github.com/alertrouter/alertrouter/internal/redact"
)

var (
	envRef   = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	plainInt = regexp.MustCompile(`^[-+]?[0-9]+$`)
)

// expandEnv replaces ${VAR} by the environment's value inside the string
// values of the YAML document b, never in its raw text: an expanded value
// is written back as one quoted scalar, so whatever it holds (`*`, `&`,
// `!`, `#`, a newline) stays data and cannot become YAML syntax. `$$` is a
// literal `$`. Keys, comments and other scalars are left as they are. It
// returns the rewritten document and the expanded values (to hide from
// every message); a document without `$` is returned unchanged.
//
// A plain `${VAR}` whose value is an integer or a boolean stays a plain
// scalar, so numeric and boolean keys take references too.
//
// The expanded document is returned too (nil when nothing was expanded):
// its nodes keep the lines of the text as written, for errors to cite.
func expandEnv(b []byte) ([]byte, *yaml3.Node, []string, error) {
	if !envRef.Match(b) {
		return b, nil, nil, nil
	}
	var doc yaml3.Node
	if err := yaml3.Unmarshal(b, &doc); err != nil {
		// The strict parse that follows reports the syntax error on the
		// text as written (no value expanded into it).
		return b, nil, nil, nil
	}
	var values []string
	var missing []error
	expand := func(n *yaml3.Node, path string) {
		if n.Kind != yaml3.ScalarNode || n.ShortTag() != "!!str" || !strings.Contains(n.Value, "$") {
			return
		}
		changed := false
		out := envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
			changed = true
			if m == "$$" {
				return "$"
			}
			name := m[2 : len(m)-1]
			v, ok := os.LookupEnv(name)
			if !ok {
				if path == "" {
					path = "(top level)"
				}
				missing = append(missing, fmt.Errorf("%s: undefined environment variable(s) referenced as ${…}: %s (line %d)", path, name, n.Line))
			}
			values = append(values, v)
			return v
		})
		if !changed {
			return
		}
		plain := n.Style == 0 || n.Style == yaml3.TaggedStyle
		n.Value = out
		switch {
		case plain && plainInt.MatchString(out):
			n.Tag, n.Style = "!!int", 0
		case plain && (out == "true" || out == "false"):
			n.Tag, n.Style = "!!bool", 0
		default:
			n.Tag, n.Style = "!!str", yaml3.DoubleQuotedStyle
		}
	}
	walkValues(&doc, "", expand)
	if len(missing) > 0 {
		return nil, nil, nil, errors.Join(missing...)
	}
	out, err := yaml3.Marshal(&doc)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("expanding ${…} references: %v", err)
	}
	return out, &doc, values, nil
}

// walkValues calls f on every value node of the tree under n (mapping keys
// excluded), with its YAML path (receivers[1].pagerduty_configs[0].routing_key).
func walkValues(n *yaml3.Node, path string, f func(*yaml3.Node, string)) {
	switch n.Kind {
	case yaml3.DocumentNode:
		for _, c := range n.Content {
			walkValues(c, path, f)
		}
	case yaml3.SequenceNode:
		for i, c := range n.Content {
			walkValues(c, fmt.Sprintf("%s[%d]", path, i), f)
		}
	case yaml3.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			walkValues(n.Content[i], join(path, n.Content[i-1].Value), f)
		}
	case yaml3.ScalarNode:
		f(n, path)
	}
}

// collectSecrets records every inline secret of the config (each
// commoncfg.Secret field, wherever it is) as a value never to print.
func (c *Config) collectSecrets() {
	walkStrings(reflect.ValueOf(c).Elem(), func(_ reflect.StructField, v reflect.Value) {
		if v.Type() == secretType {
			c.secrets.Add(v.String())
		}
	})
}

// SecretFiles returns, sorted and each once, the files the config reads
// when it is built: every non-empty string field whose YAML key ends in
// "_file" (routing_key_file, token_file, signing_secret_file,
// password_file, the TLS files of http_config …), found by walking the
// config, so a new `*_file` key needs no list kept up to date.
func (c *Config) SecretFiles() []string {
	seen := map[string]bool{}
	walkStrings(reflect.ValueOf(c).Elem(), func(f reflect.StructField, v reflect.Value) {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.HasSuffix(name, "_file") && v.String() != "" {
			seen[v.String()] = true
		}
	})
	return slices.Sorted(maps.Keys(seen))
}

// walkStrings calls f on every string-kinded field under v (exported
// fields of structs, through pointers, interfaces, slices and maps), with
// the struct field that holds it (the zero StructField for a string in a
// slice or a map).
func walkStrings(v reflect.Value, f func(reflect.StructField, reflect.Value)) {
	var walk func(field reflect.StructField, v reflect.Value)
	walk = func(field reflect.StructField, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(field, v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if sf := v.Type().Field(i); sf.IsExported() {
					walk(sf, v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(reflect.StructField{}, v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(reflect.StructField{}, it.Value())
			}
		case reflect.String:
			f(field, v)
		}
	}
	walk(reflect.StructField{}, v)
}

// Redact returns err with every secret of the config hidden from its
// message, and the credentials of every URL in it (redact.Text: a library's
// error may print a URL whole, as prometheus/common does with a proxy_url
// that does not parse): what callers building on a loaded config
// (notifiers, templates, the store client) wrap their errors in before
// printing them. An error with nothing to hide is returned as it is.
func (c *Config) Redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if hidden := c.RedactString(msg); hidden != msg {
		return errors.New(hidden)
	}
	return err
}

// RedactString hides every secret of the config in s, and the credentials
// of every URL in it.
func (c *Config) RedactString(s string) string { return redact.Text(c.secrets.String(s)) }
