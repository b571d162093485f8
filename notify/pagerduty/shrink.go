package pagerduty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	pd "github.com/PagerDuty/go-pagerduty"

	"github.com/alertrouter/alertrouter/notify"
)

// Shrinking an event over PagerDuty's 512 KB.
const (
	// minShare is the least room a cut value is given (its marker
	// included): a value that cannot have it is left out, counted in its
	// parent's marker.
	minShare = 160
	// shrinkReserve is kept free for the truncated_fields list and what
	// re-encoding may add.
	shrinkReserve = 8 << 10
	// maxCutPaths caps the paths truncated_fields names, maxCutPath the
	// runes of each.
	maxCutPaths = 20
	maxCutPath  = 200
	// cutKey is the member of a mapping that counts the members left out.
	cutKey = "…"
)

// shrink keeps full within PagerDuty's 512 KB, so the page always goes out
// and explains itself: it drops the per-alert details (counted in
// alerts_omitted), then caps the largest custom_details fields first —
// every field kept, the small ones (incident, sector, decision, KPIs,
// hints) whole, a cut string ending in "…[cut N of M bytes]", a cut list
// in "…[cut N of M items]", and truncated_fields naming each field cut —
// then drops the links, and as a last resort sends the minimal event.
func (n *Notifier) shrink(full, minimal *pd.V2Event) {
	size := func() int {
		b, err := json.Marshal(full)
		if err != nil {
			return maxEvent + 1
		}
		return len(b)
	}
	if size() <= maxEvent {
		return
	}
	details, _ := full.Payload.Details.(map[string]any)
	if details != nil {
		// The router's per-alert details, under the names the operator's
		// keys leave them (detailName).
		if alerts := n.detailName("alerts"); alerts != "" {
			if a, ok := details[alerts].([]map[string]any); ok {
				delete(details, alerts)
				if omitted := n.detailName("alerts_omitted"); omitted != "" {
					details[omitted] = len(a) + intOf(details[omitted])
				}
			}
		}
		if size() <= maxEvent {
			n.logger.Warn("event over 512 KB, dropped the per-alert details", "dedup_key", full.DedupKey)
			return
		}
		generic, ok := toGeneric(details)
		if ok {
			full.Payload.Details = map[string]any{}
			budget := maxEvent - size() - shrinkReserve
			c := &cutter{}
			capped := c.fit("", generic, budget)
			if m, ok := capped.(map[string]any); ok && len(c.paths) > 0 {
				if _, taken := m["truncated_fields"]; !taken {
					m["truncated_fields"] = c.listed()
				}
			}
			full.Payload.Details = capped
			if size() <= maxEvent {
				n.logger.Warn("event over 512 KB, capped the largest custom_details fields", "dedup_key", full.DedupKey, "fields", c.listed())
				return
			}
		}
		full.Payload.Details = nil
	}
	full.Links = nil
	if size() <= maxEvent {
		return
	}
	n.logger.Warn("event over 512 KB, sending the minimal event", "dedup_key", full.DedupKey)
	*full = *minimal
}

// toGeneric returns v as encoding/json decodes it (maps, slices, strings,
// json.Number, bools, nil), so every kind of detail — the router's, the
// operator's custom_details and Alertmanager details — is cut alike.
func toGeneric(v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if d.Decode(&out) != nil {
		return nil, false
	}
	return out, true
}

// jsonSize is the length of v's JSON encoding (as go-pagerduty encodes the
// event: encoding/json, HTML characters escaped).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// cutter caps a generic JSON value to a byte budget, largest parts first,
// and records the paths it cut.
type cutter struct {
	paths []string
}

func (c *cutter) cut(path string) {
	if path == "" {
		path = "(custom_details)"
	}
	path, _ = notify.TruncateInRunes(path, maxCutPath)
	c.paths = append(c.paths, path)
}

// listed is the paths cut, at most maxCutPaths of them, then a count.
func (c *cutter) listed() []string {
	if len(c.paths) <= maxCutPaths {
		return c.paths
	}
	out := append([]string(nil), c.paths[:maxCutPaths]...)
	return append(out, fmt.Sprintf("…and %d more", len(c.paths)-maxCutPaths))
}

