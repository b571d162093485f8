package notify

import (
	"fmt"
	"os"
	"strings"

	commoncfg "github.com/prometheus/common/config"
)

// ReadSecret returns the inline secret, or the trimmed content of file when
// file is set (the `*_file` twin of a secret key). It never logs either.
func ReadSecret(inline commoncfg.Secret, file string) (string, error) {
	if file == "" {
		return string(inline), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read secret file %q: %w", file, err)
	}
	return strings.TrimSpace(string(b)), nil
}
