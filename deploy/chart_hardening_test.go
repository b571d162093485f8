package deploy

// Tests of the deployment hardening: the bundled Redis' password,
// noeviction and NetworkPolicy, the router's opt-in NetworkPolicy and the
// Ingress guidance, memory sizing of config.webhook, the chart's refusals
// (inline secrets, probes behind basic auth or client certificates, PDBs
// that block drains, digests as tags) and kubecheck's extra rules.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/prometheus/exporter-toolkit/web"
)

// refused runs helm template on the default values plus extra and wants
// it to fail saying want.
func refused(t *testing.T, want string, extra ...string) {
	t.Helper()
	out, err := exec.Command(helm(t), chartCases[0].args(extra...)...).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte(want)) {
		t.Errorf("helm template %v: err %v, output %s; want a failure saying %q", extra, err, out, want)
	}
}

// valuesFile writes a values file and returns the "-f FILE" arguments.
func valuesFile(t *testing.T, content string) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"-f", f}
}

func sets(kv ...string) []string {
	var out []string
	for _, s := range kv {
		out = append(out, "--set", s)
	}
	return out
}

// routerConfig parses the router.yml of a rendering's ConfigMap (the one
// the router Deployment mounts).
func routerConfig(t *testing.T, m manifests, deployment string) *config.Config {
	t.Helper()
	var cmName string
	vols, _ := get(m["Deployment/"+deployment], "spec", "template", "spec", "volumes").([]interface{})
	for _, v := range vols {
		if str(get(v, "name")) == "config" {
			cmName = str(get(v, "configMap", "name"))
		}
	}
	cm := m["ConfigMap/"+cmName]
	if cm == nil {
		t.Fatalf("Deployment %s mounts ConfigMap %q, which is not rendered", deployment, cmName)
	}
	cfg, err := config.Parse([]byte(str(get(cm, "data", "router.yml"))), "/etc/alertrouter")
	if err != nil {
		t.Fatalf("router.yml does not load: %v", err)
	}
	return cfg
}

// quantity parses the Kubernetes memory quantities the deploy files use.
func quantity(t *testing.T, q string) int64 {
	t.Helper()
	units := []struct {
		suffix string
		mul    int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"", 1}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(q, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("memory quantity %q: %v", q, err)
			}
			return v * u.mul
		}
	}
	t.Fatalf("memory quantity %q", q)
	return 0
}

