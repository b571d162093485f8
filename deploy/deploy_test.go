package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/config"
)

// tool returns the path of an external tool the test needs. A missing tool
// fails the test in CI (CI set) and skips it, loudly, elsewhere.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found on PATH, and CI is set: install it (scripts/install-deps.sh)", name)
	}
	t.Skipf("SKIPPED: %s not found on PATH — this check of the deploy artifacts did NOT run (it is mandatory in CI)", name)
	return ""
}

// run runs a command and returns its stdout; a failure fails the test with
// the command's output.
func run(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// decodeAll decodes every YAML document of b into generic maps.
func decodeAll(b []byte) ([]map[string]interface{}, error) {
	var docs []map[string]interface{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc map[string]interface{}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("YAML document %d: %w", len(docs)+1, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// get walks a decoded YAML tree: string keys index maps, ints index lists.
func get(v interface{}, path ...interface{}) interface{} {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[interface{}]interface{})
			if !ok {
				if m2, ok2 := v.(map[string]interface{}); ok2 {
					v = m2[k]
					continue
				}
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]interface{})
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v interface{}) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func TestEveryYAMLFileInDeployParses(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Helm templates are Go templates of YAML; helm_test.go renders them.
		if d.IsDir() && path == filepath.Join(chartDir, "templates") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yml" || ext == ".yaml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alertmanager.yml", "kubernetes/base/kustomization.yaml", "kubernetes/base/router.yml", "kubernetes/servicemonitor.yaml", "prometheus/rules.yml",
		"prometheus/alertrouter-mixin/alerts.yml", "helm/alertrouter/Chart.yaml", "helm/alertrouter/values.yaml"} {
		if !slices.Contains(files, filepath.FromSlash(want)) {
			t.Errorf("%s is missing from deploy/", want)
		}
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := decodeAll(b)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(docs) == 0 {
				t.Fatalf("%s holds no YAML document", f)
			}
		})
	}
}

// manifests are rendered objects by kind/name.
type manifests map[string]map[string]interface{}

// kustomize renders a kustomization directory into its objects by
// kind/name, through `kubecheck kustomize`: the kustomize library kubectl
// embeds, with kubectl kustomize's options and output, so no kubectl is
// needed. Every object must pass kubecheck.
func kustomize(t *testing.T, dir string) manifests {
	t.Helper()
	rendered := run(t, "", kubecheck(t), "kustomize", dir)
	if errs := validate(t, rendered); errs != "" {
		t.Fatalf("kustomize %s renders manifests invalid against the Kubernetes API types:\n%s", dir, errs)
	}
	docs, err := decodeAll(rendered)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out := manifests{}
	for _, d := range docs {
		out[str(d["kind"])+"/"+str(get(d, "metadata", "name"))] = d
	}
	return out
}

// byKind returns the only object of kind whose name starts with prefix.
func (m manifests) byKind(t *testing.T, kind, prefix string) map[string]interface{} {
	t.Helper()
	var found []string
	for k := range m {
		if strings.HasPrefix(k, kind+"/"+prefix) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("want exactly one %s named %s*, found %v among %v", kind, prefix, found, keys)
	}
	return m[found[0]]
}

func container(t *testing.T, deploy map[string]interface{}, name string) interface{} {
	t.Helper()
	cs, _ := get(deploy, "spec", "template", "spec", "containers").([]interface{})
	for _, c := range cs {
		if str(get(c, "name")) == name {
			return c
		}
	}
	t.Fatalf("deployment has no container %q", name)
	return nil
}

// selects reports whether every pair of selector is among labels.
func selects(selector, labels interface{}) bool {
	sel, _ := selector.(map[interface{}]interface{})
	lab, _ := labels.(map[interface{}]interface{})
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if str(lab[k]) != str(v) {
			return false
		}
	}
	return true
}

