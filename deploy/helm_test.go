package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/config"
)

// webConfig is exporter-toolkit's web configuration (--web.config.file).
type webConfig = web.Config

const chartDir = "helm/alertrouter"

// helm returns the helm binary: on PATH, or where scripts/install-deps.sh
// installs it (go install: $GOBIN or $GOPATH/bin).
func helm(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	for _, env := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.Command("go", "env", env).Output()
		dir := strings.TrimSpace(string(out))
		if err != nil || dir == "" {
			continue
		}
		if env == "GOPATH" {
			dir = filepath.Join(strings.Split(dir, string(os.PathListSeparator))[0], "bin")
		}
		if p := filepath.Join(dir, "helm"); fileExists(p) {
			return p
		}
	}
	return tool(t, "helm") // fails in CI, skips elsewhere
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var (
	kubecheckOnce sync.Once
	kubecheckPath string
	kubecheckErr  error
	kubecheckDir  string
)

// kubecheck builds deploy/kubecheck (its own module: the Kubernetes API
// types stay out of the router's go.mod) once per test binary.
func kubecheck(t *testing.T) string {
	t.Helper()
	kubecheckOnce.Do(func() {
		kubecheckDir, kubecheckErr = os.MkdirTemp("", "kubecheck")
		if kubecheckErr != nil {
			return
		}
		kubecheckPath = filepath.Join(kubecheckDir, "kubecheck")
		cmd := exec.Command("go", "build", "-o", kubecheckPath, ".")
		cmd.Dir = "kubecheck"
		if out, err := cmd.CombinedOutput(); err != nil {
			kubecheckErr = fmt.Errorf("go build deploy/kubecheck: %v\n%s", err, out)
		}
	})
	if kubecheckErr != nil {
		t.Fatal(kubecheckErr)
	}
	return kubecheckPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if kubecheckDir != "" {
		os.RemoveAll(kubecheckDir)
	}
	os.Exit(code)
}

// validate runs kubecheck on manifests and returns its error output, "" when
// every object is valid.
func validate(t *testing.T, manifests []byte) string {
	t.Helper()
	cmd := exec.Command(kubecheck(t))
	cmd.Stdin = bytes.NewReader(manifests)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	if err != nil && stderr.Len() == 0 {
		return err.Error()
	}
	return stderr.String()
}

// chartCase is one values file of the chart and what its rendering must hold.
type chartCase struct {
	name, values string // values: "" for the defaults
	replicas     int
	redisAddrs   string // store.redis.addrs joined by ","; "" for no Redis
	masterName   string
	cluster      bool
	secret       string // the Secret mounted at /etc/alertrouter/secrets
	https        bool
	monitoring   bool // ServiceMonitor and PrometheusRule rendered
}

var chartCases = []chartCase{
	{name: "default", replicas: 2, redisAddrs: "alertrouter-redis:6379"},
	{name: "single-redis", values: "examples/values-single-redis.yaml", replicas: 2, redisAddrs: "redis.example.internal:6379", secret: "alertrouter-secrets", monitoring: true},
	{name: "sentinel", values: "examples/values-sentinel.yaml", replicas: 3, masterName: "alertrouter", secret: "alertrouter-secrets", https: true, monitoring: true,
		redisAddrs: "redis-sentinel-0.redis-sentinel:26379,redis-sentinel-1.redis-sentinel:26379,redis-sentinel-2.redis-sentinel:26379"},
	{name: "cluster", values: "examples/values-cluster.yaml", replicas: 2, cluster: true, secret: "alertrouter-secrets",
		redisAddrs: "redis-cluster-0.redis-cluster-headless:6379,redis-cluster-1.redis-cluster-headless:6379,redis-cluster-2.redis-cluster-headless:6379"},
}

func (c chartCase) args(extra ...string) []string {
	args := []string{"template", "alertrouter", chartDir, "--namespace", "monitoring"}
	if c.values != "" {
		args = append(args, "-f", filepath.Join(chartDir, c.values))
	}
	return append(args, extra...)
}

