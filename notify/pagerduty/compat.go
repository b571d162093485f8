package pagerduty

import (
	"errors"
	"strconv"

	commoncfg "github.com/prometheus/common/config"
)

// Compat are the keys of Alertmanager's pagerduty_configs (v0.35) beyond the
// router's own, with Alertmanager's meaning, so a receiver ports unchanged.
// They are inlined into Config.
type Compat struct {
	// SendResolved false keeps resolves from PagerDuty: the incident state
	// still closes, nothing is sent (Alertmanager's send_resolved; default
	// true).
	SendResolved *bool `yaml:"send_resolved,omitempty"`
	// HTTPConfig configures the HTTP client (proxy, TLS, authorization,
	// OAuth2).
	HTTPConfig *commoncfg.HTTPClientConfig `yaml:"http_config,omitempty"`
	// ServiceKey and ServiceKeyFile are Events API v1 integration keys;
	// the router speaks Events API v2 only and says so.
	ServiceKey     commoncfg.Secret `yaml:"service_key,omitempty"`
	ServiceKeyFile string           `yaml:"service_key_file,omitempty"`
	// Description is Alertmanager's name of the summary template; it is
	// used when summary is not set.
	Description string `yaml:"description,omitempty"`
	// Details are entries of custom_details rendered as Alertmanager renders
	// them (template.DeepCopyWithTemplate): every string, nested ones and
	// the names of nested mappings included, is a template.
	Details map[string]any `yaml:"details,omitempty"`
	// Images and Links are added to the event; every field is a template.
	Images []Image `yaml:"images,omitempty"`
	Links  []Link  `yaml:"links,omitempty"`
	// Class, Component and Group are templates of the payload fields;
	// empty derives them (incident class, sector, primary KPI).
	Class     string `yaml:"class,omitempty"`
	Component string `yaml:"component,omitempty"`
	Group     string `yaml:"group,omitempty"`
}

// Image is one entry of images.
type Image struct {
	Src  string `yaml:"src,omitempty" json:"src"`
	Alt  string `yaml:"alt,omitempty" json:"alt,omitempty"`
	Href string `yaml:"href,omitempty" json:"href,omitempty"`
}

// Link is one entry of links.
type Link struct {
	Href string `yaml:"href,omitempty" json:"href"`
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
}

// Resolved reports whether resolves are sent (send_resolved, default true).
func (c *Compat) Resolved() bool { return c.SendResolved == nil || *c.SendResolved }

// validate checks the Alertmanager keys.
func (c *Compat) validate() []error {
	var errs []error
	if c.ServiceKey != "" || c.ServiceKeyFile != "" {
		errs = append(errs, errors.New("service_key: Events API v1 keys are not supported; use the service's Events API v2 integration key as routing_key"))
	}
	if c.HTTPConfig != nil {
		if err := c.HTTPConfig.Validate(); err != nil {
			errs = append(errs, errors.New("http_config: "+err.Error()))
		}
	}
	return errs
}

// templates returns every template of the Alertmanager keys by YAML path.
func (c *Compat) templates() map[string]string {
	out := map[string]string{"description": c.Description, "class": c.Class, "component": c.Component, "group": c.Group}
	for k, v := range c.Details {
		detailTemplates(out, "details."+k, v)
	}
	for i, im := range c.Images {
		out[fmtIndex("images", i, "src")], out[fmtIndex("images", i, "alt")], out[fmtIndex("images", i, "href")] = im.Src, im.Alt, im.Href
	}
	for i, l := range c.Links {
		out[fmtIndex("links", i, "href")], out[fmtIndex("links", i, "text")] = l.Href, l.Text
	}
	return out
}

// detailTemplates adds the templates of v, an entry of details, to out:
// every string in it, nested ones and the names of nested mappings
// included (Alertmanager renders them all).
func detailTemplates(out map[string]string, path string, v any) {
	switch v := v.(type) {
	case string:
		out[path] = v
	case []any:
		for i, e := range v {
			detailTemplates(out, path+"["+strconv.Itoa(i)+"]", e)
		}
	case map[any]any:
		for k, e := range v {
			if ks, ok := k.(string); ok {
				out[path+"."+ks+" (name)"] = ks
				detailTemplates(out, path+"."+ks, e)
			}
		}
	case map[string]any:
		for k, e := range v {
			out[path+"."+k+" (name)"] = k
			detailTemplates(out, path+"."+k, e)
		}
	}
}

func fmtIndex(list string, i int, key string) string {
	return list + "[" + strconv.Itoa(i) + "]." + key
}