func TestKustomizeBaseRendersAHighlyAvailableHardenedRouter(t *testing.T) {
	m := kustomize(t, "kubernetes/base")
	d := m["Deployment/alertrouter"]
	if d == nil {
		t.Fatal("no Deployment named alertrouter")
	}
	podLabels := get(d, "spec", "template", "metadata", "labels")
	podSpec := get(d, "spec", "template", "spec")
	c := container(t, d, "router")

	checks := []struct {
		what      string
		got, want interface{}
	}{
		{"replicas", get(d, "spec", "replicas"), 2},
		{"readiness probe path", get(c, "readinessProbe", "httpGet", "path"), "/-/ready"},
		{"readiness probe port", get(c, "readinessProbe", "httpGet", "port"), "http"},
		{"liveness probe path", get(c, "livenessProbe", "httpGet", "path"), "/-/healthy"},
		{"liveness probe port", get(c, "livenessProbe", "httpGet", "port"), "http"},
		{"container port name", get(c, "ports", 0, "name"), "http"},
		{"container port", get(c, "ports", 0, "containerPort"), 9095},
		{"args", fmt.Sprint(get(c, "args")), "[serve --config.file=/etc/alertrouter/router.yml --web.shutdown-delay=5s --log.format=json]"},
		{"pod runAsNonRoot", get(podSpec, "securityContext", "runAsNonRoot"), true},
		{"pod seccomp", get(podSpec, "securityContext", "seccompProfile", "type"), "RuntimeDefault"},
		{"container runAsNonRoot", get(c, "securityContext", "runAsNonRoot"), true},
		{"readOnlyRootFilesystem", get(c, "securityContext", "readOnlyRootFilesystem"), true},
		{"allowPrivilegeEscalation", get(c, "securityContext", "allowPrivilegeEscalation"), false},
		{"dropped capabilities", fmt.Sprint(get(c, "securityContext", "capabilities", "drop")), "[ALL]"},
		{"cpu request", get(c, "resources", "requests", "cpu"), "50m"},
		{"memory request", get(c, "resources", "requests", "memory"), "128Mi"},
		{"cpu limit", get(c, "resources", "limits", "cpu"), "1"},
		{"memory limit", get(c, "resources", "limits", "memory"), "512Mi"},
		{"anti-affinity topology", get(podSpec, "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "podAffinityTerm", "topologyKey"), "kubernetes.io/hostname"},
		{"anti-affinity selects its own pods", selects(get(podSpec, "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "podAffinityTerm", "labelSelector", "matchLabels"), podLabels), true},
		{"deployment selector selects its pods", selects(get(d, "spec", "selector", "matchLabels"), podLabels), true},
	}
	for _, c := range checks {
		if str(c.got) != str(c.want) {
			t.Errorf("Deployment alertrouter %s = %v, want %v", c.what, c.got, c.want)
		}
	}
	// terminationGracePeriodSeconds must outlast the shutdown delay, then
	// the drain of a webhook in flight (webhook.timeout + 5s) and the
	// close's last second.
	grace, _ := get(podSpec, "terminationGracePeriodSeconds").(int)
	if need := 5*time.Second + time.Duration(config.DefaultWebhook().Timeout) + 6*time.Second; time.Duration(grace)*time.Second < need {
		t.Errorf("terminationGracePeriodSeconds %ds does not cover --web.shutdown-delay=5s + the default webhook.timeout + 6s = %s", grace, need)
	}

	pdb := m.byKind(t, "PodDisruptionBudget", "alertrouter")
	if got := get(pdb, "spec", "minAvailable"); got != 1 {
		t.Errorf("PodDisruptionBudget minAvailable = %v, want 1", got)
	}
	if !selects(get(pdb, "spec", "selector", "matchLabels"), podLabels) {
		t.Errorf("PodDisruptionBudget selector %v does not select the router pods %v", get(pdb, "spec", "selector"), podLabels)
	}

	svc := m["Service/alertrouter"]
	if svc == nil {
		t.Fatal("no Service named alertrouter (Alertmanager posts to http://alertrouter:9095/webhook)")
	}
	if got := str(get(svc, "spec", "type")); got != "ClusterIP" {
		t.Errorf("Service type = %q, want ClusterIP", got)
	}
	if got, tp := get(svc, "spec", "ports", 0, "port"), str(get(svc, "spec", "ports", 0, "targetPort")); got != 9095 || tp != "http" {
		t.Errorf("Service port = %v -> %s, want 9095 -> http", got, tp)
	}
	if !selects(get(svc, "spec", "selector"), podLabels) {
		t.Errorf("Service selector %v does not select the router pods %v", get(svc, "spec", "selector"), podLabels)
	}

	// Volumes: the ConfigMap and the Secret the pod mounts exist, and the
	// secret files router.yml names are keys of that Secret.
	vols := map[string]interface{}{}
	for _, v := range get(podSpec, "volumes").([]interface{}) {
		vols[str(get(v, "name"))] = v
	}
	cmName := str(get(vols["config"], "configMap", "name"))
	cm := m["ConfigMap/"+cmName]
	if cm == nil {
		t.Fatalf("the config volume names ConfigMap %q, which the base does not render", cmName)
	}
	secName := str(get(vols["secrets"], "secret", "secretName"))
	sec := m["Secret/"+secName]
	if sec == nil {
		t.Fatalf("the secrets volume names Secret %q, which the base does not render", secName)
	}
	mounts := map[string]string{}
	for _, vm := range get(c, "volumeMounts").([]interface{}) {
		mounts[str(get(vm, "name"))] = str(get(vm, "mountPath"))
	}
	if mounts["secrets"] != "/etc/alertrouter/secrets" || mounts["config"] != "/etc/alertrouter/router.yml" {
		t.Errorf("volume mounts = %v, want secrets at /etc/alertrouter/secrets and config at /etc/alertrouter/router.yml", mounts)
	}

	routerYML := str(get(cm, "data", "router.yml"))
	cfg, err := config.Parse([]byte(routerYML), "/etc/alertrouter")
	if err != nil {
		t.Fatalf("router.yml of the ConfigMap does not load with the router's config loader: %v", err)
	}
	// The base passes no --web.config.file: router.yml alone must serve
	// (serve refuses, e.g., a replaying console nothing protects).
	if err := cfg.CheckWebConfig(nil); err != nil {
		t.Errorf("the router would refuse to start with the base's router.yml: %v", err)
	}
	secretKeys := get(sec, "stringData").(map[interface{}]interface{})
	var files []string
	files = append(files, cfg.Auth.BearerTokenFile)
	for _, r := range cfg.Receivers {
		for _, pd := range r.PagerdutyConfigs {
			files = append(files, pd.RoutingKeyFile)
		}
		for _, s := range r.SlackConfigs {
			files = append(files, s.TokenFile)
		}
	}
	for _, f := range files {
		dir, key := filepath.Split(f)
		if dir != mounts["secrets"]+"/" {
			t.Errorf("router.yml reads secret %q outside the secrets mount %s", f, mounts["secrets"])
		}
		if _, ok := secretKeys[key]; !ok {
			t.Errorf("router.yml reads secret file %q, but Secret %s has no key %q", f, secName, key)
		}
	}
	for k, v := range secretKeys {
		if !strings.HasPrefix(str(v), "REPLACE_ME") {
			t.Errorf("example Secret key %v = %q: example values must be obvious placeholders (REPLACE_ME…)", k, v)
		}
	}

	// The example Redis is what router.yml points at.
	if cfg.Store.Redis == nil {
		t.Fatal("router.yml has no store.redis: two replicas would not share dedup state")
	}
	redisSvc := m["Service/alertrouter-redis"]
	if redisSvc == nil {
		t.Fatal("no Service alertrouter-redis")
	}
	want := fmt.Sprintf("%s:%v", get(redisSvc, "metadata", "name"), get(redisSvc, "spec", "ports", 0, "port"))
	if got := strings.Join(cfg.Store.Redis.Addrs, ","); got != want {
		t.Errorf("store.redis.addrs = %s, want the example Redis Service %s", got, want)
	}
	if m["Deployment/alertrouter-redis"] == nil {
		t.Error("no Deployment alertrouter-redis behind the Service")
	}
	for k := range m {
		if strings.HasPrefix(k, "ServiceMonitor/") {
			t.Errorf("%s is in the base: the base must apply on clusters without the Prometheus Operator CRDs", k)
		}
	}
}

// readmeBlock returns the first ```yaml block after marker in
// deploy/README.md.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	return fencedBlock(t, marker, "yaml")
}

// fencedBlock returns the first ```lang block after marker in
// deploy/README.md.
func fencedBlock(t *testing.T, marker, lang string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("deploy/README.md has no %q marker", marker)
	}
	_, after, ok = strings.Cut(after, "```"+lang+"\n")
	if !ok {
		t.Fatalf("deploy/README.md has no ```%s block after %q", lang, marker)
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatalf("deploy/README.md: unterminated block after %q", marker)
	}
	return block
}

func TestTheReadmeOverlayReplacesSecretsImageAndRedis(t *testing.T) {
	base, err := filepath.Abs("kubernetes/base")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// kustomize accepts only relative paths to bases.
	rel, err := filepath.Rel(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	k := strings.ReplaceAll(readmeBlock(t, "<!-- overlay-example -->"), "../../base", filepath.ToSlash(rel))
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pagerduty-routing-key", "slack-token", "webhook-token"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("real-"+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "router.yml"), []byte(routerYMLExternalRedis), 0o644); err != nil {
		t.Fatal(err)
	}
	m := kustomize(t, dir)
	sec := m.byKind(t, "Secret", "alertrouter-secrets")
	if sd := get(sec, "stringData"); sd != nil {
		t.Errorf("the overlay's Secret still carries the placeholders: %v", sd)
	}
	if got := str(get(sec, "data", "slack-token")); got == "" {
		t.Error("the overlay's Secret has no slack-token")
	}
	d := m["Deployment/alertrouter"]
	if got := str(get(container(t, d, "router"), "image")); got != "registry.example.com/alertrouter/alertrouter:v0.1.0" {
		t.Errorf("overlay image = %q, want the overlay's tag", got)
	}
	if m["Deployment/alertrouter-redis"] != nil || m["Service/alertrouter-redis"] != nil {
		t.Error("the overlay for an external Redis still renders the example Redis")
	}
	if str(get(d, "metadata", "namespace")) != "monitoring" {
		t.Errorf("overlay namespace = %v, want monitoring", get(d, "metadata", "namespace"))
	}
	cm := m.byKind(t, "ConfigMap", "alertrouter-config")
	if _, err := config.Parse([]byte(str(get(cm, "data", "router.yml"))), "/etc/alertrouter"); err != nil {
		t.Fatalf("the overlay's router.yml does not load: %v", err)
	}
	if !strings.Contains(str(get(cm, "data", "router.yml")), "redis.example.internal") {
		t.Error("the overlay's router.yml did not replace the base's")
	}
}

// routerYMLExternalRedis is the overlay's router.yml in the overlay test.
const routerYMLExternalRedis = `auth:
  bearer_token_file: /etc/alertrouter/secrets/webhook-token
store:
  redis:
    addrs: ["redis.example.internal:6379"]
route:
  receiver: slack-triage
receivers:
  - name: slack-triage
    slack_configs:
      - token_file: /etc/alertrouter/secrets/slack-token
        channel: "#alerts-triage"
`

var amVersion = regexp.MustCompile(`version (\d+)\.(\d+)\.`)

func TestAlertmanagerSnippetIsValidAndFitsTheRouter(t *testing.T) {
	amtool := tool(t, "amtool")
	path := "alertmanager.yml"
	out, err := exec.Command(amtool, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("amtool --version: %v: %s", err, out)
	}
	mm := amVersion.FindStringSubmatch(string(out))
	if mm == nil {
		t.Fatalf("amtool --version printed no version: %s", out)
	}
	major, _ := strconv.Atoi(mm[1])
	minor, _ := strconv.Atoi(mm[2])
	if major == 0 && minor < 28 {
		// webhook_configs[].timeout arrived in Alertmanager 0.28; the file
		// says so next to the key. Check the rest with this older amtool.
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if !strings.HasPrefix(strings.TrimSpace(sc.Text()), "timeout:") {
				kept = append(kept, sc.Text())
			}
		}
		path = filepath.Join(t.TempDir(), "alertmanager.yml")
		if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("amtool is %s.%s (< 0.28): checking alertmanager.yml without webhook_configs[].timeout", mm[1], mm[2])
	}
	run(t, "", amtool, "check-config", path)

	// The snippet against the router's own settings.
	b, err := os.ReadFile("alertmanager.yml")
	if err != nil {
		t.Fatal(err)
	}
	var am struct {
		Route struct {
			Receiver       string   `yaml:"receiver"`
			GroupBy        []string `yaml:"group_by"`
			GroupInterval  string   `yaml:"group_interval"`
			RepeatInterval string   `yaml:"repeat_interval"`
		} `yaml:"route"`
		Receivers []struct {
			Name           string `yaml:"name"`
			WebhookConfigs []struct {
				URL          string `yaml:"url"`
				SendResolved bool   `yaml:"send_resolved"`
				MaxAlerts    int    `yaml:"max_alerts"`
				Timeout      string `yaml:"timeout"`
				HTTPConfig   struct {
					Authorization struct {
						Type            string `yaml:"type"`
						CredentialsFile string `yaml:"credentials_file"`
					} `yaml:"authorization"`
				} `yaml:"http_config"`
			} `yaml:"webhook_configs"`
		} `yaml:"receivers"`
	}
	if err := yaml.Unmarshal(b, &am); err != nil {
		t.Fatal(err)
	}
	if am.Route.Receiver != "alertrouter" || len(am.Receivers) != 1 || am.Receivers[0].Name != "alertrouter" || len(am.Receivers[0].WebhookConfigs) != 1 {
		t.Fatalf("want one receiver alertrouter with one webhook_config, routed to by the root route; got %+v", am)
	}
	wh := am.Receivers[0].WebhookConfigs[0]
	dur := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("duration %q: %v", s, err)
		}
		return d
	}
	routerCfg, err := os.ReadFile("kubernetes/base/router.yml")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := config.Parse(routerCfg, "/etc/alertrouter")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"the url is the router's /webhook on the Service alertrouter:9095", wh.URL == "http://alertrouter:9095/webhook"},
		{"resolved alerts are sent (the router resolves PagerDuty incidents and Slack threads)", wh.SendResolved},
		{"max_alerts is 1000", wh.MaxAlerts == 1000},
		{"the timeout is below group_interval", dur(wh.Timeout) < dur(am.Route.GroupInterval)},
		{"the timeout outlasts the router's webhook.timeout, so the router answers first", dur(wh.Timeout) > time.Duration(config.DefaultWebhook().Timeout)},
		{"repeat_interval is at most 15m (a page held by a mute interval or flap damping goes out at the first repeat after the hold) and below the router's dedup.repeat_interval (its reminders)",
			dur(am.Route.RepeatInterval) <= 15*time.Minute && dur(am.Route.RepeatInterval) < time.Duration(rc.Dedup.RepeatInterval)},
		{"the authorization is a bearer token from a file", wh.HTTPConfig.Authorization.Type == "Bearer" && wh.HTTPConfig.Authorization.CredentialsFile != ""},
		{"group_by is alertname, service, slo", fmt.Sprint(am.Route.GroupBy) == "[alertname service slo]"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("alertmanager.yml: want %s", c.what)
		}
	}
}

