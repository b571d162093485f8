package flap

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// Config is the `flap` section of the policies configuration. Decode it with
// yaml.UnmarshalStrict: UnmarshalYAML fills the defaults first and checks
// the result.
type Config struct {
	// Threshold: an alert that changed state more than Threshold times
	// within Window is flapping. Default 4.
	Threshold int `yaml:"threshold"`
	// Window is how far back transitions count, and how long an alert must
	// stay without a transition to be stable again. Default 1h.
	Window model.Duration `yaml:"window"`
	// CoolDown is how long a resolve of a flapping alert is held before it
	// is sent. Default 10m.
	CoolDown model.Duration `yaml:"cool_down"`
}

// DefaultConfig returns threshold 4, window 1h, cool_down 10m.
func DefaultConfig() Config {
	return Config{
		Threshold: 4,
		Window:    model.Duration(time.Hour),
		CoolDown:  model.Duration(10 * time.Minute),
	}
}

// UnmarshalYAML fills the defaults, decodes the section over them and
// validates the result.
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	type plain Config
	if err := unmarshal((*plain)(c)); err != nil {
		return fmt.Errorf("decode flap: %w", err)
	}
	return c.Validate()
}

// Validate reports every invalid field, each error prefixed with its key.
func (c *Config) Validate() error {
	var errs []error
	if c.Threshold < 1 {
		errs = append(errs, fmt.Errorf("flap.threshold: must be at least 1, got %d", c.Threshold))
	}
	if c.Threshold >= MaxEntries {
		errs = append(errs, fmt.Errorf("flap.threshold: must be below %d (the history kept per alert), got %d", MaxEntries, c.Threshold))
	}
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("flap.window: must be positive, got %s", c.Window))
	}
	if c.CoolDown < 0 {
		errs = append(errs, fmt.Errorf("flap.cool_down: must not be negative, got %s", c.CoolDown))
	}
	if c.CoolDown > c.Window && c.Window > 0 {
		errs = append(errs, fmt.Errorf("flap.cool_down: %s must not be longer than flap.window %s", c.CoolDown, c.Window))
	}
	return errors.Join(errs...)
}

// TTL is how long a store needs to keep a fingerprint's history after its
// last transition: the window plus the cool-down.
func (c *Config) TTL() time.Duration {
	return time.Duration(c.Window) + time.Duration(c.CoolDown)
}
