package amsilence

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Regex returns the matcher of label name to exactly one of values: an
// equality matcher for one value, otherwise a regex matcher of the values,
// each quoted (Alertmanager anchors a silence's regex at both ends, so it
// matches those values and nothing else).
func Regex(name string, values []string) Matcher {
	vs := slices.Sorted(slices.Values(values))
	vs = slices.Compact(vs)
	if len(vs) == 1 {
		return Matcher{Name: name, Value: vs[0], IsEqual: true}
	}
	quoted := make([]string, len(vs))
	for i, v := range vs {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return Matcher{Name: name, Value: strings.Join(quoted, "|"), IsRegex: true, IsEqual: true}
}

// Pin returns the matchers of the silences that together match the alerts
// with the given label sets and, among the alerts carrying the same label
// names, no other one. A silence matches an alert when all its matchers do,
// so a silence on the labels the alerts share would mute every other alert
// that shares them too (another alertname, another instance): Pin adds, for
// each label all the alerts carry with differing values, a regex matcher of
// exactly those values, and splits the alerts into several silences (by
// alertname first, then by the label with the fewest values) whenever the
// combinations those matchers allow are more than the alerts themselves, or
// a label is absent on some of them. Its worst case is one silence per
// alert, on all of its labels, as Alertmanager's own Silence link.
//
// Like any silence, each also matches an alert with extra labels besides
// those it pins. Empty label values (absent labels, to Alertmanager) are
// ignored; label sets left empty are skipped. The result is sorted, and nil
// when no alert has a label.
func Pin(alerts []map[string]string) [][]Matcher {
	seen := map[string]bool{}
	var sets []map[string]string
	for _, a := range alerts {
		l := make(map[string]string, len(a))
		for k, v := range a {
			if v != "" {
				l[k] = v
			}
		}
		if key := Text(Equal(l)); len(l) > 0 && !seen[key] {
			seen[key] = true
			sets = append(sets, l)
		}
	}
	if len(sets) == 0 {
		return nil
	}
	var out [][]Matcher
	pin(sets, &out)
	sort.Slice(out, func(i, j int) bool { return Text(out[i]) < Text(out[j]) })
	return out
}

// pin appends to out the silences of sets (distinct, non-empty label sets).
func pin(sets []map[string]string, out *[][]Matcher) {
	values := map[string][]string{}
	present := map[string]int{}
	seen := map[[2]string]bool{} // a set: 16,000 alerts took 1.5 s with slices.Contains (an audit)
	for _, s := range sets {
		for k, v := range s {
			present[k]++
			if !seen[[2]string{k, v}] {
				seen[[2]string{k, v}] = true
				values[k] = append(values[k], v)
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	})
	// The matchers allow every combination of their values: exact when
	// there are as many combinations as alerts (the sets are distinct) and
	// every label is on every alert.
	exact, combos := true, 1
	split, splitGroups := "", 0
	for _, n := range names {
		groups := len(values[n])
		if present[n] < len(sets) {
			exact = false
			groups++ // the alerts without it
		} else if combos <= len(sets) {
			combos *= len(values[n])
		}
		if groups < 2 {
			continue
		}
		if split != "alertname" && (split == "" || n == "alertname" || groups < splitGroups) {
			split, splitGroups = n, groups
		}
	}
	if exact && combos == len(sets) {
		ms := make([]Matcher, 0, len(names))
		for _, n := range names {
			ms = append(ms, Regex(n, values[n]))
		}
		*out = append(*out, ms)
		return
	}
	// Not exact, so some label has two values (or is absent on some): the
	// groups are smaller than sets.
	groups := map[string][]map[string]string{}
	var order []string
	for _, s := range sets {
		k := "\x00absent"
		if v, ok := s[split]; ok {
			k = v
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	for _, k := range order {
		pin(groups[k], out)
	}
}

// GenericLabels are label names that many unrelated alerts share
// (severities, environments, places, owners): a silence on them alone
// would mute alerts of any kind.
var GenericLabels = []string{
	"severity", "grafana_slo_severity", "severity_level", "priority", "level", "urgency",
	"env", "environment", "stage", "cluster", "region", "zone", "availability_zone", "datacenter", "dc",
	"namespace", "team", "owner", "tier", "sector", "prometheus", "replica", "monitor", "receiver", "source",
}

// ErrUnsafe is the error of a silence CheckSafe refuses.
var ErrUnsafe = errors.New("unsafe silence")

// CheckSafe refuses matchers that would mute alerts of any kind: fewer than
// two, or on generic labels only (GenericLabels).
func CheckSafe(ms []Matcher) error {
	if len(ms) < 2 {
		return fmt.Errorf("%w %s: fewer than 2 matchers would mute every alert carrying them", ErrUnsafe, Text(ms))
	}
	for _, m := range ms {
		if !slices.Contains(GenericLabels, m.Name) {
			return nil
		}
	}
	return fmt.Errorf("%w %s: generic labels only would mute alerts of any kind", ErrUnsafe, Text(ms))
}

// Text writes matchers as Alertmanager shows them, sorted:
// {alertname=~"A|B", job="vllm"}.
func Text(ms []Matcher) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = quoteName(m.Name) + m.operator() + fmt.Sprintf("%q", m.Value)
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}