func TestPrometheusRulesAreValidAndTheirUnitTestsPass(t *testing.T) {
	t.Parallel() // builds and promtool runs dominate the package's time; overlap them
	promtool := tool(t, "promtool")
	run(t, "", promtool, "check", "rules", "prometheus/rules.yml")
	run(t, "prometheus", promtool, "test", "rules", "rules_test.yml", "rules_regression_test.yml")
}

// The self-monitoring alerts: valid, and each has a firing and a not-firing
// case in alerts_test.yml.
func TestSelfMonitoringAlertsPassTheirUnitTests(t *testing.T) {
	promtool := tool(t, "promtool")
	run(t, "", promtool, "check", "rules", "prometheus/alertrouter-mixin/alerts.yml")
	run(t, "prometheus/alertrouter-mixin", promtool, "test", "rules", "alerts_test.yml")

	rules := mixinRules(t)
	tb, err := os.ReadFile("prometheus/alertrouter-mixin/alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string        `yaml:"alertname"`
				ExpAlerts []interface{} `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
			PromQLExprTest []struct {
				Expr string `yaml:"expr"`
			} `yaml:"promql_expr_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(tb, &tests); err != nil {
		t.Fatal(err)
	}
	// An expression tested alone (off the minute, where alert_rule_test
	// cannot evaluate) is a rule's, as written: a copy left behind when
	// the rule changes would test nothing.
	exprs := map[string]bool{}
	for _, r := range rules {
		exprs[strings.TrimSpace(r.Expr)] = true
	}
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, e := range tc.PromQLExprTest {
			if !exprs[strings.TrimSpace(e.Expr)] {
				t.Errorf("alerts_test.yml tests an expression no rule of alerts.yml has:\n%s", e.Expr)
			}
		}
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	metrics := map[string]bool{}
	for _, r := range rules {
		if !firing[r.Alert] || !quiet[r.Alert] {
			t.Errorf("alert %s: want a firing and a not-firing case in alerts_test.yml (firing %v, not firing %v)", r.Alert, firing[r.Alert], quiet[r.Alert])
		}
		for _, m := range regexp.MustCompile(`\b(alert(?:router|manager)_[a-z0-9_]+)`).FindAllString(r.Expr, -1) {
			metrics[m] = true
		}
	}
	// What the issue asks to alert on, by the metrics that carry it
	// (Alertmanager's failed webhooks: its failed requests, every attempt —
	// alertmanager_notifications_failed_total counts a notification once,
	// when its retries give up, too sparse to tell a broken path).
	for _, want := range []string{"alertrouter_notifications_total", "alertrouter_dead_letters_total", "alertrouter_dedup_store_errors_total",
		"alertrouter_webhooks_total", "alertrouter_config_last_reload_successful", "alertrouter_webhook_duration_seconds_bucket",
		"alertmanager_notification_requests_failed_total", "alertrouter_notifier_panics_total", "alertrouter_slack_actions_total",
		"alertrouter_store_errors_total", "alertrouter_store_operation_duration_seconds_count"} {
		if !metrics[want] {
			t.Errorf("no self-monitoring alert on %s", want)
		}
	}
	known := routerMetricNames(t)
	for m := range metrics {
		base := m
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if trimmed, ok := strings.CutSuffix(m, suf); ok && known[trimmed] {
				base = trimmed
			}
		}
		if strings.HasPrefix(m, "alertrouter_") && !known[base] {
			t.Errorf("alert expression uses %s, which the router does not export", m)
		}
	}
}