// redisBytes parses a Redis memory setting (100mb).
func redisBytes(t *testing.T, v string) int64 {
	t.Helper()
	m := regexp.MustCompile(`^([0-9]+)(b|k|kb|m|mb|g|gb)?$`).FindStringSubmatch(strings.ToLower(v))
	if m == nil {
		t.Fatalf("redis memory %q", v)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n * map[string]int64{"": 1, "b": 1, "k": 1e3, "kb": 1 << 10, "m": 1e6, "mb": 1 << 20, "g": 1e9, "gb": 1 << 30}[m[2]]
}

func argList(c interface{}, key string) []string {
	l, _ := get(c, key).([]interface{})
	out := make([]string, len(l))
	for i, a := range l {
		out[i] = str(a)
	}
	return out
}

// argAfter returns the argument after flag in args.
func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// checkBundledRedis checks a Redis Deployment, its NetworkPolicy and the
// router pods it must admit, and returns the Secret name and key Redis
// reads its password from.
func checkBundledRedis(t *testing.T, m manifests, redisName, routerName string) (secret, key string) {
	t.Helper()
	d := m["Deployment/"+redisName]
	if d == nil {
		t.Fatalf("no Deployment %s", redisName)
	}
	c := container(t, d, "redis")
	args := argList(c, "args")
	if got := argAfter(args, "--maxmemory-policy"); got != "noeviction" {
		t.Errorf("Redis --maxmemory-policy = %q, want noeviction: an evicting policy drops dedup claims and markers (volatile-ttl the claims first)", got)
	}
	maxmem := argAfter(args, "--maxmemory")
	limit := str(get(c, "resources", "limits", "memory"))
	if maxmem == "" || limit == "" {
		t.Fatalf("Redis --maxmemory %q, memory limit %q: want both", maxmem, limit)
	}
	if mm, l := redisBytes(t, maxmem), quantity(t, limit); mm == 0 || 2*mm > l {
		t.Errorf("Redis --maxmemory %s in a %s limit: want it set and at most half (an AOF rewrite forks, copy-on-write can double it)", maxmem, limit)
	}
	script := strings.Join(argList(c, "command"), " ")
	if !strings.Contains(script, "requirepass") || !strings.Contains(script, "/etc/redis-auth/redis-password") {
		t.Errorf("Redis command %q does not set requirepass from /etc/redis-auth/redis-password", script)
	}
	if probe := strings.Join(argList(get(c, "readinessProbe", "exec"), "command"), " "); !strings.Contains(probe, "REDISCLI_AUTH") {
		t.Errorf("Redis readiness probe %q does not authenticate", probe)
	}
	vols, _ := get(d, "spec", "template", "spec", "volumes").([]interface{})
	for _, v := range vols {
		if str(get(v, "name")) == "auth" {
			secret = str(get(v, "secret", "secretName"))
			if str(get(v, "secret", "items", 0, "path")) != "redis-password" {
				t.Errorf("Redis auth volume %v does not put the key at redis-password", v)
			}
			key = str(get(v, "secret", "items", 0, "key"))
		}
	}
	if secret == "" || key == "" {
		t.Fatalf("Redis mounts no password Secret (volume auth): %v", vols)
	}

	np := m["NetworkPolicy/"+redisName]
	if np == nil {
		t.Fatalf("no NetworkPolicy %s: anyone in the cluster can reach Redis", redisName)
	}
	redisPods := get(d, "spec", "template", "metadata", "labels")
	routerPods := get(m["Deployment/"+routerName], "spec", "template", "metadata", "labels")
	if !selects(get(np, "spec", "podSelector", "matchLabels"), redisPods) {
		t.Errorf("NetworkPolicy %s does not select the Redis pods %v", redisName, redisPods)
	}
	if got := fmt.Sprint(get(np, "spec", "policyTypes")); got != "[Ingress]" {
		t.Errorf("NetworkPolicy %s policyTypes = %s, want [Ingress]", redisName, got)
	}
	ingress, _ := get(np, "spec", "ingress").([]interface{})
	from, _ := get(ingress, 0, "from").([]interface{})
	if len(ingress) != 1 || len(from) != 1 || get(from[0], "namespaceSelector") != nil || get(from[0], "ipBlock") != nil ||
		!selects(get(from[0], "podSelector", "matchLabels"), routerPods) || selects(get(from[0], "podSelector", "matchLabels"), redisPods) {
		t.Errorf("NetworkPolicy %s admits %v; want the router pods %v alone", redisName, ingress, routerPods)
	}
	if p := str(get(ingress, 0, "ports", 0, "port")); p != "redis" && p != "6379" {
		t.Errorf("NetworkPolicy %s port = %s, want Redis' port", redisName, p)
	}
	return secret, key
}

// secretMount returns the Secret a router volume mounted at dir comes from.
func secretMount(t *testing.T, d map[string]interface{}, dir string) string {
	t.Helper()
	var vol string
	mounts, _ := get(container(t, d, "router"), "volumeMounts").([]interface{})
	for _, vm := range mounts {
		if str(get(vm, "mountPath")) == dir {
			vol = str(get(vm, "name"))
			if get(vm, "subPath") != nil {
				t.Errorf("%s is mounted with subPath: a rotated Secret would never reach it", dir)
			}
		}
	}
	vols, _ := get(d, "spec", "template", "spec", "volumes").([]interface{})
	for _, v := range vols {
		if str(get(v, "name")) == vol && vol != "" {
			return str(get(v, "secret", "secretName"))
		}
	}
	return ""
}

func TestHelmBundledRedisRequiresAPasswordAndAdmitsOnlyTheRouter(t *testing.T) {
	// Generated password: a Secret <fullname>-redis, read by Redis and
	// mounted in the router at the password_file of router.yml.
	out, m := render(t, chartCases[0])
	if errs := validate(t, out); errs != "" {
		t.Fatalf("invalid manifests:\n%s", errs)
	}
	secret, key := checkBundledRedis(t, m, "alertrouter-redis", "alertrouter")
	if secret != "alertrouter-redis" || key != "redis-password" {
		t.Errorf("bundled Redis reads its password from %s/%s, want the generated alertrouter-redis/redis-password", secret, key)
	}
	s := m["Secret/alertrouter-redis"]
	if pw := str(get(s, "data", "redis-password")); len(pw) < 40 {
		t.Errorf("generated Secret alertrouter-redis holds redis-password %q: want 32 random characters, base64", pw)
	}
	cfg := routerConfig(t, m, "alertrouter")
	dir, file := filepath.Split(cfg.Store.Redis.PasswordFile)
	if file != "redis-password" || secretMount(t, m["Deployment/alertrouter"], strings.TrimSuffix(dir, "/")) != "alertrouter-redis" {
		t.Errorf("router store.redis.password_file = %q, not the redis-password of a mounted Secret alertrouter-redis", cfg.Store.Redis.PasswordFile)
	}
	// Two renderings (helm template has no cluster to look up) generate
	// different passwords: it is random, not a constant of the chart.
	_, again := render(t, chartCases[0])
	if str(get(again["Secret/alertrouter-redis"], "data", "redis-password")) == str(get(s, "data", "redis-password")) {
		t.Error("two renderings generated the same Redis password: it must be random")
	}

	// A user-given password: redis.passwordKey of the router's Secret, for
	// Redis and router alike; nothing generated.
	_, m = render(t, chartCases[0], sets("secrets.existingSecret=alertrouter-secrets", "redis.passwordKey=redis-pw")...)
	secret, key = checkBundledRedis(t, m, "alertrouter-redis", "alertrouter")
	if secret != "alertrouter-secrets" || key != "redis-pw" {
		t.Errorf("with redis.passwordKey, Redis reads %s/%s, want alertrouter-secrets/redis-pw", secret, key)
	}
	if m["Secret/alertrouter-redis"] != nil {
		t.Error("with redis.passwordKey the chart still generates a Redis password Secret")
	}
	if got := routerConfig(t, m, "alertrouter").Store.Redis.PasswordFile; got != "/etc/alertrouter/secrets/redis-pw" {
		t.Errorf("router password_file = %q, want /etc/alertrouter/secrets/redis-pw", got)
	}

	// External Redis: no Redis objects of the chart at all.
	_, m = render(t, chartCases[0], sets("redis.mode=external", "redis.addrs={r:6379}")...)
	for _, k := range []string{"Secret/alertrouter-redis", "NetworkPolicy/alertrouter-redis", "Deployment/alertrouter-redis"} {
		if m[k] != nil {
			t.Errorf("redis.mode external renders %s", k)
		}
	}
	refused(t, "redis.username: the bundled Redis has only its default user", "--set", "redis.username=router")
}

func TestHelmBundledRedisNeverEvictsAndFitsItsLimit(t *testing.T) {
	refused(t, "redis.bundled.maxmemory 600mb is more than half of redis.bundled.resources.limits.memory 1Gi", "--set", "redis.bundled.maxmemory=600mb")
	refused(t, "redis.bundled.maxmemory: 0 is no limit", "--set-string", "redis.bundled.maxmemory=0")
	refused(t, "at '/redis/bundled/maxmemory'", "--set", "redis.bundled.maxmemory=lots")
	// The policy is not a value: no way to set an evicting one.
	refused(t, "additional properties 'maxmemoryPolicy' not allowed", "--set", "redis.bundled.maxmemoryPolicy=volatile-ttl")
	_, m := render(t, chartCases[0], sets("redis.bundled.maxmemory=300mb", "redis.bundled.resources.limits.memory=1Gi")...)
	if got := argAfter(argList(container(t, m["Deployment/alertrouter-redis"], "redis"), "args"), "--maxmemory"); got != "300mb" {
		t.Errorf("--maxmemory = %q, want the 300mb set", got)
	}
	// The default holds a 100k-alert storm (~1 KB per alert kept, plus the
	// journal: deploy/README.md section 1); 100mb did not, and a full
	// Redis refused the writes after delivery, so repeats paged again.
	_, m = render(t, chartCases[0])
	if got := argAfter(argList(container(t, m["Deployment/alertrouter-redis"], "redis"), "args"), "--maxmemory"); redisBytes(t, got) < 400<<20 {
		t.Errorf("default --maxmemory = %q, want room for a 100k-alert storm and the journal (≥ 400mb)", got)
	}
}

// The Redis start script and readiness probe, run for real: Redis refuses
// unauthenticated clients, the probe authenticates (a password with
// quotes, backslashes, spaces and $ survives the quoting), and the policy
// is noeviction.
func TestBundledRedisStartScriptRequiresThePassword(t *testing.T) {
	redisServer := tool(t, "redis-server")
	redisCLI := tool(t, "redis-cli")
	_, hm := render(t, chartCases[0])
	km := kustomize(t, "kubernetes/base")
	for name, d := range map[string]map[string]interface{}{"helm": hm["Deployment/alertrouter-redis"], "kustomize": km["Deployment/alertrouter-redis"]} {
		t.Run(name, func(t *testing.T) {
			c := container(t, d, "redis")
			dir := t.TempDir()
			for _, sub := range []string{"auth", "run", "data"} {
				if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			const password = `p a"s\s$x'`
			if err := os.WriteFile(filepath.Join(dir, "auth", "redis-password"), []byte(password+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			paths := strings.NewReplacer("/etc/redis-auth", filepath.Join(dir, "auth"), "/run/redis", filepath.Join(dir, "run"))
			var argv []string
			for _, a := range append(argList(c, "command"), argList(c, "args")...) {
				argv = append(argv, paths.Replace(a))
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
			l.Close()
			argv = append(argv, "--port", port, "--bind", "127.0.0.1")
			// redis-server and redis-cli from PATH, as in the image.
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = filepath.Join(dir, "data")
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(redisServer)+":"+filepath.Dir(redisCLI)+":"+os.Getenv("PATH"))
			var logs bytes.Buffer
			cmd.Stdout, cmd.Stderr = &logs, &logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

			probe := argList(get(c, "readinessProbe", "exec"), "command")
			probe[len(probe)-1] = paths.Replace(probe[len(probe)-1])
			probe[len(probe)-1] = strings.Replace(probe[len(probe)-1], "redis-cli ping", "redis-cli -p "+port+" ping", 1)
			ready := false
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				p := exec.Command(probe[0], probe[1:]...)
				p.Env = cmd.Env
				if p.Run() == nil {
					ready = true
					break
				}
			}
			if !ready {
				t.Fatalf("the readiness probe %q never passed; redis-server said:\n%s", probe, logs.String())
			}
			if out, _ := exec.Command(redisCLI, "-p", port, "ping").CombinedOutput(); !bytes.Contains(out, []byte("NOAUTH")) {
				t.Errorf("an unauthenticated PING got %q, want NOAUTH", out)
			}
			if out, _ := exec.Command(redisCLI, "-p", port, "set", "alertrouter:claim", "forged").CombinedOutput(); !bytes.Contains(out, []byte("NOAUTH")) {
				t.Errorf("an unauthenticated SET got %q, want NOAUTH", out)
			}
			cli := exec.Command(redisCLI, "-p", port, "config", "get", "maxmemory-policy")
			cli.Env = append(os.Environ(), "REDISCLI_AUTH="+password)
			if out, err := cli.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("noeviction")) {
				t.Errorf("CONFIG GET maxmemory-policy: %v %q, want noeviction", err, out)
			}
			if fi, err := os.Stat(filepath.Join(dir, "run", "redis.conf")); err != nil {
				t.Error(err)
			} else if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("redis.conf holds the password with mode %v; want it readable by its owner only", fi.Mode())
			}
		})
	}
}

func TestKustomizeExampleRedisRequiresAPasswordAndAdmitsOnlyTheRouter(t *testing.T) {
	m := kustomize(t, "kubernetes/base")
	secret, key := checkBundledRedis(t, m, "alertrouter-redis", "alertrouter")
	sec := m["Secret/"+secret]
	if sec == nil {
		t.Fatalf("Redis reads its password from Secret %q, which the base does not render", secret)
	}
	if v := str(get(sec, "stringData", key)); !strings.HasPrefix(v, "REPLACE_ME") {
		t.Errorf("example Secret %s key %s = %q: want a REPLACE_ME placeholder", secret, key, v)
	}
	cfg := routerConfig(t, m, "alertrouter")
	dir, file := filepath.Split(cfg.Store.Redis.PasswordFile)
	if file != key || secretMount(t, m["Deployment/alertrouter"], strings.TrimSuffix(dir, "/")) != secret {
		t.Errorf("router store.redis.password_file = %q, not key %s of the mounted Secret %s Redis reads", cfg.Store.Redis.PasswordFile, key, secret)
	}
	if m["NetworkPolicy/alertrouter"] != nil {
		t.Error("the base renders the router's NetworkPolicy: it is opt-in (components/router-networkpolicy)")
	}
}

// The README's overlay for an external Redis removes every object of the
// example Redis, its NetworkPolicy included.
func TestTheReadmeOverlayDeletesTheWholeExampleRedis(t *testing.T) {
	m := readmeOverlay(t, "")
	for k := range m {
		if strings.HasSuffix(k, "/alertrouter-redis") {
			t.Errorf("the README overlay for an external Redis still renders %s", k)
		}
	}
}

// readmeOverlay renders the README's overlay (plus extra kustomization
// lines) against the base.
func readmeOverlay(t *testing.T, extra string) manifests {
	t.Helper()
	base, err := filepath.Abs("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	k := readmeBlock(t, "<!-- overlay-example -->") + extra
	k = strings.ReplaceAll(k, "../../", filepath.ToSlash(rel)+"/")
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
	return kustomize(t, dir)
}

// checkRouterNetworkPolicy checks a router NetworkPolicy admits exactly
// Alertmanager, Prometheus and the ingress controller to the router port.
func checkRouterNetworkPolicy(t *testing.T, np, router map[string]interface{}) {
	t.Helper()
	if np == nil {
		t.Fatal("no router NetworkPolicy")
	}
	if !selects(get(np, "spec", "podSelector", "matchLabels"), get(router, "spec", "template", "metadata", "labels")) {
		t.Errorf("the NetworkPolicy does not select the router pods")
	}
	from, _ := get(np, "spec", "ingress", 0, "from").([]interface{})
	var names []string
	for _, p := range from {
		names = append(names, str(get(p, "podSelector", "matchLabels", "app.kubernetes.io/name")))
	}
	if got := strings.Join(names, ","); got != "alertmanager,prometheus,ingress-nginx" {
		t.Errorf("the NetworkPolicy admits %s, want alertmanager,prometheus,ingress-nginx", got)
	}
	if got := str(get(np, "spec", "ingress", 0, "ports", 0, "port")); got != "http" {
		t.Errorf("the NetworkPolicy port = %q, want the router's http port", got)
	}
	if got := fmt.Sprint(get(np, "spec", "policyTypes")); got != "[Ingress]" {
		t.Errorf("policyTypes = %s, want [Ingress]", got)
	}
}

func TestRouterNetworkPolicyIsOptIn(t *testing.T) {
	_, m := render(t, chartCases[0])
	if m["NetworkPolicy/alertrouter"] != nil {
		t.Error("the chart renders the router's NetworkPolicy by default: it must be opt-in")
	}
	out, m := render(t, chartCases[0], "--set", "networkPolicy.enabled=true")
	if errs := validate(t, out); errs != "" {
		t.Fatalf("invalid manifests with networkPolicy.enabled:\n%s", errs)
	}
	checkRouterNetworkPolicy(t, m["NetworkPolicy/alertrouter"], m["Deployment/alertrouter"])
	refused(t, "would admit nobody", sets("networkPolicy.enabled=true", "networkPolicy.alertmanager=null", "networkPolicy.prometheus=null", "networkPolicy.ingressController=null")...)

	// kustomize: the component, added as deploy/README.md says.
	km := readmeOverlay(t, "components:\n  - ../../components/router-networkpolicy\n")
	checkRouterNetworkPolicy(t, km["NetworkPolicy/alertrouter"], km["Deployment/alertrouter"])
}

// deploy/README.md's Ingress exposes Slack's two endpoints alone, on the
// router Service's http port.
func TestTheReadmeIngressExposesOnlySlack(t *testing.T) {
	block := readmeBlock(t, "<!-- ingress-example -->")
	if errs := validate(t, []byte(block)); errs != "" {
		t.Fatalf("the README's Ingress is invalid:\n%s", errs)
	}
	docs, err := decodeAll([]byte(block))
	if err != nil || len(docs) != 1 || str(docs[0]["kind"]) != "Ingress" {
		t.Fatalf("the README's example is not one Ingress: %v %v", err, docs)
	}
	_, m := render(t, chartCases[0])
	svc := m["Service/alertrouter"]
	rules, _ := get(docs[0], "spec", "rules").([]interface{})
	var paths []string
	for _, r := range rules {
		ps, _ := get(r, "http", "paths").([]interface{})
		for _, p := range ps {
			paths = append(paths, str(get(p, "path")))
			if str(get(p, "pathType")) != "Exact" || !strings.HasPrefix(str(get(p, "path")), "/slack/") {
				t.Errorf("Ingress path %v: want an Exact path under /slack/", p)
			}
			if be := get(p, "backend", "service"); str(get(be, "name")) != str(get(svc, "metadata", "name")) || str(get(be, "port", "name")) != str(get(svc, "spec", "ports", 0, "name")) {
				t.Errorf("Ingress backend %v is not the router Service's port", be)
			}
		}
	}
	if got := strings.Join(paths, ","); got != "/slack/interactions,/slack/commands" {
		t.Errorf("the Ingress exposes %s, want /slack/interactions and /slack/commands alone", got)
	}
	if get(docs[0], "spec", "defaultBackend") != nil {
		t.Error("the Ingress has a defaultBackend: everything else would be exposed")
	}
}

// The worst case of config.webhook — max_concurrent webhooks of
// max_body_bytes, each peaking at about 16 × its body, over a 64Mi
// baseline — fits the memory limit, in the chart (defaults and examples)
// and the kustomize base; the chart refuses values where it does not.
func TestWebhookWorstCaseFitsTheMemoryLimit(t *testing.T) {
	fits := func(t *testing.T, what string, m manifests) {
		t.Helper()
		cfg := routerConfig(t, m, "alertrouter")
		limit := str(get(container(t, m["Deployment/alertrouter"], "router"), "resources", "limits", "memory"))
		if limit == "" {
			t.Fatalf("%s: the router has no memory limit", what)
		}
		need := 64<<20 + 16*cfg.Webhook.MaxBodyBytes*int64(cfg.Webhook.MaxConcurrent)
		if need > quantity(t, limit) {
			t.Errorf("%s: webhook.max_concurrent %d × max_body_bytes %d needs %d MiB, above the %s limit",
				what, cfg.Webhook.MaxConcurrent, cfg.Webhook.MaxBodyBytes, need>>20, limit)
		}
		// Alertmanager's max_alerts (deploy/alertmanager.yml: 1000) of
		// 4 KB alerts fit in a body: a 413 is not retried.
		if cfg.Webhook.MaxBodyBytes < 4<<20 {
			t.Errorf("%s: webhook.max_body_bytes %d is below 4 MiB (1000 alerts of 4 KB)", what, cfg.Webhook.MaxBodyBytes)
		}
	}
	for _, c := range chartCases {
		_, m := render(t, c)
		fits(t, "chart "+c.name, m)
	}
	fits(t, "kustomize base", kustomize(t, "kubernetes/base"))

	refused(t, "resources.limits.memory 512Mi is too small for config.webhook", "--set", "config.webhook.max_body_bytes=67108864")
	// The router's own defaults (64 MiB × 128) are refused too.
	refused(t, "max_concurrent 128 × max_body_bytes 67108864", "--set", "config.webhook=null")
	refused(t, "resources.limits.memory 256Mi is too small", "--set", "resources.limits.memory=256Mi")
	// A larger limit buys more concurrency.
	_, m := render(t, chartCases[0], sets("resources.limits.memory=1Gi", "config.webhook.max_concurrent=14")...)
	if got := routerConfig(t, m, "alertrouter").Webhook.MaxConcurrent; got != 14 {
		t.Errorf("max_concurrent = %d, want the 14 set", got)
	}
}

func TestHelmRefusesInlineSecretsRenderedIntoTheConfigMap(t *testing.T) {
	for _, tc := range []struct {
		name, values, want string
	}{
		{"Slack incoming webhook", `
  route: {receiver: s}
  receivers:
    - name: s
      slack_configs:
        - api_url: https://hooks.slack.com/services/T000/B000/XXXXXXXX
          channel: "#alerts"`, "receivers[0].slack_configs[0].api_url: a Slack incoming-webhook URL"},
		{"URL credentials", `
  alertmanager:
    url: https://router:s3cret@alertmanager.monitoring:9093`, "alertmanager.url: credentials in a URL"},
		{"oauth2 client_secret", `
  route: {receiver: pd}
  receivers:
    - name: pd
      pagerduty_configs:
        - routing_key_file: /etc/alertrouter/secrets/pagerduty-routing-key
          http_config:
            oauth2: {client_id: router, client_secret: hunter2, token_url: "https://auth.example.com/token"}`, "receivers[0].pagerduty_configs[0].http_config.oauth2.client_secret: an inline secret"},
		{"http_headers values", `
  prometheus:
    url: http://prometheus:9090
    http_config:
      http_headers:
        Authorization:
          values: [Bearer abc]`, "prometheus.http_config.http_headers.Authorization: header values inline"},
		{"http_headers secrets", `
  prometheus:
    url: http://prometheus:9090
    http_config:
      http_headers:
        X-Token:
          secrets: [abc]`, "prometheus.http_config.http_headers.X-Token: header values inline"},
		{"tls_config key", `
  prometheus:
    url: https://prometheus:9090
    http_config:
      tls_config:
        cert_file: /etc/alertrouter/secrets/tls.crt
        key: "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"`, "prometheus.http_config.tls_config.key: an inline TLS private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := valuesFile(t, "config:"+tc.values+"\n")
			refused(t, tc.want, f...)
			if out, err := exec.Command(helm(t), chartCases[0].args(append(f, "--set", "allowInlineSecrets=true")...)...).CombinedOutput(); err != nil {
				t.Errorf("allowInlineSecrets: true still refuses it: %v %s", err, out)
			}
		})
	}
	// What is fine: files, ${VAR} references, a Web API base URL with a token.
	for _, tc := range []struct{ name, values string }{
		{"api_url_file", `
  route: {receiver: s}
  receivers:
    - name: s
      slack_configs:
        - api_url_file: /etc/alertrouter/secrets/slack-webhook-url
          channel: "#alerts"`},
		{"Web API base with token_file", `
  route: {receiver: s}
  receivers:
    - name: s
      slack_configs:
        - api_url: https://slack.example.com/api/
          token_file: /etc/alertrouter/secrets/slack-token
          channel: "#alerts"`},
		{"URL credentials from env", `
  alertmanager:
    url: https://router:${AM_PASSWORD}@alertmanager.monitoring:9093`},
		{"headers, oauth2 and TLS from files", `
  prometheus:
    url: https://prometheus:9090
    http_config:
      oauth2: {client_id: router, client_secret_file: /etc/alertrouter/secrets/oauth, token_url: "https://auth.example.com/token"}
      http_headers:
        X-Scope-OrgID:
          files: [/etc/alertrouter/secrets/tenant]
      tls_config:
        cert_file: /etc/alertrouter/secrets/tls.crt
        key_file: /etc/alertrouter/secrets/tls.key`},
	} {
		t.Run("accepts "+tc.name, func(t *testing.T) {
			t.Setenv("AM_PASSWORD", "from-env")
			_, m := render(t, chartCases[0], valuesFile(t, "config:"+tc.values+"\n")...)
			routerConfig(t, m, "alertrouter") // a real router.yml, not a made-up key
		})
	}
}

// redis.tls is rendered into the ConfigMap as store.redis.tls: an inline
// private key there is a secret in a ConfigMap too.
func TestHelmRefusesAnInlineRedisTLSKey(t *testing.T) {
	external := []string{"redis.mode=external", "redis.addrs={redis.example.internal:6379}"}
	refused(t, "redis.tls.key: an inline TLS private key",
		sets(append(external, "redis.tls.key=-----BEGIN PRIVATE KEY-----")...)...)
	_, m := render(t, chartCases[0], sets(append(external, "redis.tls.key_file=/etc/alertrouter/secrets/redis.key",
		"redis.tls.cert_file=/etc/alertrouter/secrets/redis.crt", "secrets.existingSecret=alertrouter-secrets")...)...)
	if cfg := routerConfig(t, m, "alertrouter"); cfg.Store.Redis == nil || cfg.Store.Redis.TLS == nil || cfg.Store.Redis.TLS.KeyFile == "" {
		t.Errorf("redis.tls.key_file did not reach store.redis.tls: %+v", cfg.Store.Redis)
	}
}

func TestHelmProbesGetThroughTheWebConfig(t *testing.T) {
	users := "webConfig:\n  basic_auth_users:\n    prometheus: $2y$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W\n"
	refused(t, "without an Authorization header in probes.httpHeaders", valuesFile(t, users)...)
	_, m := render(t, chartCases[0], valuesFile(t, users+"probes:\n  httpHeaders:\n    - {name: Authorization, value: Basic cHJvbWV0aGV1czpSRVBMQUNFX01F}\n")...)
	if got := str(get(container(t, m["Deployment/alertrouter"], "router"), "livenessProbe", "httpGet", "httpHeaders", 0, "name")); got != "Authorization" {
		t.Errorf("liveness probe header = %q, want Authorization", got)
	}

	tls := sets("webConfig.tls_server_config.cert_file=/etc/alertrouter/secrets/tls.crt", "webConfig.tls_server_config.key_file=/etc/alertrouter/secrets/tls.key")
	for _, ca := range []string{"RequireAndVerifyClientCert", "RequireAnyClientCert"} {
		refused(t, "client_auth_type "+ca+": the kubelet's HTTPS probes present no client certificate", append(tls, "--set", "webConfig.tls_server_config.client_auth_type="+ca)...)
	}
	render(t, chartCases[0], append(tls, "--set", "webConfig.tls_server_config.client_auth_type=VerifyClientCertIfGiven")...)

	// TLS: the ServiceMonitor scrapes over HTTPS without being told.
	out, m := render(t, chartCases[0], append(tls, "--set", "serviceMonitor.enabled=true")...)
	if errs := validate(t, out); errs != "" {
		t.Fatalf("invalid manifests:\n%s", errs)
	}
	if got := str(get(m["ServiceMonitor/alertrouter"], "spec", "endpoints", 0, "scheme")); got != "https" {
		t.Errorf("with webConfig TLS and no serviceMonitor.scheme, the ServiceMonitor scheme = %q, want https", got)
	}
	refused(t, "serviceMonitor.scheme http, but webConfig.tls_server_config serves HTTPS only", append(tls, sets("serviceMonitor.enabled=true", "serviceMonitor.scheme=http")...)...)
	_, m = render(t, chartCases[0], "--set", "serviceMonitor.enabled=true")
	if got := str(get(m["ServiceMonitor/alertrouter"], "spec", "endpoints", 0, "scheme")); got != "http" && got != "" {
		t.Errorf("without TLS the ServiceMonitor scheme = %q, want http", got)
	}
}

func TestHelmNamesFitTheAPIServersLimits(t *testing.T) {
	release := strings.Repeat("r", 53) // Helm's longest release name
	out := run(t, "", helm(t), "template", release, chartDir, "--namespace", "monitoring", "--set", "networkPolicy.enabled=true", "--set", "secrets.files.x=y")
	if errs := validate(t, out); errs != "" {
		t.Fatalf("a %d-character release renders manifests the API server refuses:\n%s", len(release), errs)
	}
	docs, err := decodeAll(out)
	if err != nil {
		t.Fatal(err)
	}
	m := manifests{}
	for _, d := range docs {
		name := str(get(d, "metadata", "name"))
		m[str(d["kind"])+"/"+name] = d
		if len(name) > 63 {
			t.Errorf("%s %s: %d characters, above 63", d["kind"], name, len(name))
		}
	}
	full := release + "-alertrouter"
	full = strings.TrimSuffix(full[:63], "-")
	redisSvc := strings.TrimSuffix(full[:57], "-") + "-redis"
	if m["Service/"+redisSvc] == nil || m["Deployment/"+full] == nil {
		t.Fatalf("want Service %s and Deployment %s, got %v", redisSvc, full, keys(m))
	}
	if got := strings.Join(routerConfig(t, m, full).Store.Redis.Addrs, ","); got != redisSvc+":6379" {
		t.Errorf("store.redis.addrs = %s, want the Redis Service %s:6379", got, redisSvc)
	}
}

func keys(m manifests) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestHelmImageDigest(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{sets("image.digest=" + digest), "registry.example.com/alertrouter/alertrouter@" + digest},
		{sets("image.digest="+digest, "image.tag=v0.1.0"), "registry.example.com/alertrouter/alertrouter:v0.1.0@" + digest},
		{sets("image.tag=v9.9.9"), "registry.example.com/alertrouter/alertrouter:v9.9.9"},
	} {
		out, m := render(t, chartCases[0], tc.set...)
		if errs := validate(t, out); errs != "" {
			t.Errorf("--set %v: invalid manifests:\n%s", tc.set, errs)
		}
		if got := str(get(container(t, m["Deployment/alertrouter"], "router"), "image")); got != tc.want {
			t.Errorf("--set %v: image = %q, want %q", tc.set, got, tc.want)
		}
	}
	refused(t, `image.tag "`+digest+`" is not a tag`, "--set", "image.tag="+digest)
	refused(t, "at '/image/digest'", "--set", "image.digest=latest")
}

