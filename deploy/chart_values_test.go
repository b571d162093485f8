package deploy

// Tests of what users really set in the chart: the Redis topology of
// redis.mode, affinity next to podAntiAffinity, the combinations the router
// refuses at start, extraVolumes, namespaces, and the deploy README's
// commands (check-config on a workstation, helm template with a fixed
// Redis password) run as written.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

// redisTopology is the Redis deployment a store.redis section selects, as
// the router decides it (store/config.go: master_name → Sentinel; cluster:
// true or several addrs → Cluster; else one node).
func redisTopology(addrs []string, masterName string, cluster bool) string {
	switch {
	case masterName != "":
		return "sentinel"
	case cluster || len(addrs) > 1:
		return "cluster"
	default:
		return "single"
	}
}

// Finding: redis.mode external with a primary and its replica rendered two
// addrs, which the router takes for Redis Cluster seed nodes (never ready).
// The chart says the topology by the mode and refuses the ambiguity.
func TestHelmRedisModeIsTheTopologyTheRouterUses(t *testing.T) {
	refused(t, "redis.mode external is one Redis node, but redis.addrs lists 2 addresses (primary:6379, replica:6379)",
		sets("redis.mode=external", "redis.addrs={primary:6379,replica:6379}")...)
	refused(t, "for Redis Cluster set redis.mode cluster",
		sets("redis.mode=external", "redis.addrs={a:6379,b:6379,c:6379}")...)

	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"external", sets("redis.mode=external", "redis.addrs={primary:6379}"), "single"},
		{"bundled", nil, "single"},
		{"cluster, one seed", sets("redis.mode=cluster", "redis.addrs={seed:6379}"), "cluster"},
		{"cluster, several seeds", sets("redis.mode=cluster", "redis.addrs={a:6379,b:6379}"), "cluster"},
		{"sentinel", sets("redis.mode=sentinel", "redis.masterName=m", "redis.addrs={s0:26379,s1:26379,s2:26379}"), "sentinel"},
	} {
		out, m := render(t, chartCases[0], tc.extra...)
		if errs := validate(t, out); errs != "" {
			t.Errorf("%s: invalid manifests:\n%s", tc.name, errs)
		}
		r := routerConfig(t, m, "alertrouter").Store.Redis
		if r == nil {
			t.Fatalf("%s: no store.redis", tc.name)
		}
		if got := redisTopology(r.Addrs, r.MasterName, r.Cluster); got != tc.want {
			t.Errorf("%s: the router would use %s Redis (addrs %v, master_name %q, cluster %v), want %s", tc.name, got, r.Addrs, r.MasterName, r.Cluster, tc.want)
		}
		// Cluster is said, never implied by the number of addrs.
		if tc.want == "cluster" && !r.Cluster {
			t.Errorf("%s: store.redis has no cluster: true", tc.name)
		}
	}
}

// antiAffinity returns the rendered pod's affinity.
func podAffinity(t *testing.T, extra ...string) (map[interface{}]interface{}, []byte) {
	t.Helper()
	out, m := render(t, chartCases[0], extra...)
	if errs := validate(t, out); errs != "" {
		t.Fatalf("invalid manifests with %v:\n%s", extra, errs)
	}
	a, _ := get(m["Deployment/alertrouter"], "spec", "template", "spec", "affinity").(map[interface{}]interface{})
	return a, out
}

