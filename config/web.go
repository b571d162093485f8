package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/alertrouter/alertrouter/notify"
)

// LoadWebConfig reads the exporter-toolkit web configuration at path (the
// file of --web.config.file) as exporter-toolkit reads it (strict YAML,
// TLS files relative to its directory) and loads its TLS material as
// serve would (checkWebTLS), so check-config fails where serve does; ""
// is no web configuration: nil, nil. Errors name the flag, the file and
// the key.
func LoadWebConfig(path string) (*web.Config, error) {
	if path == "" {
		return nil, nil
	}
	w, err := readWebConfig(path)
	if err != nil {
		return nil, err
	}
	if err := checkWebTLS(&w.TLSConfig); err != nil {
		return nil, fmt.Errorf("--web.config.file %q: %w", path, err)
	}
	return w, nil
}

// readWebConfig reads and parses the web configuration at path, its TLS
// files made relative to its directory, without loading them.
func readWebConfig(path string) (*web.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--web.config.file: %w", err)
	}
	w, err := ParseWebConfig(b)
	if err != nil {
		return nil, fmt.Errorf("--web.config.file %q: %w", path, err)
	}
	w.TLSConfig.SetDirectory(filepath.Dir(path))
	return w, nil
}

// WebConfigFiles returns the files the web configuration at path (the
// file of --web.config.file) is read from: path itself and the TLS files
// it names (cert_file, key_file, client_ca_file, relative to its
// directory), as exporter-toolkit reads them on every request. A file that
// cannot be read or parsed names only itself; "" is no web configuration.
func WebConfigFiles(path string) []string {
	if path == "" {
		return nil
	}
	files := []string{path}
	w, err := readWebConfig(path)
	if err != nil {
		return files
	}
	for _, f := range []string{w.TLSConfig.TLSCertPath, w.TLSConfig.TLSKeyPath, w.TLSConfig.ClientCAs} {
		if f != "" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return files
}

// checkWebTLS loads the tls_server_config c as exporter-toolkit does when
// serve starts (web.ConfigToTLSConfig: the certificate and its key, the
// client CA, the client_auth_type), after reading each file itself to
// name the key of one missing, unreadable or empty. Without TLS (no
// tls_server_config) there is nothing to load.
func checkWebTLS(c *web.TLSConfig) error {
	if !c.IsEnabled() {
		return nil
	}
	var errs []error
	for _, f := range []struct{ key, name string }{{"cert_file", c.TLSCertPath}, {"key_file", c.TLSKeyPath}, {"client_ca_file", c.ClientCAs}} {
		if f.name == "" {
			continue
		}
		b, err := os.ReadFile(f.name)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("tls_server_config.%s: %w", f.key, err))
		case strings.TrimSpace(string(b)) == "":
			errs = append(errs, fmt.Errorf("tls_server_config.%s: %q: %w", f.key, f.name, notify.ErrEmptySecretFile))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if _, err := web.ConfigToTLSConfig(c); err != nil {
		return fmt.Errorf("tls_server_config%s: %w", webTLSKey(err), err)
	}
	return nil
}

// webTLSKey is the key of tls_server_config an error of
// web.ConfigToTLSConfig is about, from "." on ("" when it does not say).
func webTLSKey(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "X509KeyPair"):
		return ".cert_file, key_file"
	case strings.Contains(msg, "ClientAuth"), strings.Contains(msg, "Client Auth"):
		return ".client_auth_type"
	case strings.Contains(msg, "missing one of cert"):
		return ".cert_file"
	case strings.Contains(msg, "missing one of key"):
		return ".key_file"
	}
	return ""
}