func TestHelmRefusesAPodDisruptionBudgetThatBlocksEveryDrain(t *testing.T) {
	refused(t, "podDisruptionBudget.minAvailable 2 keeps 2 of replicaCount 2 pods", "--set", "podDisruptionBudget.minAvailable=2")
	refused(t, "podDisruptionBudget.minAvailable 60% keeps 2 of replicaCount 2 pods", "--set", "podDisruptionBudget.minAvailable=60%")
	refused(t, "keeps 3 of replicaCount 3", sets("replicaCount=3", "podDisruptionBudget.minAvailable=100%")...)
	refused(t, "at '/podDisruptionBudget/minAvailable'", "--set", "podDisruptionBudget.minAvailable=half")
	for _, s := range [][]string{sets("podDisruptionBudget.minAvailable=50%"), sets("replicaCount=3", "podDisruptionBudget.minAvailable=2")} {
		_, m := render(t, chartCases[0], s...)
		if m["PodDisruptionBudget/alertrouter"] == nil {
			t.Errorf("--set %v: no PodDisruptionBudget", s)
		}
	}
}

func TestHelmSchemaAcceptsIPv6AndRefusesBadDurations(t *testing.T) {
	// Several addresses: Cluster seed nodes (external is one node).
	_, m := render(t, chartCases[0], sets("redis.mode=cluster", "redis.addrs={[fd00::1]:6379,redis.example:6379}")...)
	if got := strings.Join(routerConfig(t, m, "alertrouter").Store.Redis.Addrs, ","); got != "[fd00::1]:6379,redis.example:6379" {
		t.Errorf("store.redis.addrs = %s, want the IPv6 address as given", got)
	}
	refused(t, "at '/redis/addrs/0'", sets("redis.mode=external", "redis.addrs={fd00::1:6379}")...)
	refused(t, "at '/serviceMonitor/interval'", sets("serviceMonitor.enabled=true", "serviceMonitor.interval=banana")...)
	refused(t, "at '/serviceMonitor/scrapeTimeout'", sets("serviceMonitor.enabled=true", "serviceMonitor.scrapeTimeout=10 s")...)
	_, m = render(t, chartCases[0], sets("serviceMonitor.enabled=true", "serviceMonitor.interval=1m30s")...)
	if got := str(get(m["ServiceMonitor/alertrouter"], "spec", "endpoints", 0, "interval")); got != "1m30s" {
		t.Errorf("interval = %q, want 1m30s", got)
	}
}

