package store

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/internal/redact"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"
)

// DefaultKeyPrefix starts every key the router writes.
const DefaultKeyPrefix = "alertrouter:"

// Config is the `store` section: which store holds the shared state and what
// the router does when it cannot reach it.
type Config struct {
	// Redis selects the Redis store; nil selects the embedded memory store
	// (single replica, state lost on restart).
	Redis *RedisConfig `yaml:"redis,omitempty"`
	// FailClosed makes the router refuse to notify (answer 5xx so
	// Alertmanager retries) while the store is unavailable, instead of
	// delivering and risking a duplicate.
	FailClosed bool `yaml:"fail_closed"`
	// KeyPrefix starts every key, so several routers can share one Redis.
	KeyPrefix string `yaml:"key_prefix"`
}

// DefaultConfig returns the defaults of the store section: memory store,
// fail open, prefix "alertrouter:".
func DefaultConfig() Config {
	return Config{KeyPrefix: DefaultKeyPrefix}
}

// UnmarshalYAML fills the defaults, then decodes the section over them.
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	type plain Config
	return unmarshal((*plain)(c))
}

// Validate checks the section; errors are prefixed by their YAML path
// relative to it.
func (c *Config) Validate() error {
	var errs []error
	if strings.ContainsAny(c.KeyPrefix, "{}") {
		errs = append(errs, fmt.Errorf("key_prefix: %q must not contain braces, they would break the per-incident Redis Cluster hash tags", c.KeyPrefix))
	}
	if c.Redis != nil {
		if err := c.Redis.Validate(); err != nil {
			errs = append(errs, prefixErrors("redis.", err))
		}
	}
	return errors.Join(errs...)
}

// String renders the section as YAML with secrets hidden.
func (c Config) String() string { return marshalHidden(c) }

// GoString is String, so %#v hides secrets too.
func (c Config) GoString() string { return c.String() }

// RedisConfig is the `store.redis` section. One shape covers a single node
// (one address), Sentinel (master_name set, addrs are the sentinels) and
// Cluster (several addresses, or cluster: true with one seed address).
type RedisConfig struct {
	// Addrs are host:port addresses: the node, the sentinels, or cluster
	// seed nodes.
	Addrs []string `yaml:"addrs"`
	// MasterName is the Sentinel master name; setting it selects Sentinel.
	MasterName string `yaml:"master_name,omitempty"`
	// Username is the ACL user; empty means the default user.
	Username string `yaml:"username,omitempty"`
	// Password authenticates to Redis (and to the sentinels).
	Password commoncfg.Secret `yaml:"password,omitempty"`
	// PasswordFile is read for the password at start, trailing newline
	// dropped; it excludes Password.
	PasswordFile string `yaml:"password_file,omitempty"`
	// DB is the database number; Cluster supports only 0.
	DB int `yaml:"db,omitempty"`
	// Cluster selects Redis Cluster even with a single seed address.
	Cluster bool `yaml:"cluster,omitempty"`
	// TLS enables TLS to Redis when set.
	TLS *commoncfg.TLSConfig `yaml:"tls,omitempty"`
	// DialTimeout bounds connecting.
	DialTimeout model.Duration `yaml:"dial_timeout"`
	// ReadTimeout bounds reading a reply.
	ReadTimeout model.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds writing a command.
	WriteTimeout model.Duration `yaml:"write_timeout"`
	// MaxRetries is how many times a failed command is retried (with
	// backoff) before the store reports itself unavailable; -1 disables
	// retries. Keep it low: while Redis is down every webhook waits for the
	// retries before failing open.
	MaxRetries int `yaml:"max_retries"`
	// PoolSize is the number of connections per node; 0 means go-redis'
	// default (10 per CPU).
	PoolSize int `yaml:"pool_size,omitempty"`
}

// DefaultRedisConfig returns the defaults of the store.redis section.
func DefaultRedisConfig() RedisConfig {
	return RedisConfig{
		DialTimeout:  model.Duration(2 * time.Second),
		ReadTimeout:  model.Duration(time.Second),
		WriteTimeout: model.Duration(time.Second),
		MaxRetries:   1,
	}
}