// Finding: an affinity value (a nodeAffinity to a node pool) replaced the
// chart's anti-affinity, so both replicas could land on one node.
func TestHelmAffinityKeepsTheReplicasApart(t *testing.T) {
	nodeAffinity := `affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions: [{key: node-pool, operator: In, values: [monitoring]}]
`
	chartTerm := func(a map[interface{}]interface{}) string {
		return fmt.Sprint(get(a, "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "podAffinityTerm", "topologyKey"), " ",
			get(a, "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "podAffinityTerm", "labelSelector", "matchLabels", "app.kubernetes.io/component"))
	}
	// The default: the chart's anti-affinity alone.
	a, _ := podAffinity(t)
	if got := chartTerm(a); got != "kubernetes.io/hostname router" || len(a) != 1 {
		t.Errorf("default affinity = %v, want the chart's podAntiAffinity by hostname", a)
	}
	// A nodeAffinity of the user's: both.
	a, _ = podAffinity(t, valuesFile(t, nodeAffinity)...)
	if got := chartTerm(a); got != "kubernetes.io/hostname router" {
		t.Errorf("with a nodeAffinity, affinity = %v: the chart's podAntiAffinity is gone", a)
	}
	if got := str(get(a, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0, "matchExpressions", 0, "key")); got != "node-pool" {
		t.Errorf("with a nodeAffinity, affinity = %v: the user's nodeAffinity is gone", a)
	}
	// A podAntiAffinity of the user's wins.
	a, _ = podAffinity(t, valuesFile(t, nodeAffinity+`  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: topology.kubernetes.io/zone
        labelSelector:
          matchLabels: {app.kubernetes.io/name: alertrouter}
`)...)
	if got := str(get(a, "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", 0, "topologyKey")); got != "topology.kubernetes.io/zone" || get(a, "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution") != nil {
		t.Errorf("the user's podAntiAffinity should replace the chart's: %v", a)
	}
	if get(a, "nodeAffinity") == nil {
		t.Errorf("the user's nodeAffinity is gone: %v", a)
	}
	// podAntiAffinity: false drops the chart's.
	a, _ = podAffinity(t, append(valuesFile(t, nodeAffinity), sets("podAntiAffinity=false")...)...)
	if get(a, "podAntiAffinity") != nil || get(a, "nodeAffinity") == nil {
		t.Errorf("podAntiAffinity=false with a nodeAffinity: affinity = %v, want the nodeAffinity alone", a)
	}
	if a, _ = podAffinity(t, sets("podAntiAffinity=false")...); a != nil {
		t.Errorf("podAntiAffinity=false and no affinity: affinity = %v, want none", a)
	}
}

// Finding: the deploy files cap a webhook at 4 MiB, a size README.md's
// "leave max_alerts at 0" does not hold with; a 413 is never retried.
func TestDeployBodyCapGoesWithABoundedMaxAlerts(t *testing.T) {
	b, err := os.ReadFile("alertmanager.yml")
	if err != nil {
		t.Fatal(err)
	}
	var am struct {
		Receivers []struct {
			WebhookConfigs []struct {
				MaxAlerts int `yaml:"max_alerts"`
			} `yaml:"webhook_configs"`
		} `yaml:"receivers"`
	}
	if err := yaml.Unmarshal(b, &am); err != nil || len(am.Receivers) != 1 || len(am.Receivers[0].WebhookConfigs) != 1 {
		t.Fatalf("alertmanager.yml: %v %+v", err, am)
	}
	maxAlerts := am.Receivers[0].WebhookConfigs[0].MaxAlerts
	const routerDefault = 64 << 20
	bodies := map[string]int64{"kustomize base": routerConfig(t, kustomize(t, "kubernetes/base"), "alertrouter").Webhook.MaxBodyBytes}
	for _, c := range chartCases {
		_, m := render(t, c)
		bodies["chart "+c.name] = routerConfig(t, m, "alertrouter").Webhook.MaxBodyBytes
	}
	for what, body := range bodies {
		if body >= routerDefault {
			continue
		}
		// Below the router's own default, Alertmanager must bound the
		// payload, and the bound must fit (4 KB an alert).
		if maxAlerts == 0 || int64(maxAlerts)*4096 > body {
			t.Errorf("%s: webhook.max_body_bytes %d with alertmanager.yml max_alerts %d: a larger group is answered 413, which Alertmanager never retries", what, body, maxAlerts)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**This cap needs `max_alerts` in Alertmanager.**",
		"Alertmanager never retries a 4xx",
		"README.md's \"leave `max_alerts` at 0\" holds with the router's own 64 MiB",
		"Do not set it to 0 with these deploy files",
	} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("deploy/README.md does not say %q", want)
		}
	}
}

// helmLine returns the README block's `helm template` command (its
// continuation lines joined) with helm's path and the chart's absolute
// path put in.
func helmLine(t *testing.T, block string) string {
	t.Helper()
	_, after, ok := strings.Cut(block, "helm template ")
	if !ok {
		t.Fatalf("no `helm template` command in %q", block)
	}
	var lines []string
	for _, l := range strings.Split(after, "\n") {
		lines = append(lines, strings.TrimSuffix(l, "\\"))
		if !strings.HasSuffix(l, "\\") {
			break
		}
	}
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := helm(t) + " template " + strings.Join(lines, " ")
	return strings.ReplaceAll(cmd, "deploy/helm/alertrouter", chart)
}

// Finding: with helm template (Argo CD) the bundled Redis' password is
// generated anew on each render. deploy/README.md says so, and its
// command with redis.passwordKey renders the same objects every time.
func TestHelmTemplateWithAPasswordKeyKeepsTheRedisPassword(t *testing.T) {
	// The hazard the README describes: without passwordKey, two renders
	// generate two passwords.
	_, a := render(t, chartCases[0])
	_, b := render(t, chartCases[0])
	if pw := str(get(a["Secret/alertrouter-redis"], "data", "redis-password")); pw == "" || pw == str(get(b["Secret/alertrouter-redis"], "data", "redis-password")) {
		t.Errorf("two helm template renders of the default values give the Redis password %q and %q: want a new one each (no cluster to look up), the hazard deploy/README.md describes",
			pw, str(get(b["Secret/alertrouter-redis"], "data", "redis-password")))
	}
	block := fencedBlock(t, "**The bundled Redis' generated password and `helm template`.**", "sh")
	cmd := helmLine(t, block)
	if !strings.Contains(cmd, "redis.passwordKey=") {
		t.Fatalf("the README's helm template command sets no redis.passwordKey: %s", cmd)
	}
	renderDoc := func() []byte {
		out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("the README's command %s: %v\n%s", cmd, err, out)
		}
		return out
	}
	first, second := renderDoc(), renderDoc()
	if !bytes.Equal(first, second) {
		t.Error("the README's helm template command with redis.passwordKey renders differently each time")
	}
	if errs := validate(t, first); errs != "" {
		t.Errorf("invalid manifests:\n%s", errs)
	}
	docs, err := decodeAll(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if str(d["kind"]) == "Secret" && str(get(d, "metadata", "name")) == "alertrouter-redis" {
			t.Error("with redis.passwordKey the chart still generates the Secret alertrouter-redis")
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile("(?s)`redis.bundled` \\|[^\n]*Argo CD[^\n]*`redis.passwordKey`").Match(readme) {
		t.Error("deploy/README.md's redis.bundled row does not tell Argo CD / helm template users to set redis.passwordKey")
	}
}

// Finding: the chart rendered combinations the router refuses at start;
// helm install succeeded and the pods crash-looped. Refused at render now,
// naming the values.
func TestHelmRefusesWhatTheRouterRefusesAtStart(t *testing.T) {
	users := valuesFile(t, "webConfig:\n  basic_auth_users:\n    prometheus: $2y$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W\n"+
		"probes:\n  httpHeaders:\n    - name: Authorization\n      value: Basic cHJvbWV0aGV1czpSRVBMQUNFX01F\n")
	triage := valuesFile(t, `config:
  route: {receiver: slack-triage}
  receivers:
    - name: slack-triage
      slack_configs:
        - token_file: /etc/alertrouter/secrets/slack-token
          channel: "#alerts-triage"
          signing_secret_file: /etc/alertrouter/secrets/slack-signing-secret
          actions: [ack, escalate]
          escalate_to: pagerduty
    - name: pagerduty
      pagerduty_configs:
        - routing_key_file: /etc/alertrouter/secrets/pagerduty-routing-key
`)
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"basic_auth_users + bearer token", append(append([]string{}, users...), sets("config.auth.bearer_token_file=/etc/alertrouter/secrets/webhook-token")...),
			"webConfig.basic_auth_users (prometheus) cannot work with config.auth.bearer_token_file"},
		{"basic_auth_users + Slack triage", append(append([]string{}, users...), triage...),
			"config.receivers[0].slack_configs[0].actions: Slack triage cannot work with webConfig.basic_auth_users"},
		{"basic_auth_users + another auth.basic_auth user", append(append([]string{}, users...), sets("config.auth.basic_auth.username=am", "config.auth.basic_auth.password_file=/etc/alertrouter/secrets/am")...),
			`config.auth.basic_auth.username "am" is not one of webConfig.basic_auth_users`},
		{"basic_auth_users + console.auth of another user", append(append([]string{}, users...), sets("config.console.auth.basic_auth.username=ops", "config.console.auth.basic_auth.password_file=/etc/alertrouter/secrets/ops")...),
			`config.console.auth.basic_auth.username "ops" is not one of webConfig.basic_auth_users`},
		{"cluster + db 1", sets("redis.mode=cluster", "redis.addrs={seed:6379}", "redis.db=1"),
			"redis.db 1: Redis Cluster has only db 0"},
		{"extraArgs --web.shutdown-delay=", sets("extraArgs={--log.format=json,--web.shutdown-delay=10s}"),
			`extraArgs "--web.shutdown-delay=10s": the chart sets --web.shutdown-delay itself (from shutdownDelay)`},
		{"extraArgs --web.shutdown-delay VALUE", sets("extraArgs={--web.shutdown-delay,10s}"),
			`extraArgs "--web.shutdown-delay": the chart sets --web.shutdown-delay itself`},
		{"extraArgs --config.file", sets("extraArgs={--config.file=/tmp/other.yml}"),
			"the chart sets --config.file itself"},
		{"extraArgs --web.config.file", sets("extraArgs={--web.config.file=/etc/alertrouter/secrets/web.yml}"),
			"the chart sets --web.config.file itself (from webConfig)"},
	} {
		t.Run(tc.name, func(t *testing.T) { refused(t, tc.want, tc.extra...) })
	}

	// What the router accepts still renders: basic_auth_users with
	// auth.basic_auth of one of them, and a second listener.
	out, m := render(t, chartCases[0], append(append([]string{}, users...),
		sets("config.auth.basic_auth.username=prometheus", "config.auth.basic_auth.password_file=/etc/alertrouter/secrets/pw",
			"secrets.existingSecret=alertrouter-secrets", "extraArgs={--log.format=json,--web.listen-address=:9096}")...)...)
	if errs := validate(t, out); errs != "" {
		t.Errorf("invalid manifests:\n%s", errs)
	}
	if err := servesTogether(routerConfig(t, m, "alertrouter"), m); err != nil {
		t.Errorf("the router would refuse this rendering: %v", err)
	}
	args := argList(container(t, m["Deployment/alertrouter"], "router"), "args")
	if n := strings.Count(strings.Join(args, " "), "--web.shutdown-delay="); n != 1 {
		t.Errorf("args %v carry --web.shutdown-delay %d times, want once", args, n)
	}
	_, m = render(t, chartCases[0], sets("redis.mode=cluster", "redis.addrs={seed:6379}", "redis.db=0")...)
	if r := routerConfig(t, m, "alertrouter").Store.Redis; r == nil || r.DB != 0 || !r.Cluster {
		t.Errorf("cluster with db 0: store.redis = %+v", r)
	}
}

// Finding: deploy/README.md's pre-ship check-config needed the secrets at
// /etc/alertrouter. Its commands, as written, pass on a workstation: on
// the kustomize base's router.yml and on the chart's rendered ones.
func TestDeployReadmeCheckConfigRunsOnAWorkstation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building the router")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "router"), "./cmd/router")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/router: %v\n%s", err, out)
	}
	check := fencedBlock(t, "<!-- check-config-example -->", "sh")
	if !strings.Contains(check, "router check-config") {
		t.Fatalf("the check-config block runs no check-config: %s", check)
	}
	runCheck := func(t *testing.T, dir string) string {
		t.Helper()
		cmd := exec.Command("sh", "-e", "-c", check)
		cmd.Dir = dir
		tmp := t.TempDir()
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("deploy/README.md's check-config commands in %s: %v\n%s", dir, err, out)
		}
		// Placeholders only for the paths the config names, not for a
		// path a comment mentions ("mounted at /etc/alertrouter/secrets.":
		// an audit found a file "secrets." made).
		_ = filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".") {
				t.Errorf("the commands made a placeholder %s, for a path of a comment", path)
			}
			return nil
		})
		return string(out)
	}
	t.Run("kustomize base", func(t *testing.T) {
		out := runCheck(t, "kubernetes/base")
		// The config loaded (rc 0) and --test-route ran: the base routes
		// pages to PagerDuty and the triage channel.
		if !strings.Contains(out, "pagerduty,slack-triage") {
			t.Errorf("check-config on the base's router.yml:\n%s\nwant the page's receivers pagerduty,slack-triage", out)
		}
	})
	// The chart: the README's helm line extracts router.yml.
	helmBlock := fencedBlock(t, "take the rendered `router.yml` first", "sh")
	for _, c := range chartCases[:3] { // the cluster example's Redis CA must be a real PEM file
		t.Run("chart "+c.name, func(t *testing.T) {
			dir := t.TempDir()
			line := helmLine(t, helmBlock)
			vals := "--set replicaCount=2"
			if c.values != "" {
				abs, err := filepath.Abs(filepath.Join(chartDir, c.values))
				if err != nil {
					t.Fatal(err)
				}
				vals = "-f " + abs
			}
			line = strings.Replace(line, "-f my-values.yaml", vals, 1)
			cmd := exec.Command("sh", "-e", "-c", line)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "router.yml")); err != nil {
				t.Fatal(err)
			}
			if out := runCheck(t, dir); !strings.Contains(out, "decision=page") {
				t.Errorf("check-config on the chart's rendered router.yml:\n%s", out)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Finding: no way to mount templates or a second Secret (a cert-manager
// TLS Secret, a Redis CA) in the chart.
func TestHelmExtraVolumesAreMountedInTheRouter(t *testing.T) {
	vals := `config:
  templates: [/etc/alertrouter/templates/*.tmpl]
extraVolumes:
  - name: templates
    configMap:
      name: alertrouter-templates
  - name: tls
    secret:
      secretName: alertrouter-tls
      defaultMode: 0440
extraVolumeMounts:
  - name: templates
    mountPath: /etc/alertrouter/templates
    readOnly: true
  - name: tls
    mountPath: /etc/alertrouter/tls
    readOnly: true
`
	out, m := render(t, chartCases[0], valuesFile(t, vals)...)
	if errs := validate(t, out); errs != "" {
		t.Fatalf("invalid manifests with extraVolumes:\n%s", errs)
	}
	d := m["Deployment/alertrouter"]
	vols := map[string]interface{}{}
	for _, v := range get(d, "spec", "template", "spec", "volumes").([]interface{}) {
		vols[str(get(v, "name"))] = v
	}
	if str(get(vols["templates"], "configMap", "name")) != "alertrouter-templates" || str(get(vols["tls"], "secret", "secretName")) != "alertrouter-tls" || vols["config"] == nil {
		t.Errorf("pod volumes = %v, want the chart's and templates, tls", vols)
	}
	mounts := map[string]string{}
	for _, vm := range get(container(t, d, "router"), "volumeMounts").([]interface{}) {
		mounts[str(get(vm, "mountPath"))] = str(get(vm, "name"))
	}
	if mounts["/etc/alertrouter/templates"] != "templates" || mounts["/etc/alertrouter/tls"] != "tls" || mounts["/etc/alertrouter/router.yml"] != "config" {
		t.Errorf("router mounts = %v", mounts)
	}
	if got := routerConfig(t, m, "alertrouter").Templates; len(got) != 1 || got[0] != "/etc/alertrouter/templates/*.tmpl" {
		t.Errorf("config.templates = %v", got)
	}
	// None by default.
	_, m = render(t, chartCases[0])
	if n := len(get(m["Deployment/alertrouter"], "spec", "template", "spec", "volumes").([]interface{})); n != 2 {
		t.Errorf("default pod has %d volumes, want the chart's 2 (config, redis-auth)", n)
	}

	refused(t, `extraVolumes: the volume name "config" is the chart's own`, "--set-json", `extraVolumes=[{"name":"config","emptyDir":{}}]`)
	refused(t, "extraVolumeMounts: mountPath /etc/alertrouter/secrets/ is where the chart mounts its own files",
		"--set-json", `extraVolumes=[{"name":"x","emptyDir":{}}]`, "--set-json", `extraVolumeMounts=[{"name":"x","mountPath":"/etc/alertrouter/secrets/"}]`)
	refused(t, `extraVolumeMounts: /etc/alertrouter/x mounts volume "y", which extraVolumes does not define`,
		"--set-json", `extraVolumeMounts=[{"name":"y","mountPath":"/etc/alertrouter/x"}]`)
	refused(t, "additional properties 'mountpath' not allowed", "--set-json", `extraVolumeMounts=[{"name":"y","mountpath":"/x"}]`)
	refused(t, "at '/extraVolumeMounts/0/mountPath'", "--set-json", `extraVolumes=[{"name":"x","emptyDir":{}}]`, "--set-json", `extraVolumeMounts=[{"name":"x","mountPath":"relative"}]`)
	// kubecheck catches two mounts at one path, as the API server would.
	twice, _ := render(t, chartCases[0], "--set-json", `extraVolumes=[{"name":"a","emptyDir":{}},{"name":"b","emptyDir":{}}]`,
		"--set-json", `extraVolumeMounts=[{"name":"a","mountPath":"/etc/alertrouter/x"},{"name":"b","mountPath":"/etc/alertrouter/x"}]`)
	if errs := validate(t, twice); !strings.Contains(errs, "mounts two volumes at /etc/alertrouter/x") {
		t.Errorf("kubecheck on two mounts at one path: %q", errs)
	}
}

// Finding (cosmetic): the kustomize base pulled :latest, which section 0
// never pushes; the chart's objects had no namespace, so `helm template -n
// NS | kubectl apply -f -` landed in the current one; the base's comment
// offered SIGHUP for a subPath-mounted config, which is never refreshed.
func TestDeployNamespaceImageTagAndReloadComment(t *testing.T) {
	mm := pushedTag.FindSubmatch(mustRead(t, "README.md"))
	if mm == nil {
		t.Fatal("deploy/README.md has no `docker push IMAGE:TAG` line")
	}
	base := kustomize(t, "kubernetes/base")
	if got, want := str(get(container(t, base["Deployment/alertrouter"], "router"), "image")), "registry.example.com/alertrouter/alertrouter:"+string(mm[1]); got != want {
		t.Errorf("kustomize base image = %q, want %q, the tag deploy/README.md pushes", got, want)
	}

	// Every object of every chart rendering, optional ones included.
	all := sets("networkPolicy.enabled=true", "serviceMonitor.enabled=true", "prometheusRule.enabled=true", "secrets.files.x=y")
	for _, c := range chartCases {
		out, m := render(t, c, all...)
		if errs := validate(t, out); errs != "" {
			t.Errorf("%s: invalid manifests:\n%s", c.name, errs)
		}
		for k, o := range m {
			if got := str(get(o, "metadata", "namespace")); got != "monitoring" {
				t.Errorf("%s: %s has metadata.namespace %q, want the release's, monitoring", c.name, k, got)
			}
		}
	}

	k := string(mustRead(t, "kubernetes/base/kustomization.yaml"))
	if strings.Contains(k, "SIGHUP") && !strings.Contains(k, "subPath") {
		t.Error("kubernetes/base/kustomization.yaml offers SIGHUP for a config the kubelet never refreshes (subPath)")
	}
	if regexp.MustCompile(`(?m)^#\s+kubectl apply -k deploy/kubernetes/base\b`).MatchString(k) {
		t.Error("kubernetes/base/kustomization.yaml suggests applying the base, with its placeholder Secret")
	}
}