func render(t *testing.T, c chartCase, extra ...string) ([]byte, manifests) {
	t.Helper()
	out := run(t, "", helm(t), c.args(extra...)...)
	docs, err := decodeAll(out)
	if err != nil {
		t.Fatalf("helm template %s: %v", c.name, err)
	}
	m := manifests{}
	for _, d := range docs {
		key := str(d["kind"]) + "/" + str(get(d, "metadata", "name"))
		if m[key] != nil {
			t.Errorf("helm template %s renders %s twice", c.name, key)
		}
		m[key] = d
	}
	return out, m
}

func TestHelmChartLints(t *testing.T) {
	h := helm(t)
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"lint", "--strict", chartDir}
			if c.values != "" {
				args = append(args, "-f", filepath.Join(chartDir, c.values))
			}
			out := run(t, "", h, args...)
			if !bytes.Contains(out, []byte("1 chart(s) linted, 0 chart(s) failed")) {
				t.Errorf("helm lint: %s", out)
			}
		})
	}
}

func TestHelmChartRendersValidManifestsForEveryRedisMode(t *testing.T) {
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			out, m := render(t, c)
			if errs := validate(t, out); errs != "" {
				t.Fatalf("rendered manifests are invalid against the Kubernetes API types:\n%s", errs)
			}
			d := m["Deployment/alertrouter"]
			if d == nil {
				t.Fatal("no Deployment alertrouter")
			}
			podSpec := get(d, "spec", "template", "spec")
			ctr := container(t, d, "router")
			scheme := "HTTP"
			if c.https {
				scheme = "HTTPS"
			}
			checks := []struct {
				what      string
				got, want interface{}
			}{
				{"replicas", get(d, "spec", "replicas"), c.replicas},
				{"readiness probe", fmt.Sprint(get(ctr, "readinessProbe", "httpGet", "path"), " ", get(ctr, "readinessProbe", "httpGet", "port"), " ", get(ctr, "readinessProbe", "httpGet", "scheme")), "/-/ready http " + scheme},
				{"liveness probe", fmt.Sprint(get(ctr, "livenessProbe", "httpGet", "path"), " ", get(ctr, "livenessProbe", "httpGet", "port"), " ", get(ctr, "livenessProbe", "httpGet", "scheme")), "/-/healthy http " + scheme},
				{"pod runAsNonRoot", get(podSpec, "securityContext", "runAsNonRoot"), true},
				{"pod runAsUser", get(podSpec, "securityContext", "runAsUser"), 65532},
				{"readOnlyRootFilesystem", get(ctr, "securityContext", "readOnlyRootFilesystem"), true},
				{"allowPrivilegeEscalation", get(ctr, "securityContext", "allowPrivilegeEscalation"), false},
				{"dropped capabilities", fmt.Sprint(get(ctr, "securityContext", "capabilities", "drop")), "[ALL]"},
				{"memory limit", get(ctr, "resources", "limits", "memory") != nil, true},
				{"deployment selector selects its pods", selects(get(d, "spec", "selector", "matchLabels"), get(d, "spec", "template", "metadata", "labels")), true},
				{"config checksum annotation", len(str(get(d, "spec", "template", "metadata", "annotations", "checksum/config"))), 64},
			}
			for _, ck := range checks {
				if str(ck.got) != str(ck.want) {
					t.Errorf("Deployment %s = %v, want %v", ck.what, ck.got, ck.want)
				}
			}
			args := fmt.Sprint(get(ctr, "args"))
			if !strings.Contains(args, "serve --config.file=/etc/alertrouter/router.yml") {
				t.Errorf("args %s do not load the mounted router.yml", args)
			}
			if !strings.Contains(args, " --web.shutdown-delay=5s ") {
				t.Errorf("args %s: want --web.shutdown-delay=5s, so a terminating pod turns unready before its listener closes", args)
			}
			if got := strings.Contains(args, "--web.config.file=/etc/alertrouter/web/web.yml"); got != c.https {
				t.Errorf("args %s: --web.config.file present = %v, want %v", args, got, c.https)
			}

			// router.yml loads with the router's own loader and points at
			// the Redis of the mode.
			cm := m["ConfigMap/alertrouter-config"]
			if cm == nil {
				t.Fatal("no ConfigMap alertrouter-config")
			}
			cfg, err := config.Parse([]byte(str(get(cm, "data", "router.yml"))), "/etc/alertrouter")
			if err != nil {
				t.Fatalf("router.yml does not load: %v\n%s", err, get(cm, "data", "router.yml"))
			}
			// router.yml and the web config serve together (serve refuses
			// basic_auth_users with Slack triage or auth: bearer, and an
			// unprotected replaying console).
			if err := servesTogether(cfg, m); err != nil {
				t.Errorf("the router would refuse to start with this rendering: %v", err)
			}
			// The grace period covers the shutdown delay, then the drain
			// of a webhook in flight (webhook.timeout + 5s) and the
			// close's last second.
			grace, _ := get(podSpec, "terminationGracePeriodSeconds").(int)
			if need := 5*time.Second + time.Duration(cfg.Webhook.Timeout) + 6*time.Second; time.Duration(grace)*time.Second < need {
				t.Errorf("terminationGracePeriodSeconds %ds < shutdown delay 5s + webhook.timeout %s + 6s", grace, time.Duration(cfg.Webhook.Timeout))
			}
			r := cfg.Store.Redis
			if r == nil {
				t.Fatal("router.yml has no store.redis")
			}
			if got := strings.Join(r.Addrs, ","); got != c.redisAddrs || r.MasterName != c.masterName || r.Cluster != c.cluster {
				t.Errorf("store.redis = addrs %s master_name %q cluster %v, want %s %q %v", got, r.MasterName, r.Cluster, c.redisAddrs, c.masterName, c.cluster)
			}

			vols := map[string]interface{}{}
			for _, v := range get(podSpec, "volumes").([]interface{}) {
				vols[str(get(v, "name"))] = v
			}
			if got := str(get(vols["secrets"], "secret", "secretName")); got != c.secret {
				t.Errorf("secrets volume = Secret %q, want %q", got, c.secret)
			}
			if c.secret != "" && r.PasswordFile != "/etc/alertrouter/secrets/redis-password" {
				t.Errorf("store.redis.password_file = %q, want the redis-password file of the Secret", r.PasswordFile)
			}

			bundled := m["Deployment/alertrouter-redis"] != nil
			if bundled != (c.name == "default") || (m["Service/alertrouter-redis"] != nil) != bundled {
				t.Errorf("bundled Redis rendered = %v, want it only with the default values", bundled)
			}
			if bundled {
				svc := m["Service/alertrouter-redis"]
				if want := fmt.Sprintf("%s:%v", get(svc, "metadata", "name"), get(svc, "spec", "ports", 0, "port")); c.redisAddrs != want {
					t.Errorf("store.redis.addrs = %s, want the bundled Redis Service %s", c.redisAddrs, want)
				}
			}

			svc := m["Service/alertrouter"]
			if svc == nil || !selects(get(svc, "spec", "selector"), get(d, "spec", "template", "metadata", "labels")) {
				t.Errorf("Service alertrouter missing or not selecting the router pods: %v", svc)
			}
			pdb := m["PodDisruptionBudget/alertrouter"]
			if pdb == nil || get(pdb, "spec", "minAvailable") != 1 || !selects(get(pdb, "spec", "selector", "matchLabels"), get(d, "spec", "template", "metadata", "labels")) {
				t.Errorf("PodDisruptionBudget alertrouter missing, minAvailable != 1 or not selecting the router pods: %v", pdb)
			}
			if (m["ServiceMonitor/alertrouter"] != nil) != c.monitoring || (m["PrometheusRule/alertrouter"] != nil) != c.monitoring {
				t.Errorf("ServiceMonitor/PrometheusRule rendered = %v/%v, want %v", m["ServiceMonitor/alertrouter"] != nil, m["PrometheusRule/alertrouter"] != nil, c.monitoring)
			}
			if pr := m["PrometheusRule/alertrouter"]; pr != nil {
				checkPrometheusRule(t, pr, c)
			}
			if c.https {
				ws := m["Secret/alertrouter-web-config"]
				var web map[string]interface{}
				if err := yaml.UnmarshalStrict([]byte(str(get(ws, "stringData", "web.yml"))), &web); err != nil || get(web, "tls_server_config", "cert_file") == nil {
					t.Errorf("web config Secret has no web.yml with tls_server_config: %v %v", err, ws)
				}
			}
		})
	}
}