// ParseWebConfig parses the content of an exporter-toolkit web
// configuration.
func ParseWebConfig(b []byte) (*web.Config, error) {
	var w web.Config
	if err := yaml.UnmarshalStrict(b, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// SlackTriage returns the YAML paths of the slack_configs entries that list
// actions: each has Slack send signed requests to /slack/interactions and
// /slack/commands.
func (c *Config) SlackTriage() []string {
	var paths []string
	for i, r := range c.Receivers {
		if r == nil {
			continue
		}
		for j, s := range r.SlackConfigs {
			if s != nil && len(s.Actions.Names) > 0 {
				paths = append(paths, fmt.Sprintf("receivers[%d].slack_configs[%d].actions", i, j))
			}
		}
	}
	return paths
}

// CheckWebConfig returns, joined, every combination of c with the web
// configuration w (nil: none) that cannot serve, each naming the conflict
// and its fix; serve refuses to start on them, and check-config given the
// same --web.config.file fails on them.
//
// Exporter-toolkit's basic_auth_users guard every path of the listener,
// /webhook and /slack/* included: a request without one of their users'
// credentials is answered 401 before the router sees it. So with them, a
// Slack triage click (signed by Slack, with no Authorization header) can
// never arrive, and neither can a webhook authenticated by auth: bearer or
// by an auth.basic_auth user the web configuration does not know
// (Alertmanager sends one Authorization header). And console.enable_replay
// needs the console protected: console.auth, basic_auth_users or required
// TLS client certificates.
func (c *Config) CheckWebConfig(w *web.Config) error {
	var users []string
	if w != nil {
		for u := range w.Users {
			users = append(users, u)
		}
		sort.Strings(users)
	}
	var errs []error
	if len(users) > 0 {
		if triage := c.SlackTriage(); len(triage) > 0 {
			errs = append(errs, fmt.Errorf("%s: Slack triage cannot work with basic_auth_users in --web.config.file: Slack's signed requests to /slack/interactions and /slack/commands carry no basic-auth credentials, so every click and command would be answered 401. Remove basic_auth_users from the web configuration and protect the console with console.auth (it guards the console, /debug/pprof/ and /-/reload, /-/quit, and leaves /webhook and /slack/* to their own checks)",
				strings.Join(triage, ", ")))
		}
		if c.Auth.Bearer() {
			errs = append(errs, errors.New("auth.bearer_token: cannot work with basic_auth_users in --web.config.file: Alertmanager sends one Authorization header, and the web configuration answers its bearer token 401 before the router sees it, so no webhook would arrive. Either remove basic_auth_users from the web configuration (protect the console with console.auth), or drop auth: bearer_token and give Alertmanager's webhook_configs http_config the basic_auth of a basic_auth_users user"))
		}
		if ca := c.Console.Auth; ca != nil && (ca.Bearer() || ca.BasicAuth != nil && !knownUser(w, ca.BasicAuth)) {
			errs = append(errs, fmt.Errorf("console.auth: cannot work with basic_auth_users in --web.config.file (%s) unless it is basic_auth of one of those users with the same password: a browser sends one Authorization header, which the web configuration and console.auth would both have to accept, so the console would answer everyone 401. Remove basic_auth_users from the web configuration (console.auth then guards the console alone), or drop console.auth",
				strings.Join(users, ", ")))
		}
		if ba := c.Auth.BasicAuth; ba != nil && !slices.Contains(users, ba.Username) {
			errs = append(errs, fmt.Errorf("auth.basic_auth.username: %q is not one of the basic_auth_users of --web.config.file (%s): Alertmanager sends one Authorization header, and the web configuration would answer it 401. Use one of those users (same password), drop auth: and let the web configuration check Alertmanager, or remove basic_auth_users and protect the console with console.auth",
				ba.Username, strings.Join(users, ", ")))
		} else if ba != nil && !knownUser(w, ba) {
			errs = append(errs, fmt.Errorf("auth.basic_auth.password: user %q of basic_auth_users in --web.config.file has another password: Alertmanager sends one Authorization header, and the web configuration or auth: would answer it 401, so no webhook would arrive. Give both the same password, drop auth: and let the web configuration check Alertmanager, or remove basic_auth_users and protect the console with console.auth",
				ba.Username))
		}
	}
	if c.Console.EnableReplay && c.Console.Auth == nil && len(users) == 0 && !requiresClientCerts(w) && !c.Console.ProtectedByProxy {
		errs = append(errs, errors.New("console.enable_replay: the console is unprotected (no console.auth, no basic_auth_users in --web.config.file): anyone who reaches the router's port could re-send dead letters, PagerDuty pages with the real routing key included. Set console.auth (basic_auth with username and password_file); or, when only an authenticating proxy (oauth2-proxy, an Ingress with auth) can reach the router's port, say so with console.protected_by_proxy: true; or turn enable_replay off and replay with `router dead-letters replay`"))
	}
	return errors.Join(errs...)
}

// knownUser reports whether ba is a user of w's basic_auth_users with the
// same password: its bcrypt hash there matches ba's password, as the web
// configuration checks each request. A password file that cannot be read
// is not judged here: building the edge fails on it, naming the file.
func knownUser(w *web.Config, ba *BasicAuth) bool {
	hash, ok := w.Users[ba.Username]
	if !ok {
		return false
	}
	pw, err := notify.ReadSecret(ba.Password, ba.PasswordFile)
	if err != nil {
		return true
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// requiresClientCerts reports whether w lets in only clients with a
// verified TLS certificate.
func requiresClientCerts(w *web.Config) bool {
	return w != nil && w.TLSConfig.ClientAuth == "RequireAndVerifyClientCert"
}