// Every self-monitoring alert tells the one paged what to do: a runbook
// annotation of concrete steps, whose references to deploy/README.md's
// sections name sections that exist, and a runbook_url (the annotation
// kubernetes-mixin and the Prometheus Operator's alerts carry, an absolute
// URL as PagerDuty and Slack links need) to a heading of deploy/README.md.
func TestEverySelfMonitoringAlertHasARunbook(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	// GitHub's anchors of the headings: lower case, punctuation dropped,
	// spaces as hyphens.
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(b), -1) {
		a := strings.ToLower(regexp.MustCompile(`[^\p{L}\p{N} _-]`).ReplaceAllString(m[1], ""))
		anchors[strings.ReplaceAll(a, " ", "-")] = true
	}
	const readme = "https://github.com/alertrouter/alertrouter/blob/main/deploy/README.md#"
	for _, r := range mixinRules(t) {
		rb := r.Annotations["runbook"]
		if len(rb) < 100 {
			t.Errorf("alert %s: runbook annotation %q does not say what to do", r.Alert, rb)
		}
		if u := r.Annotations["runbook_url"]; !strings.HasPrefix(u, readme) || !anchors[strings.TrimPrefix(u, readme)] {
			t.Errorf("alert %s: runbook_url %q is not %s followed by a heading's anchor", r.Alert, u, readme)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("alert %s: no summary or description", r.Alert)
		}
		for _, m := range regexp.MustCompile(`sections? ([0-9]+)(?: and ([0-9]+))?`).FindAllStringSubmatch(rb, -1) {
			for _, n := range m[1:] {
				if n != "" && !bytes.Contains(b, []byte("\n## "+n+". ")) {
					t.Errorf("alert %s: runbook cites section %s, which deploy/README.md does not have", r.Alert, n)
				}
			}
		}
	}
}

