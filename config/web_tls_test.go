package config_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
)

// writeCert writes a self-signed certificate and its key as name.pem and
// name.key in dir.
func writeCert(t *testing.T, dir, name string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{name + ".pem": {Type: "CERTIFICATE", Bytes: der}, name + ".key": {Type: "EC PRIVATE KEY", Bytes: kb}} {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// check-config passed a web configuration whose TLS files serve could not
// load (a missing cert_file, a key of another certificate, a missing
// client_ca_file): serve then logged "router listening" and exited 1 with
// an error naming neither the flag nor the key. LoadWebConfig loads them
// as serve does, naming the flag, the file and the key; relative paths
// are the web configuration's directory's, as exporter-toolkit reads them.
func TestLoadWebConfigLoadsTheTLSFilesAsServeDoes(t *testing.T) {
	dir := t.TempDir()
	writeCert(t, dir, "a")
	writeCert(t, dir, "b")
	if err := os.WriteFile(filepath.Join(dir, "empty.pem"), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, yml, want string }{
		{"TLS files relative to the web config", "tls_server_config: {cert_file: a.pem, key_file: a.key}\n", ""},
		{"client certificates verified", "tls_server_config: {cert_file: a.pem, key_file: a.key, client_ca_file: b.pem, client_auth_type: RequireAndVerifyClientCert}\n", ""},
		{"no TLS", "http_server_config: {http2: true}\n", ""},
		{"a missing cert_file", "tls_server_config: {cert_file: nope.pem, key_file: a.key}\n", "tls_server_config.cert_file: open " + filepath.Join(dir, "nope.pem") + ": no such file"},
		{"an empty key_file", "tls_server_config: {cert_file: a.pem, key_file: empty.pem}\n", "tls_server_config.key_file: \"" + filepath.Join(dir, "empty.pem") + "\": the file is empty"},
		{"a key of another certificate", "tls_server_config: {cert_file: a.pem, key_file: b.key}\n", "tls_server_config.cert_file, key_file: failed to load X509KeyPair: tls: private key does not match public key"},
		{"a missing client_ca_file", "tls_server_config: {cert_file: a.pem, key_file: a.key, client_ca_file: nope.pem, client_auth_type: RequireAndVerifyClientCert}\n", "tls_server_config.client_ca_file: open "},
		{"a bad client_auth_type", "tls_server_config: {cert_file: a.pem, key_file: a.key, client_auth_type: Sometimes}\n", "tls_server_config.client_auth_type: invalid ClientAuth: Sometimes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "web.yml")
			if err := os.WriteFile(p, []byte(tc.yml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.LoadWebConfig(p)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("LoadWebConfig: %v", err)
				}
				return
			}
			if want := `--web.config.file "` + p + `": ` + tc.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("LoadWebConfig: %v\nwant %q", err, want)
			}
		})
	}
}
