package enrich

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

func TestExprFromGeneratorURL(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{
			name: "a Prometheus graph link yields its decoded expression",
			url:  "http://prometheus:9090/graph?g0.expr=histogram_quantile%280.99%2C+sum+by+%28le%29+%28rate%28vllm%3Atime_to_first_token_seconds_bucket%5B5m%5D%29%29%29+%3E+2&g0.tab=1",
			want: "histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2",
		},
		{
			name: "g0.expr after other parameters is found",
			url:  "http://prom/graph?g0.tab=1&g0.expr=up+%3D%3D+0",
			want: "up == 0",
		},
		{name: "an undecodable expression yields nothing", url: "http://prom/graph?g0.expr=%zz", want: ""},
		{name: "a URL without query yields nothing", url: "http://prom/graph", want: ""},
		{name: "an empty URL yields nothing", url: "", want: ""},
		{name: "a fragment is not part of the expression", url: "http://p/graph?g0.expr=up#x", want: "up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := alert.GeneratorExpr(tt.url); got != tt.want {
				t.Errorf("alert.GeneratorExpr() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScanExpr(t *testing.T) {
	tests := []struct {
		name     string
		expr     string
		metrics  []string
		averages string
	}{
		{
			name:    "functions, aggregations and by-lists are not metrics",
			expr:    `histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket{job="vllm"}[5m]))) > 2`,
			metrics: []string{"vllm:time_to_first_token_seconds_bucket"},
		},
		{
			name:     "a _sum/_count ratio is an average",
			expr:     `rate(tgi_request_duration_sum[5m]) / rate(tgi_request_duration_count[5m]) > 3`,
			metrics:  []string{"tgi_request_duration_sum", "tgi_request_duration_count"},
			averages: "_sum/_count",
		},
		{
			name:     "avg_over_time is an average",
			expr:     `avg_over_time(haproxy_backend_queue_time_average_seconds[10m]) > 0.2`,
			metrics:  []string{"haproxy_backend_queue_time_average_seconds"},
			averages: "avg_over_time(",
		},
		{
			name:     "avg with a by clause before its parenthesis is an average",
			expr:     `avg by (instance) (node_timex_offset_seconds) > 0.001`,
			metrics:  []string{"node_timex_offset_seconds"},
			averages: "avg(",
		},
		{
			name:    "label values, strings and durations are skipped",
			expr:    `sum without (instance) (rate(kafka_consumergroup_lag{topic="vllm:fake", env='prod'}[1h30m] offset 5m)) and on(job) group_left(team) up`,
			metrics: []string{"kafka_consumergroup_lag", "up"},
		},
		{
			name:    "a quoted Prometheus 3 metric name is a metric",
			expr:    `rate({"my.metric_total", job="x"}[5m]) > 1e-3`,
			metrics: []string{"my.metric_total"},
		},
		{
			name:    "binary keywords and numbers are not metrics",
			expr:    `slo:sli_error:ratio_rate5m > (14.4 * 0.001) unless bool inf`,
			metrics: []string{"slo:sli_error:ratio_rate5m"},
		},
		{name: "garbage yields nothing", expr: `((( "unterminated`, metrics: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f exprFacts
			scanExpr(tt.expr, &f)
			got := f.metrics[:f.nMetrics]
			if !slices.Equal(got, tt.metrics) && !(len(got) == 0 && len(tt.metrics) == 0) {
				t.Errorf("metrics = %q, want %q", got, tt.metrics)
			}
			if f.averages != tt.averages {
				t.Errorf("averages = %q, want %q", f.averages, tt.averages)
			}
		})
	}
}

func TestBaseNameStripsSeriesSuffixes(t *testing.T) {
	for in, want := range map[string]string{
		"vllm:e2e_request_latency_seconds_bucket": "vllm:e2e_request_latency_seconds",
		"redis_keyspace_hits_total":               "redis_keyspace_hits",
		"x_sum":                                   "x",
		"_total":                                  "_total",
		"up":                                      "up",
	} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseGeneratorURL checks that URL and expression parsing never panic
// and only ever report substrings of the decoded expression as metrics.
func FuzzParseGeneratorURL(f *testing.F) {
	f.Add("http://prometheus:9090/graph?g0.expr=histogram_quantile%280.99%2C+sum+by+%28le%29+%28rate%28vllm%3Atime_to_first_token_seconds_bucket%5B5m%5D%29%29%29+%3E+2&g0.tab=1")
	f.Add("http://p/graph?g0.expr=" + url.QueryEscape(`{"a.b", c=~"d"} or avg by (x(y)) ([`))
	f.Add("?g0.expr=%")
	f.Add("?g0.expr=`\\")
	f.Add("?g0.expr={\"")
	f.Add("?g0.expr=" + url.QueryEscape(`absent({__name__="up", job="x"}) or {"up",job='y'} or {__name__=~"a|b.c", "__name__" != "d"}`))
	f.Add("?g0.expr=" + url.QueryEscape(`{__name__`))
	f.Fuzz(func(t *testing.T, u string) {
		expr := alert.GeneratorExpr(u)
		var facts exprFacts
		scanExpr(expr, &facts)
		scanExpr(u, &facts)
		for _, m := range facts.metrics[:facts.nMetrics] {
			if m == "" || (!strings.Contains(expr, m) && !strings.Contains(u, m)) {
				t.Fatalf("metric %q is not part of the input", m)
			}
			selectorJobs(expr, m, func(job string) {
				if !strings.Contains(expr, job) {
					t.Fatalf("job %q is not part of the expression", job)
				}
			})
		}
	})
}

// TestExprCacheAnswersAsExprFromGeneratorURL checks the memoized path
// against the direct one, twice (miss, then hit), on every kind of URL.
func TestExprCacheAnswersAsExprFromGeneratorURL(t *testing.T) {
	var c exprCache
	urls := []string{
		"", "http://p/graph", "http://p/graph?g0.expr=up&g0.tab=1",
		"http://p/graph?g0.expr=rate%28http_requests_total%5B5m%5D%29+%3E+1&g0.tab=1",
		"http://p/graph?g0.expr=%zz", "http://p/graph?x=1+2&g0.expr=a+b#frag",
	}
	for range 2 {
		for _, u := range urls {
			if got, want := c.get(u), alert.GeneratorExpr(u); got != want {
				t.Fatalf("%q: cache %q, direct %q", u, got, want)
			}
		}
	}
	if n := c.n.Load(); n != 3 {
		t.Fatalf("cached %d URLs, want the 3 that hold %% or +", n)
	}
}
