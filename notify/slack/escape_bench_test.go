package slack

import (
	"fmt"
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
