package redact

import (
	"errors"
	"strings"
	"testing"
)

func TestURLHidesPasswordsAndQueries(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:hunter22@example.com/v2/enqueue": "https://u:xxxxx@example.com/v2/enqueue",
		"https://example.com/x?token=hunter22":      "https://example.com/x?xxxxx",
		"https://example.com/v2/enqueue":            "https://example.com/v2/enqueue",
		":hunter22@redis:6379":                      "<secret>@redis:6379",
		"redis:6379":                                "redis:6379",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsHideWholeValuesAndQuotedPrefixes(t *testing.T) {
	var s Secrets
	s.Add("hunter2-very-secret", "ab")
	err := s.Error(errors.New("line 3: cannot unmarshal !!str `hunter2...` into int; value hunter2-very-secret; `ab` `other`"))
	got := err.Error()
	if strings.Contains(got, "hunter2") {
		t.Fatalf("secret leaked: %s", got)
	}
	if !strings.Contains(got, "`other`") || !strings.Contains(got, "`ab`") {
		t.Fatalf("non-secret fragments hidden: %s", got)
	}
}

func TestURLHidesASlackIncomingWebhooksPath(t *testing.T) {
	got := URL("https://hooks.slack.com/services/T000/B000/s3cretPath")
	if strings.Contains(got, "s3cretPath") || got != "https://hooks.slack.com/services/xxxxx" {
		t.Errorf("URL = %q, want the webhook's path hidden", got)
	}
}

// A webhook URL that does not parse (a control character, as a stray byte
// of a copy-paste leaves) or has no scheme, so no host, still hides its
// secret path: check-config prints it in the error that refuses it.
func TestURLHidesTheSecretsOfAURLThatDoesNotParse(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/SUPERSECRETWEBHOOK\x7f": "https://hooks.slack.com/services/xxxxx",
		"hooks.slack.com/services/T0/B0/SUPERSECRETWEBHOOK":             "hooks.slack.com/services/xxxxx",
		"chat.example.org/hooks/SUPERSECRETWEBHOOK":                     "chat.example.org/hooks/xxxxx",
		"https://chat.example.org/hooks/SUPERSECRETWEBHOOK":             "https://chat.example.org/hooks/xxxxx",
		"example.com/v2/enqueue?token=SUPERSECRET":                      "example.com/v2/enqueue?xxxxx",
		"http://u:SUPERSECRET@example.com/%zz":                          "<secret>@example.com/%zz",
		"http://127.0.0.1:1/v2/enqueue%zz":                              "http://127.0.0.1:1/v2/enqueue%zz",
	} {
		got := URL(in)
		if strings.Contains(got, "SUPERSECRET") || got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
