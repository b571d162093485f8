package policies

import "testing"

// Benchmarks of the per-alert input readers: parseValue (every burn rate,
// utilization, ratio) and severityAction (every severity label read).

var sinkValue parsedValue

func BenchmarkParseValue(b *testing.B) {
	for _, in := range []string{"15.2", "0.93", "85%", "932m", "1.5k"} {
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkValue, _ = parseValue(in)
			}
		})
	}
}

func BenchmarkSeverityAction(b *testing.B) {
	e := newEngine(b)
	for _, in := range []string{"critical", "Critical", "SEV-1", "4", "P1-Critical", "ｃｒｉｔｉｃａｌ"} {
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = e.severityAction(in)
			}
		})
	}
}