// UnmarshalYAML fills the defaults, then decodes the section over them.
func (c *RedisConfig) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultRedisConfig()
	type plain RedisConfig
	return unmarshal((*plain)(c))
}

// Validate checks the section; errors are prefixed by their YAML path
// relative to it.
func (c *RedisConfig) Validate() error {
	var errs []error
	if len(c.Addrs) == 0 {
		errs = append(errs, errors.New("addrs: at least one host:port is required"))
	}
	for i, a := range c.Addrs {
		if !hostPort(a) {
			errs = append(errs, fmt.Errorf("addrs[%d]: %q is not host:port (a port number 1-65535): %s", i, redact.URL(a), addrForms))
		}
	}
	if c.Password != "" && c.PasswordFile != "" {
		errs = append(errs, errors.New("password, password_file: at most one may be set"))
	}
	if c.MasterName != "" && c.Cluster {
		errs = append(errs, errors.New("master_name, cluster: Sentinel and Cluster are mutually exclusive"))
	}
	if c.DB < 0 {
		errs = append(errs, fmt.Errorf("db: %d is negative", c.DB))
	}
	if c.DB != 0 && c.isCluster() {
		errs = append(errs, fmt.Errorf("db: Redis Cluster has only db 0, got %d", c.DB))
	}
	for _, d := range []struct {
		path string
		v    model.Duration
	}{{"dial_timeout", c.DialTimeout}, {"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %v", d.path, d.v))
		}
	}
	if c.MaxRetries < -1 {
		errs = append(errs, fmt.Errorf("max_retries: %d is below -1 (no retries)", c.MaxRetries))
	}
	if c.PoolSize < 0 {
		errs = append(errs, fmt.Errorf("pool_size: %d is negative", c.PoolSize))
	}
	if c.TLS != nil {
		if err := c.TLS.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("tls: %w", err))
		}
	}
	return errors.Join(errs...)
}

// addrForms says what store.redis.addrs takes, for an address it refuses
// (a redis:// URL, a database suffix, a unix socket path): go-redis would
// take it here and fail at every connection.
const addrForms = "store.redis.addrs takes host:port only (IPv6: [::1]:6379); TLS goes in store.redis.tls, the password in store.redis.password_file, the database in store.redis.db; unix sockets are not supported"

// hostPort reports whether a is host:port with a host and a port number
// from 1 to 65535.
func hostPort(a string) bool {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" || strings.ContainsAny(host, "/@ \t\r\n") {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n > 0
}

// SetDirectory joins relative file paths (password_file, TLS files) with
// dir, the directory of the configuration file.
func (c *RedisConfig) SetDirectory(dir string) {
	c.PasswordFile = commoncfg.JoinDir(dir, c.PasswordFile)
	c.TLS.SetDirectory(dir)
}

// String renders the section as YAML with secrets hidden.
func (c RedisConfig) String() string { return marshalHidden(c) }

// GoString is String, so %#v hides secrets too.
func (c RedisConfig) GoString() string { return c.String() }

// isCluster reports whether the config selects Redis Cluster, the way
// go-redis' UniversalClient decides.
func (c *RedisConfig) isCluster() bool {
	return c.MasterName == "" && (c.Cluster || len(c.Addrs) > 1)
}

// Mode names the deployment the config selects, for logs: "single",
// "sentinel" or "cluster".
func (c *RedisConfig) Mode() string {
	switch {
	case c.MasterName != "":
		return "sentinel"
	case c.isCluster():
		return "cluster"
	default:
		return "single"
	}
}

// marshalHidden renders v as YAML; commoncfg.Secret prints as <secret>.
func marshalHidden(v interface{}) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<error rendering config: %v>", err)
	}
	return string(b)
}

// prefixErrors prefixes every error joined in err with prefix.
func prefixErrors(prefix string, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, fmt.Errorf("%s%w", prefix, e))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("%s%w", prefix, err)
}
