package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/store"
)

func load(t *testing.T, text string) (store.Config, error) {
	t.Helper()
	var c store.Config
	if err := yaml.UnmarshalStrict([]byte(text), &c); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want store.Config
	}{
		{"an empty section selects the memory store, failing open", `{}`, store.Config{KeyPrefix: "alertrouter:"}},
		{
			"a redis section gets default timeouts and retries",
			"redis:\n  addrs: [redis:6379]\nfail_closed: true\nkey_prefix: 'prod:'",
			store.Config{
				Redis: &store.RedisConfig{
					Addrs:        []string{"redis:6379"},
					DialTimeout:  model.Duration(2 * time.Second),
					ReadTimeout:  model.Duration(time.Second),
					WriteTimeout: model.Duration(time.Second),
					MaxRetries:   1,
				},
				FailClosed: true,
				KeyPrefix:  "prod:",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := load(t, tc.yaml)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if got.String() != tc.want.String() || got.FailClosed != tc.want.FailClosed {
				t.Errorf("config =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestConfigRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string
	}{
		{"an unknown field", "redis:\n  addrs: [a:1]\n  adress: b", []string{"field adress not found"}},
		{"a redis section without addrs", "redis:\n  db: 1", []string{"redis.addrs: at least one"}},
		{"an address without a port", "redis:\n  addrs: [a:1, redis]", []string{`redis.addrs[1]: "redis" is not host:port`}},
		// These loaded and failed at serve, on every connection.
		{"a database suffix", "redis:\n  addrs: ['[::1]:23001/0']", []string{`redis.addrs[0]: "[::1]:23001/0" is not host:port`, "the database in store.redis.db"}},
		{"a redis:// URL", "redis:\n  addrs: ['redis://r:6379']", []string{`redis.addrs[0]: "redis://r:6379" is not host:port`, "store.redis.addrs takes host:port only"}},
		{"a rediss:// URL", "redis:\n  addrs: ['rediss://r:6379/1']", []string{`redis.addrs[0]: "rediss://r:6379/1" is not host:port`, "TLS goes in store.redis.tls"}},
		{"a unix socket", "redis:\n  addrs: ['unix:///tmp/r.sock']", []string{`redis.addrs[0]: "unix:///tmp/r.sock" is not host:port`, "unix sockets are not supported"}},
		{"a port name", "redis:\n  addrs: ['r:redis']", []string{`redis.addrs[0]: "r:redis" is not host:port (a port number 1-65535)`}},
		{"port 0", "redis:\n  addrs: ['r:0']", []string{`redis.addrs[0]: "r:0" is not host:port`}},
		{"a port above 65535", "redis:\n  addrs: ['r:70000']", []string{`redis.addrs[0]: "r:70000" is not host:port`}},
		// Spaces passed check-config and failed at serve ("lookup  127.0.0.1").
		{"a leading space", "redis:\n  addrs: [' 127.0.0.1:6379']", []string{`redis.addrs[0]: " 127.0.0.1:6379" is not host:port`}},
		{"a space before the port", "redis:\n  addrs: ['127.0.0.1 :6379']", []string{`redis.addrs[0]: "127.0.0.1 :6379" is not host:port`}},
		{"both password and password_file", "redis:\n  addrs: [a:1]\n  password: x\n  password_file: /f", []string{"redis.password, password_file: at most one"}},
		{"sentinel and cluster together", "redis:\n  addrs: [a:1]\n  master_name: m\n  cluster: true", []string{"redis.master_name, cluster: "}},
		{"a db other than 0 on a cluster", "redis:\n  addrs: [a:1, b:1]\n  db: 2", []string{"redis.db: Redis Cluster has only db 0"}},
		{"a zero timeout", "redis:\n  addrs: [a:1]\n  read_timeout: 0s", []string{"redis.read_timeout: must be positive"}},
		{"negative pool size and retries", "redis:\n  addrs: [a:1]\n  pool_size: -1\n  max_retries: -2", []string{"redis.pool_size: -1 is negative", "redis.max_retries: -2"}},
		{"tls with a key but no cert", "redis:\n  addrs: [a:1]\n  tls:\n    key_file: /k", []string{"exactly one of cert or cert_file"}},
		{"braces in key_prefix", "key_prefix: 'a{b}:'", []string{"key_prefix: \"a{b}:\" must not contain braces"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml)
			if err == nil {
				t.Fatal("config accepted; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestConfigNeverPrintsThePassword(t *testing.T) {
	const password = "hunter2-very-secret"
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{"redis:6379"}
	cfg.Password = commoncfg.Secret(password)
	top := store.Config{Redis: &cfg, KeyPrefix: store.DefaultKeyPrefix}
	yml, err := yaml.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, out string
	}{
		{"%v of the redis section", fmt.Sprintf("%v", cfg)},
		{"%+v of the redis section", fmt.Sprintf("%+v", cfg)},
		{"%#v of the redis section", fmt.Sprintf("%#v", cfg)},
		{"%v of a pointer to it", fmt.Sprintf("%v", &cfg)},
		//lint:ignore S1025 the test is of what fmt's %s verb prints
		{"%s of the store section", fmt.Sprintf("%s", top)},
		{"%+v of the store section", fmt.Sprintf("%+v", top)},
		{"YAML of the store section", string(yml)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.out, password) {
				t.Errorf("password printed:\n%s", tc.out)
			}
			if !strings.Contains(tc.out, "<secret>") {
				t.Errorf("output does not show the password is set:\n%s", tc.out)
			}
		})
	}
}

func TestSetDirectoryResolvesRelativePasswordFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := store.DefaultRedisConfig()
	cfg.PasswordFile = "pw"
	cfg.SetDirectory(dir)
	if want := filepath.Join(dir, "pw"); cfg.PasswordFile != want {
		t.Errorf("PasswordFile = %q; want %q", cfg.PasswordFile, want)
	}
}
