package config

import (
	"errors"
	"fmt"
	"slices"

	"github.com/alertrouter/alertrouter/notify/slack"
)

// validateTriage checks what the Slack triage buttons need from the rest of
// the file: an alertmanager block for silences, and a PagerDuty integration
// for acknowledge, resolve and escalate.
func (c *Config) validateTriage() []error {
	var errs []error
	if c.Alertmanager != nil {
		errs = append(errs, prefix("alertmanager", c.Alertmanager.Validate())...)
	}
	byName := map[string]*Receiver{}
	for _, r := range c.Receivers {
		if r != nil {
			byName[r.Name] = r
		}
	}
	for i, r := range c.Receivers {
		if r == nil {
			continue
		}
		for j, s := range r.SlackConfigs {
			if s == nil {
				continue
			}
			path := fmt.Sprintf("receivers[%d].slack_configs[%d]", i, j)
			if slices.Contains(s.Actions.Names, slack.ActionSilence) && c.Alertmanager == nil {
				errs = append(errs, fmt.Errorf("%s.actions: silence needs the top-level alertmanager block (where silences are created)", path))
			}
			needsPD := slices.Contains(s.Actions.Names, slack.ActionAck) || slices.Contains(s.Actions.Names, slack.ActionResolve)
			if needsPD && len(r.PagerdutyConfigs) == 0 && s.EscalateTo == "" {
				errs = append(errs, fmt.Errorf("%s.actions: ack and resolve need pagerduty_configs in receiver %q (or escalate_to)", path, r.Name))
			}
			target := r
			if s.EscalateTo != "" {
				target = byName[s.EscalateTo]
				if target == nil {
					errs = append(errs, fmt.Errorf("%s.escalate_to: unknown receiver %q", path, s.EscalateTo))
					continue
				}
			}
			if slices.Contains(s.Actions.Names, slack.ActionEscalate) && len(target.PagerdutyConfigs) == 0 {
				errs = append(errs, errors.New(path+".actions: escalate needs a receiver with pagerduty_configs (this one, or escalate_to)"))
			}
		}
	}
	return errs
}