// servesTogether returns what makes the router refuse the rendered
// router.yml cfg with the rendered web config (Secret
// alertrouter-web-config, none when absent): config.CheckWebConfig, as
// serve and check-config run it.
func servesTogether(cfg *config.Config, m manifests) error {
	var web *webConfig
	if ws := m["Secret/alertrouter-web-config"]; ws != nil {
		w, err := config.ParseWebConfig([]byte(str(get(ws, "stringData", "web.yml"))))
		if err != nil {
			return fmt.Errorf("web.yml of Secret alertrouter-web-config does not parse: %w", err)
		}
		web = w
	}
	return cfg.CheckWebConfig(web)
}

// The chart tests' check catches a rendering the router would refuse: the
// combination values-sentinel.yaml once shipped (web-config basic auth in
// front of auth: bearer — Alertmanager's webhooks answered 401), and Slack
// triage behind basic_auth_users.
func TestHelmRenderingsTheRouterRefusesAreCaught(t *testing.T) {
	sentinel := chartCases[2]
	if sentinel.name != "sentinel" {
		t.Fatalf("chartCases[2] is %s, want sentinel", sentinel.name)
	}
	users := filepath.Join(t.TempDir(), "users.yaml")
	// The probes carry the web config's credentials, as they must with
	// basic_auth_users (the chart refuses it otherwise).
	if err := os.WriteFile(users, []byte("webConfig:\n  basic_auth_users:\n    prometheus: $2y$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W\n"+
		"probes:\n  httpHeaders:\n    - name: Authorization\n      value: Basic cHJvbWV0aGV1czpSRVBMQUNFX01F\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	triage := filepath.Join(t.TempDir(), "triage.yaml")
	if err := os.WriteFile(triage, []byte(`config:
  auth: null
  receivers:
    - name: slack-triage
      slack_configs:
        - token_file: /etc/alertrouter/secrets/slack-token
          channel: "#alerts-triage"
          signing_secret_file: /etc/alertrouter/secrets/slack-signing-secret
          actions: [escalate]
          escalate_to: pagerduty
    - name: pagerduty
      pagerduty_configs:
        - routing_key_file: /etc/alertrouter/secrets/pagerduty-routing-key
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"basic_auth_users + auth: bearer", []string{"-f", users}, "auth.bearer_token: cannot work with basic_auth_users"},
		{"basic_auth_users + Slack triage", []string{"-f", users, "-f", triage}, "Slack triage cannot work with basic_auth_users"},
	} {
		// The chart refuses the combination itself (helm install fails,
		// naming the values: TestHelmRefusesWhatTheRouterRefusesAtStart);
		// were it to render it, the router's own check must catch it.
		if out, err := exec.Command(helm(t), sentinel.args(tc.extra...)...).CombinedOutput(); err != nil {
			if !bytes.Contains(out, []byte("basic_auth_users")) {
				t.Errorf("%s: helm template failed for another reason: %v\n%s", tc.name, err, out)
			}
			continue
		}
		_, m := render(t, sentinel, tc.extra...)
		cfg, err := config.Parse([]byte(str(get(m["ConfigMap/alertrouter-config"], "data", "router.yml"))), "/etc/alertrouter")
		if err != nil {
			t.Fatalf("%s: router.yml does not load: %v", tc.name, err)
		}
		if err := servesTogether(cfg, m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: the check says %v; want %q", tc.name, err, tc.want)
		}
	}
}

// checkPrometheusRule compares the chart's PrometheusRule with the mixin's
// alerts: the same alerts, with the chart's additional labels.
func checkPrometheusRule(t *testing.T, pr map[string]interface{}, c chartCase) {
	t.Helper()
	b, err := os.ReadFile("prometheus/alertrouter-mixin/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var mixin map[string]interface{}
	if err := yaml.Unmarshal(b, &mixin); err != nil {
		t.Fatal(err)
	}
	alerts := func(groups interface{}) map[string]string {
		out := map[string]string{}
		gs, _ := groups.([]interface{})
		for _, g := range gs {
			rs, _ := get(g, "rules").([]interface{})
			for _, r := range rs {
				out[str(get(r, "alert"))] = strings.TrimSpace(str(get(r, "expr"))) + " team=" + str(get(r, "labels", "team"))
			}
		}
		return out
	}
	want := alerts(get(mixin, "groups"))
	got := alerts(get(pr, "spec", "groups"))
	if len(want) < 7 {
		t.Fatalf("the mixin has %d alerts, want at least 7", len(want))
	}
	team := map[string]string{"sentinel": "observability"}[c.name]
	for name, w := range want {
		w = strings.TrimSuffix(w, "team=") + "team=" + team
		if got[name] != w {
			t.Errorf("PrometheusRule alert %s = %q, want %q", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("PrometheusRule has %d alerts, the mixin %d", len(got), len(want))
	}
}

func TestHelmChartShipsTheMixinsAlerts(t *testing.T) {
	a, err := os.ReadFile("prometheus/alertrouter-mixin/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(chartDir, "files/alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("deploy/helm/alertrouter/files/alerts.yml differs from deploy/prometheus/alertrouter-mixin/alerts.yml: cp the mixin's file into the chart")
	}
}

func TestHelmConfigChangeRollsThePods(t *testing.T) {
	c := chartCases[0]
	checksum := func(extra ...string) string {
		_, m := render(t, c, extra...)
		return str(get(m["Deployment/alertrouter"], "spec", "template", "metadata", "annotations", "checksum/config"))
	}
	base := checksum()
	if again := checksum(); again != base {
		t.Errorf("the same values give checksums %s and %s", base, again)
	}
	if changed := checksum("--set", "config.dedup.repeat_interval=2h"); changed == base {
		t.Errorf("changing config.dedup.repeat_interval left checksum/config at %s: pods would not roll", base)
	}
	if changed := checksum("--set", "redis.keyPrefix=other:"); changed == base {
		t.Errorf("changing the Redis settings left checksum/config at %s", base)
	}
}

func TestHelmChartRefusesValuesThatCannotWork(t *testing.T) {
	h := helm(t)
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"redis.mode=none"}, "replicaCount > 1 needs a shared store"},
		{[]string{"redis.mode=sentinel", "redis.addrs={s:26379}"}, "redis.mode sentinel needs redis.masterName"},
		{[]string{"redis.mode=cluster"}, "redis.mode cluster needs redis.addrs"},
		// values.schema.json: misspelt keys and unknown modes.
		{[]string{"redis.mode=redis"}, "at '/redis/mode': value must be one of"},
		{[]string{"redis.adrs={r:6379}"}, "additional properties 'adrs' not allowed"},
		{[]string{"replicas=3"}, "additional properties 'replicas' not allowed"},
		{[]string{"redis.mode=external", "redis.addrs={r:6379}", "redis.passwordKey=pw"}, "redis.passwordKey names a key of secrets.existingSecret"},
		{[]string{"config.store.redis.addrs={r:6379}"}, "config.store: set the store through the redis values"},
		// The bundled Redis has no TLS port: a TLS client never connects.
		{[]string{"redis.mode=bundled", "redis.tls.ca_file=/etc/alertrouter/tls/ca.crt"}, "redis.tls: the bundled Redis speaks plain TCP"},
		// The grace period must cover shutdown delay + webhook.timeout + 5s
		// of drain + the close's last second: exactly delay + timeout + 5s
		// would leave that second's store writes to the kubelet's SIGKILL.
		{[]string{"terminationGracePeriodSeconds=35"}, "terminationGracePeriodSeconds 35 is shorter than shutdownDelay 5s + config.webhook.timeout 25s + 6s (the drain's 5s, the close's last 1s) = 36s"},
		{[]string{"config.webhook.timeout=1m"}, "terminationGracePeriodSeconds 40 is shorter than shutdownDelay 5s + config.webhook.timeout 1m + 6s (the drain's 5s, the close's last 1s) = 71s"},
		{[]string{"shutdownDelay=30s"}, "= 61s"},
		{[]string{"shutdownDelay=5 seconds"}, "at '/shutdownDelay'"},
		{[]string{"config.webhook.timeout=1d", "terminationGracePeriodSeconds=100000"}, `"1d" is not a duration the chart can add up`},
		{[]string{"env[0].value=400"}, "missing property 'name'"},
		{[]string{"env[0].name=GOGC", "env[0].valu=400"}, "additional properties 'valu' not allowed"},
	} {
		args := chartCases[0].args()
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		out, err := exec.Command(h, args...).CombinedOutput()
		if err == nil || !bytes.Contains(out, []byte(tc.want)) {
			t.Errorf("helm template --set %v: err %v, output %s; want a failure saying %q", tc.set, err, out, tc.want)
		}
	}
	// An inline secret in config would be rendered into the ConfigMap:
	// refused, naming the key, unless allowed; a ${VAR} or a *_file is fine.
	inline := func(key, value string, extra ...string) ([]byte, error) {
		f := filepath.Join(t.TempDir(), "values.yaml")
		vals := fmt.Sprintf("config:\n  route: {receiver: pd}\n  receivers:\n    - name: pd\n      pagerduty_configs:\n        - %s: %s\n", key, value)
		if err := os.WriteFile(f, []byte(vals), 0o600); err != nil {
			t.Fatal(err)
		}
		args := append(chartCases[0].args(), "-f", f)
		return exec.Command(h, append(args, extra...)...).CombinedOutput()
	}
	if out, err := inline("routing_key", "0123456789abcdef0123456789abcdef"); err == nil || !bytes.Contains(out, []byte(`"routing_key: …" holds a secret inline`)) {
		t.Errorf("an inline routing_key: err %v, output %s; want a failure naming it", err, out)
	}
	if out, err := inline("routing_key", "0123456789abcdef0123456789abcdef", "--set", "allowInlineSecrets=true"); err != nil {
		t.Errorf("allowInlineSecrets: true still refused the inline secret: %v %s", err, out)
	}
	for _, ok := range [][2]string{{"routing_key", "${PD_ROUTING_KEY}"}, {"routing_key_file", "/etc/alertrouter/secrets/pagerduty-routing-key"}} {
		if out, err := inline(ok[0], ok[1]); err != nil {
			t.Errorf("%s: %s refused: %v %s", ok[0], ok[1], err, out)
		}
	}
	// A grace period that covers a longer webhook.timeout — exactly: 5s +
	// 1m30s + 6s — passes.
	_, m := render(t, chartCases[0], "--set", "config.webhook.timeout=1m30s", "--set", "terminationGracePeriodSeconds=101")
	if got := get(m["Deployment/alertrouter"], "spec", "template", "spec", "terminationGracePeriodSeconds"); got != 101 {
		t.Errorf("terminationGracePeriodSeconds = %v, want the 101 set", got)
	}
	// One replica needs no Redis: the in-memory store.
	_, m = render(t, chartCases[0], "--set", "redis.mode=none", "--set", "replicaCount=1")
	cfg, err := config.Parse([]byte(str(get(m["ConfigMap/alertrouter-config"], "data", "router.yml"))), "/etc/alertrouter")
	if err != nil || cfg.Store.Redis != nil {
		t.Errorf("redis.mode=none: router.yml store.redis = %v (err %v), want the in-memory store", cfg, err)
	}
	if m["Deployment/alertrouter-redis"] != nil {
		t.Error("redis.mode=none still renders the bundled Redis")
	}
}

// TestKubecheckRejectsInvalidManifests proves the validation is real: a
// misspelt field, a wrong type, a selector that misses its pods and an
// unknown kind are each rejected.
func TestKubecheckRejectsInvalidManifests(t *testing.T) {
	out, _ := render(t, chartCases[0])
	if errs := validate(t, out); errs != "" {
		t.Fatalf("the default rendering is invalid: %s", errs)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"misspelt field", "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true", `unknown field "spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem"`},
		{"wrong type", "containerPort: 9095", "containerPort: http", "cannot unmarshal string into Go struct field"},
		{"selector misses the pods", "      labels:\n        app.kubernetes.io/name: alertrouter\n        app.kubernetes.io/instance: alertrouter\n        app.kubernetes.io/component: router\n",
			"      labels:\n        app.kubernetes.io/name: alertrouter\n        app.kubernetes.io/instance: alertrouter\n        app.kubernetes.io/component: other\n", "does not select the pod template's labels"},
		{"unknown kind", "kind: PodDisruptionBudget", "kind: PodDisruptionBudgets", `no kind "PodDisruptionBudgets" is registered`},
		{"bad name", "name: alertrouter-config", "name: Alertrouter_Config", `metadata.name "Alertrouter_Config"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(out, []byte(tc.old)) {
				t.Fatalf("the rendering has no %q to break", tc.old)
			}
			errs := validate(t, bytes.Replace(out, []byte(tc.old), []byte(tc.new), 1))
			if !strings.Contains(errs, tc.want) {
				t.Errorf("kubecheck output %q, want it to reject with %q", errs, tc.want)
			}
		})
	}
}

// A PodDisruptionBudget of minAvailable: 1 over one replica blocks every
// node drain: the chart renders it only with several replicas.
func TestHelmPodDisruptionBudgetOnlyWithSeveralReplicas(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want bool
	}{
		{nil, true},
		{[]string{"replicaCount=1"}, false},
		{[]string{"replicaCount=1", "redis.mode=none"}, false},
		{[]string{"replicaCount=3"}, true},
		{[]string{"replicaCount=3", "podDisruptionBudget.enabled=false"}, false},
	} {
		var extra []string
		for _, s := range tc.set {
			extra = append(extra, "--set", s)
		}
		out, m := render(t, chartCases[0], extra...)
		if got := m["PodDisruptionBudget/alertrouter"] != nil; got != tc.want {
			t.Errorf("--set %v: PodDisruptionBudget rendered = %v, want %v", tc.set, got, tc.want)
		}
		if errs := validate(t, out); errs != "" {
			t.Errorf("--set %v: invalid manifests:\n%s", tc.set, errs)
		}
	}
}