// The schema knows router.yml's and web.yml's top-level keys (and the
// bundled Redis' image keys), so a misspelt one fails at helm install, not
// the router at start with every pod crash-looping; the lists are those of
// the Go types the router decodes strictly, so they cannot drift.
func TestHelmSchemaRefusesMisspeltConfigAndWebConfigKeys(t *testing.T) {
	b, err := os.ReadFile("helm/alertrouter/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			AdditionalProperties *bool                      `json:"additionalProperties"`
			Properties           map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	yamlKeys := func(typ reflect.Type) []string {
		var keys []string
		for i := 0; i < typ.NumField(); i++ {
			if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
				keys = append(keys, name)
			}
		}
		slices.Sort(keys)
		return keys
	}
	for value, typ := range map[string]reflect.Type{"config": reflect.TypeOf(config.Config{}), "webConfig": reflect.TypeOf(web.Config{})} {
		p := schema.Properties[value]
		got := slices.Sorted(maps.Keys(p.Properties))
		if want := yamlKeys(typ); !slices.Equal(got, want) {
			t.Errorf("values.schema.json %s lists %v; %s decodes %v", value, got, typ, want)
		}
		if p.AdditionalProperties == nil || *p.AdditionalProperties {
			t.Errorf("values.schema.json %s accepts keys it does not list", value)
		}
	}
	refused(t, "at '/config': additional properties 'recievers'", sets("config.recievers[0].name=x")...)
	refused(t, "at '/webConfig': additional properties 'tls_server_confg'", sets("webConfig.tls_server_confg.cert_file=x")...)
	refused(t, "at '/redis/bundled/image': additional properties 'tga'", sets("redis.bundled.image.tga=8")...)
}