// Every self-monitoring alert is in deploy/README.md's table (section 11)
// and in README.md's list of alerts, and nothing else is.
func TestEverySelfMonitoringAlertIsDocumented(t *testing.T) {
	var alerts []string
	for _, r := range mixinRules(t) {
		alerts = append(alerts, r.Alert)
	}
	sort.Strings(alerts)
	alertName := regexp.MustCompile("`(Alert(?:router|manager)[A-Za-z]+)`")
	documented := func(file, start, end string) []string {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(b), start)
		if !ok {
			t.Fatalf("%s has no %q", file, start)
		}
		section, _, _ = strings.Cut(section, end)
		var names []string
		for _, m := range alertName.FindAllStringSubmatch(section, -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
		sort.Strings(names)
		return names
	}
	for _, d := range []struct{ file, start, end string }{
		{"README.md", "## 11. Self-monitoring alerts", "\n## "},
		{"../README.md", "- **Self-monitoring**", "\n- **"},
	} {
		if got := documented(d.file, d.start, d.end); !slices.Equal(got, alerts) {
			t.Errorf("%s (%s) lists the alerts %v; the mixin has %v", d.file, d.start, got, alerts)
		}
	}
}

// routerMetricNames collects the metric names the router's Go sources
// register, so the dashboard cannot drift from the code.
func routerMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{
		"alertrouter_build_info": true, // client_golang collectors/version, namespace "alertrouter"
	}
	re := regexp.MustCompile(`"(alertrouter_[a-z0-9_]+)"`)
	// Names built by client_golang from their parts (enrich/slolive).
	parts := regexp.MustCompile(`Namespace:\s*"alertrouter",\s*Subsystem:\s*"([a-z0-9_]+)",\s*Name:\s*"([a-z0-9_]+)"`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "deploy" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
		for _, m := range parts.FindAllSubmatch(b, -1) {
			names["alertrouter_"+string(m[1])+"_"+string(m[2])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

var (
	metricRef  = regexp.MustCompile(`\balertrouter_[a-z0-9_]+`)
	grafanaVar = regexp.MustCompile(`\$(__rate_interval|__interval|__range)|\$\{?[a-z_]+\}?`)
)

func TestDashboardQueriesParseAndUseOnlyTheRoutersMetrics(t *testing.T) {
	b, err := os.ReadFile("grafana/alertrouter-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string  `json:"uid"`
		Title  string  `json:"title"`
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Error("dashboard has no uid or title")
	}
	known := routerMetricNames(t)
	if len(known) < 10 {
		t.Fatalf("found only %d alertrouter_* metric names in the Go sources: %v", len(known), known)
	}
	used := map[string]bool{}
	ids := map[int]string{}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup {
				t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for i, tg := range p.Targets {
				for _, name := range metricRef.FindAllString(tg.Expr, -1) {
					base := name
					for _, suf := range []string{"_bucket", "_sum", "_count"} {
						if trimmed, ok := strings.CutSuffix(name, suf); ok && known[trimmed] {
							base = trimmed
						}
					}
					if !known[base] {
						t.Errorf("panel %q query %d uses %s, which the router does not export", p.Title, i, name)
					}
					used[base] = true
				}
				// promtool parses PromQL; Grafana's variables become values.
				expr := grafanaVar.ReplaceAllStringFunc(tg.Expr, func(v string) string {
					if strings.HasPrefix(v, "$__") {
						return "5m"
					}
					return "x"
				})
				q, _ := json.Marshal(expr)
				fmt.Fprintf(&rules, "      - record: dashboard:panel_%d_%d\n        expr: %s\n", p.ID, i, q)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, want := range []string{"alertrouter_webhooks_total", "alertrouter_alerts_received_total", "alertrouter_webhook_duration_seconds",
		"alertrouter_decisions_total", "alertrouter_dedup_total", "alertrouter_dedup_store_errors_total", "alertrouter_store_operation_duration_seconds",
		"alertrouter_notifications_total", "alertrouter_notification_duration_seconds", "alertrouter_config_last_reload_successful",
		"alertrouter_dead_letters_total"} {
		if !used[want] {
			t.Errorf("the dashboard shows no panel of %s", want)
		}
	}
	// The self-monitoring row also shows what Alertmanager sees: the
	// metric AlertmanagerRouterWebhookFailing reads (an audit: the panels
	// read another, which showed 0 while the alert fired).
	amMetric := ""
	for _, r := range mixinRules(t) {
		if r.Alert == "AlertmanagerRouterWebhookFailing" {
			amMetric = regexp.MustCompile(`\balertmanager_[a-z_]+`).FindString(r.Expr)
		}
	}
	if amMetric == "" {
		t.Fatal("no AlertmanagerRouterWebhookFailing alert on an alertmanager_ metric in the mixin")
	}
	for _, title := range []string{"Alertmanager → router failures / 10m", "Alertmanager → router webhook failures"} {
		found := false
		var walkAM func([]panel)
		walkAM = func(ps []panel) {
			for _, p := range ps {
				if p.Title == title {
					for _, tg := range p.Targets {
						found = found || strings.Contains(tg.Expr, amMetric+`{integration="webhook"}`)
					}
				}
				walkAM(p.Panels)
			}
		}
		walkAM(dash.Panels)
		if !found {
			t.Errorf("panel %q does not read %s{integration=\"webhook\"}, what AlertmanagerRouterWebhookFailing reads", title, amMetric)
		}
	}

	promtool := tool(t, "promtool")
	f := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "", promtool, "check", "rules", f)
}

// The dashboard tells the truth when nothing happens and with any
// Alertmanager: a ratio reads 0, or shows no data, on an idle router
// rather than 0/0 = NaN; and the panel of Alertmanager's failed webhooks
// has every label its legend names whatever the version's labels (0.25:
// integration alone; 0.26 adds reason; receiver_name needs 0.27 and
// --enable-feature=receiver-name-in-metrics), since Grafana writes a
// missing label's name into the legend ("alertmanager reason").
func TestDashboardReadsAnIdleRouterAndAnyAlertmanager(t *testing.T) {
	b, err := os.ReadFile("grafana/alertrouter-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	}
	type dashPanel struct {
		Title   string      `json:"title"`
		Panels  []dashPanel `json:"panels"`
		Targets []target    `json:"targets"`
	}
	var dash struct {
		Panels []dashPanel `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	targets := map[string]target{} // the first query of each panel, by title
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if len(p.Targets) > 0 {
				targets[p.Title] = p.Targets[0]
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)

	type sample struct {
		Labels string  `yaml:"labels"`
		Value  float64 `yaml:"value"`
	}
	type series struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	}
	const (
		ok200  = `alertrouter_webhooks_total{job="alertrouter",outcome="ok",code="200"}`
		err503 = `alertrouter_webhooks_total{job="alertrouter",outcome="failed",code="503"}`
		hit    = `alertrouter_dedup_total{job="alertrouter",result="hit"}`
		miss   = `alertrouter_dedup_total{job="alertrouter",result="miss"}`
	)
	legendLabel := regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)
	amFailed := func(labels string) string {
		return `alertmanager_notification_requests_failed_total{integration="webhook",` + labels + `}`
	}
	for _, c := range []struct {
		name, panel string
		input       []series
		want        []sample // none: no data
	}{
		{"an idle router's 5xx ratio is 0", "Webhook 5xx ratio",
			[]series{{ok200, "5x10"}, {err503, "0x10"}}, []sample{{"{}", 0}}},
		{"a busy router's 5xx ratio is the share of 5xx", "Webhook 5xx ratio",
			[]series{{ok200, "0+540x10"}, {err503, "0+60x10"}}, []sample{{"{}", 0.1}}},
		{"no router scraped shows no 5xx ratio rather than a reassuring 0", "Webhook 5xx ratio",
			[]series{{`up{job="node"}`, "1x10"}}, nil},
		{"an idle router has no dedup hit ratio", "Dedup hit ratio",
			[]series{{hit, "3x10"}, {miss, "7x10"}}, nil},
		{"a busy router's dedup hit ratio is hits over hits and misses", "Dedup hit ratio",
			[]series{{hit, "0+60x10"}, {miss, "0+180x10"}}, []sample{{"{}", 0.25}}},
		{"every Alertmanager's failed webhook requests carry a receiver", "Alertmanager → router webhook failures",
			[]series{
				{amFailed(`job="am-0.25",instance="a"`), "0+60x10"},
				{amFailed(`job="am-0.27",instance="c",receiver_name="alertrouter"`), "0+60x10"},
			},
			[]sample{
				{`{job="am-0.25",receiver_name="webhook"}`, 1},
				{`{job="am-0.27",receiver_name="alertrouter"}`, 1},
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, ok := targets[c.panel]
			if !ok {
				t.Fatalf("the dashboard has no panel %q", c.panel)
			}
			for _, s := range c.want {
				for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
					if !strings.Contains(s.Labels, m[1]+"=") {
						t.Errorf("panel %q: legend %q names %s, which the series %s lacks", c.panel, tg.LegendFormat, m[1], s.Labels)
					}
				}
			}
			expr := strings.NewReplacer(`$__rate_interval`, "5m", `"$job"`, `".+"`).Replace(tg.Expr)
			type exprTest struct {
				Expr       string   `yaml:"expr"`
				EvalTime   string   `yaml:"eval_time"`
				ExpSamples []sample `yaml:"exp_samples"`
			}
			type unitTest struct {
				Interval       string     `yaml:"interval"`
				InputSeries    []series   `yaml:"input_series"`
				PromqlExprTest []exprTest `yaml:"promql_expr_test"`
			}
			file := struct {
				EvaluationInterval string     `yaml:"evaluation_interval"`
				Tests              []unitTest `yaml:"tests"`
			}{"1m", []unitTest{{"1m", c.input, []exprTest{{expr, "10m", c.want}}}}}
			y, err := yaml.Marshal(file)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(t.TempDir(), "dashboard_test.yml")
			if err := os.WriteFile(f, y, 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, "", tool(t, "promtool"), "test", "rules", f)
		})
	}
}

func TestDockerfileBuildCommandStampsTheVersion(t *testing.T) {
	t.Parallel() // builds and promtool runs dominate the package's time; overlap them
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		"FROM golang:1.26 AS builder",
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"USER 65532:65532",
		"EXPOSE 9095",
		"WORKDIR /etc/alertrouter",
		`ENTRYPOINT ["/router"]`,
	} {
		if !strings.Contains(df, want+"\n") {
			t.Errorf("Dockerfile has no line %q", want)
		}
	}
	// `docker run IMAGE` is `router` with no flags: serve, with the default
	// --config.file=router.yml relative to the WORKDIR, where a mounted
	// config lands; no CMD may force a config file that does not exist.
	if strings.Contains(df, "\nCMD") {
		t.Error("Dockerfile has a CMD: with no config mounted the router must start on its embedded defaults")
	}
	if strings.Contains(df, "\nHEALTHCHECK") {
		t.Error("Dockerfile has a HEALTHCHECK; Kubernetes probes do that (and the image has no shell)")
	}
	if testing.Short() {
		t.Skip("-short: not building the router with the Dockerfile's command")
	}

	// Run the Dockerfile's go build (its continuation lines joined, its
	// build args given) and check `router version` reports them.
	_, after, ok := strings.Cut(df, "RUN CGO_ENABLED=0 go build")
	if !ok {
		t.Fatal("Dockerfile has no `RUN CGO_ENABLED=0 go build` step")
	}
	var cmdLines []string
	for _, line := range strings.Split(after, "\n") {
		cont := strings.HasSuffix(line, "\\")
		cmdLines = append(cmdLines, strings.TrimSuffix(line, "\\"))
		if !cont {
			break
		}
	}
	out := filepath.Join(t.TempDir(), "router")
	cmdline := "CGO_ENABLED=0 go build" + strings.Join(cmdLines, " ")
	cmdline = strings.Replace(cmdline, "-o /router", "-o "+out, 1)
	sh := exec.Command("sh", "-c", cmdline)
	sh.Dir = ".."
	sh.Env = append(os.Environ(), "VERSION=9.8.7-test", "REVISION=abc1234", "BRANCH=release-9.8", "BUILD_DATE=20260101-00:00:00")
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build command failed: %v\n%s\n%s", err, cmdline, b)
	}
	v := run(t, "", out, "version")
	for _, want := range []string{"9.8.7-test", "abc1234", "release-9.8", "20260101-00:00:00"} {
		if !bytes.Contains(v, []byte(want)) {
			t.Errorf("`router version` = %q, want it to contain %q from the build args", v, want)
		}
	}

	// The image's WORKDIR with nothing mounted: the embedded defaults.
	// With a router.yml mounted there: that file. (check-config loads the
	// configuration exactly as serve does.)
	workdir := t.TempDir()
	if got := run(t, workdir, out, "check-config"); !bytes.Contains(got, []byte("Checking embedded defaults  SUCCESS")) {
		t.Errorf("with no config in the WORKDIR, check-config says %q, want the embedded defaults", got)
	}
	if err := os.WriteFile(filepath.Join(workdir, "router.yml"), []byte("route:\n  receiver: log\nreceivers:\n  - name: log\n    log_configs: [{}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, workdir, out, "check-config"); !bytes.Contains(got, []byte("Checking router.yml  SUCCESS")) {
		t.Errorf("with router.yml mounted in the WORKDIR, check-config says %q, want it to load router.yml", got)
	}
}

// The build context leaves out what .gitignore does (local binaries,
// bin/, the release archives in dist/), and the image says what it is in
// OCI labels, the build args' version and revision included.
func TestDockerBuildContextAndImageLabels(t *testing.T) {
	ignore := func(path string) map[string]bool {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				set[line] = true
			}
		}
		return set
	}
	docker := ignore("../.dockerignore")
	for p := range ignore("../.gitignore") {
		if !docker[p] && !docker["/"+strings.TrimPrefix(p, "/")] {
			t.Errorf(".dockerignore lacks %q, which .gitignore lists: docker build would send it to the daemon", p)
		}
	}
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Split(string(b), "\nFROM ")
	final := stages[len(stages)-1]
	for _, want := range []string{"ARG VERSION", "ARG REVISION", `org.opencontainers.image.version="${VERSION}"`,
		`org.opencontainers.image.revision="${REVISION}"`, "org.opencontainers.image.source=", "org.opencontainers.image.licenses=\"Apache-2.0\""} {
		if !strings.Contains(final, want) {
			t.Errorf("the Dockerfile's final stage has no %s", want)
		}
	}
}

// mixinRule is one alerting rule of the mixin.
type mixinRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Annotations map[string]string `yaml:"annotations"`
}

// mixinRules are the mixin's alerting rules (prometheus/alertrouter-mixin/
// alerts.yml), in file order.
func mixinRules(t *testing.T) []mixinRule {
	t.Helper()
	b, err := os.ReadFile("prometheus/alertrouter-mixin/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []mixinRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	var rules []mixinRule
	for _, g := range file.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}
