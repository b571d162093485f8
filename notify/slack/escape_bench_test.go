package slack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// BenchmarkEscapedData builds the escaped template data of a notification
// of n alerts: none needs escaping (clean), every alert's summary does
// (dirty), or only the last alert's (last).
func BenchmarkEscapedData(b *testing.B) {
	for _, n := range []int{1, 100} {
		for _, c := range []string{"clean", "dirty", "last"} {
			b.Run(fmt.Sprintf("%s/alerts=%d", c, n), func(b *testing.B) {
				var rs []*alert.Result
				for i := range n {
					r := notifytest.Result("TTFTHigh", fmt.Sprint("fp", i), "firing", alert.ActionTicket)
					if c == "dirty" || c == "last" && i == n-1 {
						r.Alert.Annotations["summary"] = "TTFT p99 > 2.4s <queue & compute>"
					}
					rs = append(rs, r)
				}
				d := notify.NewData(notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, rs...))
				b.ReportAllocs()
				for b.Loop() {
					escapedData(d)
				}
			})
		}
	}
}

// BenchmarkMentionSafeText puts the word joiners (link_names) into one long
// annotation: a token full of "@"s, and an address full of them. The scan
// reads each byte once, so 100 KB costs ten times 10 KB; it was quadratic
// (2–5 s for 100 KB).
func BenchmarkMentionSafeText(b *testing.B) {
	for _, size := range []int{10_000, 100_000} {
		for name, s := range map[string]string{
			"token": "owners: " + strings.Repeat("a@", size/2),
			"url":   "see https://x.example/" + strings.Repeat("@", size),
		} {
			b.Run(fmt.Sprintf("%s/bytes=%d", name, size), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					mentionSafeText(s)
				}
			})
		}
	}
}
