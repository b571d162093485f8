package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	"go.yaml.in/yaml/v2"
	yaml3 "go.yaml.in/yaml/v3"

	"github.com/alertrouter/alertrouter/internal/redact"
)

var (
	// unknownField is yaml.v2's strict-mode message for a key no field
	// takes.
	unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)
	// alreadySet is yaml.v2's strict-mode message for a key given twice in
	// one mapping: a struct's field, or a map's key (quoted as Go does).
	alreadySet = regexp.MustCompile(`field (\S+) already set in type \S+|key "((?:[^"\\]|\\.)*)" already set in map`)
	// v2Line is the "line N: " yaml.v2 puts before each of its unmarshal
	// errors, relative to the text it decoded.
	v2Line = regexp.MustCompile(`^\s*line \d+: `)
	// quotedValue is a value yaml.v2 quotes in its message
	// ("cannot unmarshal !!str `many` into int").
	quotedValue = regexp.MustCompile("`[^`]*`")
)

// locateError says where in the document root a failed strict decode into
// a value of type t went wrong: each problem as "<YAML path>: <what>
// (line N)", so that an unknown key, a duration written `5`, an unknown
// time zone or a string where a number belongs name their key as the
// checks after the decode do, instead of yaml.v2's Go type names or no
// position at all. It decodes the failing node's children one by one
// into their fields' types and reports the deepest nodes that still fail.
// It returns nil when it cannot tell (the caller keeps the original
// error). size is the document's length, which bounds the work
// (maxLocateBytes).
func locateError(root *yaml3.Node, t reflect.Type, size int) error {
	if root == nil {
		return nil
	}
	if root.Kind == yaml3.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	budget := maxLocateNodes
	root, ok := resolveAliases(root, map[*yaml3.Node]bool{}, &budget)
	if !ok {
		return nil
	}
	work := max(maxLocateBytes, locateBytesPerByte*size)
	errs := locate(root, t, "", &work)
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// maxLocateNodes bounds the copy resolveAliases makes: aliases can make a
// small text a huge tree (the "billion laughs"), which yaml.v2 refuses and
// which locating must not expand either.
const maxLocateNodes = 100000

// maxLocateBytes and locateBytesPerByte bound the YAML locating decodes
// in all (256 KiB, or 16 times the document's text for a larger one): each level
// of the tree re-decodes its subtree, so a deep tree (routes nested
// hundreds deep: 6 KB of text) took seconds to minutes, quadratic in its
// depth, where a config's few levels take a few times its size. Past the
// bound, a problem is named at the deepest node reached (its path and
// line), with the decoder's message for the subtree.
const (
	maxLocateBytes     = 256 << 10
	locateBytesPerByte = 16
)

// resolveAliases returns a copy of n in which every alias is replaced by
// a copy of its anchor's node, so that a subtree decodes on its own; ok is
// false for an alias of its own ancestor (a cycle) or a tree larger than
// budget nodes.
func resolveAliases(n *yaml3.Node, active map[*yaml3.Node]bool, budget *int) (*yaml3.Node, bool) {
	if n == nil {
		return nil, true
	}
	for n.Kind == yaml3.AliasNode && n.Alias != nil {
		if active[n.Alias] {
			return nil, false
		}
		n = n.Alias
	}
	if *budget--; *budget < 0 || active[n] {
		return nil, false
	}
	active[n] = true
	defer delete(active, n)
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml3.Node, len(n.Content))
	for i, k := range n.Content {
		var ok bool
		if c.Content[i], ok = resolveAliases(k, active, budget); !ok {
			return nil, false
		}
	}
	return &c, true
}