// fit returns v, or v cut so that its encoding takes at most budget bytes
// (budget at least minShare; a number, bool or null is never cut).
func (c *cutter) fit(path string, v any, budget int) any {
	if jsonSize(v) <= budget {
		return v
	}
	switch v := v.(type) {
	case string:
		c.cut(path)
		return cutString(v, budget)
	case []any:
		return c.fitList(path, v, budget)
	case map[string]any:
		return c.fitMap(path, v, budget)
	default:
		return v
	}
}

// share is one part of a list or mapping: its index, the bytes it takes
// whole and the bytes around its value (a member's name, a comma).
type share struct {
	i, size, overhead int
}

// waterFill returns the room of each part kept, by index. It keeps the
// longest run of parts, in the order given, that can each have
// min(size, minShare); then gives them room in ascending order of size,
// each what it needs or an equal share of what is left, whichever is less,
// so the small ones stay whole and only the largest are cut.
func waterFill(parts []share, budget int) map[int]int {
	keep, used := 0, 0
	for _, p := range parts {
		need := min(p.size, minShare) + p.overhead
		if used+need > budget {
			break
		}
		used += need
		keep++
	}
	kept := append([]share(nil), parts[:keep]...)
	sort.SliceStable(kept, func(a, b int) bool { return kept[a].size+kept[a].overhead < kept[b].size+kept[b].overhead })
	room := make(map[int]int, keep)
	left := budget
	for k, p := range kept {
		each := left / (keep - k)
		r := min(p.size, max(each-p.overhead, minShare))
		room[p.i] = r
		left -= r + p.overhead
	}
	return room
}

// fitMap keeps every member it can, the smallest first, cutting the largest
// values first; the members left out (only when there are more than room
// for minShare each) are counted under the member "…".
func (c *cutter) fitMap(path string, m map[string]any, budget int) any {
	budget -= 2 + len(cutKey) + 3 + len(`"[cut 1000000 of 1000000 members]"`) + 1 // {} and a marker member
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]share, 0, len(m))
	for i, k := range keys {
		parts = append(parts, share{i: i, size: jsonSize(m[k]), overhead: jsonSize(k) + 2})
	}
	sort.SliceStable(parts, func(a, b int) bool { return parts[a].size+parts[a].overhead < parts[b].size+parts[b].overhead })
	room := waterFill(parts, budget)
	out := make(map[string]any, len(room)+1)
	for i, k := range keys {
		if r, ok := room[i]; ok {
			out[k] = c.fit(join(path, k), m[k], r)
		}
	}
	if left := len(keys) - len(room); left > 0 {
		c.cut(path)
		out[cutKey] = fmt.Sprintf("[cut %d of %d members]", left, len(keys))
	}
	return out
}

// fitList keeps the list's items in order, cutting the largest first; when
// the budget cannot give every item minShare, it keeps the longest prefix
// it can and ends the list with "…[cut N of M items]".
func (c *cutter) fitList(path string, l []any, budget int) any {
	budget -= 2 + len(`"…[cut 1000000 of 1000000 items]"`) + 1 // [] and the marker item
	parts := make([]share, 0, len(l))
	for i, v := range l {
		parts = append(parts, share{i: i, size: jsonSize(v), overhead: 1})
	}
	room := waterFill(parts, budget)
	out := make([]any, 0, len(room)+1)
	for i := range len(room) {
		out = append(out, c.fit(join(path, strconv.Itoa(i)), l[i], room[i]))
	}
	if len(out) < len(l) {
		c.cut(path)
		out = append(out, fmt.Sprintf("…[cut %d of %d items]", len(l)-len(out), len(l)))
	}
	return out
}

// join is the dotted path of a member.
func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// cutString cuts s, on a rune boundary, so that its JSON encoding with the
// marker "…[cut N of M bytes]" takes at most budget bytes.
func cutString(s string, budget int) string {
	marker := func(kept int) string {
		return fmt.Sprintf("…[cut %d of %d bytes]", len(s)-kept, len(s))
	}
	room := budget - 2 - jsonSize(marker(0)) + 2 // the quotes, and the longest marker (its own quotes counted once)
	used, end := 0, 0
	for end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		cost := jsonRuneCost(r, w)
		if used+cost > room {
			break
		}
		used += cost
		end += w
	}
	return s[:end] + marker(end)
}

// jsonRuneCost is at least the bytes encoding/json writes for the rune r
// of w bytes.
func jsonRuneCost(r rune, w int) int {
	switch {
	case r == utf8.RuneError && w == 1:
		return 6 // \ufffd
	case r == '"' || r == '\\':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	default:
		return w
	}
}