// Without Redis (redis.mode none, one replica) a rollout recreates the pod:
// a rolling update ran the old and the new pod behind the Service, each
// deduplicating in its own memory, and a firing sent to both paged twice
// (an audit). With a Redis it rolls, one pod at a time, none unavailable.
func TestHelmStrategyRecreatesThePodWithoutRedis(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"replicaCount=1", "redis.mode=none"}, "Recreate"},
		{[]string{"replicaCount=1"}, "RollingUpdate"},
		{nil, "RollingUpdate"},
	} {
		var extra []string
		for _, s := range tc.set {
			extra = append(extra, "--set", s)
		}
		out, m := render(t, chartCases[0], extra...)
		strategy := get(m["Deployment/alertrouter"], "spec", "strategy")
		if got := str(get(strategy, "type")); got != tc.want {
			t.Errorf("--set %v: strategy %v, want %s", tc.set, strategy, tc.want)
		}
		if tc.want == "RollingUpdate" && str(get(strategy, "rollingUpdate", "maxUnavailable")) != "0" {
			t.Errorf("--set %v: strategy %v, want maxUnavailable 0", tc.set, strategy)
		}
		if errs := validate(t, out); errs != "" {
			t.Errorf("--set %v: invalid manifests:\n%s", tc.set, errs)
		}
	}
}