// decodeNode strictly decodes the subtree n into a new value of type t,
// as the whole file is decoded, taking the bytes decoded from work.
func decodeNode(n *yaml3.Node, t reflect.Type, work *int) error {
	b, err := yaml3.Marshal(n)
	if err != nil {
		return nil // cannot tell: treat as decodable
	}
	*work -= len(b)
	return yaml.UnmarshalStrict(b, reflect.New(t).Interface())
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// locate returns the problems of node n decoded as type t at path, or nil
// when n decodes; work bounds the bytes decoded (maxLocateBytes).
func locate(n *yaml3.Node, t reflect.Type, path string, work *int) []error {
	err := decodeNode(n, t, work)
	if err == nil {
		return nil
	}
	if *work < 0 {
		// Not located further: the subtree's message may quote a secret
		// of it (a routing_key written !!int), so no value is printed.
		return []error{at(path, n.Line, errors.New(quotedValue.ReplaceAllString(err.Error(), redact.Placeholder)), nil)}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var found []error
	var fields map[string]reflect.Type
	switch {
	case n.Kind == yaml3.MappingNode && t.Kind() == reflect.Struct:
		fields = yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if ft, ok := fields[k.Value]; ok {
				found = append(found, locate(v, ft, join(path, k.Value), work)...)
			}
		}
		if len(found) == 0 {
			// No field fails alone: an unknown key, or a check across
			// fields (UnmarshalYAML), is this node's.
			if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
				line := n.Line
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == m[1] {
						line = n.Content[i].Line
					}
				}
				return []error{fmt.Errorf("%s: unknown field (line %d%s)", join(path, m[1]), line, suggest(m[1], fields))}
			}
		}
	case n.Kind == yaml3.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			found = append(found, locate(v, t.Elem(), join(path, k.Value), work)...)
		}
	case n.Kind == yaml3.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i, v := range n.Content {
			found = append(found, locate(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), work)...)
		}
	}
	if len(found) > 0 {
		return found
	}
	if dup := duplicateKey(n, path, err); dup != nil {
		return []error{dup}
	}
	if t == secretType && n.Kind == yaml3.ScalarNode && n.Value != "" {
		// yaml.v2 quotes the value it could not decode ("cannot
		// unmarshal !!str `…` into int"): a secret's is not printed.
		err = errors.New(strings.ReplaceAll(err.Error(), n.Value, redact.Placeholder))
	}
	return []error{at(path, n.Line, err, fields)}
}

// secretType is the type of the secrets of the configuration (routing
// keys, tokens, passwords), whose values no error prints.
var secretType = reflect.TypeOf(commoncfg.Secret(""))

// duplicateKey names the key the mapping n at path gives twice, with the
// lines of both, when err (its decode error) is yaml.v2's "already set";
// nil otherwise. yaml.v2 names a Go type and the line of the mapping.
func duplicateKey(n *yaml3.Node, path string, err error) error {
	m := alreadySet.FindStringSubmatch(err.Error())
	if m == nil || n.Kind != yaml3.MappingNode {
		return nil
	}
	key := m[1]
	if key == "" {
		if uq, qerr := strconv.Unquote(`"` + m[2] + `"`); qerr == nil {
			key = uq
		}
	}
	var lines []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			lines = append(lines, strconv.Itoa(n.Content[i].Line))
		}
	}
	if len(lines) < 2 {
		return nil
	}
	return fmt.Errorf("%s: duplicate key (lines %s)", join(path, key), strings.Join(lines, ", "))
}

// at phrases err, the decode error of the node at path on line, without
// yaml.v2's relative line numbers and Go type names.
// fields are the keys of the node's struct type (nil for other types).
func at(path string, line int, err error, fields map[string]reflect.Type) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(v2Line.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	// A section's own UnmarshalYAML may already name the path of each
	// problem, whole (flap.threshold: …) or from inside the section
	// (policies: burn_rate.tiers[1].factor: …).
	if path != "" && (strings.HasPrefix(msg, path+".") || strings.HasPrefix(msg, path+":") || strings.HasPrefix(msg, path+"[")) {
		return errors.New(strings.Join(lines, "\n"))
	}
	if path != "" && len(lines) > 0 && fields != nil {
		if key, _, ok := strings.Cut(lines[0], ":"); ok {
			key, _, _ = strings.Cut(key, ".")
			key, _, _ = strings.Cut(key, "[")
			if _, known := fields[key]; known {
				for i := range lines {
					lines[i] = path + "." + lines[i]
				}
				return errors.New(strings.Join(lines, "\n"))
			}
		}
	}
	msg = strings.ReplaceAll(strings.Join(lines, "; "), "yaml: ", "")
	if path == "" {
		return fmt.Errorf("%s (line %d)", msg, line)
	}
	return fmt.Errorf("%s: %s (line %d)", path, msg, line)
}

// yamlFields maps the YAML keys of struct type t (inline structs
// flattened) to their types, as yaml.v2 names them.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// suggest names the known key closest to an unknown one, when it is a
// likely typo (at most two edits away).
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	for k := range fields {
		if d := editDistance(key, k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
