package notify

import (
	"errors"
	"fmt"
	"os"
	"strings"

	commoncfg "github.com/prometheus/common/config"
)

// ErrEmptySecretFile is the error of a secret file that holds nothing but
// whitespace: a Kubernetes Secret made from an unset variable, a rotation
// caught half-written. Taken as the secret, it would send an empty routing
// key or token, or turn inbound authentication off.
var ErrEmptySecretFile = errors.New("the file is empty")

// ReadSecret returns the inline secret, or the trimmed content of file when
// file is set (the `*_file` twin of a secret key). A file that cannot be
// read, or holds only whitespace (ErrEmptySecretFile), is an error naming
// it; the caller prefixes the key. It never logs either.
func ReadSecret(inline commoncfg.Secret, file string) (string, error) {
	if file == "" {
		return string(inline), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read secret file %q: %w", file, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("read secret file %q: %w", file, ErrEmptySecretFile)
	}
	return s, nil
}