// env and envFrom reach the router container (GOGC, GOMEMLIMIT: README.md,
// "Command line"), as Kubernetes types.
func TestHelmEnvReachesTheRouterContainer(t *testing.T) {
	values := filepath.Join(t.TempDir(), "env.yaml")
	if err := os.WriteFile(values, []byte(`env:
  - name: GOGC
    value: "400"
  - name: GOMEMLIMIT
    valueFrom:
      resourceFieldRef:
        containerName: router
        resource: limits.memory
envFrom:
  - secretRef:
      name: alertrouter-env
  - prefix: AR_
    configMapRef:
      name: alertrouter-extra
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, m := render(t, chartCases[0], "-f", values)
	if errs := validate(t, out); errs != "" {
		t.Fatalf("invalid manifests with env and envFrom:\n%s", errs)
	}
	ctr := container(t, m["Deployment/alertrouter"], "router")
	for _, ck := range []struct{ what, got, want string }{
		{"env[0]", fmt.Sprint(get(ctr, "env", 0, "name"), "=", get(ctr, "env", 0, "value")), "GOGC=400"},
		{"env[1]", fmt.Sprint(get(ctr, "env", 1, "name"), " ", get(ctr, "env", 1, "valueFrom", "resourceFieldRef", "resource")), "GOMEMLIMIT limits.memory"},
		{"envFrom[0]", str(get(ctr, "envFrom", 0, "secretRef", "name")), "alertrouter-env"},
		{"envFrom[1]", fmt.Sprint(get(ctr, "envFrom", 1, "prefix"), get(ctr, "envFrom", 1, "configMapRef", "name")), "AR_alertrouter-extra"},
	} {
		if ck.got != ck.want {
			t.Errorf("router container %s = %q, want %q", ck.what, ck.got, ck.want)
		}
	}
	// None by default.
	_, m = render(t, chartCases[0])
	if ctr := container(t, m["Deployment/alertrouter"], "router"); get(ctr, "env") != nil || get(ctr, "envFrom") != nil {
		t.Errorf("default values render env %v, envFrom %v; want none", get(ctr, "env"), get(ctr, "envFrom"))
	}
}

var pushedTag = regexp.MustCompile(`(?m)^docker push \S+:(\S+)$`)

// The chart's default image is the one the docs build and push (deploy/
// README.md section 0), tagged as releases are (make release VERSION=vX.Y.Z),
// and the examples pin that same tag.
func TestHelmDefaultImageTagIsTheReleasedOne(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	mm := pushedTag.FindSubmatch(readme)
	if mm == nil {
		t.Fatal("deploy/README.md has no `docker push IMAGE:TAG` line")
	}
	tag := string(mm[1])
	if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(tag) {
		t.Errorf("deploy/README.md pushes tag %q, want a release tag vX.Y.Z (make release VERSION=vX.Y.Z)", tag)
	}
	_, m := render(t, chartCases[0])
	d := m["Deployment/alertrouter"]
	if got, want := str(get(container(t, d, "router"), "image")), "registry.example.com/alertrouter/alertrouter:"+tag; got != want {
		t.Errorf("the chart's default image = %q, want %q: the tag deploy/README.md builds and pushes", got, want)
	}
	if got := str(get(d, "metadata", "labels", "app.kubernetes.io/version")); got != tag {
		t.Errorf("app.kubernetes.io/version = %q, want %q", got, tag)
	}
	for _, c := range chartCases[1:] {
		b, err := os.ReadFile(filepath.Join(chartDir, c.values))
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Image struct {
				Tag string `yaml:"tag"`
			} `yaml:"image"`
		}
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if v.Image.Tag != "" && v.Image.Tag != tag {
			t.Errorf("%s pins image.tag %q, want the released %q", c.values, v.Image.Tag, tag)
		}
	}
}