// kubecheck's rules beyond the API types: a Service name is a DNS label
// (63 characters), an image a valid reference, a ServiceMonitor duration a
// Prometheus duration, a NetworkPolicy peer not empty.
func TestKubecheckAppliesTheAPIServersRulesTypesMiss(t *testing.T) {
	out, _ := render(t, chartCases[0], "--set", "serviceMonitor.enabled=true")
	if errs := validate(t, out); errs != "" {
		t.Fatalf("the rendering is invalid: %s", errs)
	}
	long := strings.Repeat("a", 63) + "-redis"
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"Service name over 63", "  name: alertrouter-redis\n  namespace: monitoring\n  labels:", "  name: " + long + "\n  namespace: monitoring\n  labels:", `metadata.name "` + long + `" of a Service`},
		{"digest as tag", "image: \"registry.example.com/alertrouter/alertrouter:v0.1.0\"", "image: \"registry.example.com/alertrouter/alertrouter:sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"", "is not a valid image reference"},
		{"interval", "interval: 30s", "interval: banana", `spec.endpoints[0].interval "banana" is not a Prometheus duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(out, []byte(tc.old)) {
				t.Fatalf("the rendering has no %q to break", tc.old)
			}
			broken := bytes.Replace(out, []byte(tc.old), []byte(tc.new), -1)
			if errs := validate(t, broken); !strings.Contains(errs, tc.want) {
				t.Errorf("kubecheck output %q, want it to reject with %q", errs, tc.want)
			}
		})
	}
	// Names of other kinds may be longer (DNS subdomains).
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + strings.Repeat("c", 100) + "\ndata: {a: b}\n"
	if errs := validate(t, []byte(cm)); errs != "" {
		t.Errorf("a 100-character ConfigMap name is valid, kubecheck says %s", errs)
	}
	np := "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: x\nspec:\n  podSelector: {}\n  ingress:\n    - from:\n        - {}\n"
	if errs := validate(t, []byte(np)); !strings.Contains(errs, "set podSelector, namespaceSelector or ipBlock") {
		t.Errorf("kubecheck accepts an empty NetworkPolicy peer: %q", errs)
	}
}

// The mixin alerts on a router that is down or not scraped at all: every
// other alert reads the router's own metrics and is silent then.
func TestSelfMonitoringAlertsOnARouterDownOrMissing(t *testing.T) {
	for _, r := range mixinRules(t) {
		if r.Alert == "AlertrouterDown" {
			if !strings.Contains(r.Expr, "up{") || !strings.Contains(r.Expr, "== 0") || !strings.Contains(r.Expr, "absent(") {
				t.Errorf("AlertrouterDown expr %q: want up == 0 per instance and absent() for no target", r.Expr)
			}
			return // alerts_test.yml has its firing and quiet cases (TestSelfMonitoringAlertsPassTheirUnitTests)
		}
	}
	t.Error("the mixin has no AlertrouterDown (up == 0 or absent)")
}

// The chart's AlertrouterDown must select the job its ServiceMonitor
// scrapes (the Service's name): with a name that lacks "alertrouter" the
// mixin's job=~".*alertrouter.*" sees no target, and absent() fires
// forever. Each rendered job matcher must match the Service's name.
func TestHelmPrometheusRuleWatchesTheServiceMonitorsJob(t *testing.T) {
	matcher := regexp.MustCompile(`job(=~?)"([^"]*)"`)
	for _, extra := range [][]string{nil, {"fullnameOverride=paging-router"}, {"nameOverride=router"}} {
		_, m := render(t, chartCases[0], sets(append(extra, "prometheusRule.enabled=true", "serviceMonitor.enabled=true")...)...)
		var svc, rule map[string]interface{}
		for k, o := range m {
			if strings.HasPrefix(k, "Service/") && str(get(o, "metadata", "labels", "app.kubernetes.io/component")) == "router" {
				svc = o
			}
			if strings.HasPrefix(k, "PrometheusRule/") {
				rule = o
			}
		}
		if svc == nil || rule == nil {
			t.Fatalf("%v: no router Service or PrometheusRule rendered: %v", extra, keys(m))
		}
		job := str(get(svc, "metadata", "name"))
		found := 0
		groups, _ := get(rule, "spec", "groups").([]interface{})
		for _, g := range groups {
			rules, _ := get(g, "rules").([]interface{})
			for _, r := range rules {
				for _, mm := range matcher.FindAllStringSubmatch(str(get(r, "expr")), -1) {
					found++
					ok := mm[2] == job
					if mm[1] == "=~" {
						ok = regexp.MustCompile("^(?:" + mm[2] + ")$").MatchString(job)
					}
					if !ok {
						t.Errorf("%v: alert %s selects job%s%q, which misses the ServiceMonitor's job %q", extra, str(get(r, "alert")), mm[1], mm[2], job)
					}
				}
			}
		}
		if found == 0 {
			t.Errorf("%v: no alert selects the router's job", extra)
		}
	}
}
