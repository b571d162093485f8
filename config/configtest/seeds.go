// Package configtest holds what the configuration's fuzz targets (config's
// FuzzParseConfig, cmd/router's FuzzCheckConfig) share: the router
// configurations the repository ships and documents, as seeds, and the
// bound of one input.
package configtest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v2"
)

// Bound is limit while fuzzing (-test.fuzz), else two minutes: a config
// that takes longer than limit stalls check-config, the start and every
// reload, but run as a unit test (the seeds, under -race on a shared
// machine) the bound only catches a hang — no timed assertion.
func Bound(limit time.Duration) time.Duration {
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return limit
	}
	return 2 * time.Minute
}

// Seeds returns the router configurations of the repository whose root
// is root: config/default.yml, config/testdata, the kustomize base's
// router.yml, the `config:` block of the Helm chart's values.yaml and of
// each of its examples (what the chart renders router.yml from), and the
// README's yaml blocks. Read from the files, they follow them.
func Seeds(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "config", "testdata", "*.yml"))
	if err != nil {
		return nil, err
	}
	files = append(files, filepath.Join(root, "config", "default.yml"), filepath.Join(root, "deploy", "kubernetes", "base", "router.yml"))
	if len(files) < 10 {
		return nil, fmt.Errorf("only %d seed files under %s: config/testdata or deploy/kubernetes moved", len(files), root)
	}
	var seeds []string
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		seeds = append(seeds, string(b))
	}
	chart := filepath.Join(root, "deploy", "helm", "alertrouter")
	values, _ := filepath.Glob(filepath.Join(chart, "examples", "values-*.yaml"))
	for _, name := range append([]string{filepath.Join(chart, "values.yaml")}, values...) {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var v struct {
			Config yaml.MapSlice `yaml:"config"`
		}
		if err := yaml.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out, err := yaml.Marshal(v.Config)
		if err != nil {
			return nil, err
		}
		seeds = append(seeds, string(out))
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	for _, blk := range strings.Split(string(readme), "```yaml\n")[1:] {
		if end := strings.Index(blk, "```"); end > 0 {
			seeds = append(seeds, blk[:end])
		}
	}
	return seeds, nil
}
